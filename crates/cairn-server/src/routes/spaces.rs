//! Spaces, their counts, and the server's own liveness routes.
use super::{ApiResult, S};
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::blocking;
use crate::wire::out::StatsOut;
use crate::wire::{CreateSpace, WireJson};
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::{Extension, Json};
use serde_json::{json, Value};

pub(super) async fn health() -> Json<Value> {
    Json(json!({"status": "ok", "version": cairn::VERSION}))
}

pub(super) async fn ready(State(st): State<S>) -> ApiResult<Json<Value>> {
    let spaces = blocking(&st, |m| m.spaces())
        .await
        .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "not_ready", e.detail))?;
    Ok(Json(json!({"status": "ready", "spaces": spaces.len()})))
}

pub(super) async fn openapi() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], super::OPENAPI)
}

pub(super) async fn list_spaces(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
) -> ApiResult<Json<Value>> {
    let spaces = blocking(&st, |m| m.spaces()).await?;
    let names: Vec<String> = spaces
        .into_iter()
        .map(|s| s.to_string())
        .filter(|s| who.can_see(s))
        .collect();
    Ok(Json(json!({ "spaces": names })))
}

pub(super) async fn create_space(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    WireJson(body): WireJson<CreateSpace>,
) -> ApiResult<(StatusCode, Json<Value>)> {
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
    Ok((status, Json(json!({"name": body.name, "created": created}))))
}

pub(super) async fn delete_space(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Json<Value>> {
    who.require(&space, Need::Write)?;
    let sp = space.clone();
    let existed = blocking(&st, move |m| m.forget_space(&sp)).await?;
    if !existed {
        return Err(no_space(&space));
    }
    Ok(Json(json!({"deleted": true})))
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

pub(super) async fn all_stats(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
) -> ApiResult<Json<Value>> {
    let stats = blocking(&st, move |m| {
        m.spaces()?
            .into_iter()
            .filter(|s| who.can_see(s.as_str()))
            .map(|s| m.stats(s.as_str()).map(StatsOut::from))
            .collect::<Result<Vec<_>, _>>()
    })
    .await?;
    Ok(Json(json!({ "spaces": stats })))
}

pub(super) async fn space_stats(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Json<StatsOut>> {
    who.require(&space, Need::Read)?;
    require_space(&st, &space).await?;
    Ok(Json(blocking(&st, move |m| m.stats(&space)).await?.into()))
}
