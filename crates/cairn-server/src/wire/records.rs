//! Answers that show what the library stores: trajectories as recorded, their states and
//! summaries, a fact subject's chain of versions. Each is its own type, converted from the
//! library's by destructuring every field, so a field added to or renamed in the library
//! is a compile error here rather than a silent change of the HTTP API; each serialises
//! exactly as the library's type did (the same names, the same fields left out).
use super::formats::TrajectoryInputWire;
use serde::Serialize;
use utoipa::ToSchema;

type Time = cairn::Timestamp;

/// A trajectory as stored: the inserted trajectory (the ingest format) and when it was
/// recorded.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = TrajectoryRecord)]
pub struct TrajectoryRecordOut {
    pub space: String,
    #[schema(value_type = String, format = DateTime)]
    pub recorded_at: Time,
    pub trajectory: TrajectoryInputWire,
}

impl From<cairn::TrajectoryRecord> for TrajectoryRecordOut {
    fn from(r: cairn::TrajectoryRecord) -> Self {
        let cairn::TrajectoryRecord {
            space,
            recorded_at,
            trajectory,
        } = r;
        Self {
            space: space.to_string(),
            recorded_at,
            trajectory: trajectory.into(),
        }
    }
}

/// What the manifest of a space says about one trajectory.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = TrajectorySummary)]
pub struct TrajectorySummaryOut {
    pub id: String,
    pub domain: Option<String>,
    pub goal: String,
    /// The outcome as inserted: true/false, "success"/"failure", or any JSON.
    #[schema(value_type = serde_json::Value)]
    pub outcome: serde_json::Value,
    pub succeeded: Option<bool>,
    pub steps: usize,
    /// Distinct URLs visited, in first-visit order.
    pub urls: Vec<String>,
    #[schema(value_type = String, format = DateTime)]
    pub recorded_at: Time,
}

impl From<cairn::TrajectorySummary> for TrajectorySummaryOut {
    fn from(t: cairn::TrajectorySummary) -> Self {
        let cairn::TrajectorySummary {
            id,
            domain,
            goal,
            outcome,
            succeeded,
            steps,
            urls,
            recorded_at,
        } = t;
        Self {
            id,
            domain,
            goal,
            outcome,
            succeeded,
            steps,
            urls,
            recorded_at,
        }
    }
}

/// The chain of versions of one subject.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = FactHistory)]
pub struct FactHistoryOut {
    pub subject: String,
    /// Oldest first; the last is current.
    pub versions: Vec<FactVersionOut>,
    /// What the caller should know about its request: a `filter` key no session it may see carries (`unknown_filter_key`). Absent when there is nothing to say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<crate::wire::warning::WarningOut>,
}

impl From<cairn::FactHistory> for FactHistoryOut {
    fn from(h: cairn::FactHistory) -> Self {
        let cairn::FactHistory { subject, versions } = h;
        Self {
            subject,
            versions: versions.into_iter().map(FactVersionOut::from).collect(),
            warnings: Vec::new(),
        }
    }
}

/// One version of a subject's value.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = FactVersion)]
pub struct FactVersionOut {
    pub unit_id: String,
    pub subject: String,
    pub value: String,
    /// The value as a reader says it: a denied one as such ("dislikes jazz", "no longer
    /// Acme"), else the value.
    pub statement: String,
    /// When it was stated.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub valid_from: Option<Time>,
    /// When the next version was stated (null: still current).
    #[schema(value_type = Option<String>, format = DateTime)]
    pub valid_to: Option<Time>,
    /// The unit of the version that replaced this one.
    pub superseded_by: Option<String>,
    pub session_id: Option<String>,
    pub message_id: Option<String>,
    pub speaker: Option<String>,
    pub group: Option<String>,
    /// The sentence it was read from.
    pub text: String,
    /// Whom a personal fact is about (the speaker, or "<speaker>'s <relation>").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    /// A personal fact's category.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub category: Option<cairn::FactCategory>,
    /// The statement denies the value.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub negated: bool,
    /// When the stated change took effect, when the statement dates it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub since: Option<Time>,
}

impl From<cairn::FactVersion> for FactVersionOut {
    fn from(v: cairn::FactVersion) -> Self {
        let cairn::FactVersion {
            unit_id,
            subject,
            value,
            statement,
            valid_from,
            valid_to,
            superseded_by,
            session_id,
            message_id,
            speaker,
            group,
            text,
            person,
            category,
            negated,
            since,
        } = v;
        Self {
            unit_id,
            subject,
            value,
            statement,
            valid_from,
            valid_to,
            superseded_by,
            session_id,
            message_id,
            speaker,
            group,
            text,
            person,
            category,
            negated,
            since,
        }
    }
}

/// One subject a space holds facts about, as a listing shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = FactSubject)]
pub struct FactSubjectOut {
    pub subject: String,
    pub versions: usize,
    pub current_value: String,
    /// The newest statement as a reader says it: a denied value as such ("dislikes
    /// jazz", "no longer Acme"), else the value.
    pub statement: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_stated: Option<Time>,
    /// A personal fact's person: the speaker, or a relation of theirs ("user's sister").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    /// A personal fact's category.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub category: Option<cairn::FactCategory>,
    /// The current statement says it does not hold ("I no longer eat meat").
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub negated: bool,
}

impl From<cairn::FactSubject> for FactSubjectOut {
    fn from(f: cairn::FactSubject) -> Self {
        let cairn::FactSubject {
            subject,
            versions,
            current_value,
            statement,
            last_stated,
            person,
            category,
            negated,
        } = f;
        Self {
            subject,
            versions,
            current_value,
            statement,
            last_stated,
            person,
            category,
            negated,
        }
    }
}

/// What is known about one speaker of a space.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SpeakerProfile)]
pub struct SpeakerProfileOut {
    pub speaker: String,
    pub messages: u32,
    pub groups: Vec<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub first_seen: Option<Time>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_seen: Option<Time>,
    /// How the speaker writes (the library's measures).
    #[schema(value_type = Object)]
    pub style: cairn::Style,
    pub roles: Vec<EvidenceOut>,
    pub skills: Vec<EvidenceOut>,
    /// Words the speaker uses far more than the rest of the space.
    pub topics: Vec<String>,
    /// What the speaker said of themself that still holds in the request's scope: the
    /// current value of each of their personal facts, with the message that states it.
    pub facts: Vec<ProfileFactOut>,
    /// The profile as a paragraph, for contexts.
    pub summary: String,
    /// What the caller should know about its request: a `filter` key no session it may see carries (`unknown_filter_key`). Absent when there is nothing to say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<crate::wire::warning::WarningOut>,
}

impl From<cairn::SpeakerProfile> for SpeakerProfileOut {
    fn from(p: cairn::SpeakerProfile) -> Self {
        let cairn::SpeakerProfile {
            speaker,
            messages,
            groups,
            first_seen,
            last_seen,
            style,
            roles,
            skills,
            topics,
            facts,
            summary,
        } = p;
        let evidence = |v: Vec<cairn::Evidence>| v.into_iter().map(EvidenceOut::from).collect();
        Self {
            speaker,
            messages,
            groups,
            first_seen,
            last_seen,
            style,
            roles: evidence(roles),
            skills: evidence(skills),
            topics,
            facts: facts.into_iter().map(ProfileFactOut::from).collect(),
            summary,
            warnings: Vec::new(),
        }
    }
}

/// A personal fact in a profile: the current value of one of the speaker's chains.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ProfileFact)]
pub struct ProfileFactOut {
    #[schema(value_type = String)]
    pub category: cairn::FactCategory,
    /// The attribute ("home", "taste: olives", "sister").
    pub attribute: String,
    pub value: String,
    /// A dislike, or something no longer true.
    pub negated: bool,
    /// When it was said.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub stated_at: Option<Time>,
    /// Earlier statements of the attribute, which this one supersedes.
    pub earlier: usize,
    pub session_id: String,
    pub message_id: String,
}

impl From<cairn::ProfileFact> for ProfileFactOut {
    fn from(f: cairn::ProfileFact) -> Self {
        let cairn::ProfileFact {
            category,
            attribute,
            value,
            negated,
            stated_at,
            earlier,
            session_id,
            message_id,
        } = f;
        Self {
            category,
            attribute,
            value,
            negated,
            stated_at,
            earlier,
            session_id,
            message_id,
        }
    }
}

/// A pointer to the message that shows something about a speaker.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Evidence)]
pub struct EvidenceOut {
    /// What was found ("product manager", "Kubernetes").
    pub what: String,
    pub session_id: String,
    pub message_id: String,
}

impl From<cairn::Evidence> for EvidenceOut {
    fn from(e: cairn::Evidence) -> Self {
        let cairn::Evidence {
            what,
            session_id,
            message_id,
        } = e;
        Self {
            what,
            session_id,
            message_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::to_value;

    /// Each answer serialises exactly as the library's type it replaces.
    #[test]
    fn each_answer_is_the_json_the_library_wrote() {
        let state = cairn::AgentState {
            url: Some("https://a.example".into()),
            observation: Some("tree".into()),
            ..Default::default()
        };
        assert_eq!(
            to_value(super::super::formats::AgentStateWire::from(state.clone())).unwrap(),
            to_value(&state).unwrap()
        );
        let at = cairn::parse_timestamp("2024-05-01T10:00:00Z").unwrap();
        let version = cairn::FactVersion {
            unit_id: "fact:s:0".into(),
            subject: "user's city".into(),
            value: "Lisbon".into(),
            statement: "Lisbon".into(),
            valid_from: Some(at),
            valid_to: None,
            superseded_by: None,
            session_id: Some("s".into()),
            message_id: Some("0".into()),
            speaker: Some("user".into()),
            group: None,
            text: "I live in Lisbon.".into(),
            person: Some("user".into()),
            category: None,
            negated: true,
            since: None,
        };
        let history = cairn::FactHistory {
            subject: "user's city".into(),
            versions: vec![version],
        };
        assert_eq!(
            to_value(FactHistoryOut::from(history.clone())).unwrap(),
            to_value(&history).unwrap()
        );
        let summary = cairn::TrajectorySummary {
            id: "t".into(),
            domain: None,
            goal: "buy".into(),
            outcome: serde_json::json!("success"),
            succeeded: Some(true),
            steps: 3,
            urls: vec!["https://a.example".into()],
            recorded_at: at,
        };
        assert_eq!(
            to_value(TrajectorySummaryOut::from(summary.clone())).unwrap(),
            to_value(&summary).unwrap()
        );
        let subject = cairn::FactSubject {
            subject: "user's diet".into(),
            versions: 2,
            current_value: "meat".into(),
            statement: "no longer meat".into(),
            last_stated: Some(at),
            person: Some("user".into()),
            category: Some(cairn::FactCategory::ALL[0]),
            negated: true,
        };
        assert_eq!(
            to_value(FactSubjectOut::from(subject.clone())).unwrap(),
            to_value(&subject).unwrap()
        );
        let profile = cairn::SpeakerProfile {
            speaker: "user".into(),
            messages: 3,
            groups: Vec::new(),
            first_seen: Some(at),
            last_seen: None,
            style: cairn::Style::default(),
            roles: vec![cairn::Evidence {
                what: "nurse".into(),
                session_id: "s".into(),
                message_id: "0".into(),
            }],
            skills: Vec::new(),
            topics: vec!["pottery".into()],
            facts: vec![cairn::ProfileFact {
                category: cairn::FactCategory::ALL[0],
                attribute: "home".into(),
                value: "Lisbon".into(),
                negated: false,
                stated_at: Some(at),
                earlier: 1,
                session_id: "s".into(),
                message_id: "0".into(),
            }],
            summary: "Profile of user.".into(),
        };
        assert_eq!(
            to_value(SpeakerProfileOut::from(profile.clone())).unwrap(),
            to_value(&profile).unwrap()
        );
    }
}
