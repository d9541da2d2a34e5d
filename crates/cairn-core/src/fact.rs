//! Versioned facts: statements about a named subject ("budget for project Atlas",
//! "owner of the launch checklist") whose later values supersede earlier ones. Each
//! version is a unit derived from the message that stated it; the chain is computed from
//! them, so it is derived state like everything else.
use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// What a `fact` unit states.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactDetail {
    /// The subject as written ("the budget for Project Atlas").
    pub subject: String,
    /// Normalized subject words (lowercased, stemmed, sorted, generic words dropped);
    /// statements whose keys contain one another are about the same subject.
    pub subject_key: Vec<String>,
    pub value: String,
    /// True when the statement says it changes an earlier value ("moved to", "instead").
    pub revision: bool,
}

/// One version of a subject's value, as `history` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactVersion {
    pub unit_id: String,
    pub subject: String,
    pub value: String,
    /// When it was stated.
    pub valid_from: Option<Timestamp>,
    /// When the next version was stated (`None`: still current).
    pub valid_to: Option<Timestamp>,
    /// The unit of the version that replaced this one.
    pub superseded_by: Option<String>,
    pub session_id: Option<String>,
    pub message_id: Option<String>,
    pub speaker: Option<String>,
    pub group: Option<String>,
    /// The sentence it was read from.
    pub text: String,
}

/// The chain of versions of one subject, oldest first; the last is current.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactHistory {
    pub subject: String,
    pub versions: Vec<FactVersion>,
}

impl FactHistory {
    pub fn current(&self) -> Option<&FactVersion> {
        self.versions.last()
    }
}

/// One subject a space holds facts about, as a listing shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactSubject {
    /// The subject as its newest statement wrote it (what `history` takes).
    pub subject: String,
    /// Statements filed under it.
    pub versions: usize,
    /// The newest statement's value.
    pub current_value: String,
    /// When the newest statement was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_stated: Option<Timestamp>,
}
