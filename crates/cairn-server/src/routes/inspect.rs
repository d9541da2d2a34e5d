//! Read routes the inspector (`/ui`) needs beside the API's own: who the caller is and
//! which spaces it sees (`GET /v1/me`), the fact subjects of a space, and the units
//! derived from one session or one trajectory. Each is one `cairn::Memory` call on the
//! blocking pool behind the same per-space check as every route; `me` and `subjects`
//! are MCP tools too.
use crate::auth::{Access, Need, Principal};
use crate::error::ApiError;
use crate::ops::blocking;
use crate::wire::out::MemoryOut;
use crate::wire::ScopeQuery;
use crate::AppState;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::{Extension, Json};
use cairn::FactSubject;
use serde::Serialize;
use std::sync::Arc;

type S = Arc<AppState>;

/// `GET /v1/me`: the caller as the server sees it.
#[derive(Debug, Clone, Serialize)]
pub struct Me {
    /// The key's public id; `admin` for the admin key, `local` without auth.
    pub key_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Sees every space (the admin key, or a server without auth).
    pub admin: bool,
    pub read_only: bool,
    /// The existing spaces the caller sees, by name.
    pub spaces: Vec<String>,
    /// The spaces the key is for, existing or not (absent for admin).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<Vec<String>>,
}

/// `GET /v1/spaces/{space}/subjects`.
#[derive(Debug, Clone, Serialize)]
pub struct Subjects {
    pub subjects: Vec<FactSubject>,
}

/// A list of units.
#[derive(Debug, Serialize)]
pub struct Units {
    pub units: Vec<MemoryOut>,
}

/// Who the caller is and what it sees (the HTTP route and the MCP tool).
pub async fn me_of(st: &S, who: &Principal) -> Result<Me, ApiError> {
    let p = who.clone();
    let spaces = blocking(st, move |m| {
        Ok(m.spaces()?
            .into_iter()
            .map(|s| s.as_str().to_string())
            .filter(|s| p.can_see(s))
            .collect::<Vec<_>>())
    })
    .await?;
    let label = match who.access {
        Access::All => None,
        Access::Spaces(_) => st
            .keys
            .list()
            .map_err(ApiError::internal)?
            .into_iter()
            .find(|k| k.id == who.key_id)
            .and_then(|k| k.label),
    };
    Ok(Me {
        key_id: who.key_id.clone(),
        label,
        admin: who.access == Access::All,
        read_only: who.read_only,
        spaces,
        scope: match &who.access {
            Access::All => None,
            Access::Spaces(s) => Some(s.clone()),
        },
    })
}

/// The fact subjects of what `scope` sees (the HTTP route and the MCP tool).
pub async fn subjects_of(
    st: &S,
    who: &Principal,
    space: &str,
    scope: cairn::ScopeOptions,
) -> Result<Subjects, ApiError> {
    who.require(space, Need::Read)?;
    let sp = space.to_string();
    let subjects = blocking(st, move |m| m.fact_subjects(&sp, &scope)).await?;
    Ok(Subjects { subjects })
}

pub async fn me(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
) -> Result<Json<Me>, ApiError> {
    Ok(Json(me_of(&st, &who).await?))
}

pub async fn subjects(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<ScopeQuery>, QueryRejection>,
) -> Result<Json<Subjects>, ApiError> {
    who.require(&space, Need::Read)?;
    let Query(q) = q.map_err(|e| ApiError::invalid("as_of", e.body_text()))?;
    Ok(Json(subjects_of(&st, &who, &space, q.options()?).await?))
}

/// `GET /v1/spaces/{space}/sessions/{session}/units`: what was derived from a session.
pub async fn session_units(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, session)): Path<(String, String)>,
) -> Result<Json<Units>, ApiError> {
    who.require(&space, Need::Read)?;
    let (sp, id) = (space.clone(), session.clone());
    let found = blocking(&st, move |m| {
        m.session(&sp, &id)?
            .map(|_| m.session_units(&sp, &id))
            .transpose()
    })
    .await?;
    units_of(found, || format!("session {session:?} not found"))
}

/// `GET /v1/spaces/{space}/trajectories/{id}/units`: its slices, events and note.
pub async fn trajectory_units(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> Result<Json<Units>, ApiError> {
    who.require(&space, Need::Read)?;
    let (sp, tid) = (space.clone(), id.clone());
    let found = blocking(&st, move |m| {
        m.trajectory(&sp, &tid)?
            .map(|_| m.trajectory_units(&sp, &tid))
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
