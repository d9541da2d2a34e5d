//! A write's `Idempotency-Key` header, and the answer to a write that says whether it
//! was replayed.
use super::handler::ApiResult;
use crate::error::ApiError;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use cairn::WriteOptions;

/// The write options of a request: its `Idempotency-Key` header, if any.
pub(super) fn write_options(headers: &HeaderMap) -> ApiResult<WriteOptions> {
    match headers.get("idempotency-key") {
        None => Ok(WriteOptions::default()),
        Some(v) => {
            let key = v.to_str().map_err(|_| {
                ApiError::invalid("Idempotency-Key", "must be visible ASCII characters")
            })?;
            Ok(WriteOptions::with_key(key))
        }
    }
}

/// Answers a write: 200 with the report, and `Idempotency-Replayed: true` when it is the
/// first answer to a request made before with the same key.
pub(super) fn ingested(report: cairn::IngestReport) -> Response {
    let replayed = report.replayed;
    let body = axum::Json(crate::wire::out::Ingested::from(report));
    if replayed {
        ([("idempotency-replayed", "true")], body).into_response()
    } else {
        body.into_response()
    }
}
