//! The admin API for keys: what `cairn keys` does, over HTTP, for the admin key only (a
//! product that makes one pinned key per end user makes them here).
use super::handler::{ApiResult, S};
use crate::auth::{Access, KeyInfo, NewKey, Principal};
use crate::error::{ApiError, ServerError};
use crate::wire::doc::*;
use crate::wire::CreateKey;
use crate::wire::WireJson;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde_json::{json, Value};

/// Keys are the admin's: any other key is refused, whatever spaces it has.
fn require_admin(who: &Principal) -> ApiResult<()> {
    if who.access == Access::All {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::FORBIDDEN,
        "admin_only",
        "only the admin key manages keys",
    ))
}

/// The key store's refusal of a key's settings names what was wrong; anything else is
/// the store's failure.
fn key_error(e: ServerError) -> ApiError {
    match e {
        ServerError::Config(detail) => ApiError::invalid(
            if detail.contains("partition") {
                "partition"
            } else {
                "spaces"
            },
            detail,
        ),
        other => ApiError::internal(other),
    }
}

#[utoipa::path(
    post,
    path = "/v1/keys",
    operation_id = "createKey",
    tag = "keys",
    summary = "Create a key (admin)",
    description = "A key for `spaces`, read-only or not, optionally pinned to one end user's partition (`partition`: `{\"user_id\": \"u1\"}`; keys `user_id`, `agent_id`, `namespace`): every read through a pinned key is that partition's whatever the request says, every write is tagged with it (naming another value is refused), a record outside it answers 404, and routes that read a whole space refuse it (403 `pinned_key`). The token is in this answer only.",
    request_body = crate::wire::CreateKey,
    responses(
        (status = 201, description = "Created", body = crate::auth::NewKey),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn create(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    WireJson(body): WireJson<CreateKey>,
) -> ApiResult<(StatusCode, Json<NewKey>)> {
    require_admin(&who)?;
    let key = st
        .keys
        .create(
            &body.spaces,
            body.read_only,
            body.label.as_deref(),
            body.partition.as_ref(),
        )
        .map_err(key_error)?;
    Ok((StatusCode::CREATED, Json(key)))
}

#[utoipa::path(
    get,
    path = "/v1/keys",
    operation_id = "listKeys",
    tag = "keys",
    summary = "List keys (admin)",
    description = "Every key, revoked ones included, never with its token.",
    responses(
        (status = 200, description = "OK", body = Vec<crate::auth::KeyInfo>),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn list(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
) -> ApiResult<Json<Vec<KeyInfo>>> {
    require_admin(&who)?;
    Ok(Json(st.keys.list().map_err(ApiError::internal)?))
}

#[utoipa::path(
    delete,
    path = "/v1/keys/{id}",
    operation_id = "revokeKey",
    tag = "keys",
    summary = "Revoke a key (admin)",
    description = "Takes effect on the key's next request. 404 when no live key has the id.",
    params(("id" = String, Path, description = "The key's id (the part after `cairn_`).")),
    responses(
        (status = 200, description = "OK", body = inline(Object)),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn revoke(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    require_admin(&who)?;
    if !st.keys.revoke(&id).map_err(ApiError::internal)? {
        return Err(ApiError::not_found(
            "key_not_found",
            format!("no live key with id {id:?}"),
        ));
    }
    Ok(Json(json!({ "revoked": id })))
}
