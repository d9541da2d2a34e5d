//! Enrichment: what an optional LLM reads from messages (facts with a subject), kept as
//! data. An LLM's output is not reproducible, so it is stored verbatim once and the fact
//! units are derived from the stored output: rebuilds never call the LLM again.
use crate::{SpaceId, StoreError, Timestamp};
use serde::{Deserialize, Serialize};

/// A fact an LLM read from a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnrichedFact {
    /// What the fact is about ("budget for Project Atlas", "user's cat's name").
    pub subject: String,
    pub value: String,
}

/// The stored reading of one message by one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Enrichment {
    pub space: SpaceId,
    pub session_id: String,
    pub message_id: String,
    /// The model that read it (`MODEL @ URL`).
    pub model: String,
    pub facts: Vec<EnrichedFact>,
    /// Set when the model's answer could not be used (it is not asked again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub created_at: Timestamp,
}

/// What an enricher reads: one message with its speaker and time.
#[derive(Debug, Clone, PartialEq)]
pub struct EnrichInput<'a> {
    pub speaker: &'a str,
    pub occurred_at: Option<Timestamp>,
    pub text: &'a str,
}

/// Why an enricher gave no answer.
#[derive(Debug, Clone, thiserror::Error)]
#[error("enricher: {message}")]
pub struct EnrichError {
    pub message: String,
    /// The model may answer later (server down or busy): the message stays pending.
    /// Otherwise the failure is recorded and the message is not asked again.
    pub transient: bool,
}

/// Something that reads facts from a message (an LLM).
pub trait Enricher: Send + Sync {
    /// Names the model; stored with every enrichment.
    fn model_id(&self) -> &str;
    fn read_facts(&self, message: &EnrichInput<'_>) -> Result<Vec<EnrichedFact>, EnrichError>;
}

/// Where enrichments and the per-space switch live. Forgetting a session or space
/// removes its enrichments with it.
pub trait EnrichmentStore: Send + Sync {
    fn set_enabled(&self, space: &SpaceId, on: bool) -> Result<(), StoreError>;
    fn enabled_spaces(&self) -> Result<Vec<SpaceId>, StoreError>;
    /// Stores (or replaces) the reading of one message by one model.
    fn put(&self, e: &Enrichment) -> Result<(), StoreError>;
    /// Every stored reading of a session's messages.
    fn of_session(&self, space: &SpaceId, session: &str) -> Result<Vec<Enrichment>, StoreError>;
    /// Drops the readings of one message (it was forgotten).
    fn forget_message(
        &self,
        space: &SpaceId,
        session: &str,
        message: &str,
    ) -> Result<(), StoreError>;
}
