//! The entity graph: people, places, organizations and things a space's messages name,
//! with edges to the units that mention them and to each other. Computed from the units
//! (derived state like fact chains and profiles): re-deriving or forgetting a session
//! changes it with its units, and it never spans spaces.
use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// What an entity is, by cheap cues (no model).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntityKind {
    /// A speaker, or a name used like a person's.
    Person,
    /// A name after "in", "at", "from", "to", "near" ("Paris", "Lake Tahoe").
    Place,
    /// A name with an organization word ("Acme Corp", "Stanford University").
    Organization,
    /// Any other proper noun (a project, a title, a product, an event).
    Thing,
}

/// How a unit is linked to an entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// The entity wrote the message.
    SpeakerOf,
    /// The message names the entity.
    Mention,
    /// A fact's subject names the entity.
    FactSubject,
}

/// One entity as a listing shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntitySummary {
    /// Its name (the longest form seen, or the speaker's name).
    pub name: String,
    pub kind: EntityKind,
    /// Other forms merged into it ("Mel" for "Melanie"), lowercased.
    pub aliases: Vec<String>,
    /// Units linked to it.
    pub mention_count: usize,
    /// Sessions it appears in.
    pub sessions: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_seen: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<Timestamp>,
}

/// A unit linked to an entity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityMention {
    pub unit_id: String,
    pub edge: EdgeKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub message_ids: Vec<String>,
    /// The form of the name written there (for a mention) or the speaker.
    pub surface: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurred_at: Option<Timestamp>,
    pub recorded_at: Timestamp,
}

/// Another entity met in the same sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityRelation {
    pub name: String,
    pub kind: EntityKind,
    /// Sessions both appear in (co-occurrence within a session).
    pub sessions: usize,
    /// Messages that link both (one speaks and names the other, or names both).
    pub messages: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_seen: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<Timestamp>,
}

/// One session an entity appears in, in time order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineEntry {
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<Timestamp>,
    pub mentions: usize,
}

/// One entity with its mentions, relations and timeline (as of a time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityDetail {
    #[serde(flatten)]
    pub summary: EntitySummary,
    /// Oldest first.
    pub mentions: Vec<EntityMention>,
    /// Strongest first.
    pub relations: Vec<EntityRelation>,
    pub timeline: Vec<TimelineEntry>,
}
