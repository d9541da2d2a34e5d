//! Recall, and what is known beyond single memories: fact histories, speakers, profiles.
use super::handler::{query, ApiResult, S};
use crate::auth::Principal;
use crate::error::ApiError;
use crate::ops;
use crate::wire::doc::*;
use crate::wire::out::{RecallOut, SpeakerList};
use crate::wire::records::{FactHistoryOut, SpeakerProfileOut};
use crate::wire::{scope_of, HistoryQuery, RecallRequest, ScopeQuery, WireJson};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::{Extension, Json};

#[utoipa::path(
    post,
    path = "/v1/spaces/{space}/recall",
    operation_id = "recall",
    tag = "recall",
    summary = "Recall",
    description = "Ranked, cited evidence for a query, packed into `token_budget` tokens.",
    params(SpacePath),
    request_body = crate::wire::RecallRequest,
    responses(
        (status = 200, description = "OK", body = crate::wire::out::RecallOut),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 413, response = TooLarge),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn recall(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(body): WireJson<RecallRequest>,
) -> ApiResult<Json<RecallOut>> {
    Ok(Json(ops::recall(&st, &who, &space, body).await?))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/history",
    operation_id = "history",
    tag = "facts",
    summary = "Version history of a fact subject",
    description = "The versions of the subject best matching `subject` (e.g. `budget for Atlas`), oldest first, each with its validity interval and the version that replaced it; `as_of` gives the history as known then.",
    params(SpacePath, crate::wire::HistoryQuery),
    responses(
        (status = 200, description = "OK", body = crate::wire::records::FactHistoryOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn history(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<HistoryQuery>, QueryRejection>,
) -> ApiResult<Json<FactHistoryOut>> {
    let Query(q) = q.map_err(|e| ApiError::invalid("subject", e.body_text()))?;
    let scope = scope_of(q.filter.as_deref(), q.as_of.as_deref())?;
    let w = ops::history(&st, &who, &space, q.subject, scope).await?;
    Ok(Json(FactHistoryOut {
        warnings: w.warnings,
        ..w.answer.into()
    }))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/speakers",
    operation_id = "speakers",
    tag = "profiles",
    summary = "Speakers of a space",
    description = "Everyone who wrote in, or was described in, the space.",
    params(SpacePath, crate::wire::ScopeQuery),
    responses(
        (status = 200, description = "OK", body = inline(crate::wire::out::SpeakerList)),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn speakers(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<ScopeQuery>, QueryRejection>,
) -> ApiResult<Json<SpeakerList>> {
    let scope = query(q)?.options()?;
    let w = ops::speakers(&st, &who, &space, scope).await?;
    Ok(Json(SpeakerList {
        speakers: w.answer,
        warnings: w.warnings,
    }))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/profiles/{speaker}",
    operation_id = "profile",
    tag = "profiles",
    summary = "A speaker's profile",
    description = "Style (message length, formality, directive vs collaborative, punctuation and emoji, reply time), roles and skills with the messages that show them, topics, groups.",
    params(SpacePath, SpeakerPath, crate::wire::ScopeQuery),
    responses(
        (status = 200, description = "OK", body = crate::wire::records::SpeakerProfileOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn profile(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, speaker)): Path<(String, String)>,
    q: Result<Query<ScopeQuery>, QueryRejection>,
) -> ApiResult<Json<SpeakerProfileOut>> {
    let scope = query(q)?.options()?;
    let w = ops::profile(&st, &who, &space, speaker, scope).await?;
    Ok(Json(SpeakerProfileOut {
        warnings: w.warnings,
        ..w.answer.into()
    }))
}
