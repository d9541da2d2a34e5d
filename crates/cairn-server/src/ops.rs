//! The operations behind both the HTTP handlers and the MCP tools: authorization, limits,
//! and the call into the library on the blocking pool. Handlers only translate wire shapes.
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::wire::{AddMessages, RecallRequest};
use crate::AppState;
use axum::http::StatusCode;
use cairn::filter::Filter;
use cairn::{IngestReport, Memory, Recall, RecallOptions, SessionInput, SessionRecord};
use serde_json::{json, Value};
use std::sync::Arc;

/// Runs a library call on the blocking pool: the engine does CPU work (embedding) and
/// synchronous I/O (SQLite with fsync) that must not stall the async workers. A panic in
/// the call becomes a 500, never a dropped connection.
pub async fn blocking<T, F>(state: &Arc<AppState>, f: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&Memory) -> Result<T, cairn::Error> + Send + 'static,
{
    let memory = state.memory.clone();
    match tokio::task::spawn_blocking(move || f(&memory)).await {
        Ok(r) => r.map_err(ApiError::from),
        Err(e) => Err(ApiError::internal(format!("library call failed: {e}"))),
    }
}

/// A write on the blocking pool, answered only once its text index is committed: what a
/// client was told is written is durable and visible to its next recall.
pub async fn blocking_write<T, F>(state: &Arc<AppState>, f: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&Memory) -> Result<T, cairn::Error> + Send + 'static,
{
    blocking(state, move |m| {
        let r = f(m)?;
        m.flush()?;
        Ok(r)
    })
    .await
}

/// The fields of the document a filter sees for a session; any other name is read under
/// `metadata` (see `cairn::filter`).
pub const FILTER_FIELDS: &[&str] = &[
    "session_id",
    "group",
    "occurred_at",
    "recorded_at",
    "metadata",
];

/// The document a filter is evaluated on: one per session.
pub fn session_doc(r: &SessionRecord) -> Value {
    json!({
        "session_id": r.session.id,
        "group": r.session.group,
        "occurred_at": r.session.occurred_at.map(|t| t.to_rfc3339()),
        "recorded_at": r.recorded_at.to_rfc3339(),
        "metadata": r.session.metadata,
    })
}

pub fn parse_filter(v: &Value, field: &str) -> Result<Filter, ApiError> {
    Filter::parse(v, FILTER_FIELDS).map_err(|e| {
        let path = e.record.replacen("filter", field, 1);
        ApiError::invalid(path, e.to_string())
    })
}

pub fn parse_time(raw: &str, field: &str) -> Result<cairn::Timestamp, ApiError> {
    cairn::parse_timestamp(raw).map_err(|e| ApiError::invalid(field, e.to_string()))
}

/// Refuses input past the server's limits, naming the field. (The library has its own,
/// larger limits; these are the ones a public endpoint should hold.)
pub fn check_limits(
    state: &AppState,
    sessions: &[SessionInput],
    prefix: &str,
) -> Result<(), ApiError> {
    let limits = &state.config.limits;
    if sessions.len() > limits.max_batch_sessions {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "batch_too_large",
            format!(
                "{} sessions in one request (at most {})",
                sessions.len(),
                limits.max_batch_sessions
            ),
        )
        .with_field(prefix.trim_end_matches('.').to_string()));
    }
    for (i, s) in sessions.iter().enumerate() {
        for (j, m) in s.messages.iter().enumerate() {
            if m.text.len() > limits.max_text_bytes {
                let at = if prefix.is_empty() {
                    format!("messages[{j}].text")
                } else {
                    format!("{prefix}[{i}].messages[{j}].text")
                };
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "text_too_long",
                    format!(
                        "{at} has {} bytes (at most {})",
                        m.text.len(),
                        limits.max_text_bytes
                    ),
                )
                .with_field(at));
            }
        }
    }
    Ok(())
}

/// The version history of a fact subject, as of a time; 404 when no fact has it.
pub async fn history(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    subject: String,
    as_of: Option<&str>,
) -> Result<cairn::FactHistory, ApiError> {
    who.require(space, Need::Read)?;
    let as_of = as_of.map(|t| parse_time(t, "as_of")).transpose()?;
    let sp = space.to_string();
    let asked = subject.clone();
    blocking(state, move |m| m.history(&sp, &asked, as_of))
        .await?
        .ok_or_else(|| ApiError::not_found("not_found", format!("no fact about {subject:?}")))
}

/// A speaker's profile; 404 for a name the space does not know.
pub async fn profile(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    speaker: String,
) -> Result<cairn::SpeakerProfile, ApiError> {
    who.require(space, Need::Read)?;
    let sp = space.to_string();
    let name = speaker.clone();
    blocking(state, move |m| m.profile(&sp, &name))
        .await?
        .ok_or_else(|| ApiError::not_found("not_found", format!("no speaker {speaker:?}")))
}

/// Refuses group messages past the server's limits (batch size, text length).
pub fn check_group_limits(
    state: &AppState,
    messages: &[cairn::GroupMessage],
) -> Result<(), ApiError> {
    let limits = &state.config.limits;
    if messages.len() > limits.max_batch_sessions * 100 {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "batch_too_large",
            format!(
                "{} messages in one request (at most {})",
                messages.len(),
                limits.max_batch_sessions * 100
            ),
        )
        .with_field("messages"));
    }
    if let Some((i, m)) = messages
        .iter()
        .enumerate()
        .find(|(_, m)| m.text.len() > limits.max_text_bytes)
    {
        let at = format!("messages[{i}].text");
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "text_too_long",
            format!(
                "{at} has {} bytes (at most {})",
                m.text.len(),
                limits.max_text_bytes
            ),
        )
        .with_field(at));
    }
    Ok(())
}

/// Refuses more trajectories in one request than sessions in a batch.
pub fn check_trajectory_limits(
    state: &AppState,
    trajectories: &[cairn::TrajectoryInput],
) -> Result<(), ApiError> {
    let max = state.config.limits.max_batch_sessions;
    if trajectories.len() > max {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "batch_too_large",
            format!(
                "{} trajectories in one request (at most {max})",
                trajectories.len()
            ),
        )
        .with_field("trajectories"));
    }
    Ok(())
}

/// Ingests sessions; acknowledged only once durable and searchable (the text index is
/// committed before the answer, so a client's next recall sees what it just wrote).
pub async fn ingest(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    sessions: Vec<SessionInput>,
) -> Result<IngestReport, ApiError> {
    who.require(space, Need::Write)?;
    let space = space.to_string();
    blocking_write(state, move |m| m.ingest_sessions(&space, sessions)).await
}

/// Appends messages to a session, creating it on first use. Appends to one space are
/// serialized here: each is a read-modify-write of the stored session, and two at once
/// would otherwise refuse each other as conflicts.
pub async fn add_messages(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    req: AddMessages,
) -> Result<IngestReport, ApiError> {
    who.require(space, Need::Write)?;
    let occurred_at = req
        .occurred_at
        .as_deref()
        .map(|t| parse_time(t, "occurred_at"))
        .transpose()?;
    let incoming = SessionInput {
        id: req.session_id.clone(),
        occurred_at,
        group: req.group.clone(),
        messages: req.messages.clone(),
        metadata: req.metadata.clone(),
    };
    check_limits(state, std::slice::from_ref(&incoming), "")?;
    if req.messages.is_empty() {
        return Err(ApiError::invalid("messages", "`messages` is empty"));
    }
    let lock = state.space_lock(space);
    let _guard = lock.lock().await;
    let sp = space.to_string();
    blocking_write(state, move |m| {
        let stored = if m.space_exists(&sp)? {
            m.session(&sp, &incoming.id)?
        } else {
            None
        };
        let session = match stored {
            None => incoming,
            Some(rec) => {
                let mut s = rec.session;
                let header_differs = (incoming.occurred_at.is_some()
                    && incoming.occurred_at != s.occurred_at)
                    || (incoming.group.is_some() && incoming.group != s.group)
                    || (!incoming.metadata.is_null() && incoming.metadata != s.metadata);
                if header_differs {
                    return Err(cairn::InputError::new(
                        format!("session {:?}", s.id),
                        "is stored with a different `occurred_at`, `group` or `metadata`; \
                         omit them to append",
                    )
                    .into());
                }
                // New messages without an id get their position in the whole session,
                // like messages of a session ingested at once.
                let base = s.messages.len();
                s.messages.extend(
                    incoming
                        .messages
                        .into_iter()
                        .enumerate()
                        .map(|(i, mut msg)| {
                            if msg.id.is_empty() {
                                msg.id = (base + i).to_string();
                            }
                            msg
                        }),
                );
                s
            }
        };
        m.ingest_session(&sp, session)
    })
    .await
}

/// Recall with every library option, plus a metadata filter evaluated on sessions and
/// handed to the engine as a session allow-list (so the packed context honours it too).
pub async fn recall(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    req: RecallRequest,
) -> Result<Recall, ApiError> {
    who.require(space, Need::Read)?;
    if req.query.len() > state.config.limits.max_text_bytes {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "text_too_long",
            format!(
                "query has more than {} bytes",
                state.config.limits.max_text_bytes
            ),
        )
        .with_field("query"));
    }
    let as_of = req
        .as_of
        .as_deref()
        .map(|t| parse_time(t, "as_of"))
        .transpose()?;
    let since = req
        .since
        .as_deref()
        .map(|t| parse_time(t, "since"))
        .transpose()?;
    let filter = req
        .filter
        .as_ref()
        .map(|f| parse_filter(f, "filter"))
        .transpose()?;
    let mut options = RecallOptions {
        top_k: req.top_k,
        token_budget: req.token_budget,
        format: req.format,
        as_of,
        since,
        sessions: req.sessions,
        speakers: req.speakers,
        groups: req.groups,
        kinds: req.kinds,
        quotas: req.quotas,
        explain: req.explain,
    };
    options.validate().map_err(|e| {
        let field = if e.problem.contains("top_k") {
            "top_k"
        } else if e.problem.contains("since") {
            "since"
        } else {
            "token_budget"
        };
        ApiError::invalid(field, e.to_string())
    })?;
    let space = space.to_string();
    let query = req.query;
    blocking(state, move |m| {
        if let Some(f) = filter {
            let allowed: Vec<String> = m
                .sessions(&space)?
                .iter()
                .filter(|r| f.matches(&session_doc(r)))
                .map(|r| r.session.id.clone())
                .filter(|id| options.sessions.as_ref().is_none_or(|s| s.contains(id)))
                .collect();
            options.sessions = Some(allowed);
        }
        m.recall(&space, &query, &options)
    })
    .await
}

/// Forgets a session, or one message of it. Returns the units removed.
pub async fn forget(
    state: &Arc<AppState>,
    who: &Principal,
    space: &str,
    session: &str,
    message: Option<&str>,
) -> Result<usize, ApiError> {
    who.require(space, Need::Write)?;
    let lock = state.space_lock(space);
    let _guard = lock.lock().await;
    let (sp, s, msg) = (
        space.to_string(),
        session.to_string(),
        message.map(str::to_string),
    );
    blocking(state, move |m| match msg {
        Some(msg) => m.forget_message(&sp, &s, &msg),
        None => m.forget_session(&sp, &s),
    })
    .await
}
