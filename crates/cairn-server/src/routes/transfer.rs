//! Export and import of a space (JSONL: session records, then trajectory records).
use super::{ingested, write_options, ApiResult, S};
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::blocking;
use crate::wire::{read_body, require_media_type};
use axum::extract::{Path, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use serde_json::Value;

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
