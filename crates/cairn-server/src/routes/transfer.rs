//! Export and import of a space (JSONL: session records, then trajectory records).
use super::{ingested, write_options, ApiResult, S};
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::blocking;
use crate::wire::doc::*;
use crate::wire::{read_body, require_media_type};
use axum::extract::{Path, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use serde_json::Value;

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/export",
    operation_id = "export",
    tag = "sessions",
    summary = "Export a space",
    description = "JSONL, one SessionRecord per line, exactly as stored.",
    params(SpacePath),
    responses(
        (status = 200, description = "OK", body = String, content_type = "application/x-ndjson"),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn export(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Response> {
    who.require(&space, Need::Read)?;
    let body = blocking(&st, move |m| {
        let mut out = Vec::new();
        m.export(&space, &mut out)?;
        Ok(out)
    })
    .await?;
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], body).into_response())
}

/// The types an import body may declare: an export is JSON lines (one JSON value is one
/// line too).
const NDJSON: &[&str] = &[
    "application/x-ndjson",
    "application/ndjson",
    "application/jsonl",
    "application/x-jsonlines",
    "application/jsonlines",
    "application/json",
];

/// Restores an export (of this space or any other) into this space: every record is
/// written here whatever space its line names, so a key can neither write another space
/// through an import file nor have to rewrite an export to restore it elsewhere.
#[utoipa::path(
    post,
    path = "/v1/spaces/{space}/import",
    operation_id = "import",
    tag = "sessions",
    summary = "Import an export",
    description = "Restores an export (JSONL: session records, then trajectory records, as `export` writes them) into this space: every record is written here whatever space its line names, so an export of one space restores as another. Every line is read and checked before anything is written; errors name the line as `lines[i]`. Bounded like any write (at most `max_batch_sessions` records and `max_request_messages` messages and states); split a larger file by lines.",
    params(SpacePath, IdempotencyHeader),
    request_body(content = String, content_type = "application/x-ndjson"),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::Ingested, headers(("Idempotency-Replayed" = String, description = "`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`: nothing was written now."))),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 413, response = TooLarge),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn import(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    req: Request,
) -> ApiResult<Response> {
    who.require(&space, Need::Write)?;
    require_media_type(req.headers(), NDJSON, "application/x-ndjson")?;
    let opts = write_options(req.headers())?;
    let bytes = read_body(req, &st.config).await?;
    check_import(&st, &bytes)?;
    let report = blocking(&st, move |m| {
        m.import_with(std::io::Cursor::new(bytes), Some(&space), &opts)
    })
    .await?;
    Ok(ingested(report))
}

/// An import is bounded like any write: its messages and states count together.
fn check_import(st: &S, bytes: &[u8]) -> ApiResult<()> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "malformed_json",
            "body is not UTF-8",
        )
    })?;
    let limits = &st.config.limits;
    let (mut sessions, mut items) = (0usize, 0usize);
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "malformed_json",
                format!("line {}: malformed JSON: {e}", i + 1),
            )
            .with_field(format!("lines[{i}]"))
        })?;
        let count = |path: &[&str]| {
            path.iter()
                .try_fold(&v, |v, k| v.get(k))
                .and_then(Value::as_array)
                .map_or(0, Vec::len)
        };
        sessions += 1;
        items += count(&["session", "messages"]) + count(&["trajectory", "states"]);
    }
    if sessions > limits.max_batch_sessions || items > limits.max_request_messages {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_much_work",
            format!(
                "{sessions} records with {items} messages and states in one import (at most {} records, {} messages and states); split the file by lines into several imports, or restore it locally with `cairn import`",
                limits.max_batch_sessions, limits.max_request_messages
            ),
        ));
    }
    Ok(())
}
