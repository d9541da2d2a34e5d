//! Wire JSON: request bodies and their parsing (this file), the ingest formats
//! (`formats.rs`, read and written), response bodies (`out.rs`, `records.rs`,
//! `entities.rs`, `explain.rs`, `inspection.rs`), and what the OpenAPI document needs
//! besides (`doc.rs`). The server's own types: a library type renamed or reshaped is a
//! compile error here, not a silent change of the HTTP API, and the document's schemas are
//! derived from them (`routes/openapi.rs`); `tests/http.rs` checks every body against the
//! document too.
pub mod doc;
pub mod entities;
pub mod explain;
pub mod formats;
pub mod inspection;
pub mod out;
pub mod records;
pub mod scope;
pub mod stated;
mod time;
pub mod warning;

use formats::{GroupMessageWire, MessageWire, SessionInputWire, TrajectoryInputWire};
pub use scope::ScopeWire;
pub use time::parse_time;
use utoipa::{IntoParams, ToSchema};

use crate::error::ApiError;
use crate::AppState;
use axum::extract::{FromRequest, Request};
use axum::http::{header, StatusCode};
use cairn::{Format, UnitKind};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// A JSON body read within the server's size limit and parsed with the path of the
/// failing field: `messages[2].text: invalid type: integer, expected a string`.
pub struct WireJson<T>(pub T);

impl<T: DeserializeOwned> FromRequest<Arc<AppState>> for WireJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &Arc<AppState>) -> Result<Self, ApiError> {
        require_media_type(req.headers(), &["application/json"], "application/json")?;
        let bytes = read_body(req, &state.config).await?;
        parse(&bytes).map(WireJson)
    }
}

/// Refuses (415) a body whose `Content-Type` is none of `accepted` (or a `+json` type).
/// Every route that takes a body checks it before reading it: the types a web page may
/// send to another origin without asking first (`text/plain`, form-urlencoded,
/// multipart) are never ours, so a page cannot write into a server it can reach, such as
/// one on loopback without keys.
pub fn require_media_type(
    headers: &axum::http::HeaderMap,
    accepted: &[&str],
    preferred: &str,
) -> Result<(), ApiError> {
    let ok = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|m| {
            let m = m.trim().to_ascii_lowercase();
            accepted.contains(&m.as_str()) || m.ends_with("+json")
        })
        .unwrap_or(false);
    if ok {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        format!("send the body with `Content-Type: {preferred}`"),
    )
    .with_field("Content-Type"))
}

/// Reads a whole body, refusing (413) past the body limit without buffering the rest, and
/// (408) a body that takes longer than the body timeout to arrive: a client dripping a
/// byte at a time must not hold a connection and a handler for ever.
pub async fn read_body(
    req: Request,
    config: &crate::ServerConfig,
) -> Result<axum::body::Bytes, ApiError> {
    let limit = config.limits.max_body_bytes;
    let timeout = config.connections.body_timeout;
    let read = tokio::time::timeout(timeout, axum::body::to_bytes(req.into_body(), limit));
    let Ok(read) = read.await else {
        return Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            format!(
                "the body did not arrive within {} s; send it at once",
                timeout.as_secs_f64()
            ),
        ));
    };
    read.map_err(|e| {
        // `to_bytes` reports the limit as its own error kind somewhere in the chain.
        let too_large = std::error::Error::source(&e)
            .map(|s| s.to_string().contains("length limit"))
            .unwrap_or(false)
            || e.to_string().contains("length limit");
        if too_large {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                format!("the body is larger than {limit} bytes"),
            )
        } else {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_body",
                format!("reading the body: {e}"),
            )
        }
    })
}

/// Parses JSON naming the failing field. Syntax errors are 400 `malformed_json`;
/// well-formed JSON of the wrong shape is 422 `invalid_field`.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let result = serde_path_to_error::deserialize(&mut de);
    if result.is_ok() {
        // Trailing bytes after a complete value are malformed JSON too.
        de.end().map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "malformed_json",
                format!("malformed JSON: {e}"),
            )
        })?;
    }
    result.map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "malformed_json",
                format!("malformed JSON: {inner}"),
            )
        } else {
            let message = inner.to_string();
            // An error without a path is the whole object's (a field unknown or missing:
            // serde's own words) or one inside the flattened scope.
            let whole =
                message.starts_with("unknown field") || message.starts_with("missing field");
            let (field, inner) = match path.as_str() {
                "." if !whole => {
                    ScopeWire::locate_error(&serde_json::from_slice(bytes).unwrap_or_default())
                        .filter(|(at, _)| at != ".")
                        .unwrap_or((String::new(), message))
                }
                "." => (String::new(), message),
                _ => (path, message),
            };
            let detail = if field.is_empty() {
                inner.to_string()
            } else {
                format!("{field}: {inner}")
            };
            let err = ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_field", detail);
            if field.is_empty() {
                err
            } else {
                err.with_field(field)
            }
        }
    })
}

/// `POST /v1/spaces`.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSpace {
    pub name: String,
}

/// `POST /v1/keys`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateKey {
    /// The spaces the key may use (at least one).
    pub spaces: Vec<String>,
    /// The key may read but not write.
    #[serde(default)]
    pub read_only: bool,
    /// A note to tell keys apart.
    #[serde(default)]
    pub label: Option<String>,
    /// Pin the key to one end user's partition: `{"user_id": "u1"}` (keys `user_id`,
    /// `agent_id`, `namespace`).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub partition: Option<serde_json::Value>,
}

/// `POST /v1/spaces/{space}/partitions/forget`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetPartition {
    /// The end-user partition: an object of `user_id`, `agent_id`, `namespace` and their values, e.g. `{"user_id": "u1"}`. Every session whose metadata holds each value is forgotten, whatever its other keys.
    #[schema(value_type = Object)]
    pub partition: Value,
}

/// Query of `DELETE /v1/spaces/{space}/sessions/{session}/messages/{message}`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ForgetMessageQuery {
    /// Also forget the reply to the message: the next message of the session, when another speaker (another role) wrote it.
    #[param(required = false)]
    pub exchange: Option<bool>,
}

/// `POST /v1/spaces/{space}/sessions/batch`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchIngest {
    pub sessions: Vec<SessionInputWire>,
}

impl BatchIngest {
    pub fn into_sessions(self) -> Vec<cairn::SessionInput> {
        self.sessions.into_iter().map(Into::into).collect()
    }
}

/// `POST /v1/spaces/{space}/group-messages`: messages of group chats (any groups, any
/// days); each group's day is a session `<group>/<YYYY-MM-DD>`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupIngest {
    pub messages: Vec<GroupMessageWire>,
}

impl GroupIngest {
    pub fn into_messages(self) -> Vec<cairn::GroupMessage> {
        self.messages.into_iter().map(Into::into).collect()
    }
}

/// `POST /v1/spaces/{space}/trajectories`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryIngest {
    pub trajectories: Vec<TrajectoryInputWire>,
}

impl TrajectoryIngest {
    pub fn into_trajectories(self) -> Vec<cairn::TrajectoryInput> {
        self.trajectories.into_iter().map(Into::into).collect()
    }
}

/// Query of `GET /v1/spaces/{space}/history`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct HistoryQuery {
    pub subject: String,
    #[param(required = false)]
    pub as_of: Option<String>,
    /// Metadata filter as JSON text, e.g. `{"user_id":"u1"}` (see the Filter schema): only what the sessions it admits hold is seen, as if the space held nothing else.
    #[param(required = false)]
    pub filter: Option<String>,
}

/// The scope of a read route's query parameters (`filter` as JSON text, as the listings
/// take it, and `as_of`): a [`ScopeWire`] of the two, checked as every scope is.
pub fn scope_of(
    filter: Option<&str>,
    as_of: Option<&str>,
) -> Result<cairn::ScopeOptions, ApiError> {
    ScopeWire {
        as_of: as_of.map(str::to_string),
        filter: filter_json(filter)?,
        ..Default::default()
    }
    .checked_options()
}

/// A `filter` query parameter (JSON text) as JSON; the library checks what it says.
pub fn filter_json(text: Option<&str>) -> Result<Option<serde_json::Value>, ApiError> {
    text.map(|text| {
        serde_json::from_str(text)
            .map_err(|e| ApiError::invalid("filter", format!("filter is not JSON: {e}")))
    })
    .transpose()
}

/// Query of the knowledge reads that take a scope alone (`speakers`, `profiles/{speaker}`,
/// `subjects`, `entities/{name}`).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ScopeQuery {
    /// As known at this time (default now): what occurred later is invisible, and undated records recorded later too.
    #[param(required = false)]
    pub as_of: Option<String>,
    /// Metadata filter as JSON text, e.g. `{"user_id":"u1"}` (see the Filter schema): only what the sessions it admits hold is seen, as if the space held nothing else.
    #[param(required = false)]
    pub filter: Option<String>,
}

impl ScopeQuery {
    pub fn options(&self) -> Result<cairn::ScopeOptions, ApiError> {
        scope_of(self.filter.as_deref(), self.as_of.as_deref())
    }
}

/// `POST /v1/spaces/{space}/messages`: append messages to a session, creating it on first
/// use (Mem0's `add`). Header fields apply when the session is new; for a stored session
/// they must be absent or equal to what is stored (see [`cairn::AppendInput`]).
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddMessages {
    // Plain comments, not docs, where the document says nothing: docs become its text.
    // The conversation these messages continue.
    pub session_id: String,
    // Messages in order: `role` (user, assistant, system) or `speaker`, and `text`;
    // optional `id`, `occurred_at`, `metadata`.
    pub messages: Vec<MessageWire>,
    // When the session happened (any date shape Cairn reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurred_at: Option<String>,
    // Group conversation id, for multi-party chats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Session metadata, e.g. {"user_id":"u1","agent_id":"a1","run_id":"r1"}.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[schema(value_type = Object)]
    pub metadata: Value,
}

impl AddMessages {
    pub fn into_input(self) -> Result<cairn::AppendInput, ApiError> {
        let occurred_at = self
            .occurred_at
            .as_deref()
            .map(|t| parse_time(t, "occurred_at"))
            .transpose()?;
        Ok(cairn::AppendInput {
            session_id: self.session_id,
            messages: formats::messages(self.messages),
            occurred_at,
            group: self.group,
            metadata: self.metadata,
        })
    }
}

fn default_top_k() -> usize {
    cairn::RecallOptions::default().top_k
}
fn default_budget() -> usize {
    cairn::RecallOptions::default().token_budget
}
fn default_min_relevance() -> f32 {
    cairn::RecallOptions::default().min_relevance
}

// `POST /v1/spaces/{space}/recall`: every option of the library, plus a metadata filter.
// The document states the bounds and defaults from the library (`routes/openapi.rs`).
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallRequest {
    pub query: String,
    #[serde(default = "default_top_k")]
    pub top_k: usize,
    #[serde(default = "default_budget")]
    pub token_budget: usize,
    #[serde(default)]
    #[schema(value_type = String)]
    pub format: Format,
    /// At most this many hits of a kind, e.g. {"note": 2, "slice": 5}.
    #[serde(default)]
    #[schema(value_type = Option<BTreeMap<String, usize>>)]
    pub quotas: Option<std::collections::BTreeMap<UnitKind, usize>>,
    /// The relevance floor: a recall none of whose places reaches it (their relevance, the cosine of query and hit) has no hits, an empty context and `no_relevant_memory: true`; otherwise the hits are those without a floor. A question about the asker or someone they name, asked of the asker's own conversations (places the user speaks in), is not refused. -1 turns it off.
    #[serde(default = "default_min_relevance")]
    pub min_relevance: f32,
    /// Explain each hit's score (`hits[].explain`) and what packing did (`explain`). Nothing is computed for it when false.
    #[serde(default)]
    #[schema(default = false)]
    pub explain: bool,
    /// What the recall sees (`as_of`, `since`, `sessions`, `speakers`, `groups`, `kinds`,
    /// `filter`, `partition`), beside the other fields.
    #[serde(flatten)]
    pub scope: ScopeWire,
}

impl RecallRequest {
    /// The library's options (times parsed; everything else checked by the library).
    pub fn options(&self) -> Result<cairn::RecallOptions, ApiError> {
        Ok(cairn::RecallOptions {
            top_k: self.top_k,
            token_budget: self.token_budget,
            format: self.format,
            quotas: self.quotas.clone(),
            min_relevance: self.min_relevance,
            explain: self.explain,
            scope: self.scope.options()?,
        })
    }
}

/// Query of `GET /v1/spaces/{space}/memories`. (`limit`'s bounds and the kinds are
/// stated from the library by `routes/openapi.rs`.)
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ListMemories {
    /// Page size.
    #[param(required = false)]
    pub limit: Option<usize>,
    /// Where the page starts (`next_offset` of the previous page).
    #[param(required = false, minimum = 0, default = 0)]
    pub offset: Option<usize>,
    /// Only this kind, or `all` for every unit (default: messages, facts and trajectory notes).
    #[param(required = false)]
    pub kind: Option<String>,
    /// Only from this session.
    #[param(required = false)]
    pub session_id: Option<String>,
    /// Only with this speaker.
    #[param(required = false)]
    pub speaker: Option<String>,
    /// Occurred at or after this date (undated units stay, as in recall's `since`).
    #[param(required = false)]
    pub since: Option<String>,
    /// Occurred at or before this date.
    #[param(required = false)]
    pub until: Option<String>,
    /// Metadata filter as JSON text, e.g. `{"user_id":"u1"}` (see the Filter schema).
    #[param(required = false)]
    pub filter: Option<String>,
    /// As known at this time (default now): what occurred later is invisible, and undated records recorded later too.
    #[param(required = false)]
    pub as_of: Option<String>,
}

/// Query of `GET /v1/spaces/{space}/sessions`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ListSessions {
    /// Page size.
    #[param(required = false)]
    pub limit: Option<usize>,
    /// Where the page starts (`next_offset` of the previous page).
    #[param(required = false, minimum = 0, default = 0)]
    pub offset: Option<usize>,
    /// Metadata filter as JSON text, e.g. `{"user_id":"u1"}` (see the Filter schema).
    #[param(required = false)]
    pub filter: Option<String>,
}

/// A page of a listing.
#[derive(Debug, Serialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub total: usize,
    pub offset: usize,
    /// Where the next page starts; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// What the caller should know about its request (a `filter` key no session carries).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<warning::WarningOut>,
}

impl<T> Page<T> {
    /// One page of `total` items that starts at `offset`.
    pub fn new(items: Vec<T>, total: usize, offset: usize) -> Self {
        let end = offset.saturating_add(items.len());
        Self {
            next_offset: (end < total).then_some(end),
            items,
            total,
            offset,
            warnings: Vec::new(),
        }
    }

    /// The page with the warnings of its request.
    pub fn warned(mut self, warnings: Vec<cairn::Warning>) -> Self {
        self.warnings = warning::warnings_out(warnings);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scope option the library gains reaches HTTP recall or fails here: every option
    /// set (the literal names them all, so a new field stops the build until it is
    /// added), sent as the library writes it, must come back from the request unchanged.
    #[test]
    fn a_recall_request_carries_every_scope_option() {
        let time = |t: &str| cairn::parse_timestamp(t).expect("a time");
        let full = cairn::ScopeOptions {
            as_of: Some(time("2024-05-01T10:00:00Z")),
            since: Some(time("2024-01-02T00:00:00Z")),
            sessions: Some(vec!["s1".into()]),
            speakers: Some(vec!["Ann".into()]),
            groups: Some(vec!["team".into()]),
            kinds: Some(vec![UnitKind::Fact, UnitKind::Turn]),
            filter: Some(serde_json::json!({"project": "apollo"})),
            partition: Some(serde_json::json!({"user_id": "u1"})),
        };
        let mut body = serde_json::to_value(&full).expect("options serialise");
        body["query"] = "where does Ann work?".into();
        let req: RecallRequest = parse(body.to_string().as_bytes())
            .unwrap_or_else(|e| panic!("a scope option is not a field of RecallRequest: {e:?}"));
        assert_eq!(req.options().expect("valid options").scope, full);
    }
}
