//! Errors: [`ApiError`] is what a client sees (RFC 9457 problem details with a stable
//! `code`); [`ServerError`] is what the library's own setup calls return.
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use cairn::Error as MemoryError;
use serde::Serialize;
use thiserror::Error;
use utoipa::ToSchema;

/// Errors of setting up or running the server (not of single requests).
#[derive(Debug, Error)]
pub enum ServerError {
    #[error("key store: {0}")]
    KeyRecords(#[from] cairn::StoreError),
    #[error("random source: {0}")]
    Random(String),
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Memory(#[from] MemoryError),
    #[error("MCP: {0}")]
    Mcp(String),
}

/// A request failed. Serialized as `application/problem+json`:
/// `{"type", "title", "status", "detail", "code", "field"?}`. `code` is stable and meant
/// for programs; `detail` is for people and may change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiError {
    #[serde(skip)]
    pub status: StatusCode,
    pub code: &'static str,
    pub detail: String,
    /// The input field at fault, when one is: a JSON path into the body
    /// (`messages[0].text`), a query or path parameter, or a header name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// Problem details (RFC 9457), the body of every error answer
/// (`application/problem+json`).
#[derive(Debug, Serialize, ToSchema)]
pub struct Problem<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub title: &'a str,
    pub status: u16,
    /// Stable: malformed_json, invalid_field, invalid_input, invalid_query, batch_too_large, text_too_long, session_too_large, payload_too_large, unsupported_media_type, unauthorized, forbidden, read_only_key, space_not_found, not_found, memory_not_found, not_deletable, conflict, route_not_found, method_not_allowed, invalid_path, not_ready, too_much_work, insufficient_storage, storage_read_only, internal.
    pub code: &'static str,
    pub detail: &'a str,
    /// The input field at fault (JSON path, query parameter, or validated record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<&'a str>,
}

impl<'a> Problem<'a> {
    /// The document of `e`, titled by its status's reason phrase.
    pub fn of(e: &'a ApiError, title: &'a str) -> Self {
        let ApiError {
            status,
            code,
            detail,
            field,
        } = e;
        Self {
            kind: "about:blank",
            title,
            status: status.as_u16(),
            code,
            detail,
            field: field.as_deref(),
        }
    }
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, detail: impl Into<String>) -> Self {
        Self {
            status,
            code,
            detail: detail.into(),
            field: None,
        }
    }

    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = code;
        self
    }

    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Well-formed input that fails validation (422).
    pub fn invalid(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_input", detail).with_field(field)
    }

    pub fn not_found(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, detail)
    }

    /// A failure of the server itself. The cause is logged, never sent: it may name files
    /// or internals a client has no business seeing.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error; the server log has the cause",
        )
    }
}

impl From<MemoryError> for ApiError {
    fn from(e: MemoryError) -> Self {
        use cairn::StoreError::{NoSuchSpace, NotFound};
        match e {
            MemoryError::Input(i) => {
                let err = match i.too_large {
                    // A session past `MAX_SESSION_BYTES`: the write is refused by its size,
                    // like a body or a text past theirs.
                    Some(cairn::TooLarge::Session) => ApiError::new(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "session_too_large",
                        i.to_string(),
                    ),
                    _ => ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "invalid_input",
                        i.to_string(),
                    ),
                };
                match i.field {
                    Some(f) => err.with_field(f),
                    None => err,
                }
            }
            MemoryError::Conflict(c) => {
                let err = ApiError::new(StatusCode::CONFLICT, "conflict", c.to_string());
                match c.field {
                    Some(f) => err.with_field(f),
                    None => err,
                }
            }
            MemoryError::IdempotencyKeyReused(_) => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency_key_reused",
                "this Idempotency-Key was already used for a different request; use a new key for a new request",
            )
            .with_field("Idempotency-Key"),
            MemoryError::NotDeletable(m) => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "not_deletable", m)
            }
            MemoryError::OutOfTime(e) => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "too_much_work",
                e.to_string(),
            ),
            MemoryError::Store(NoSuchSpace(s)) => {
                ApiError::not_found("space_not_found", format!("space {s:?} does not exist"))
            }
            MemoryError::Store(NotFound(what)) => {
                ApiError::not_found("not_found", format!("{what} not found"))
            }
            // The operator's to fix, not the client's: said plainly (the message names
            // no file, only what to do), and distinct from `internal` so a client knows
            // nothing of the write was stored and a retry later may succeed.
            MemoryError::Store(cairn::StoreError::Full(cause)) => {
                tracing::error!(error = %cause, "the store's disk is full");
                ApiError::new(
                    StatusCode::INSUFFICIENT_STORAGE,
                    "insufficient_storage",
                    "the server's disk is full: nothing of this request was stored; reads still answer, and forgetting memories still works. The operator must free space (the server log has the cause)",
                )
            }
            MemoryError::Store(cairn::StoreError::ReadOnly(cause)) => {
                tracing::error!(error = %cause, "the store cannot be written");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "storage_read_only",
                    "the server's storage cannot be written: nothing of this request was stored; reads still answer. The operator must make the data directory writable (the server log has the cause)",
                )
            }
            other => ApiError::internal(other),
        }
    }
}

impl ApiError {
    /// The same error with its field path under `outer` (`[2].text` under `messages`
    /// is `messages[2].text`): the library names paths within what it was handed, the
    /// wire within the request body.
    pub fn nested(mut self, outer: &str) -> Self {
        self.field = Some(match self.field.take() {
            None => outer.to_string(),
            Some(f) if f.starts_with('[') => format!("{outer}{f}"),
            Some(f) => format!("{outer}.{f}"),
        });
        self
    }

    /// The same error with a leading `[0]` of its field path dropped: a body that is one
    /// record, handed to the library as a list of one.
    pub fn first_of_one(mut self) -> Self {
        if let Some(f) = &self.field {
            if let Some(rest) = f.strip_prefix("[0]") {
                let rest = rest.strip_prefix('.').unwrap_or(rest);
                self.field = (!rest.is_empty()).then(|| rest.to_string());
            }
        }
        self
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}): {}",
            self.status.as_u16(),
            self.code,
            self.detail
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let title = self.status.canonical_reason().unwrap_or("Error");
        let body = Problem::of(&self, title);
        let bytes = serde_json::to_vec(&body).unwrap_or_else(|_| b"{}".to_vec());
        let mut resp = (self.status, bytes).into_response();
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if self.status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"cairn\""),
            );
        }
        resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full disk and a read-only one each answer a code of their own (not `internal`),
    /// and the detail names no file: the cause, with its path, goes to the log only.
    #[test]
    fn full_and_read_only_disks_answer_their_own_codes() {
        let full = ApiError::from(MemoryError::Store(cairn::StoreError::Full(
            "the store's disk is full (/srv/cairn/records.sqlite3: ...)".into(),
        )));
        assert_eq!(full.status, StatusCode::INSUFFICIENT_STORAGE);
        assert_eq!(full.code, "insufficient_storage");
        assert!(!full.detail.contains("/srv/cairn"), "{}", full.detail);
        let read_only = ApiError::from(MemoryError::Store(cairn::StoreError::ReadOnly(
            "cannot be written (/srv/cairn/text: ...)".into(),
        )));
        assert_eq!(read_only.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(read_only.code, "storage_read_only");
        assert!(
            !read_only.detail.contains("/srv/cairn"),
            "{}",
            read_only.detail
        );
    }
}
