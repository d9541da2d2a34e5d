//! Opaque ids: the retrieval benches rename the dataset's session, group and message ids
//! before anything reaches the memory, and map the hits' ids back before scoring. A
//! dataset's ids can carry its labels (every evidence session of LongMemEval_S is named
//! `answer_…`); with opaque ids nothing the engine does with an id (a tie broken by it,
//! an order by it) can use them. LongMemEval's per-turn `has_answer` mark is dropped from
//! the message metadata for the same reason. `--keep-ids` turns both off.
use cairn::{GroupMessage, Hit, SessionInput};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;

/// The message metadata keys that are the dataset's evidence labels.
const LABEL_KEYS: [&str; 1] = ["has_answer"];

/// The renaming of one run (identity when off).
pub struct OpaqueIds {
    on: bool,
    maps: Mutex<Maps>,
}

#[derive(Default)]
struct Maps {
    /// The dataset's session id -> the memory's, and back.
    to_memory: HashMap<String, String>,
    to_dataset: HashMap<String, String>,
    /// `(memory's session, memory's message id)` -> the dataset's message id.
    messages: HashMap<(String, String), String>,
}

fn digest(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    hex::encode(&h.finalize()[..8])
}

impl OpaqueIds {
    pub fn new(on: bool) -> Self {
        Self {
            on,
            maps: Mutex::new(Maps::default()),
        }
    }

    pub fn on(&self) -> bool {
        self.on
    }

    fn maps(&self) -> std::sync::MutexGuard<'_, Maps> {
        self.maps.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records that the dataset's session `dataset` is `memory` in the memory.
    fn name(&self, dataset: &str, memory: &str) {
        let mut m = self.maps();
        m.to_memory.insert(dataset.to_string(), memory.to_string());
        m.to_dataset.insert(memory.to_string(), dataset.to_string());
    }

    /// The opaque id of a message (`m` + 16 hex digits of its session's and its own id),
    /// remembered under the memory's name of its session.
    fn message(&self, dataset_session: &str, memory_session: &str, id: &str) -> String {
        let o = format!("m{}", digest(&[dataset_session, id]));
        self.maps()
            .messages
            .insert((memory_session.to_string(), o.clone()), id.to_string());
        o
    }

    /// Sessions as the memory gets them: ids renamed (`s` + 16 hex digits of the id's
    /// hash), evidence labels dropped.
    pub fn sessions(&self, sessions: Vec<SessionInput>) -> Vec<SessionInput> {
        if !self.on {
            return sessions;
        }
        sessions
            .into_iter()
            .map(|mut s| {
                let renamed = format!("s{}", digest(&[&s.id]));
                self.name(&s.id, &renamed);
                for m in &mut s.messages {
                    m.id = self.message(&s.id, &renamed, &m.id);
                    strip_labels(&mut m.metadata);
                }
                s.group = s.group.as_deref().map(|g| format!("g{}", digest(&[g])));
                s.id = renamed;
                s
            })
            .collect()
    }

    /// Group messages as the memory gets them: group names (`g` + 16 hex digits) and
    /// message ids renamed. The engine names a group's day `<group>/<YYYY-MM-DD>`.
    pub fn group_messages(&self, messages: Vec<GroupMessage>) -> Vec<GroupMessage> {
        if !self.on {
            return messages;
        }
        messages
            .into_iter()
            .map(|mut m| {
                let day = m.time.format("%Y-%m-%d").to_string();
                let group = format!("g{}", digest(&[&m.group]));
                let (dataset, memory) = (format!("{}/{day}", m.group), format!("{group}/{day}"));
                self.name(&dataset, &memory);
                m.id =
                    m.id.as_deref()
                        .map(|id| self.message(&dataset, &memory, id));
                m.group = group;
                strip_labels(&mut m.metadata);
                m
            })
            .collect()
    }

    /// The memory's name of a session of the dataset (itself when not renamed).
    pub fn memory_session(&self, dataset: &str) -> String {
        self.maps()
            .to_memory
            .get(dataset)
            .cloned()
            .unwrap_or_else(|| dataset.to_string())
    }

    /// The memory's id of a message of the dataset's session `session`.
    pub fn memory_message(&self, session: &str, id: &str) -> String {
        if self.on {
            format!("m{}", digest(&[session, id]))
        } else {
            id.to_string()
        }
    }

    /// A session's and message's ids as the dataset writes them.
    pub fn original_message(&self, session: &str, message: &str) -> (String, String) {
        if !self.on {
            return (session.to_string(), message.to_string());
        }
        let m = self.maps();
        let key = (session.to_string(), message.to_string());
        (
            m.to_dataset.get(session).cloned().unwrap_or(key.0.clone()),
            m.messages.get(&key).cloned().unwrap_or(key.1),
        )
    }

    /// A hit with its session and turn ids as the dataset writes them.
    pub fn original_hit(&self, mut h: Hit) -> Hit {
        if !self.on {
            return h;
        }
        let Some(s) = h.session_id.take() else {
            return h;
        };
        let m = self.maps();
        let original = |turns: &[String]| -> Vec<String> {
            turns
                .iter()
                .map(|t| {
                    m.messages
                        .get(&(s.clone(), t.clone()))
                        .cloned()
                        .unwrap_or_else(|| t.clone())
                })
                .collect()
        };
        h.turn_ids = original(&h.turn_ids);
        for p in &mut h.parts {
            p.turn_ids = original(&p.turn_ids);
        }
        h.session_id = Some(m.to_dataset.get(&s).cloned().unwrap_or(s));
        h
    }
}

fn strip_labels(metadata: &mut serde_json::Value) {
    if let Some(obj) = metadata.as_object_mut() {
        for k in LABEL_KEYS {
            obj.remove(k);
        }
        if obj.is_empty() {
            *metadata = serde_json::Value::Null;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn::{Message, UnitKind};

    fn hit(session: &str, turns: &[&str]) -> Hit {
        Hit {
            unit_id: "u".into(),
            kind: UnitKind::Round,
            text: String::new(),
            score: 1.0,
            session_id: Some(session.into()),
            turn_ids: turns.iter().map(|t| t.to_string()).collect(),
            speakers: Vec::new(),
            occurred_at: None,
            trajectory_id: None,
            states: None,
            superseded_by: None,
            relevance: None,
            parts: Vec::new(),
            via: None,
            explain: None,
        }
    }

    #[test]
    fn sessions_are_renamed_and_mapped_back() {
        let ids = OpaqueIds::new(true);
        let s = SessionInput {
            id: "answer_4be1b6b4_2".into(),
            occurred_at: None,
            group: None,
            messages: vec![Message {
                id: "3".into(),
                role: None,
                speaker: Some("user".into()),
                text: "hi".into(),
                occurred_at: None,
                metadata: serde_json::json!({"has_answer": true}),
            }],
            metadata: serde_json::Value::Null,
        };
        let out = ids.sessions(vec![s]);
        let (sid, mid) = (out[0].id.clone(), out[0].messages[0].id.clone());
        assert!(!sid.contains("answer") && sid.starts_with('s'), "{sid}");
        assert_ne!(mid, "3");
        assert_eq!(out[0].messages[0].metadata, serde_json::Value::Null);
        let h = ids.original_hit(hit(&sid, &[&mid]));
        assert_eq!(h.session_id.as_deref(), Some("answer_4be1b6b4_2"));
        assert_eq!(h.turn_ids, ["3"]);
        assert_eq!(ids.memory_session("answer_4be1b6b4_2"), sid);
        assert_eq!(ids.memory_message("answer_4be1b6b4_2", "3"), mid);
        // Off: nothing changes.
        let off = OpaqueIds::new(false);
        assert_eq!(off.memory_session("answer_x"), "answer_x");
        assert_eq!(off.original_hit(hit("a", &["1"])).turn_ids, ["1"]);
    }

    #[test]
    fn group_days_map_back_through_their_group() {
        let ids = OpaqueIds::new(true);
        let m = GroupMessage {
            id: Some("u7".into()),
            speaker: "Ross".into(),
            group: "s01_e02_c03".into(),
            time: cairn::parse_timestamp("2000-01-02 10:00").unwrap(),
            text: "hi".into(),
            metadata: serde_json::Value::Null,
        };
        let out = ids.group_messages(vec![m]);
        let g = out[0].group.clone();
        assert!(!g.contains("s01"), "{g}");
        let session = format!("{g}/2000-01-02");
        let back = ids.original_hit(hit(&session, &[out[0].id.as_deref().unwrap()]));
        assert_eq!(back.session_id.as_deref(), Some("s01_e02_c03/2000-01-02"));
        assert_eq!(back.turn_ids, ["u7"]);
        assert_eq!(ids.memory_session("s01_e02_c03/2000-01-02"), session);
    }
}
