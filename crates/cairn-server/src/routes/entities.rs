//! The entity graph of a space: `GET /v1/spaces/{space}/entities` (list, search) and
//! `GET /v1/spaces/{space}/entities/{name}` (one entity with its mentions, relations and
//! timeline). One `cairn::Memory` call each, on the blocking pool, behind the per-space
//! check; the MCP tool `entities` shares them.
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::blocking;
use crate::wire::{scope_of, ScopeQuery};
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
    /// A metadata filter as JSON text (URL-encoded).
    pub filter: Option<String>,
}

/// `GET /v1/spaces/{space}/entities`.
#[derive(Debug, Clone, Serialize)]
pub struct Entities {
    pub entities: Vec<EntitySummary>,
}

/// The entities of what `scope` sees, optionally searched (the HTTP route and MCP tool).
pub async fn entities_of(
    st: &S,
    who: &Principal,
    space: &str,
    search: Option<String>,
    scope: cairn::ScopeOptions,
) -> Result<Entities, ApiError> {
    who.require(space, Need::Read)?;
    let sp = space.to_string();
    let entities = blocking(st, move |m| m.entities(&sp, search.as_deref(), &scope)).await?;
    Ok(Entities { entities })
}

/// One entity by name or alias; 404 when the scope sees none by that name.
pub async fn entity_of(
    st: &S,
    who: &Principal,
    space: &str,
    name: String,
    scope: cairn::ScopeOptions,
) -> Result<EntityDetail, ApiError> {
    who.require(space, Need::Read)?;
    let sp = space.to_string();
    let asked = name.clone();
    blocking(st, move |m| m.entity(&sp, &asked, &scope))
        .await?
        .ok_or_else(|| ApiError::not_found("not_found", format!("no entity {name:?}")))
}

pub async fn list(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<EntitiesQuery>, QueryRejection>,
) -> Result<Json<Entities>, ApiError> {
    who.require(&space, Need::Read)?;
    let Query(q) = q.map_err(|e| ApiError::invalid("query", e.body_text()))?;
    let scope = scope_of(q.filter.as_deref(), q.as_of.as_deref())?;
    Ok(Json(entities_of(&st, &who, &space, q.q, scope).await?))
}

pub async fn one(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, name)): Path<(String, String)>,
    q: Result<Query<ScopeQuery>, QueryRejection>,
) -> Result<Json<EntityDetail>, ApiError> {
    who.require(&space, Need::Read)?;
    let Query(q) = q.map_err(|e| ApiError::invalid("as_of", e.body_text()))?;
    Ok(Json(
        entity_of(&st, &who, &space, name, q.options()?).await?,
    ))
}
