use cairn_core::{EmbedError, InputError, StoreError};
use cairn_embed::EmbedLoadError;
use cairn_engine::EngineError;
use thiserror::Error;

/// Everything that can go wrong through the public API.
#[derive(Debug, Error)]
pub enum Error {
    /// The caller's input is invalid; the message names the record and field.
    #[error("invalid input: {0}")]
    Input(#[from] InputError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("embedding model: {0}")]
    Model(#[from] EmbedLoadError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl From<EngineError> for Error {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Input(e) => Error::Input(e),
            EngineError::Store(e) => Error::Store(e),
            EngineError::Embed(e) => Error::Embed(e),
        }
    }
}

impl Error {
    /// True when the caller's input (not the system) is at fault.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            Error::Input(_)
                | Error::Store(StoreError::NoSuchSpace(_))
                | Error::Store(StoreError::NotFound(_))
                | Error::Store(StoreError::Conflict { .. })
                | Error::Store(StoreError::TrajectoryConflict { .. })
        )
    }
}
