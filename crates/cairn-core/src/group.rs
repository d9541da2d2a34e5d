//! Messages of multi-party group chats, as they arrive (day by day, every group at once).
//!
//! They are kept as sessions: the messages of one group on one (UTC) day form the session
//! `<group>/<YYYY-MM-DD>`, appended to as more of that day arrives. Everything derived
//! from sessions (turns, rounds, episodes, facts, speaker statistics) then works for
//! group chats unchanged.
use crate::source::{check_id, check_metadata, check_text};
use crate::time::serde_time;
use crate::{InputError, Message, SessionInput, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of a group chat (unknown fields refused, as in a session).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupMessage {
    /// Unique within its group and day; filled with the message's position in that day
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub speaker: String,
    pub group: String,
    /// When it was said. Required: it decides the day and the order.
    #[serde(alias = "timestamp", deserialize_with = "serde_time::required")]
    pub time: Timestamp,
    #[serde(alias = "dialogue", alias = "content")]
    pub text: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub metadata: Value,
}

impl GroupMessage {
    /// Checks every field; `index` names the message in errors.
    pub fn validate(&self, index: usize) -> Result<(), InputError> {
        let rec = format!("group message {index}");
        check_id(&self.group, &rec, "group")?;
        check_id(&self.speaker, &rec, "speaker")?;
        if let Some(id) = &self.id {
            check_id(id, &rec, "id")?;
        }
        check_text(&self.text, &rec)?;
        check_metadata(&self.metadata, &rec, "metadata")?;
        Ok(())
    }

    /// The session this message belongs to.
    pub fn session_id(&self) -> String {
        format!("{}/{}", self.group, self.time.format("%Y-%m-%d"))
    }

    fn into_message(self) -> Message {
        Message {
            id: self.id.unwrap_or_default(),
            role: None,
            speaker: Some(self.speaker),
            text: self.text,
            occurred_at: Some(self.time),
            metadata: self.metadata,
        }
    }
}

/// Groups messages into their day sessions, in time order (stable for equal times).
/// Messages keep empty ids; the engine numbers them after what is already stored.
pub fn day_sessions(mut messages: Vec<GroupMessage>) -> Vec<SessionInput> {
    messages.sort_by_key(|m| m.time);
    let mut sessions: Vec<SessionInput> = Vec::new();
    for m in messages {
        let id = m.session_id();
        let day = m
            .time
            .date_naive()
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc());
        let group = m.group.clone();
        match sessions.iter_mut().find(|s| s.id == id) {
            Some(s) => s.messages.push(m.into_message()),
            None => sessions.push(SessionInput {
                id,
                occurred_at: day,
                group: Some(group),
                messages: vec![m.into_message()],
                metadata: Value::Null,
            }),
        }
    }
    sessions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_fall_into_day_sessions_per_group_in_time_order() {
        let raw = r#"[
          {"speaker":"Ann","group":"Ops","time":"2025-03-02 10:05:00","text":"second"},
          {"speaker":"Bob","group":"Ops","time":"2025-03-02 09:00:00","text":"first"},
          {"speaker":"Cy","group":"Dev","time":"2025-03-02 09:30:00","dialogue":"other group"},
          {"speaker":"Ann","group":"Ops","time":"2025-03-03 08:00:00","text":"next day"}
        ]"#;
        let msgs: Vec<GroupMessage> = serde_json::from_str(raw).unwrap();
        let sessions = day_sessions(msgs);
        let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["Ops/2025-03-02", "Dev/2025-03-02", "Ops/2025-03-03"]);
        assert_eq!(sessions[0].messages[0].text, "first");
        assert_eq!(sessions[0].group.as_deref(), Some("Ops"));
        assert_eq!(
            sessions[0].occurred_at.unwrap().to_rfc3339(),
            "2025-03-02T00:00:00+00:00"
        );
    }

    #[test]
    fn bad_messages_are_named() {
        let m: GroupMessage = serde_json::from_str(
            r#"{"speaker":"Ann","group":"Ops","time":"2025-03-02","text":"  "}"#,
        )
        .unwrap();
        assert_eq!(
            m.validate(3).unwrap_err().to_string(),
            "group message 3: field `text` is empty"
        );
        let e =
            serde_json::from_str::<GroupMessage>(r#"{"speaker":"Ann","group":"Ops","text":"hi"}"#)
                .unwrap_err();
        assert!(e.to_string().contains("time"), "{e}");
    }
}
