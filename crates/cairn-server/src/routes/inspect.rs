//! Read routes the inspector (`/ui`) needs beside the API's own: who the caller is and
//! which spaces it sees (`GET /v1/me`), the fact subjects of a space, and the units
//! derived from one session or one trajectory. Each is one `cairn::Memory` call on the
//! blocking pool behind the same per-space check as every route; `me` and `subjects`
//! are operations of `ops.rs`, which the MCP tools call too.
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::{self, blocking};
use crate::wire::doc::*;
use crate::wire::out::MemoryOut;
use crate::wire::out::{Me, Subjects, Units};
use crate::wire::ScopeQuery;
use crate::AppState;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::{Extension, Json};
use std::sync::Arc;

type S = Arc<AppState>;

#[utoipa::path(
    get,
    path = "/v1/me",
    operation_id = "me",
    tag = "spaces",
    summary = "The caller",
    description = "Who the key is (id, label), whether it is the admin key, whether it is read-only, the existing spaces it sees and the spaces it is for.",
    responses(
        (status = 200, description = "OK", body = crate::wire::out::Me),
        (status = 401, response = Unauthorized),
        (status = 500, response = Internal),
        (status = 403, response = Forbidden),
    ),
)]
pub async fn me(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
) -> Result<Json<Me>, ApiError> {
    Ok(Json(ops::me(&st, &who).await?))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/subjects",
    operation_id = "subjects",
    tag = "facts",
    summary = "Fact subjects of a space",
    description = "Every subject the space holds versioned facts about, as of `as_of` (default now): the subject as last written (what `history` takes), how many statements, the newest value and when it was stated.",
    params(SpacePath, crate::wire::ScopeQuery),
    responses(
        (status = 200, description = "OK", body = inline(crate::wire::out::Subjects)),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub async fn subjects(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<ScopeQuery>, QueryRejection>,
) -> Result<Json<Subjects>, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::invalid("as_of", e.body_text()))?;
    Ok(Json(ops::subjects(&st, &who, &space, q.options()?).await?))
}

/// `GET /v1/spaces/{space}/sessions/{session}/units`: what was derived from a session.
#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/sessions/{session}/units",
    operation_id = "sessionUnits",
    tag = "sessions",
    summary = "Units derived from a session",
    description = "Every memory unit derived from the session (turns, rounds, episode, facts, speaker statistics), in write order; each names the messages it came from.",
    params(SpacePath, SessionPath),
    responses(
        (status = 200, description = "OK", body = inline(crate::wire::out::Units)),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub async fn session_units(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, session)): Path<(String, String)>,
) -> Result<Json<Units>, ApiError> {
    let pin = who.require_in(&space, Need::Read)?;
    let (sp, id) = (space.clone(), session.clone());
    let found = blocking(&st, move |m| {
        m.session(&sp, &id)?
            .filter(|r| pin.holds(&r.session.metadata))
            .map(|_| m.session_units(&sp, &id))
            .transpose()
    })
    .await?;
    units_of(found, || format!("session {session:?} not found"))
}

/// `GET /v1/spaces/{space}/trajectories/{id}/units`: its slices, events and note.
#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/trajectories/{id}/units",
    operation_id = "trajectoryUnits",
    tag = "trajectories",
    summary = "Units derived from a trajectory",
    description = "The slices (one per state), events (one per step) and note (procedure or gotcha) derived from the trajectory, in write order.",
    params(SpacePath, TrajectoryPath),
    responses(
        (status = 200, description = "OK", body = inline(crate::wire::out::Units)),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub async fn trajectory_units(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> Result<Json<Units>, ApiError> {
    who.require(&space, Need::Read)?;
    let (sp, tid) = (space.clone(), id.clone());
    let found = blocking(&st, move |m| {
        m.trajectories()
            .get(&sp, &tid)?
            .map(|_| m.trajectories().units(&sp, &tid))
            .transpose()
    })
    .await?;
    units_of(found, || format!("trajectory {id:?} not found"))
}

/// The units of a source, or 404 when the source is not stored.
fn units_of(
    found: Option<Vec<cairn::Unit>>,
    missing: impl FnOnce() -> String,
) -> Result<Json<Units>, ApiError> {
    match found {
        Some(units) => Ok(Json(Units {
            units: units.into_iter().map(MemoryOut::from).collect(),
        })),
        None => Err(ApiError::not_found("not_found", missing())),
    }
}
