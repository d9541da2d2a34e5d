//! The verbatim record: what users hand to Cairn. Ground state; everything else is derived
//! from it and can be rebuilt from it.
use crate::bounds::{
    MAX_ID_BYTES, MAX_MESSAGES, MAX_METADATA_BYTES, MAX_METADATA_DEPTH, MAX_SESSION_BYTES,
    MAX_TEXT_BYTES,
};
use crate::time::{serde_time, Timestamp};
use crate::{InputError, SpaceId, TooLarge};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// What an agent asks a memory to keep (`Memory::remember`, the MCP tool `remember`).
#[derive(Debug, Clone, PartialEq)]
pub struct RememberInput {
    pub memo: Memo,
    /// The session to append to (created on first use); `None` starts a new one.
    pub session_id: Option<String>,
    /// When it happened: the time of every message that has none of its own. Without
    /// one the memory dates each message when it records it.
    pub occurred_at: Option<Timestamp>,
    /// The session's metadata (`{"user_id": "u1"}` keeps it in that end user's
    /// partition); for a stored session, `Null` or what is stored.
    pub metadata: Value,
}

/// What is kept: a single thing in plain words, or conversation turns verbatim.
#[derive(Debug, Clone, PartialEq)]
pub enum Memo {
    /// A fact, preference, decision or instruction, stored as one message whose speaker
    /// is `note`.
    Note(String),
    /// Turns of a conversation, in order.
    Messages(Vec<Message>),
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

/// Messages of a user/assistant chat (any has a role), rather than a multi-party one.
pub fn has_roles(messages: &[Message]) -> bool {
    messages.iter().any(|m| m.role.is_some())
}

impl SessionInput {
    /// A user/assistant chat (any message has a role), rather than a multi-party one.
    pub fn has_roles(&self) -> bool {
        has_roles(&self.messages)
    }

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
        // What the messages hold as stored (see `MAX_SESSION_BYTES`).
        let mut bytes = 0usize;
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
            let metadata =
                check_metadata(&m.metadata, &mrec, "metadata").map_err(|e| e.nested(&at))?;
            bytes += m.id.len()
                + m.speaker.as_ref().map_or(0, String::len)
                + m.text.len()
                + if m.metadata.is_null() { 0 } else { metadata };
        }
        if bytes > MAX_SESSION_BYTES {
            return Err(InputError::new(
                rec,
                format!(
                    "its messages would hold {bytes} bytes (at most {MAX_SESSION_BYTES}: texts, ids, speakers and metadata); continue the conversation in a new session"
                ),
            )
            .at("messages")
            .over(TooLarge::Session));
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
    // Ids are path segments of the HTTP API, and URL clients remove dot segments before
    // sending: `/sessions/.` would reach `/sessions`.
    if id.split(['/', '\\']).any(|seg| seg == ".") {
        return Err(InputError::new(
            rec,
            format!("field `{field}` is or holds a `.` segment, which URL clients rewrite"),
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

/// Metadata is a JSON object (or absent) whose keys and strings hold no NUL, nested at
/// most [`MAX_METADATA_DEPTH`] deep and at most [`MAX_METADATA_BYTES`] long: filters
/// address it by key, every store must keep it byte for byte, and every reader must read
/// it back.
///
/// Returns about how many bytes of JSON it is (at most what it serializes to).
pub(crate) fn check_metadata(v: &Value, rec: &str, field: &str) -> Result<usize, InputError> {
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
    check_json_value(v, rec, field)
}

/// A JSON value kept verbatim (metadata, a trajectory's outcome): no NUL in a key or a
/// string, at most [`MAX_METADATA_DEPTH`] deep, at most [`MAX_METADATA_BYTES`] long.
/// Walked with a stack of its own, so a value built deeper than any parser allows (the
/// library takes `serde_json::Value`s) is refused, not a stack overflow.
///
/// Returns about how many bytes of JSON it is (at most what it serializes to).
pub(crate) fn check_json_value(v: &Value, rec: &str, field: &str) -> Result<usize, InputError> {
    // (value, depth, path of the value)
    let mut todo: Vec<(&Value, usize, String)> = vec![(v, 1, field.to_string())];
    let mut bytes = 0usize;
    while let Some((v, depth, path)) = todo.pop() {
        if depth > MAX_METADATA_DEPTH {
            return Err(InputError::new(
                rec,
                format!("field `{field}` is nested deeper than {MAX_METADATA_DEPTH} levels"),
            )
            .at(path));
        }
        // Compact JSON: quotes, separators and escapes are counted as one byte each at
        // least, so the sum never exceeds what the value serializes to.
        bytes += match v {
            Value::Null | Value::Bool(_) => 4,
            Value::Number(n) => n.to_string().len(),
            Value::String(s) => s.len() + 2,
            Value::Array(items) => items.len() + 1,
            Value::Object(map) => map.keys().map(|k| k.len() + 4).sum::<usize>() + 1,
        };
        if bytes > MAX_METADATA_BYTES {
            return Err(InputError::new(
                rec,
                format!("field `{field}` is longer than {MAX_METADATA_BYTES} bytes of JSON"),
            )
            .at(field));
        }
        match v {
            Value::String(s) if s.contains('\0') => {
                return Err(InputError::new(
                    rec,
                    format!("field `{field}` contains a NUL character"),
                )
                .at(path))
            }
            Value::Array(items) => todo.extend(
                items
                    .iter()
                    .enumerate()
                    .rev()
                    .map(|(i, x)| (x, depth + 1, format!("{path}[{i}]"))),
            ),
            Value::Object(map) => {
                if map.keys().any(|k| k.contains('\0')) {
                    return Err(InputError::new(
                        rec,
                        format!("field `{field}` contains a NUL character"),
                    )
                    .at(path));
                }
                todo.extend(
                    map.iter()
                        .rev()
                        .map(|(k, x)| (x, depth + 1, format!("{path}.{k}"))),
                );
            }
            _ => {}
        }
    }
    Ok(bytes)
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

    /// A session is bounded as a whole (issue 54, finding 8): its messages together hold
    /// at most `MAX_SESSION_BYTES`, each message counting its text, id, speaker and
    /// metadata; past it the error names `messages` and says it is a size bound, so the
    /// server answers 413 without reading the words.
    #[test]
    fn a_session_over_its_size_bound_is_refused_by_size() {
        let of = |texts: usize, len: usize, metadata: Value| SessionInput {
            id: "s1".into(),
            occurred_at: None,
            group: None,
            metadata: Value::Null,
            messages: (0..texts)
                .map(|i| Message {
                    id: format!("m{i}"),
                    role: Some(Role::User),
                    speaker: Some("Ana".into()),
                    text: "x".repeat(len),
                    occurred_at: None,
                    metadata: metadata.clone(),
                })
                .collect(),
        };
        // Eight texts of 1 MiB less 64 bytes (ids and speakers fit beside them): at the
        // bound, kept.
        let fits = of(8, MAX_TEXT_BYTES - 64, Value::Null);
        assert!(fits.validate().is_ok());
        // Nine texts of 1 MiB, each one allowed: 9 MiB together, refused.
        let e = of(9, MAX_TEXT_BYTES, Value::Null).validate().unwrap_err();
        assert_eq!(e.field.as_deref(), Some("messages"));
        assert_eq!(e.too_large, Some(TooLarge::Session));
        assert!(
            e.to_string().contains(&MAX_SESSION_BYTES.to_string()),
            "{e}"
        );
        // Metadata counts: the texts that fit alone do not with 60 KiB of it each...
        let meta = serde_json::json!({"k": "y".repeat(60 << 10)});
        let e = of(8, MAX_TEXT_BYTES - 64, meta).validate().unwrap_err();
        assert_eq!(e.too_large, Some(TooLarge::Session));
        // ... and other invalid input is not a size error.
        let e = of(1, 0, Value::Null).validate().unwrap_err();
        assert_eq!(e.too_large, None);
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
    #[test]
    fn dot_ids_that_url_clients_rewrite_are_refused() {
        for id in [".", "./x", "g/.", "a\\\\."] {
            let e = session(&format!(
                r#"{{"id":"{id}","messages":[{{"role":"user","text":"x"}}]}}"#
            ))
            .unwrap_err();
            assert!(e.to_string().contains("`.` segment"), "{id}: {e}");
            assert_eq!(e.field.as_deref(), Some("id"));
        }
        let e =
            session(r#"{"id":"s","messages":[{"id":".","role":"user","text":"x"}]}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("messages[0].id"), "{e}");
        assert!(session(r#"{"id":".x/y.","messages":[{"role":"user","text":"x"}]}"#).is_ok());
    }

    /// `[[...[1]...]]`, `depth` deep, built without serde (whose `json!` recurses).
    fn nested(depth: usize) -> Value {
        (1..depth).fold(Value::from(1), |v, _| Value::Array(vec![v]))
    }

    fn object(key: &str, v: Value) -> Value {
        Value::Object([(key.to_string(), v)].into_iter().collect())
    }

    fn with_metadata(session_meta: Value, message_meta: Value) -> Result<SessionInput, InputError> {
        SessionInput {
            id: "s".into(),
            occurred_at: None,
            group: None,
            messages: vec![Message {
                id: String::new(),
                role: Some(Role::User),
                speaker: None,
                text: "hi".into(),
                occurred_at: None,
                metadata: message_meta,
            }],
            metadata: session_meta,
        }
        .validate()
    }

    #[test]
    fn metadata_is_bounded_in_depth_and_size_naming_the_path() {
        let at_limit = object("a", nested(MAX_METADATA_DEPTH - 1));
        assert!(with_metadata(at_limit.clone(), at_limit.clone()).is_ok());
        let deep = object("a", nested(MAX_METADATA_DEPTH));
        let e = with_metadata(Value::Null, deep.clone()).unwrap_err();
        assert!(e.to_string().contains("nested deeper"), "{e}");
        assert!(
            e.field
                .as_deref()
                .unwrap()
                .starts_with("messages[0].metadata.a[0]"),
            "{e:?}"
        );
        let e = with_metadata(deep, Value::Null).unwrap_err();
        assert!(
            e.field.as_deref().unwrap().starts_with("metadata.a"),
            "{e:?}"
        );
        // Far deeper than any parser allows (the library takes built values): refused,
        // not a stack overflow. (Its drop is serde_json's and recursive: leaked here.)
        let very = std::mem::ManuallyDrop::new(object("a", nested(200_000)));
        assert!(check_metadata(&very, "r", "metadata").is_err());
        let big = serde_json::json!({ "k": "x".repeat(MAX_METADATA_BYTES) });
        let e = with_metadata(big, Value::Null).unwrap_err();
        assert!(e.to_string().contains("longer than"), "{e}");
        assert_eq!(e.field.as_deref(), Some("metadata"));
        let many = serde_json::json!({ "k": vec![0; MAX_METADATA_BYTES / 2] });
        assert!(with_metadata(many, Value::Null).is_err());
        let e =
            with_metadata(serde_json::json!({"a": [{"b": "x\u{0}"}]}), Value::Null).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("metadata.a[0].b"));
    }
}
