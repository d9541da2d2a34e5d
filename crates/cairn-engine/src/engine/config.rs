//! What an engine runs on (its backends) and how (its configuration).
use crate::rank::RankConfig;
use cairn_core::{Embedder, EmbeddingCache, RecordStore, TextIndex, VectorIndex};
use std::sync::Arc;

/// The storage and model implementations an engine runs on.
#[derive(Clone)]
pub struct EngineBackends {
    pub records: Arc<dyn RecordStore>,
    pub text: Arc<dyn TextIndex>,
    pub vectors: Arc<dyn VectorIndex>,
    pub embedder: Arc<dyn Embedder>,
    pub cache: Arc<dyn EmbeddingCache>,
    /// Stored LLM readings (enrichment); `None`: the store keeps none.
    pub enrich: Option<Arc<dyn cairn_core::EnrichmentStore>>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    pub rank: RankConfig,
    /// The user's card at the head of every recall's context (see `card.rs`).
    pub card: crate::card::CardConfig,
    /// Forgetting (a space, a session, a message, a trajectory) also removes the vectors of
    /// the forgotten text from the embedding cache (default). Off, the cache keeps them, so
    /// the same text ingested again is not embedded again: for replays of public data
    /// (benchmarks), never for data that must be forgotten, since a cached vector and its
    /// key (the text's SHA-256) can confirm a guessed text.
    pub purge_cache_on_forget: bool,
    /// One embedding-cache entry per distinct text for the whole store, shared by every
    /// space. Off (default), each space has entries of its own: otherwise a tenant could
    /// tell whether another space holds a text (its ingest would count the vector as
    /// cached) or asked a query (its embedding would come back at once). On, for replays
    /// of public data across many spaces (benchmarks), where a text is embedded once.
    pub share_embedding_cache: bool,
    /// Milliseconds a write's text-index entries may stay uncommitted on disk (see
    /// `committer.rs`): a recall commits them first, a [`TextCommitter`] within this
    /// interval. 0: no background commits (only recalls, checks and closing commit).
    pub text_commit_ms: u64,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            rank: RankConfig::default(),
            card: crate::card::CardConfig::default(),
            purge_cache_on_forget: true,
            share_embedding_cache: false,
            text_commit_ms: 1000,
        }
    }
}
