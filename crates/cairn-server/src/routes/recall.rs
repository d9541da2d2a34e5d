//! Recall, and what is known beyond single memories: fact histories, speakers, profiles.
use super::{ApiResult, S};
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops;
use crate::wire::out::RecallOut;
use crate::wire::{scope_of, HistoryQuery, RecallRequest, ScopeQuery, WireJson};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::{Extension, Json};
use serde_json::{json, Value};

pub(super) async fn recall(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(body): WireJson<RecallRequest>,
) -> ApiResult<Json<RecallOut>> {
    Ok(Json(ops::recall(&st, &who, &space, body).await?))
}

pub(super) async fn history(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<HistoryQuery>, QueryRejection>,
) -> ApiResult<Json<cairn::FactHistory>> {
    who.require(&space, Need::Read)?;
    let Query(q) = q.map_err(|e| ApiError::invalid("subject", e.body_text()))?;
    let scope = scope_of(q.filter.as_deref(), q.as_of.as_deref())?;
    Ok(Json(
        ops::history(&st, &who, &space, q.subject, scope).await?,
    ))
}

pub(super) async fn speakers(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<ScopeQuery>, QueryRejection>,
) -> ApiResult<Json<Value>> {
    who.require(&space, Need::Read)?;
    let scope = super::query(q)?.options()?;
    let list = ops::speakers(&st, &who, &space, scope).await?;
    Ok(Json(json!({ "speakers": list })))
}

pub(super) async fn profile(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, speaker)): Path<(String, String)>,
    q: Result<Query<ScopeQuery>, QueryRejection>,
) -> ApiResult<Json<cairn::SpeakerProfile>> {
    who.require(&space, Need::Read)?;
    let scope = super::query(q)?.options()?;
    Ok(Json(ops::profile(&st, &who, &space, speaker, scope).await?))
}
