//! `remember`: what an agent asks to keep, a note in plain words or conversation turns,
//! as an append to a session of its own (or the one it names). The rule of what a note
//! is, how a new session is named and which time each message gets lives here, so every
//! surface (the MCP tool, the library) keeps memories the same way.
use cairn_core::{AppendInput, Memo, Message, RememberInput, SpaceId};

use super::error::EngineError;
use super::receipt::WriteOptions;
use super::reports::IngestReport;
use super::services::Writes;

/// The speaker a note is stored under: a note is no one's turn in a conversation.
pub const NOTE_SPEAKER: &str = "note";

/// What `remember` kept: the session it went to (named by the caller, or new) and the
/// append's report.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Remembered {
    pub session_id: String,
    pub report: IngestReport,
}

impl Writes<'_> {
    /// Keeps a note or conversation turns (see [`RememberInput`]). Times go on the
    /// messages, not the session, so appending to a stored session never changes its
    /// header; a message with no time of its own takes the input's, and without one the
    /// append dates it when it is recorded.
    pub fn remember(
        &self,
        space: &SpaceId,
        input: RememberInput,
        opts: &WriteOptions,
    ) -> Result<Remembered, EngineError> {
        let (messages, kind) = match input.memo {
            Memo::Note(text) => (
                vec![Message {
                    id: String::new(),
                    role: None,
                    speaker: Some(NOTE_SPEAKER.into()),
                    text,
                    occurred_at: input.occurred_at,
                    metadata: serde_json::Value::Null,
                }],
                "note",
            ),
            Memo::Messages(ms) => (
                ms.into_iter()
                    .map(|m| Message {
                        occurred_at: m.occurred_at.or(input.occurred_at),
                        ..m
                    })
                    .collect(),
                "conversation",
            ),
        };
        let session_id = input.session_id.unwrap_or_else(|| new_session_id(kind));
        let report = self.append(
            space,
            AppendInput {
                session_id: session_id.clone(),
                messages,
                occurred_at: None,
                group: None,
                metadata: input.metadata,
            },
            opts,
        )?;
        Ok(Remembered { session_id, report })
    }
}

/// A new session's id: `<kind>-<UTC time>-<12 hex digits>`. A clock-only id could collide
/// between two calls in one tick; randomness settles it, and without it the clock alone
/// still gives a usable id.
fn new_session_id(kind: &str) -> String {
    let mut b = [0u8; 6];
    let _ = getrandom::fill(&mut b);
    format!(
        "{kind}-{}-{}",
        chrono::Utc::now().format("%Y%m%dT%H%M%S"),
        hex::encode(b)
    )
}
