//! The entity graph of a space: `GET /v1/spaces/{space}/entities` (list, search) and
//! `GET /v1/spaces/{space}/entities/{name}` (one entity with its mentions, relations and
//! timeline). One `cairn::Memory` call each, on the blocking pool, behind the per-space
//! check; the MCP tool `entities` shares them.
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::blocking;
use crate::wire::parse_time;
use crate::AppState;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::{Extension, Json};
use cairn::{EntityDetail, EntitySummary};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

type S = Arc<AppState>;

/// Query of `GET /v1/spaces/{space}/entities`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntitiesQuery {
    /// Only entities whose name or an alias contains this (case-insensitive).
    pub q: Option<String>,
    pub as_of: Option<String>,
}

/// Query of `GET /v1/spaces/{space}/entities/{name}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityQuery {
    pub as_of: Option<String>,
}

/// `GET /v1/spaces/{space}/entities`.
#[derive(Debug, Clone, Serialize)]
pub struct Entities {
    pub entities: Vec<EntitySummary>,
}

/// A space's entities as of a time, optionally searched (the HTTP route and MCP tool).
pub async fn entities_of(
    st: &S,
    who: &Principal,
    space: &str,
    search: Option<String>,
    as_of: Option<&str>,
) -> Result<Entities, ApiError> {
    who.require(space, Need::Read)?;
    let as_of = as_of.map(|t| parse_time(t, "as_of")).transpose()?;
    let sp = space.to_string();
    let entities = blocking(st, move |m| m.entities(&sp, search.as_deref(), as_of)).await?;
    Ok(Entities { entities })
}

/// One entity by name or alias; 404 when the space knows none by that name (then).
pub async fn entity_of(
    st: &S,
    who: &Principal,
    space: &str,
    name: String,
    as_of: Option<&str>,
) -> Result<EntityDetail, ApiError> {
    who.require(space, Need::Read)?;
    let as_of = as_of.map(|t| parse_time(t, "as_of")).transpose()?;
    let sp = space.to_string();
    let asked = name.clone();
    blocking(st, move |m| m.entity(&sp, &asked, as_of))
        .await?
        .ok_or_else(|| ApiError::not_found("not_found", format!("no entity {name:?}")))
}

pub async fn list(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<EntitiesQuery>, QueryRejection>,
) -> Result<Json<Entities>, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::invalid("query", e.body_text()))?;
    Ok(Json(
        entities_of(&st, &who, &space, q.q, q.as_of.as_deref()).await?,
    ))
}

pub async fn one(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, name)): Path<(String, String)>,
    q: Result<Query<EntityQuery>, QueryRejection>,
) -> Result<Json<EntityDetail>, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::invalid("as_of", e.body_text()))?;
    Ok(Json(
        entity_of(&st, &who, &space, name, q.as_of.as_deref()).await?,
    ))
}
