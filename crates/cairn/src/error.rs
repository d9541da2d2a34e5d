use cairn_core::{ConflictError, EmbedError, InputError, StoreError};
use cairn_embed::EmbedLoadError;
use cairn_engine::EngineError;
use thiserror::Error;

/// Everything that can go wrong through the public API.
#[derive(Debug, Error)]
pub enum Error {
    /// The caller's input is invalid; the message names the record and field. (Not a
    /// `source`: the message already holds it, and error reporters print both.)
    #[error("invalid input: {0}")]
    Input(InputError),
    /// The input contradicts what is stored (nothing was written).
    #[error("conflict: {0}")]
    Conflict(ConflictError),
    /// An idempotency key came again with a different request.
    #[error("idempotency key {0:?} was already used for a different request")]
    IdempotencyKeyReused(String),
    /// A memory that cannot be forgotten on its own (a profile: forget the messages it is
    /// computed from); nothing was written.
    #[error("not deletable: {0}")]
    NotDeletable(String),
    /// The call ran past the deadline its caller set ([`crate::with_deadline`]); it wrote
    /// nothing.
    #[error(transparent)]
    OutOfTime(cairn_engine::budget::OutOfTime),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("embedding model: {0}")]
    Model(EmbedLoadError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl From<InputError> for Error {
    fn from(e: InputError) -> Self {
        Error::Input(e)
    }
}

impl From<ConflictError> for Error {
    fn from(e: ConflictError) -> Self {
        Error::Conflict(e)
    }
}

impl From<EmbedLoadError> for Error {
    fn from(e: EmbedLoadError) -> Self {
        Error::Model(e)
    }
}

impl From<EngineError> for Error {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Input(e) => Error::Input(e),
            EngineError::Conflict(e) => Error::Conflict(e),
            EngineError::IdempotencyKeyReused(k) => Error::IdempotencyKeyReused(k),
            EngineError::NotDeletable(m) => Error::NotDeletable(m),
            EngineError::Store(e) => Error::Store(e),
            EngineError::Embed(e) => Error::Embed(e),
            EngineError::OutOfTime(e) => Error::OutOfTime(e),
        }
    }
}

impl Error {
    /// True when the caller's input (not the system) is at fault.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            Error::Input(_)
                | Error::Conflict(_)
                | Error::IdempotencyKeyReused(_)
                | Error::NotDeletable(_)
                | Error::Store(StoreError::NoSuchSpace(_))
                | Error::Store(StoreError::NotFound(_))
        )
    }
}
