//! Recall, and what is known beyond single memories: fact histories, speakers, profiles.
use super::{ApiResult, S};
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::{self, blocking};
use crate::wire::out::RecallOut;
use crate::wire::{HistoryQuery, RecallRequest, WireJson};
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
    Ok(Json(
        ops::history(&st, &who, &space, q.subject, q.as_of.as_deref()).await?,
    ))
}

pub(super) async fn speakers(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Json<Value>> {
    who.require(&space, Need::Read)?;
    let list = blocking(&st, move |m| m.speakers(&space)).await?;
    Ok(Json(json!({ "speakers": list })))
}

pub(super) async fn profile(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, speaker)): Path<(String, String)>,
) -> ApiResult<Json<cairn::SpeakerProfile>> {
    Ok(Json(ops::profile(&st, &who, &space, speaker).await?))
}
