//! Errors of loading an embedding model.
use std::fmt;
use std::path::PathBuf;
use thiserror::Error;

/// One place the model resolver looked, and why it did not count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tried {
    /// Where the candidate came from ("model_dir setting", "CAIRN_MODEL_DIR", ...).
    pub origin: &'static str,
    /// The directory (or the directory pattern) that was looked at.
    pub path: PathBuf,
    /// Why it did not count ("does not exist", "missing model.safetensors", ...).
    pub reason: String,
}

impl fmt::Display for Tried {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} ({})",
            self.origin,
            self.path.display(),
            self.reason
        )
    }
}

/// Lists the places tried, one per line, for [`EmbedLoadError::ModelNotFound`].
fn list_tried(tried: &[Tried]) -> String {
    if tried.is_empty() {
        return "\n  (no candidate locations: neither CAIRN_HOME, XDG_CACHE_HOME, HOME nor a Hugging Face cache is set)".to_string();
    }
    tried.iter().map(|t| format!("\n  - {t}")).collect()
}

/// Why an embedding model could not be loaded.
#[derive(Debug, Error)]
pub enum EmbedLoadError {
    /// No usable local directory holds the model.
    #[error(
        "embedding model {model:?} not found locally; looked in:{}\n\
         a model directory needs config.json, tokenizer.json and model.safetensors; \
         run ./scripts/setup.sh to install the default model, or point the model_dir \
         setting or CAIRN_MODEL_DIR at a model directory",
        list_tried(.tried)
    )]
    ModelNotFound { model: String, tried: Vec<Tried> },

    /// A file the model needs is missing.
    #[error("model file missing: {}", .path.display())]
    MissingFile { path: PathBuf },

    /// A model file exists but could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// config.json is not a usable BERT configuration.
    #[error("bad model config {}: {reason}", .path.display())]
    BadConfig { path: PathBuf, reason: String },

    /// tokenizer.json could not be loaded or configured.
    #[error("bad tokenizer {}: {reason}", .path.display())]
    Tokenizer { path: PathBuf, reason: String },

    /// The weights could not be loaded into the model.
    #[error("bad model weights {}: {reason}", .path.display())]
    Weights { path: PathBuf, reason: String },

    /// The embedder settings are unusable (zero batch size, max_tokens beyond the
    /// model's positions, ...).
    #[error("invalid embedder settings: {0}")]
    InvalidSettings(String),

    /// Downloading the model from a hub failed.
    #[error("downloading {url}: {reason} (set HF_HUB_OFFLINE=1 to stop trying, and install the model with ./scripts/setup.sh or point CAIRN_MODEL_DIR at it)")]
    Download { url: String, reason: String },
}
