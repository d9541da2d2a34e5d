//! One line of a `bench personal` run per conversation and config row: every personal
//! fact extracted (and whether the suite lists it), every fact the suite lists (and
//! whether it was extracted), every question (and whether the first hit states the
//! current value). The suite is the repository's own, so its text may be quoted.
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationRecord {
    pub conversation: String,
    pub split: String,
    pub config: String,
    /// Messages the memory dated when it recorded them (sent without a time).
    pub dated_at_recording: usize,
    /// Facts an LLM read (config rows with an LLM), beside the personal facts.
    #[serde(default)]
    pub llm_facts: usize,
    pub extracted: Vec<ExtractedOutcome>,
    pub expected: Vec<ExpectedOutcome>,
    pub questions: Vec<QuestionOutcome>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtractedOutcome {
    pub session: String,
    pub message: String,
    pub category: String,
    pub subject: String,
    pub value: String,
    pub negated: bool,
    /// The suite lists it for its message.
    pub correct: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpectedOutcome {
    pub session: String,
    pub message: String,
    pub category: String,
    pub about: Vec<String>,
    pub value: String,
    pub negated: bool,
    pub found: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionOutcome {
    pub question: String,
    /// Asked as of this time; `current` is then the value true at it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    pub current: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier: Option<String>,
    /// The first hit states the current value and is not marked superseded.
    pub first_hit_current: bool,
    /// The packed context holds the current value.
    pub context_current: bool,
    /// The user's card (the head of the context) holds the current value.
    #[serde(default)]
    pub card_current: bool,
    /// The user's card holds the earlier value, the one the current replaced.
    #[serde(default)]
    pub card_earlier: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_hit: Option<String>,
}
