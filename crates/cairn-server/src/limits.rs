//! What one request may carry and cost. Limits bound the work a request can cause (bytes
//! read, messages derived and embedded), not what a memory may keep: a long message is
//! stored verbatim up to the library's own limit, and the engine bounds what of it is
//! embedded and indexed. Every refusal names the field and says how to fit.
use crate::error::ApiError;
use axum::http::StatusCode;
use cairn::{GroupMessage, SessionInput, TrajectoryInput};

/// Limits on what one request may carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body, in bytes (also bounds `import`).
    pub max_body_bytes: usize,
    /// Most sessions in one batch ingest or import.
    pub max_batch_sessions: usize,
    /// Most messages (and trajectory states) one write may add: each is derived into
    /// units and embedded, which is where a request's cost lies.
    pub max_request_messages: usize,
    /// Longest message text (and trajectory field), in bytes.
    pub max_text_bytes: usize,
    /// Longest recall query, in bytes.
    pub max_query_bytes: usize,
    /// Longest a request may work before it is answered 503 `too_much_work` (`None`: no
    /// bound). Checked by the engine's loops over a space on read paths (recall's
    /// stages, the entity graph, profiles, filtered listings), so a request whose cost
    /// some input makes grow cannot run away; writes are bounded by the sizes above.
    pub max_request_time: Option<std::time::Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 8 << 20,
            max_batch_sessions: 1000,
            max_request_messages: 1000,
            max_text_bytes: cairn::bounds::MAX_TEXT_BYTES,
            max_query_bytes: 16 << 10,
            max_request_time: Some(std::time::Duration::from_secs(10)),
        }
    }
}

fn too_many(what: &str, n: usize, max: usize, field: &str) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_much_work",
        format!("{n} {what} in one request (at most {max}); send them in several requests"),
    )
    .with_field(field)
}

/// A text over its bound: 413 `text_too_long` naming the field, on every route.
pub(crate) fn too_long(at: String, n: usize, max: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "text_too_long",
        format!("{at} has {n} bytes (at most {max})"),
    )
    .with_field(at)
}

impl Limits {
    /// Sessions of one request; `prefix` is their path (`sessions`), empty for a body that
    /// is one session.
    pub fn check_sessions(&self, sessions: &[SessionInput], prefix: &str) -> Result<(), ApiError> {
        let field = if prefix.is_empty() {
            "messages"
        } else {
            prefix
        };
        if sessions.len() > self.max_batch_sessions {
            return Err(
                too_many("sessions", sessions.len(), self.max_batch_sessions, field)
                    .with_code("batch_too_large"),
            );
        }
        let messages: usize = sessions.iter().map(|s| s.messages.len()).sum();
        if messages > self.max_request_messages {
            return Err(too_many(
                "messages",
                messages,
                self.max_request_messages,
                field,
            ));
        }
        for (i, s) in sessions.iter().enumerate() {
            for (j, m) in s.messages.iter().enumerate() {
                if m.text.len() > self.max_text_bytes {
                    let at = if prefix.is_empty() {
                        format!("messages[{j}].text")
                    } else {
                        format!("{prefix}[{i}].messages[{j}].text")
                    };
                    return Err(too_long(at, m.text.len(), self.max_text_bytes));
                }
            }
        }
        Ok(())
    }

    /// What an agent asks to keep: a note is one message text; turns are bounded as an
    /// append's messages.
    pub fn check_memo(&self, memo: &cairn::Memo) -> Result<(), ApiError> {
        match memo {
            cairn::Memo::Note(text) if text.len() > self.max_text_bytes => {
                Err(too_long("note".into(), text.len(), self.max_text_bytes))
            }
            cairn::Memo::Note(_) => Ok(()),
            cairn::Memo::Messages(ms) => self.check_texts(ms.iter().map(|m| m.text.as_str())),
        }
    }

    /// An append's messages, bounded as one session's.
    pub fn check_messages(&self, messages: &[cairn::Message]) -> Result<(), ApiError> {
        self.check_texts(messages.iter().map(|m| m.text.as_str()))
    }

    pub fn check_group(&self, messages: &[GroupMessage]) -> Result<(), ApiError> {
        self.check_texts(messages.iter().map(|m| m.text.as_str()))
    }

    /// One request's messages (`messages[i].text`): how many, and each text's length.
    fn check_texts<'a>(
        &self,
        texts: impl ExactSizeIterator<Item = &'a str>,
    ) -> Result<(), ApiError> {
        if texts.len() > self.max_request_messages {
            return Err(too_many(
                "messages",
                texts.len(),
                self.max_request_messages,
                "messages",
            ));
        }
        match texts
            .enumerate()
            .find(|(_, t)| t.len() > self.max_text_bytes)
        {
            Some((i, t)) => Err(too_long(
                format!("messages[{i}].text"),
                t.len(),
                self.max_text_bytes,
            )),
            None => Ok(()),
        }
    }

    /// Trajectories of one request: states count as messages (each is derived and
    /// embedded), and every text field is held to the library's bound for it
    /// (`AgentState::bounded_fields`), answered 413 here rather than read further.
    pub fn check_trajectories(&self, trajectories: &[TrajectoryInput]) -> Result<(), ApiError> {
        if trajectories.len() > self.max_batch_sessions {
            return Err(too_many(
                "trajectories",
                trajectories.len(),
                self.max_batch_sessions,
                "trajectories",
            )
            .with_code("batch_too_large"));
        }
        let states: usize = trajectories.iter().map(|t| t.states.len()).sum();
        if states > self.max_request_messages {
            return Err(too_many(
                "states",
                states,
                self.max_request_messages,
                "trajectories",
            ));
        }
        for (i, t) in trajectories.iter().enumerate() {
            for (j, s) in t.states.iter().enumerate() {
                for (field, v, max) in s.bounded_fields() {
                    let n = v.map_or(0, str::len);
                    if n > max {
                        let at = format!("trajectories[{i}].states[{j}].{field}");
                        return Err(too_long(at, n, max));
                    }
                }
            }
        }
        Ok(())
    }

    pub fn check_query(&self, query: &str) -> Result<(), ApiError> {
        if query.len() > self.max_query_bytes {
            return Err(too_long("query".into(), query.len(), self.max_query_bytes));
        }
        Ok(())
    }
}
