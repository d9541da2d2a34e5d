//! The entity graph's answers, converted from the library's by destructuring every field
//! (a new library field is a compile error here) and serialised exactly as the library's
//! types were.
use serde::Serialize;
use utoipa::ToSchema;

type Time = cairn::Timestamp;

/// An entity of the space's graph (derived from its units: no LLM).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = EntitySummary)]
pub struct EntitySummaryOut {
    /// The longest form seen, or the speaker's name.
    pub name: String,
    #[schema(value_type = String)]
    pub kind: cairn::EntityKind,
    /// Other forms merged into it ("mel" for "Melanie"), lowercased.
    pub aliases: Vec<String>,
    /// Units linked to it.
    pub mention_count: usize,
    pub sessions: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub first_seen: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_seen: Option<Time>,
}

impl From<cairn::EntitySummary> for EntitySummaryOut {
    fn from(e: cairn::EntitySummary) -> Self {
        let cairn::EntitySummary {
            name,
            kind,
            aliases,
            mention_count,
            sessions,
            first_seen,
            last_seen,
        } = e;
        Self {
            name,
            kind,
            aliases,
            mention_count,
            sessions,
            first_seen,
            last_seen,
        }
    }
}

/// One entity with its mentions, relations and timeline.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = EntityDetail)]
pub struct EntityDetailOut {
    /// The longest form seen, or the speaker's name.
    pub name: String,
    #[schema(value_type = String)]
    pub kind: cairn::EntityKind,
    /// Other forms merged into it ("mel" for "Melanie"), lowercased.
    pub aliases: Vec<String>,
    /// Units linked to it.
    pub mention_count: usize,
    pub sessions: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub first_seen: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_seen: Option<Time>,
    /// Oldest first.
    pub mentions: Vec<EntityMentionOut>,
    /// Strongest first.
    pub relations: Vec<EntityRelationOut>,
    pub timeline: Vec<TimelineEntryOut>,
    /// What the caller should know about its request: a `filter` key no session it may see carries (`unknown_filter_key`). Absent when there is nothing to say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<crate::wire::warning::WarningOut>,
}

impl From<cairn::EntityDetail> for EntityDetailOut {
    fn from(d: cairn::EntityDetail) -> Self {
        let cairn::EntityDetail {
            summary,
            mentions,
            relations,
            timeline,
        } = d;
        let EntitySummaryOut {
            name,
            kind,
            aliases,
            mention_count,
            sessions,
            first_seen,
            last_seen,
        } = summary.into();
        Self {
            name,
            kind,
            aliases,
            mention_count,
            sessions,
            first_seen,
            last_seen,
            mentions: mentions.into_iter().map(Into::into).collect(),
            relations: relations.into_iter().map(Into::into).collect(),
            timeline: timeline.into_iter().map(Into::into).collect(),
            warnings: Vec::new(),
        }
    }
}

/// A unit linked to an entity.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = EntityMention)]
pub struct EntityMentionOut {
    pub unit_id: String,
    #[schema(value_type = String)]
    pub edge: cairn::EdgeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub message_ids: Vec<String>,
    /// The form of the name written there, or the speaker.
    pub surface: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub occurred_at: Option<Time>,
    #[schema(value_type = String, format = DateTime)]
    pub recorded_at: Time,
}

impl From<cairn::EntityMention> for EntityMentionOut {
    fn from(m: cairn::EntityMention) -> Self {
        let cairn::EntityMention {
            unit_id,
            edge,
            session_id,
            message_ids,
            surface,
            occurred_at,
            recorded_at,
        } = m;
        Self {
            unit_id,
            edge,
            session_id,
            message_ids,
            surface,
            occurred_at,
            recorded_at,
        }
    }
}

/// Another entity met in the same sessions.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = EntityRelation)]
pub struct EntityRelationOut {
    pub name: String,
    #[schema(value_type = String)]
    pub kind: cairn::EntityKind,
    /// Sessions both appear in.
    pub sessions: usize,
    /// Messages that link both.
    pub messages: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub first_seen: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_seen: Option<Time>,
}

impl From<cairn::EntityRelation> for EntityRelationOut {
    fn from(r: cairn::EntityRelation) -> Self {
        let cairn::EntityRelation {
            name,
            kind,
            sessions,
            messages,
            first_seen,
            last_seen,
        } = r;
        Self {
            name,
            kind,
            sessions,
            messages,
            first_seen,
            last_seen,
        }
    }
}

/// One session an entity appears in, in time order.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = TimelineEntry)]
pub struct TimelineEntryOut {
    pub session_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub first: Option<Time>,
    pub mentions: usize,
}

impl From<cairn::TimelineEntry> for TimelineEntryOut {
    fn from(t: cairn::TimelineEntry) -> Self {
        let cairn::TimelineEntry {
            session_id,
            first,
            mentions,
        } = t;
        Self {
            session_id,
            first,
            mentions,
        }
    }
}

/// Every entity kind, for the document's `enum` (a new kind fails to compile here).
pub fn entity_kinds() -> [cairn::EntityKind; 4] {
    use cairn::EntityKind::*;
    let all = [Person, Place, Organization, Thing];
    for kind in all {
        match kind {
            Person | Place | Organization | Thing => {}
        }
    }
    all
}

/// Every edge kind, for the document's `enum` (a new kind fails to compile here).
pub fn edge_kinds() -> [cairn::EdgeKind; 3] {
    use cairn::EdgeKind::*;
    let all = [SpeakerOf, Mention, FactSubject];
    for kind in all {
        match kind {
            SpeakerOf | Mention | FactSubject => {}
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::to_value;

    /// The answer serialises exactly as the library's type it replaces (the summary's
    /// fields flattened into the detail).
    #[test]
    fn an_entity_is_the_json_the_library_wrote() {
        let at = cairn::parse_timestamp("2024-05-01T10:00:00Z").unwrap();
        let summary = cairn::EntitySummary {
            name: "Melanie".into(),
            kind: cairn::EntityKind::Person,
            aliases: vec!["mel".into()],
            mention_count: 2,
            sessions: 1,
            first_seen: Some(at),
            last_seen: None,
        };
        let detail = cairn::EntityDetail {
            summary: summary.clone(),
            mentions: vec![cairn::EntityMention {
                unit_id: "turn:s:0".into(),
                edge: cairn::EdgeKind::SpeakerOf,
                session_id: Some("s".into()),
                message_ids: vec!["0".into()],
                surface: "Melanie".into(),
                occurred_at: None,
                recorded_at: at,
            }],
            relations: vec![cairn::EntityRelation {
                name: "Paris".into(),
                kind: cairn::EntityKind::Place,
                sessions: 1,
                messages: 1,
                first_seen: None,
                last_seen: Some(at),
            }],
            timeline: vec![cairn::TimelineEntry {
                session_id: "s".into(),
                first: Some(at),
                mentions: 2,
            }],
        };
        assert_eq!(
            to_value(EntitySummaryOut::from(summary.clone())).unwrap(),
            to_value(&summary).unwrap()
        );
        assert_eq!(
            to_value(EntityDetailOut::from(detail.clone())).unwrap(),
            to_value(&detail).unwrap()
        );
    }
}
