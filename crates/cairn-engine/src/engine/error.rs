//! What the engine's operations fail with.
use crate::embedding::CachedEmbedError;
use cairn_core::{ConflictError, EmbedError, InputError, StoreError};
use thiserror::Error;

#[derive(Debug, Clone, Error)]
pub enum EngineError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Conflict(#[from] ConflictError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// An idempotency key came again with another request than the one it first named.
    #[error("idempotency key {0:?} was already used for a different request")]
    IdempotencyKeyReused(String),
    /// A memory that cannot be forgotten on its own (a profile: computed from a speaker's
    /// messages); the message says what to forget instead.
    #[error("{0}")]
    NotDeletable(String),
    /// The request ran past the deadline its caller set (`budget.rs`).
    #[error(transparent)]
    OutOfTime(#[from] crate::budget::OutOfTime),
}

impl From<CachedEmbedError> for EngineError {
    fn from(e: CachedEmbedError) -> Self {
        match e {
            CachedEmbedError::Embed(e) => EngineError::Embed(e),
            CachedEmbedError::Store(e) => EngineError::Store(e),
        }
    }
}
