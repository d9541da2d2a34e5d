//! Sessions: ingest (one, a batch, appended messages, group messages), listing, reading
//! and forgetting them.
use super::{ingested, page_limit, query, write_options, ApiResult, S};
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::{self, blocking};
use crate::wire::out::{Removed, SessionOut};
use crate::wire::{AddMessages, BatchIngest, GroupIngest, ListSessions, Page, WireJson};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::{Extension, Json};
use cairn::SessionInput;

pub(super) async fn ingest_session(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    headers: HeaderMap,
    WireJson(session): WireJson<SessionInput>,
) -> ApiResult<Response> {
    who.require(&space, Need::Write)?;
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

pub(super) async fn ingest_batch(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    headers: HeaderMap,
    WireJson(body): WireJson<BatchIngest>,
) -> ApiResult<Response> {
    who.require(&space, Need::Write)?;
    st.config
        .limits
        .check_sessions(&body.sessions, "sessions")?;
    let opts = write_options(&headers)?;
    let report = blocking(&st, move |m| {
        m.ingest_sessions_with(&space, body.sessions, &opts)
    })
    .await
    .map_err(|e| e.nested("sessions"))?;
    Ok(ingested(report))
}

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

pub(super) async fn add_group_messages(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    headers: HeaderMap,
    WireJson(body): WireJson<GroupIngest>,
) -> ApiResult<Response> {
    who.require(&space, Need::Write)?;
    st.config.limits.check_group(&body.messages)?;
    let opts = write_options(&headers)?;
    let report = blocking(&st, move |m| {
        m.ingest_group_messages_with(&space, body.messages, &opts)
    })
    .await
    .map_err(|e| e.nested("messages"))?;
    Ok(ingested(report))
}

pub(super) async fn list_sessions(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<ListSessions>, QueryRejection>,
) -> ApiResult<Json<Page<SessionOut>>> {
    who.require(&space, Need::Read)?;
    let q = query(q)?;
    let limit = page_limit(q.limit)?;
    let offset = q.offset.unwrap_or(0);
    let filter = super::filter_param(q.filter.as_deref())?;
    let page = blocking(&st, move |m| {
        m.list_sessions(&space, filter.as_ref(), offset, limit)
    })
    .await?;
    let items = page.sessions.into_iter().map(SessionOut::from).collect();
    Ok(Json(Page::new(items, page.total, offset)))
}

pub(super) async fn get_session(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, session)): Path<(String, String)>,
) -> ApiResult<Json<SessionOut>> {
    who.require(&space, Need::Read)?;
    let id = session.clone();
    blocking(&st, move |m| m.session(&space, &id))
        .await?
        .map(|r| Json(r.into()))
        .ok_or_else(|| ApiError::not_found("not_found", format!("session {session:?} not found")))
}

pub(super) async fn delete_session(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, session)): Path<(String, String)>,
) -> ApiResult<Json<Removed>> {
    let removed_units = ops::forget(&st, &who, &space, &session, None).await?;
    Ok(Json(Removed { removed_units }))
}

pub(super) async fn delete_message(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, session, message)): Path<(String, String, String)>,
) -> ApiResult<Json<Removed>> {
    let removed_units = ops::forget(&st, &who, &space, &session, Some(&message)).await?;
    Ok(Json(Removed { removed_units }))
}
