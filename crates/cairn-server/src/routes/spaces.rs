//! Spaces, their counts, and the server's own liveness routes (the document's route is
//! `openapi.rs`'s).
use super::handler::{ApiResult, S};
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::{self, blocking};
use crate::wire::doc::*;
use crate::wire::out::{
    AllStats, Deleted, ForgotPartition, Health, Ready, SpaceCreated, SpaceList, StatsOut,
};
use crate::wire::{CreateSpace, ForgetPartition, WireJson};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};

#[utoipa::path(
    get,
    path = "/v1/health",
    operation_id = "health",
    tag = "service",
    summary = "Liveness",
    description = "The process is up. No key needed.",
    responses(
        (status = 200, description = "OK", body = inline(crate::wire::out::Health)),
    ),
    security(()),
)]
pub(super) async fn health() -> Json<Health> {
    Json(Health {
        status: "ok",
        version: cairn::VERSION,
    })
}

#[utoipa::path(
    get,
    path = "/v1/ready",
    operation_id = "ready",
    tag = "service",
    summary = "Readiness",
    description = "The store answers reads. 503 `not_ready` otherwise. No key needed.",
    responses(
        (status = 200, description = "OK", body = inline(crate::wire::out::Ready)),
        (status = 503, description = "Problem details (RFC 9457) with a stable `code`", body = crate::error::Problem, content_type = "application/problem+json"),
        (status = 403, response = Forbidden),
    ),
    security(()),
)]
pub(super) async fn ready(State(st): State<S>) -> ApiResult<Json<Ready>> {
    let spaces = blocking(&st, |m| m.spaces())
        .await
        .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "not_ready", e.detail))?;
    Ok(Json(Ready {
        status: "ready",
        spaces: spaces.len(),
    }))
}

#[utoipa::path(
    get,
    path = "/v1/spaces",
    operation_id = "listSpaces",
    tag = "spaces",
    summary = "List spaces",
    description = "The spaces this key may see.",
    responses(
        (status = 200, description = "OK", body = inline(crate::wire::out::SpaceList)),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn list_spaces(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
) -> ApiResult<Json<SpaceList>> {
    let spaces = blocking(&st, |m| m.spaces()).await?;
    let names: Vec<String> = spaces
        .into_iter()
        .map(|s| s.to_string())
        .filter(|s| who.can_see(s))
        .collect();
    Ok(Json(SpaceList { spaces: names }))
}

#[utoipa::path(
    post,
    path = "/v1/spaces",
    operation_id = "createSpace",
    tag = "spaces",
    summary = "Create a space",
    description = "Idempotent: 201 when created, 200 when it existed.",
    request_body = inline(crate::wire::CreateSpace),
    responses(
        (status = 200, description = "Existed", body = crate::wire::out::SpaceCreated),
        (status = 201, description = "Created", body = crate::wire::out::SpaceCreated),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn create_space(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    WireJson(body): WireJson<CreateSpace>,
) -> ApiResult<(StatusCode, Json<SpaceCreated>)> {
    who.require(&body.name, Need::Write)?;
    let name = body.name.clone();
    let created = blocking(&st, move |m| m.create_space(&name))
        .await
        .map_err(|e| e.nested("name"))?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(SpaceCreated {
            name: body.name,
            created,
        }),
    ))
}

#[utoipa::path(
    delete,
    path = "/v1/spaces/{space}",
    operation_id = "deleteSpace",
    tag = "spaces",
    summary = "Forget a space",
    description = "Deletes every session, unit, index entry and cached vector of the space.",
    params(SpacePath),
    responses(
        (status = 200, description = "OK", body = inline(crate::wire::out::Deleted)),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn delete_space(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Json<Deleted>> {
    who.require(&space, Need::Write)?;
    let sp = space.clone();
    let existed = blocking(&st, move |m| m.forget_space(&sp)).await?;
    if !existed {
        return Err(no_space(&space));
    }
    Ok(Json(Deleted { deleted: true }))
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{space}/partitions/forget",
    operation_id = "forgetPartition",
    tag = "spaces",
    summary = "Forget an end user (a partition)",
    description = "A data-protection request (Mem0's `delete_all(user_id=...)`): forgets every session of the space whose metadata holds the partition's values (`{\"user_id\": \"u1\"}` takes u1's sessions whatever their other keys) and everything derived from them (units, facts, profile contributions, entity mentions, vectors, index entries, cached vectors), in one write, scrubbed from the files before it answers. Needs write access. A partition holding no session answers 200 with zeros, not 404, so the request can be repeated.",
    params(SpacePath),
    request_body = crate::wire::ForgetPartition,
    responses(
        (status = 200, description = "OK", body = crate::wire::out::ForgotPartition),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn forget_partition(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(body): WireJson<ForgetPartition>,
) -> ApiResult<Json<ForgotPartition>> {
    let partition = cairn::Partition::parse(&body.partition)
        .map_err(|e| ApiError::from(cairn::Error::from(e)))?;
    Ok(Json(
        ops::forget_partition(&st, &who, &space, partition).await?,
    ))
}

pub(super) fn no_space(space: &str) -> ApiError {
    ApiError::not_found("space_not_found", format!("space {space:?} does not exist"))
}

pub(super) async fn require_space(st: &S, space: &str) -> ApiResult<()> {
    let sp = space.to_string();
    if blocking(st, move |m| m.space_exists(&sp)).await? {
        Ok(())
    } else {
        Err(no_space(space))
    }
}

#[utoipa::path(
    get,
    path = "/v1/stats",
    operation_id = "allStats",
    tag = "spaces",
    summary = "Stats of every visible space",
    description = "",
    responses(
        (status = 200, description = "OK", body = inline(crate::wire::out::AllStats)),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn all_stats(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
) -> ApiResult<Json<AllStats>> {
    let stats = blocking(&st, move |m| {
        m.spaces()?
            .into_iter()
            .filter(|s| who.can_see(s.as_str()))
            .map(|s| m.stats(s.as_str()).map(StatsOut::from))
            .collect::<Result<Vec<_>, _>>()
    })
    .await?;
    Ok(Json(AllStats { spaces: stats }))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/stats",
    operation_id = "spaceStats",
    tag = "spaces",
    summary = "Stats of a space",
    description = "Counts of sessions, messages and units by kind.",
    params(SpacePath),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::StatsOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn space_stats(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Json<StatsOut>> {
    who.require(&space, Need::Read)?;
    require_space(&st, &space).await?;
    Ok(Json(blocking(&st, move |m| m.stats(&space)).await?.into()))
}
