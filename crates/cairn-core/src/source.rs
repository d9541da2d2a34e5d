//! The verbatim record: what users hand to Cairn. Ground state; everything else is derived
//! from it and can be rebuilt from it.
use crate::time::{parse_timestamp, Timestamp};
use crate::{InputError, SpaceId};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// Longest accepted message text, in bytes (1 MiB). Longer input is an error, never cut.
pub const MAX_TEXT_BYTES: usize = 1 << 20;
/// Longest accepted id (session, message), in bytes.
pub const MAX_ID_BYTES: usize = 256;
/// Most messages in one session.
pub const MAX_MESSAGES: usize = 100_000;

/// Who wrote a message in a one-to-one chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    System,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
        }
    }
}

/// One message of a session, as ingested. Unknown fields are refused rather than
/// dropped, so a misspelt `ocurred_at` is an error and not a silently undated message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// Unique within its session. Filled with the message's position (`"0"`, `"1"`, ...)
    /// when the input has none.
    #[serde(default)]
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// Speaker name; defaults to the role name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaker: Option<String>,
    pub text: String,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_time"
    )]
    pub occurred_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub metadata: Value,
}

impl Message {
    /// The name a unit cites as the speaker of this message.
    pub fn speaker_name(&self) -> &str {
        match (&self.speaker, self.role) {
            (Some(s), _) => s,
            (None, Some(r)) => r.as_str(),
            (None, None) => "unknown",
        }
    }
}

/// A dated conversation session: what `ingest_session` accepts (unknown fields refused,
/// as in [`Message`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionInput {
    pub id: String,
    /// When the session happened; messages without their own time inherit it.
    #[serde(
        default,
        alias = "date",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_time"
    )]
    pub occurred_at: Option<Timestamp>,
    /// The group conversation this session belongs to, for multi-party chats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub metadata: Value,
}

/// A session as stored: the input plus where and when Cairn recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    pub space: SpaceId,
    pub recorded_at: Timestamp,
    pub session: SessionInput,
}

pub(crate) fn lenient_time<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Timestamp>, D::Error> {
    let raw: Option<String> = Option::deserialize(d)?;
    match raw {
        None => Ok(None),
        Some(s) => parse_timestamp(&s)
            .map(Some)
            .map_err(serde::de::Error::custom),
    }
}

impl SessionInput {
    /// Check every field and fill defaults (message ids). Errors name the session, the
    /// message and the field.
    pub fn validate(mut self) -> Result<Self, InputError> {
        let rec = format!("session {:?}", clip(&self.id));
        check_id(&self.id, &rec, "id")?;
        if self.messages.is_empty() {
            return Err(InputError::new(rec, "field `messages` is empty"));
        }
        if self.messages.len() > MAX_MESSAGES {
            return Err(InputError::new(
                rec,
                format!(
                    "has {} messages (at most {MAX_MESSAGES})",
                    self.messages.len()
                ),
            ));
        }
        if let Some(g) = &self.group {
            check_id(g, &rec, "group")?;
        }
        let mut seen = std::collections::HashSet::new();
        for (i, m) in self.messages.iter_mut().enumerate() {
            let mrec = format!("{rec} message {i}");
            if m.id.is_empty() {
                m.id = i.to_string();
            }
            check_id(&m.id, &mrec, "id")?;
            if !seen.insert(m.id.clone()) {
                return Err(InputError::new(
                    mrec,
                    format!("duplicate message id {:?}", m.id),
                ));
            }
            if m.role.is_none() && m.speaker.as_deref().is_none_or(|s| s.trim().is_empty()) {
                return Err(InputError::new(mrec, "needs a `role` or a `speaker`"));
            }
            if let Some(s) = &m.speaker {
                if s.len() > MAX_ID_BYTES {
                    return Err(InputError::new(mrec, "field `speaker` is too long"));
                }
            }
            check_text(&m.text, &mrec)?;
        }
        Ok(self)
    }

    /// When a message happened: its own time, else the session's.
    pub fn message_time(&self, m: &Message) -> Option<Timestamp> {
        m.occurred_at.or(self.occurred_at)
    }
}

/// A message's text: not blank, not only control characters, no NUL, not too long.
pub(crate) fn check_text(text: &str, rec: &str) -> Result<(), InputError> {
    if text.trim().is_empty() {
        return Err(InputError::new(rec, "field `text` is empty"));
    }
    if text.chars().all(|c| c.is_whitespace() || c.is_control()) {
        return Err(InputError::new(
            rec,
            "field `text` has only control characters",
        ));
    }
    if text.len() > MAX_TEXT_BYTES {
        return Err(InputError::new(
            rec,
            format!(
                "field `text` has {} bytes (at most {MAX_TEXT_BYTES})",
                text.len()
            ),
        ));
    }
    if text.contains('\0') {
        return Err(InputError::new(
            rec,
            "field `text` contains a NUL character",
        ));
    }
    Ok(())
}

pub(crate) fn check_id(id: &str, rec: &str, field: &str) -> Result<(), InputError> {
    if id.trim().is_empty() {
        return Err(InputError::new(rec, format!("field `{field}` is empty")));
    }
    if id.len() > MAX_ID_BYTES {
        return Err(InputError::new(
            rec,
            format!("field `{field}` is longer than {MAX_ID_BYTES} bytes"),
        ));
    }
    if id.chars().any(|c| c.is_control()) {
        return Err(InputError::new(
            rec,
            format!("field `{field}` contains control characters"),
        ));
    }
    // Ids are keys, never paths here; but clients and exports do turn them into file
    // names, so ones that would climb out of a folder are refused.
    if id.starts_with(['/', '\\']) || id.split(['/', '\\']).any(|seg| seg == "..") {
        return Err(InputError::new(
            rec,
            format!("field `{field}` looks like a file path (leading `/` or a `..` segment)"),
        ));
    }
    Ok(())
}

pub(crate) fn clip(s: &str) -> String {
    if s.len() <= 60 {
        s.to_string()
    } else {
        let mut end = 60;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(json: &str) -> Result<SessionInput, InputError> {
        let s: SessionInput =
            serde_json::from_str(json).map_err(|e| InputError::new("json", e.to_string()))?;
        s.validate()
    }

    #[test]
    fn fills_ids_and_reads_dates() {
        let s = session(r#"{"id":"s1","date":"2023/05/30 (Tue) 23:40","messages":[{"role":"user","text":"hi"},{"role":"assistant","text":"hello"}]}"#).unwrap();
        assert_eq!(s.messages[0].id, "0");
        assert_eq!(s.messages[1].id, "1");
        assert_eq!(
            s.occurred_at.unwrap().to_rfc3339(),
            "2023-05-30T23:40:00+00:00"
        );
        assert_eq!(s.messages[1].speaker_name(), "assistant");
    }

    #[test]
    fn errors_name_the_record_and_field() {
        let e = session(
            r#"{"id":"s1","messages":[{"role":"user","text":"ok"},{"role":"user","text":"  "}]}"#,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "session \"s1\" message 1: field `text` is empty"
        );
        let e = session(r#"{"id":"s1","messages":[{"text":"who?"}]}"#).unwrap_err();
        assert!(e.to_string().contains("`role` or a `speaker`"));
        let e = session(r#"{"id":"s1","messages":[]}"#).unwrap_err();
        assert!(e.to_string().contains("messages"));
        let e =
            session(r#"{"id":"s1","date":"not a date","messages":[{"role":"user","text":"x"}]}"#)
                .unwrap_err();
        assert!(e.to_string().contains("not a date"));
        let big = "x".repeat(MAX_TEXT_BYTES + 1);
        let e = session(&format!(
            r#"{{"id":"s1","messages":[{{"role":"user","text":"{big}"}}]}}"#
        ))
        .unwrap_err();
        assert!(e.to_string().contains("bytes"));
    }

    #[test]
    fn refuses_what_would_be_silently_wrong() {
        let e = session(
            r#"{"id":"s1","ocurred_at":"2024-01-01","messages":[{"role":"user","text":"x"}]}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown field `ocurred_at`"), "{e}");
        let e = session(r#"{"id":"s1","messages":[{"role":"user","text":"x","txt":"y"}]}"#)
            .unwrap_err();
        assert!(e.to_string().contains("unknown field `txt`"), "{e}");
        for id in ["../x", "/etc/passwd", "a/../../b", "..\\\\x"] {
            let e = session(&format!(
                r#"{{"id":"{id}","messages":[{{"role":"user","text":"x"}}]}}"#
            ))
            .unwrap_err();
            assert!(
                e.to_string().contains("looks like a file path"),
                "{id}: {e}"
            );
        }
        // Dots and slashes inside an id are fine: group days are `<group>/<date>`.
        assert!(
            session(r#"{"id":"g.1/2024-01-01..b","messages":[{"role":"user","text":"x"}]}"#)
                .is_ok()
        );
        let e = session(r#"{"id":"s1","messages":[{"role":"user","text":"\u0001\u0002 \u007f"}]}"#)
            .unwrap_err();
        assert!(e.to_string().contains("only control characters"), "{e}");
    }
}
