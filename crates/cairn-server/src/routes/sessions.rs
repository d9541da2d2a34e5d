//! Sessions: ingest (one, a batch, appended messages, group messages), listing, reading
//! and forgetting them.
use super::handler::{page_limit, query, ApiResult, S};
use super::idempotency::{ingested, write_options};
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::{self, blocking};
use crate::wire::doc::*;
use crate::wire::formats::SessionInputWire;
use crate::wire::out::{ForgotMessages, Removed, SessionOut};
use crate::wire::{
    AddMessages, BatchIngest, ForgetMessageQuery, GroupIngest, ListSessions, Page, WireJson,
};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::{Extension, Json};

#[utoipa::path(
    post,
    path = "/v1/spaces/{space}/sessions",
    operation_id = "ingestSession",
    tag = "ingest",
    summary = "Ingest a session",
    description = "Stores a session (the JSONL line shape); creates the space. A stored id accepts only appended messages (else 409). Answered once durable and searchable.",
    params(SpacePath, IdempotencyHeader),
    request_body = SessionInputWire,
    responses(
        (status = 200, description = "OK", body = crate::wire::out::Ingested, headers(("Idempotency-Replayed" = String, description = "`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`: nothing was written now."))),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 413, response = TooLarge),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn ingest_session(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    headers: HeaderMap,
    WireJson(session): WireJson<SessionInputWire>,
) -> ApiResult<Response> {
    let pin = who.require_in(&space, Need::Write)?;
    let mut session = cairn::SessionInput::from(session);
    session.metadata = pin.metadata(session.metadata)?;
    st.config
        .limits
        .check_sessions(std::slice::from_ref(&session), "")?;
    let opts = write_options(&headers)?;
    let report = blocking(&st, move |m| {
        m.ingest_sessions_with(&space, vec![session], &opts)
    })
    .await
    .map_err(ApiError::first_of_one)?;
    Ok(ingested(report))
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{space}/sessions/batch",
    operation_id = "ingestBatch",
    tag = "ingest",
    summary = "Ingest sessions in one batch",
    description = "All sessions are validated before any is written; embedding runs in shared batches. At most `max_batch_sessions` sessions (default {DEFAULT_MAX_BATCH_SESSIONS}).",
    params(SpacePath, IdempotencyHeader),
    request_body = inline(crate::wire::BatchIngest),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::Ingested, headers(("Idempotency-Replayed" = String, description = "`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`: nothing was written now."))),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 413, response = TooLarge),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn ingest_batch(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    headers: HeaderMap,
    WireJson(body): WireJson<BatchIngest>,
) -> ApiResult<Response> {
    let pin = who.require_in(&space, Need::Write)?;
    let mut sessions = body.into_sessions();
    for (i, s) in sessions.iter_mut().enumerate() {
        s.metadata = pin
            .metadata(std::mem::take(&mut s.metadata))
            .map_err(|e| e.nested(&format!("sessions[{i}]")))?;
    }
    st.config.limits.check_sessions(&sessions, "sessions")?;
    let opts = write_options(&headers)?;
    let report = blocking(&st, move |m| {
        m.ingest_sessions_with(&space, sessions, &opts)
    })
    .await
    .map_err(|e| e.nested("sessions"))?;
    Ok(ingested(report))
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{space}/messages",
    operation_id = "addMessages",
    tag = "ingest",
    summary = "Add messages (Mem0 `add`)",
    description = "Appends messages to `session_id`, creating the session on first use. For a stored session, `occurred_at`, `group` and `metadata` must be omitted or equal to what is stored. Multi-party (group) chats: give `group` and a `speaker` per message.",
    params(SpacePath, IdempotencyHeader),
    request_body = crate::wire::AddMessages,
    responses(
        (status = 200, description = "OK", body = crate::wire::out::Ingested, headers(("Idempotency-Replayed" = String, description = "`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`: nothing was written now."))),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 413, response = TooLarge),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn add_messages(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    headers: HeaderMap,
    WireJson(body): WireJson<AddMessages>,
) -> ApiResult<Response> {
    let opts = write_options(&headers)?;
    let report = ops::add_messages(&st, &who, &space, body, opts).await?;
    Ok(ingested(report))
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{space}/group-messages",
    operation_id = "ingestGroupMessages",
    tag = "ingest",
    summary = "Ingest group-chat messages",
    description = "Messages of any groups and days (typically one day of every group). Each group's day is the session `<group>/<YYYY-MM-DD>`; later messages of a day are appended; a message sent twice (same speaker, time, text) is stored once. Facts, episodes and speaker profiles are derived from them.",
    params(SpacePath, IdempotencyHeader),
    request_body = inline(crate::wire::GroupIngest),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::Ingested, headers(("Idempotency-Replayed" = String, description = "`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`: nothing was written now."))),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 413, response = TooLarge),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn add_group_messages(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    headers: HeaderMap,
    WireJson(body): WireJson<GroupIngest>,
) -> ApiResult<Response> {
    who.require(&space, Need::Write)?;
    let messages = body.into_messages();
    st.config.limits.check_group(&messages)?;
    let opts = write_options(&headers)?;
    let report = blocking(&st, move |m| {
        m.ingest_group_messages_with(&space, messages, &opts)
    })
    .await
    .map_err(|e| e.nested("messages"))?;
    Ok(ingested(report))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/sessions",
    operation_id = "listSessions",
    tag = "sessions",
    summary = "List sessions",
    description = "Sessions exactly as ingested, in ingest order, optionally filtered.",
    params(SpacePath, crate::wire::ListSessions),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::SessionPage),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn list_sessions(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<ListSessions>, QueryRejection>,
) -> ApiResult<Json<Page<SessionOut>>> {
    let pin = who.require_in(&space, Need::Read)?;
    let q = query(q)?;
    let limit = page_limit(q.limit)?;
    let offset = q.offset.unwrap_or(0);
    let sessions = pin.scope(cairn::ScopeOptions {
        filter: crate::wire::filter_json(q.filter.as_deref())?,
        ..Default::default()
    })?;
    let (sp, asked) = (space.clone(), sessions.clone());
    let page = blocking(&st, move |m| m.list_sessions(&sp, &asked, offset, limit)).await?;
    let warnings = crate::ops::listing_warnings(&st, &space, sessions).await?;
    let items = page.sessions.into_iter().map(SessionOut::from).collect();
    Ok(Json(Page::new(items, page.total, offset).warned(warnings)))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/sessions/{session}",
    operation_id = "getSession",
    tag = "sessions",
    summary = "Get a session",
    description = "The session record exactly as ingested.",
    params(SpacePath, SessionPath),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::SessionOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn get_session(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, session)): Path<(String, String)>,
) -> ApiResult<Json<SessionOut>> {
    let pin = who.require_in(&space, Need::Read)?;
    let id = session.clone();
    blocking(&st, move |m| m.session(&space, &id))
        .await?
        .filter(|r| pin.holds(&r.session.metadata))
        .map(|r| Json(r.into()))
        .ok_or_else(|| ApiError::not_found("not_found", format!("session {session:?} not found")))
}

#[utoipa::path(
    delete,
    path = "/v1/spaces/{space}/sessions/{session}",
    operation_id = "deleteSession",
    tag = "sessions",
    summary = "Forget a session",
    description = "Removes the session and every unit, index entry and cached vector derived from it.",
    params(SpacePath, SessionPath),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::Removed),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn delete_session(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, session)): Path<(String, String)>,
) -> ApiResult<Json<Removed>> {
    let removed_units = ops::forget_session(&st, &who, &space, &session).await?;
    Ok(Json(Removed { removed_units }))
}

#[utoipa::path(
    delete,
    path = "/v1/spaces/{space}/sessions/{session}/messages/{message}",
    operation_id = "deleteMessage",
    tag = "sessions",
    summary = "Forget one message",
    description = "The session is re-derived without it; forgetting the last message forgets the session. With `exchange=true` the reply to it goes too: the next message of the session when another speaker (another role) wrote it, so what the reply repeated (\"Congratulations on the move to Lisbon!\") leaves memories, export and entities with it. The answer lists the messages forgotten.",
    params(SpacePath, SessionPath, MessagePath, ForgetMessageQuery),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::ForgotMessages),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn delete_message(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, session, message)): Path<(String, String, String)>,
    q: Result<Query<ForgetMessageQuery>, QueryRejection>,
) -> ApiResult<Json<ForgotMessages>> {
    let exchange = query(q)?.exchange.unwrap_or(false);
    let r = ops::forget_message(&st, &who, &space, &session, &message, exchange).await?;
    Ok(Json(r))
}
