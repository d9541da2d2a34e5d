//! Memory units: what recall ranks and returns. Derived state: each unit is computed from
//! sources, cites them, and can be rebuilt from them.
use crate::{FactDetail, Message, SessionInput, SpaceId, SpeakerStats, Timestamp};
use serde::{Deserialize, Serialize};

/// The kinds of memory unit. `Slice`, `Event` and `Note` are reserved for trajectories, so
/// that stores, indexes and wire formats already carry them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum UnitKind {
    /// One message.
    Turn,
    /// A user turn with the reply to it (or, in multi-party chats, a turn with its answer).
    Round,
    /// A coherent stretch of one conversation.
    Episode,
    /// A window of an agent trajectory.
    Slice,
    /// A state change (in a trajectory or in a fact's value).
    Event,
    /// A procedure or gotcha note.
    Note,
    /// A versioned statement with a subject.
    Fact,
    /// One session's contribution to what is known about a speaker. Never ranked: recall
    /// and `profile` sum these into a [`crate::SpeakerProfile`].
    Profile,
}

impl UnitKind {
    pub const ALL: [UnitKind; 8] = [
        UnitKind::Turn,
        UnitKind::Round,
        UnitKind::Episode,
        UnitKind::Slice,
        UnitKind::Event,
        UnitKind::Note,
        UnitKind::Fact,
        UnitKind::Profile,
    ];

    /// The memories a user thinks of: a message (its turn), a fact drawn from messages,
    /// a trajectory (its note). Every other kind is derived for recall (rounds and
    /// episodes regroup messages; slices and events cut a run; profiles sum a speaker's
    /// sessions) and is listed only when asked for by kind.
    pub const MEMORIES: [UnitKind; 3] = [UnitKind::Turn, UnitKind::Fact, UnitKind::Note];

    pub fn as_str(self) -> &'static str {
        match self {
            UnitKind::Turn => "turn",
            UnitKind::Round => "round",
            UnitKind::Episode => "episode",
            UnitKind::Slice => "slice",
            UnitKind::Event => "event",
            UnitKind::Note => "note",
            UnitKind::Fact => "fact",
            UnitKind::Profile => "profile",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Whether search indexes hold units of this kind (profile contributions are read
    /// whole, never searched).
    pub fn is_searchable(self) -> bool {
        self != UnitKind::Profile
    }

    /// The kinds a listing of memories shows for its `kind` parameter: the memories a
    /// user thinks of ([`UnitKind::MEMORIES`]) when none is named, every kind for `all`
    /// (`None`: no kind left out), else the one named.
    pub fn listed(kind: Option<&str>) -> Result<Option<Vec<UnitKind>>, crate::InputError> {
        match kind {
            None => Ok(Some(Self::MEMORIES.to_vec())),
            Some("all") => Ok(None),
            Some(k) => Self::parse(k).map(|k| Some(vec![k])).ok_or_else(|| {
                crate::InputError::new(
                    "listing",
                    format!("unknown kind {k:?} (a unit kind, or all)"),
                )
                .at("kind")
            }),
        }
    }
}

/// Where a unit comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Provenance {
    /// The session the unit was derived from, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The messages it covers, in conversation order.
    #[serde(default)]
    pub message_ids: Vec<String>,
    /// Position of the first covered message in its session (orders units chronologically
    /// inside a session).
    #[serde(default)]
    pub first_position: u32,
    #[serde(default)]
    pub speakers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The trajectory the unit was derived from, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    /// The trajectory states it covers, `[first, end)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub states: Option<[u32; 2]>,
    /// The end-user partition of its session (see [`crate::scope::partition_of`]):
    /// derived knowledge never joins units of two partitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
}

impl Provenance {
    /// Where a unit drawn from one message (a turn, a fact read from it) comes from: its
    /// session, the message, its position, its speaker and group. The partition is set
    /// when the session's units are placed in it.
    pub fn of_message(session: &SessionInput, message: &Message, position: usize) -> Self {
        Provenance {
            session_id: Some(session.id.clone()),
            message_ids: vec![message.id.clone()],
            first_position: position as u32,
            speakers: vec![message.speaker_name().to_string()],
            group: session.group.clone(),
            ..Default::default()
        }
    }
}

/// One memory unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unit {
    /// Deterministic from the source position (e.g. `round:s1:4`), so deriving twice
    /// gives the same ids and derivation is idempotent.
    pub id: String,
    pub space: SpaceId,
    pub kind: UnitKind,
    /// The text shown to a reader (verbatim excerpt of the sources).
    pub text: String,
    /// The lexical key: the part of the text that says what the unit is about (for a
    /// round, the user's words). Indexed with a higher weight than `text`.
    pub key: String,
    /// What gets a dense vector; `None` means this unit is served by lexical search only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_text: Option<String>,
    pub provenance: Provenance,
    /// The unit that contains this one (a turn's round). Recall shows the container and
    /// credits it with the part's evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_of: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurred_at: Option<Timestamp>,
    pub recorded_at: Timestamp,
    /// Structured content of fact and profile units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<UnitDetail>,
}

/// Structured content some units carry beside their text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitDetail {
    Fact(FactDetail),
    Speaker(SpeakerStats),
}

/// How much of a key ranking reads ([`Unit::key_head`]): about 150 words, enough to tell
/// whether a key asks and how long it is, and a bounded cost per candidate whatever the
/// length of the message a key quotes (a turn's key is its whole text, up to 16 KiB).
pub const KEY_HEAD_BYTES: usize = 1024;

/// Empties the text of the units of `kinds` (what [`crate::RecordStore::units_without_text`]
/// returns of them).
pub fn drop_texts(units: &mut [Unit], kinds: &[UnitKind]) {
    for u in units.iter_mut().filter(|u| kinds.contains(&u.kind)) {
        u.text = String::new();
    }
}

/// The first [`KEY_HEAD_BYTES`] of `key`, cut at a character boundary.
pub fn key_head(key: &str) -> &str {
    crate::text::prefix(key, KEY_HEAD_BYTES)
}

impl Unit {
    /// What the unit is filed under for lookups that are not searches: a fact's subject
    /// (`fact:<key words>`), a profile contribution's speaker (`speaker:<name>`).
    pub fn topic(&self) -> Option<String> {
        match &self.detail {
            Some(UnitDetail::Fact(f)) => Some(format!("fact:{}", f.subject_key.join(" "))),
            Some(UnitDetail::Speaker(s)) => Some(format!("speaker:{}", s.speaker)),
            None => None,
        }
    }

    /// The part of the key that ranking reads (its first [`KEY_HEAD_BYTES`]): all a lean
    /// read ([`crate::RecordStore::units_without_text`]) needs to return of a long key.
    pub fn key_head(&self) -> &str {
        key_head(&self.key)
    }

    /// Whether search indexes hold this unit ([`UnitKind::is_searchable`]).
    pub fn is_searchable(&self) -> bool {
        self.kind.is_searchable()
    }

    /// Whether the text and vector indexes hold the same entry for both: what they
    /// index of a unit (its id, space, kind, session, key, text and embedding text) is
    /// equal. A unit derived again with only its place or times moved (a message before
    /// it forgotten) need not be indexed again.
    pub fn indexed_alike(&self, other: &Unit) -> bool {
        self.id == other.id
            && self.space == other.space
            && self.kind == other.kind
            && self.provenance.session_id == other.provenance.session_id
            && self.key == other.key
            && self.text == other.text
            && self.embed_text == other.embed_text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_head_is_cut_at_a_character_boundary() {
        assert_eq!(key_head("short key"), "short key");
        let exact = "a".repeat(KEY_HEAD_BYTES);
        assert_eq!(key_head(&format!("{exact}b")), exact);
        // A two-byte character straddles the limit: the head stops before it.
        let odd = format!("a{}", "é".repeat(KEY_HEAD_BYTES));
        assert_eq!(key_head(&odd).len(), KEY_HEAD_BYTES - 1);
        assert!(odd.starts_with(key_head(&odd)));
    }
}
