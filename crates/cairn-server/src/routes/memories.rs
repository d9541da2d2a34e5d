//! Memory units: pages of them (filtered and paged by the store), one by id, and
//! forgetting one (which the engine decides the meaning of). A listing shows the memories
//! a user thinks of (one per message, fact and trajectory) unless it asks for a derived
//! kind (`kind=round`) or every unit (`kind=all`), as `UnitKind::listed` decides.
use super::handler::{page_limit, query, ApiResult, S};
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::blocking;
use crate::wire::doc::*;
use crate::wire::out::{ForgotMemory, MemoryOut};
use crate::wire::{parse_time, ListMemories, Page};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::{Extension, Json};
use cairn::{UnitKind, UnitQuery};

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/memories",
    operation_id = "listMemories",
    tag = "memories",
    summary = "List memories",
    description = "Memories in time order, filtered and paginated: by default the memories a user thinks of, one per message (`turn`), fact drawn from messages (`fact`) and trajectory (`note`); `kind` lists one derived kind instead (rounds, episodes, slices, events, profiles), and `kind=all` every unit.",
    params(SpacePath, crate::wire::ListMemories),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::UnitPage),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn list_memories(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<ListMemories>, QueryRejection>,
) -> ApiResult<Json<Page<MemoryOut>>> {
    let pin = who.require_in(&space, Need::Read)?;
    let q = query(q)?;
    let kinds = UnitKind::listed(q.kind.as_deref()).map_err(cairn::Error::from)?;
    let time = |raw: &Option<String>, field| raw.as_deref().map(|t| parse_time(t, field));
    let listing = UnitQuery {
        kinds,
        sessions: q.session_id.map(|s| vec![s]),
        speaker: q.speaker,
        since: time(&q.since, "since").transpose()?,
        until: time(&q.until, "until").transpose()?,
        as_of: time(&q.as_of, "as_of").transpose()?,
        offset: q.offset.unwrap_or(0),
        limit: page_limit(q.limit)?,
    };
    let sessions = pin.scope(cairn::ScopeOptions {
        filter: crate::wire::filter_json(q.filter.as_deref())?,
        ..Default::default()
    })?;
    let offset = listing.offset;
    let (sp, asked) = (space.clone(), sessions.clone());
    let page = blocking(&st, move |m| m.list_units(&sp, &listing, &asked)).await?;
    let warnings = crate::ops::listing_warnings(&st, &space, sessions).await?;
    let items = page.units.into_iter().map(MemoryOut::from).collect();
    Ok(Json(Page::new(items, page.total, offset).warned(warnings)))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/memories/{id}",
    operation_id = "getMemory",
    tag = "memories",
    summary = "Get a memory",
    description = "One unit with its provenance.",
    params(SpacePath, IdPath),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::MemoryOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn get_memory(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> ApiResult<Json<MemoryOut>> {
    let pin = who.require_in(&space, Need::Read)?;
    let uid = id.clone();
    blocking(&st, move |m| m.units(&space, &[uid]))
        .await?
        .into_iter()
        .find(|u| pin.holds_unit(u))
        .map(|u| Json(u.into()))
        .ok_or_else(|| ApiError::not_found("memory_not_found", format!("memory {id:?} not found")))
}

/// A memory is derived from messages; deleting it forgets those messages (and so every
/// unit, index entry and cached vector derived from them), in one write. Anything less
/// would leave the text recallable through the verbatim record.
#[utoipa::path(
    delete,
    path = "/v1/spaces/{space}/memories/{id}",
    operation_id = "deleteMemory",
    tag = "memories",
    summary = "Delete a memory",
    description = "Forgets what the memory was derived from, in one write: the messages it cites (the session goes when none is left), or for a slice, event or note its whole trajectory. A profile is computed from a speaker's messages and cannot be forgotten alone (422 `not_deletable`: forget the messages).",
    params(SpacePath, IdPath),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::ForgotMemory),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn delete_memory(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> ApiResult<Json<ForgotMemory>> {
    Ok(Json(
        crate::ops::forget_memory(&st, &who, &space, id).await?,
    ))
}
