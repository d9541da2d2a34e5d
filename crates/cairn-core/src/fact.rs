//! Versioned facts: statements about a named subject ("budget for project Atlas",
//! "owner of the launch checklist") whose later values supersede earlier ones. Each
//! version is a unit derived from the message that stated it; the chain is computed from
//! them, so it is derived state like everything else.
use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// What a `fact` unit states.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactDetail {
    /// The subject as written ("the budget for Project Atlas", "user's home").
    pub subject: String,
    /// Normalized subject words (lowercased, stemmed, sorted, generic words dropped);
    /// statements whose keys contain one another are about the same subject.
    pub subject_key: Vec<String>,
    pub value: String,
    /// True when the statement says it changes an earlier value ("moved to", "instead").
    pub revision: bool,
    /// Whom a personal fact is about: the speaker who said it of themself ("user",
    /// "Caroline") or someone they named ("user's sister", "Ana"). `None`: a fact about
    /// a thing (a team's budget, a launch date). A personal fact's subject is
    /// `<person>'s <attribute>`, and its chain holds only facts about the same person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    /// What kind of personal fact it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<FactCategory>,
    /// The statement denies the value: a dislike, something no longer true ("I used to
    /// live in Porto", "I sold the Civic"), something not done ("I don't eat pork").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub negated: bool,
    /// When the stated change took effect, when the statement dates it ("I moved to
    /// Lisbon last month"), resolved against the time of the message.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::time::serde_time::option"
    )]
    pub since: Option<Timestamp>,
}

/// The kinds of personal fact read from what people say about themselves and the
/// people around them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FactCategory {
    /// Where someone lives.
    Home,
    /// Employer, workplace or school.
    Work,
    /// Occupation, title, what someone studies.
    Role,
    /// Relatives, partners, friends, relationship status.
    Family,
    Pet,
    Possession,
    /// Conditions, injuries, medication.
    Health,
    /// Diets, allergies, foods and drinks avoided.
    Diet,
    /// Likes, dislikes, favourites.
    Preference,
    /// What someone does regularly.
    Habit,
    /// Plans, intentions and goals.
    Plan,
    /// A number of things someone has or did.
    Count,
    /// How the speaker wants the assistant to answer from now on ("from now on, use
    /// metric units", "keep your replies short"): a standing instruction.
    Instruction,
}

impl FactCategory {
    pub const ALL: [FactCategory; 13] = [
        FactCategory::Home,
        FactCategory::Work,
        FactCategory::Role,
        FactCategory::Family,
        FactCategory::Pet,
        FactCategory::Possession,
        FactCategory::Health,
        FactCategory::Diet,
        FactCategory::Preference,
        FactCategory::Habit,
        FactCategory::Plan,
        FactCategory::Count,
        FactCategory::Instruction,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FactCategory::Home => "home",
            FactCategory::Work => "work",
            FactCategory::Role => "role",
            FactCategory::Family => "family",
            FactCategory::Pet => "pet",
            FactCategory::Possession => "possession",
            FactCategory::Health => "health",
            FactCategory::Diet => "diet",
            FactCategory::Preference => "preference",
            FactCategory::Habit => "habit",
            FactCategory::Plan => "plan",
            FactCategory::Count => "count",
            FactCategory::Instruction => "instruction",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// One version of a subject's value, as `history` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactVersion {
    pub unit_id: String,
    pub subject: String,
    pub value: String,
    /// The value as a reader says it: a denied one as such ("dislikes jazz", "no longer
    /// Acme"), else the value.
    #[serde(default)]
    pub statement: String,
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
    /// Whom a personal fact is about (see [`FactDetail::person`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<FactCategory>,
    /// The statement denies the value (see [`FactDetail::negated`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub negated: bool,
    /// When the stated change took effect, when the statement dates it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::time::serde_time::option"
    )]
    pub since: Option<Timestamp>,
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
    /// The newest statement as a reader says it: a denied value as such ("dislikes
    /// jazz", "no longer Acme"), else the value.
    #[serde(default)]
    pub statement: String,
    /// When the newest statement was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_stated: Option<Timestamp>,
    /// Whom a personal subject is about (see [`FactDetail::person`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<FactCategory>,
    /// The newest statement denies its value.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub negated: bool,
}
