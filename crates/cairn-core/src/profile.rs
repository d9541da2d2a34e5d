//! Speaker profiles: who a person is in a space, inferred from what they wrote.
//!
//! Each session contributes a [`SpeakerStats`] per speaker (additive counts and the
//! evidence found in that session); a profile is their sum. Re-deriving a session
//! replaces its contribution and forgetting it removes it, so profiles stay consistent
//! with the record without ever being edited in place.
use crate::{FactCategory, Timestamp};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A pointer to the message that shows something about a speaker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// What was found ("product manager", "Kubernetes").
    pub what: String,
    pub session_id: String,
    pub message_id: String,
}

/// One session's contribution to a speaker's profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SpeakerStats {
    pub speaker: String,
    pub messages: u32,
    pub words: u64,
    pub questions: u32,
    pub exclamations: u32,
    pub emoji: u32,
    /// Messages with informal markers (contractions, "lol", "gonna", ...).
    pub informal: u32,
    /// Messages with formal markers ("please", "regards", "would you", ...).
    pub formal: u32,
    /// Messages that give instructions ("make sure", "need you to", "must", ...).
    pub directive: u32,
    /// Messages that invite ("let's", "what do you think", "how about", ...).
    pub collaborative: u32,
    /// Sum and count of seconds between another speaker's message and this speaker's
    /// reply in the same conversation.
    pub reply_seconds: f64,
    pub replies: u32,
    pub first: Option<Timestamp>,
    pub last: Option<Timestamp>,
    pub groups: Vec<String>,
    /// Content words and how often the speaker used them (the most frequent few per
    /// session are kept).
    pub terms: BTreeMap<String, u32>,
    /// Roles or titles said of the speaker, by themselves or by others.
    pub roles: Vec<Evidence>,
    /// Skills and areas of expertise claimed by or credited to the speaker.
    pub skills: Vec<Evidence>,
}

/// Communication style, as rates per message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Style {
    pub avg_words: f32,
    pub question_rate: f32,
    pub exclamation_rate: f32,
    pub emoji_rate: f32,
    /// Formal minus informal markers per message, in [-1, 1].
    pub formality: f32,
    pub directive_rate: f32,
    pub collaborative_rate: f32,
    /// Mean seconds to reply to someone else.
    pub avg_reply_seconds: Option<f32>,
    /// The style in words ("brief", "formal", "directive", ...).
    pub traits: Vec<String>,
}

/// What is known about one speaker of a space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeakerProfile {
    pub speaker: String,
    pub messages: u32,
    pub groups: Vec<String>,
    pub first_seen: Option<Timestamp>,
    pub last_seen: Option<Timestamp>,
    pub style: Style,
    pub roles: Vec<Evidence>,
    pub skills: Vec<Evidence>,
    /// Words the speaker uses far more than the rest of the space.
    pub topics: Vec<String>,
    /// What the speaker said of themself that still holds in the profile's view: the
    /// current value of each of their personal facts (home, work, family, likes and
    /// dislikes, ...), each with the message that states it.
    #[serde(default)]
    pub facts: Vec<ProfileFact>,
    /// The profile as a paragraph, for contexts.
    pub summary: String,
}

/// A personal fact in a profile: the current value of one of the speaker's version
/// chains, and where it was said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileFact {
    pub category: FactCategory,
    /// The attribute ("home", "diet: pork", "sister").
    pub attribute: String,
    pub value: String,
    /// A dislike, or something no longer true.
    pub negated: bool,
    /// When it was said.
    pub stated_at: Option<Timestamp>,
    /// Statements of the same attribute before it, which it supersedes.
    pub earlier: usize,
    pub session_id: String,
    pub message_id: String,
}
