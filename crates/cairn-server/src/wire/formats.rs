//! The ingest formats on the wire: a session and its messages, a group-chat message, a
//! trajectory and its states. Requests read them and answers show them (a stored
//! session's or trajectory's input), so each converts both ways with the library's type,
//! destructuring every field and matching every variant: a field or variant added to or
//! renamed in the library is a compile error here rather than a silent change of the
//! HTTP API. Each reads and writes exactly the JSON the library's type does (the same
//! names, aliases, unknown fields refused where the library refuses them, times read by
//! `cairn::serde_time`): `the_formats_read_and_write_the_librarys_json`.
use cairn::serde_time;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

type Time = cairn::Timestamp;

/// Who wrote a message in a one-to-one chat.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoleWire {
    User,
    Assistant,
    System,
}

impl From<cairn::Role> for RoleWire {
    fn from(r: cairn::Role) -> Self {
        match r {
            cairn::Role::User => Self::User,
            cairn::Role::Assistant => Self::Assistant,
            cairn::Role::System => Self::System,
        }
    }
}

impl From<RoleWire> for cairn::Role {
    fn from(r: RoleWire) -> Self {
        match r {
            RoleWire::User => Self::User,
            RoleWire::Assistant => Self::Assistant,
            RoleWire::System => Self::System,
        }
    }
}

/// One message of a session (unknown fields refused).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Message)]
pub struct MessageWire {
    /// Unique in the session; defaults to the position.
    #[serde(default)]
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(inline)]
    pub role: Option<RoleWire>,
    /// Any name (group chats); role or speaker is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speaker: Option<String>,
    pub text: String,
    /// RFC 3339, `YYYY-MM-DD[ HH:MM[:SS]]`, and other common shapes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_time::option"
    )]
    #[schema(value_type = Option<String>)]
    pub occurred_at: Option<Time>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[schema(value_type = serde_json::Value)]
    pub metadata: Value,
}

impl From<cairn::Message> for MessageWire {
    fn from(m: cairn::Message) -> Self {
        let cairn::Message {
            id,
            role,
            speaker,
            text,
            occurred_at,
            metadata,
        } = m;
        Self {
            id,
            role: role.map(RoleWire::from),
            speaker,
            text,
            occurred_at,
            metadata,
        }
    }
}

impl From<MessageWire> for cairn::Message {
    fn from(m: MessageWire) -> Self {
        let MessageWire {
            id,
            role,
            speaker,
            text,
            occurred_at,
            metadata,
        } = m;
        Self {
            id,
            role: role.map(cairn::Role::from),
            speaker,
            text,
            occurred_at,
            metadata,
        }
    }
}

/// Messages as the library takes them.
pub fn messages(ms: Vec<MessageWire>) -> Vec<cairn::Message> {
    ms.into_iter().map(cairn::Message::from).collect()
}

/// A dated conversation session (unknown fields refused).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = SessionInput)]
pub struct SessionInputWire {
    pub id: String,
    /// Alias: `date`.
    #[serde(
        default,
        alias = "date",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_time::option"
    )]
    #[schema(value_type = Option<String>)]
    pub occurred_at: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    pub messages: Vec<MessageWire>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[schema(value_type = serde_json::Value)]
    pub metadata: Value,
}

impl From<cairn::SessionInput> for SessionInputWire {
    fn from(s: cairn::SessionInput) -> Self {
        let cairn::SessionInput {
            id,
            occurred_at,
            group,
            messages,
            metadata,
        } = s;
        Self {
            id,
            occurred_at,
            group,
            messages: messages.into_iter().map(MessageWire::from).collect(),
            metadata,
        }
    }
}

impl From<SessionInputWire> for cairn::SessionInput {
    fn from(s: SessionInputWire) -> Self {
        let SessionInputWire {
            id,
            occurred_at,
            group,
            messages: ms,
            metadata,
        } = s;
        Self {
            id,
            occurred_at,
            group,
            messages: messages(ms),
            metadata,
        }
    }
}

/// One message of a group chat (unknown fields refused).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = GroupMessage)]
pub struct GroupMessageWire {
    /// Unique within the group's day; numbered by position when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub speaker: String,
    pub group: String,
    /// When it was said (RFC 3339 or YYYY-MM-DD HH:MM[:SS]); decides the day. Alias: `timestamp`.
    #[serde(alias = "timestamp", deserialize_with = "serde_time::required")]
    #[schema(value_type = String)]
    pub time: Time,
    /// Aliases: `dialogue`, `content`.
    #[serde(alias = "dialogue", alias = "content")]
    pub text: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[schema(value_type = serde_json::Value)]
    pub metadata: Value,
}

impl From<GroupMessageWire> for cairn::GroupMessage {
    fn from(m: GroupMessageWire) -> Self {
        let GroupMessageWire {
            id,
            speaker,
            group,
            time,
            text,
            metadata,
        } = m;
        Self {
            id,
            speaker,
            group,
            time,
            text,
            metadata,
        }
    }
}

/// One state of a trajectory.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[schema(as = AgentState)]
pub struct AgentStateWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought: Option<String>,
    /// Accessibility tree text (also accepted as `accessibility_tree`).
    #[serde(
        default,
        alias = "accessibility_tree",
        skip_serializing_if = "Option::is_none"
    )]
    pub observation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
}

impl From<cairn::AgentState> for AgentStateWire {
    fn from(s: cairn::AgentState) -> Self {
        let cairn::AgentState {
            url,
            action,
            thought,
            observation,
            screenshot,
        } = s;
        Self {
            url,
            action,
            thought,
            observation,
            screenshot,
        }
    }
}

impl From<AgentStateWire> for cairn::AgentState {
    fn from(s: AgentStateWire) -> Self {
        let AgentStateWire {
            url,
            action,
            thought,
            observation,
            screenshot,
        } = s;
        Self {
            url,
            action,
            thought,
            observation,
            screenshot,
        }
    }
}

/// One run of an agent, as inserted.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[schema(as = TrajectoryInput)]
pub struct TrajectoryInputWire {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    pub goal: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_url: Option<String>,
    /// true/false, "success"/"failure", or any JSON.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[schema(value_type = serde_json::Value)]
    pub outcome: Value,
    pub states: Vec<AgentStateWire>,
    /// Alias: `date`.
    #[serde(
        default,
        alias = "date",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_time::option"
    )]
    #[schema(value_type = Option<String>)]
    pub occurred_at: Option<Time>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[schema(value_type = serde_json::Value)]
    pub metadata: Value,
}

impl From<cairn::TrajectoryInput> for TrajectoryInputWire {
    fn from(t: cairn::TrajectoryInput) -> Self {
        let cairn::TrajectoryInput {
            id,
            domain,
            goal,
            start_url,
            outcome,
            states,
            occurred_at,
            metadata,
        } = t;
        Self {
            id,
            domain,
            goal,
            start_url,
            outcome,
            states: states.into_iter().map(AgentStateWire::from).collect(),
            occurred_at,
            metadata,
        }
    }
}

impl From<TrajectoryInputWire> for cairn::TrajectoryInput {
    fn from(t: TrajectoryInputWire) -> Self {
        let TrajectoryInputWire {
            id,
            domain,
            goal,
            start_url,
            outcome,
            states,
            occurred_at,
            metadata,
        } = t;
        Self {
            id,
            domain,
            goal,
            start_url,
            outcome,
            states: states.into_iter().map(cairn::AgentState::from).collect(),
            occurred_at,
            metadata,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, to_value};

    /// The wire type reads what the library reads into the same value, and writes it back
    /// as the library writes it.
    fn same<W, L>(input: Value)
    where
        W: serde::de::DeserializeOwned + Serialize + Into<L>,
        L: serde::de::DeserializeOwned + Serialize + PartialEq + std::fmt::Debug,
    {
        let lib: L = serde_json::from_value(input.clone()).expect("the library reads it");
        let wire: W = serde_json::from_value(input).expect("the wire reads it");
        let written = to_value(&wire).unwrap();
        let converted: L = wire.into();
        assert_eq!(converted, lib);
        assert_eq!(written, to_value(&lib).unwrap());
    }

    fn both_refuse<W: serde::de::DeserializeOwned, L: serde::de::DeserializeOwned>(input: Value) {
        let lib = serde_json::from_value::<L>(input.clone())
            .map(|_| ())
            .unwrap_err();
        let wire = serde_json::from_value::<W>(input).map(|_| ()).unwrap_err();
        assert_eq!(wire.to_string(), lib.to_string());
    }

    #[test]
    fn the_formats_read_and_write_the_librarys_json() {
        same::<SessionInputWire, cairn::SessionInput>(json!({
            "id": "s1", "date": "2023/05/30 (Tue) 23:40", "group": "g",
            "messages": [
                {"role": "user", "text": "hi", "occurred_at": "2024-01-02 03:04"},
                {"id": "m2", "speaker": "Ann", "text": "yo", "metadata": {"k": 1}}
            ],
            "metadata": {"user_id": "u1"}
        }));
        same::<SessionInputWire, cairn::SessionInput>(json!({"id": "s", "messages": []}));
        same::<GroupMessageWire, cairn::GroupMessage>(json!({
            "speaker": "Ann", "group": "g", "timestamp": "2024-01-02T03:04:05Z",
            "dialogue": "hello"
        }));
        same::<GroupMessageWire, cairn::GroupMessage>(json!({
            "id": "1", "speaker": "Ann", "group": "g", "time": "2024-01-02",
            "content": "hello", "metadata": {"a": [1]}
        }));
        same::<TrajectoryInputWire, cairn::TrajectoryInput>(json!({
            "id": "t", "goal": "buy", "domain": "shop", "start_url": "https://a.example",
            "outcome": {"score": 1}, "date": "2024-01-02", "extra": "ignored",
            "states": [{"url": "https://a.example", "accessibility_tree": "tree",
                        "action": "click [1]", "thought": "t", "screenshot": "s.png"}, {}]
        }));
        same::<TrajectoryInputWire, cairn::TrajectoryInput>(
            json!({"id": "t", "goal": "g", "outcome": false, "states": [{}]}),
        );
        // Refusals name the same field for the same reason.
        both_refuse::<SessionInputWire, cairn::SessionInput>(
            json!({"id": "s", "messages": [{"text": "x", "ocurred_at": "2024-01-01"}]}),
        );
        both_refuse::<SessionInputWire, cairn::SessionInput>(
            json!({"id": "s", "occurred_at": "yesterday-ish", "messages": []}),
        );
        both_refuse::<MessageWire, cairn::Message>(json!({"role": "robot", "text": "x"}));
        both_refuse::<GroupMessageWire, cairn::GroupMessage>(
            json!({"speaker": "a", "group": "g", "text": "x"}),
        );
    }
}
