//! The entity graph of a space: `GET /v1/spaces/{space}/entities` (list, search) and
//! `GET /v1/spaces/{space}/entities/{name}` (one entity with its mentions, relations and
//! timeline). One `cairn::Memory` call each, on the blocking pool, behind the per-space
//! check, in `ops.rs`, which the MCP tool `entities` calls too.
use crate::auth::Principal;
use crate::error::ApiError;
use crate::ops;
use crate::wire::doc::*;
use crate::wire::entities::EntityDetailOut;
use crate::wire::out::Entities;
use crate::wire::{scope_of, ScopeQuery};
use crate::AppState;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::{Extension, Json};
use serde::Deserialize;
use std::sync::Arc;

type S = Arc<AppState>;

/// Query of `GET /v1/spaces/{space}/entities`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct EntitiesQuery {
    /// Only entities whose name or an alias contains this (case-insensitive).
    #[param(required = false)]
    pub q: Option<String>,
    /// The graph as known at this time (default now): an edge exists once its unit occurred.
    #[param(required = false)]
    pub as_of: Option<String>,
    /// Metadata filter as JSON text, e.g. `{"user_id":"u1"}` (see the Filter schema): only what the sessions it admits hold is seen, as if the space held nothing else.
    #[param(required = false)]
    pub filter: Option<String>,
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/entities",
    operation_id = "entities",
    tag = "entities",
    summary = "Entities of a space",
    description = "The people, places, organizations and things the space's messages name (speakers, capitalized names; nicknames and short forms merged), most linked first. Derived from the units, so forgetting a source forgets what it said.",
    params(SpacePath, EntitiesQuery),
    responses(
        (status = 200, description = "OK", body = inline(crate::wire::out::Entities)),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub async fn list(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<EntitiesQuery>, QueryRejection>,
) -> Result<Json<Entities>, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::invalid("query", e.body_text()))?;
    let scope = scope_of(q.filter.as_deref(), q.as_of.as_deref())?;
    Ok(Json(ops::entities(&st, &who, &space, q.q, scope).await?))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/entities/{name}",
    operation_id = "entity",
    tag = "entities",
    summary = "One entity",
    description = "An entity by name or alias, with the units that mention it (speaker_of, mention, fact_subject edges), the entities met in the same sessions and messages, and the sessions it appears in, in time order.",
    params(SpacePath, EntityPath, crate::wire::ScopeQuery),
    responses(
        (status = 200, description = "OK", body = crate::wire::entities::EntityDetailOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub async fn one(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, name)): Path<(String, String)>,
    q: Result<Query<ScopeQuery>, QueryRejection>,
) -> Result<Json<EntityDetailOut>, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::invalid("as_of", e.body_text()))?;
    Ok(Json(
        ops::entity(&st, &who, &space, name, q.options()?).await?,
    ))
}
