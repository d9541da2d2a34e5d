//! The verbatim record: what users hand to Cairn. Ground state; everything else is derived
//! from it and can be rebuilt from it.
use crate::time::{serde_time, Timestamp};
use crate::{InputError, SpaceId};
use serde::{Deserialize, Serialize};
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
        deserialize_with = "serde_time::option"
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
        deserialize_with = "serde_time::option"
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
    #[serde(deserialize_with = "serde_time::required")]
    pub recorded_at: Timestamp,
    pub session: SessionInput,
}

/// Messages to add to a session, which is created on first use (Mem0's `add`). The header
/// fields apply to a new session; for a stored one they must be absent or equal to what is
/// stored. A message whose id is already stored must be identical to it (it is then
/// skipped: resending is harmless); messages without an id are numbered by their
/// position in the whole session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppendInput {
    pub session_id: String,
    pub messages: Vec<Message>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_time::option"
    )]
    pub occurred_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub metadata: Value,
}

/// What a session is without its messages: what listings and metadata filters read,
/// so neither has to load every message of a space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionHeader {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurred_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub metadata: Value,
    pub recorded_at: Timestamp,
    /// How many messages the session holds.
    pub messages: usize,
}

impl SessionRecord {
    pub fn header(&self) -> SessionHeader {
        SessionHeader {
            id: self.session.id.clone(),
            occurred_at: self.session.occurred_at,
            group: self.session.group.clone(),
            metadata: self.session.metadata.clone(),
            recorded_at: self.recorded_at,
            messages: self.session.messages.len(),
        }
    }
}

impl SessionInput {
    /// Check every field and fill defaults (message ids). Errors name the session, the
    /// message and the field.
    pub fn validate(mut self) -> Result<Self, InputError> {
        let rec = format!("session {:?}", clip(&self.id));
        check_id(&self.id, &rec, "id")?;
        if self.messages.is_empty() {
            return Err(InputError::new(rec, "field `messages` is empty").at("messages"));
        }
        if self.messages.len() > MAX_MESSAGES {
            return Err(InputError::new(
                rec,
                format!(
                    "has {} messages (at most {MAX_MESSAGES})",
                    self.messages.len()
                ),
            )
            .at("messages"));
        }
        if let Some(g) = &self.group {
            check_id(g, &rec, "group")?;
        }
        check_metadata(&self.metadata, &rec, "metadata")?;
        let mut seen = std::collections::HashSet::new();
        for (i, m) in self.messages.iter_mut().enumerate() {
            let mrec = format!("{rec} message {i}");
            let at = format!("messages[{i}]");
            if m.id.is_empty() {
                m.id = i.to_string();
            }
            check_id(&m.id, &mrec, "id").map_err(|e| e.nested(&at))?;
            if !seen.insert(m.id.clone()) {
                return Err(
                    InputError::new(mrec, format!("duplicate message id {:?}", m.id))
                        .at(format!("{at}.id")),
                );
            }
            if m.role.is_none() && m.speaker.as_deref().is_none_or(|s| s.trim().is_empty()) {
                return Err(InputError::new(mrec, "needs a `role` or a `speaker`").at(at));
            }
            if let Some(s) = &m.speaker {
                check_speaker(s, &mrec).map_err(|e| e.nested(&at))?;
            }
            check_text(&m.text, &mrec).map_err(|e| e.nested(&at))?;
            check_metadata(&m.metadata, &mrec, "metadata").map_err(|e| e.nested(&at))?;
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
    check_text_inner(text, rec).map_err(|e| e.at("text"))
}

fn check_text_inner(text: &str, rec: &str) -> Result<(), InputError> {
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
    check_id_inner(id, rec, field).map_err(|e| e.at(field))
}

fn check_id_inner(id: &str, rec: &str, field: &str) -> Result<(), InputError> {
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

/// A speaker name: a label, not a key, so any words, but bounded and printable.
pub(crate) fn check_speaker(s: &str, rec: &str) -> Result<(), InputError> {
    if s.len() > MAX_ID_BYTES {
        return Err(InputError::new(rec, "field `speaker` is too long").at("speaker"));
    }
    if s.chars().any(|c| c.is_control()) {
        return Err(
            InputError::new(rec, "field `speaker` contains control characters").at("speaker"),
        );
    }
    Ok(())
}

/// Metadata is a JSON object (or absent) whose keys and strings hold no NUL: filters
/// address it by key, and every store must keep it byte for byte.
pub(crate) fn check_metadata(v: &Value, rec: &str, field: &str) -> Result<(), InputError> {
    match v {
        Value::Null | Value::Object(_) => {}
        other => {
            return Err(InputError::new(
                rec,
                format!(
                    "field `{field}` must be a JSON object, not {}",
                    json_kind(other)
                ),
            )
            .at(field))
        }
    }
    fn walk(v: &Value, path: &mut String) -> Option<String> {
        match v {
            Value::String(s) if s.contains('\0') => Some(path.clone()),
            Value::Array(items) => items.iter().enumerate().find_map(|(i, x)| {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let found = walk(x, path);
                path.truncate(len);
                found
            }),
            Value::Object(map) => map.iter().find_map(|(k, x)| {
                if k.contains('\0') {
                    return Some(path.clone());
                }
                let len = path.len();
                path.push('.');
                path.push_str(k);
                let found = walk(x, path);
                path.truncate(len);
                found
            }),
            _ => None,
        }
    }
    let mut path = field.to_string();
    match walk(v, &mut path) {
        Some(at) => {
            Err(InputError::new(rec, format!("field `{field}` contains a NUL character")).at(at))
        }
        None => Ok(()),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn clip(s: &str) -> String {
    if s.len() <= 60 {
        s.to_string()
    } else {
        format!("{}...", crate::text::prefix(s, 60))
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
