//! What the handlers of every resource share: the state they are handed, their result,
//! and reading a query string and a page limit.
use crate::error::ApiError;
use crate::AppState;
use axum::extract::rejection::QueryRejection;
use axum::extract::Query;
use axum::http::StatusCode;
use std::sync::Arc;

/// The state a handler is handed.
pub(super) type S = Arc<AppState>;
/// What a handler answers: its body, or a problem document.
pub(super) type ApiResult<T> = Result<T, ApiError>;

pub(super) fn page_limit(limit: Option<usize>) -> ApiResult<usize> {
    Ok(cairn::bounds::page_limit(limit).map_err(cairn::Error::from)?)
}

/// A query string as `T`, or `422 invalid_query` saying why not.
pub(super) fn query<T>(q: Result<Query<T>, QueryRejection>) -> ApiResult<T> {
    q.map(|Query(v)| v).map_err(|e| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_query",
            e.body_text(),
        )
    })
}
