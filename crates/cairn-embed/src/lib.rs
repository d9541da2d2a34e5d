//! Sentence embeddings for Cairn: turns texts into unit-length vectors and counts tokens,
//! behind [`cairn_core::Embedder`].
//!
//! This crate owns:
//! - **model resolution**: from a hub id (default [`DEFAULT_MODEL`]) to a local model
//!   directory, looking in the caller's `model_dir`, `CAIRN_MODEL_DIR`, Cairn's model
//!   cache and the Hugging Face hub cache ([`resolve`]); `./scripts/setup.sh` installs
//!   the default model;
//! - **tokenization**: the model's own tokenizer, for truncation before inference and
//!   for [`Embedder::count_tokens`] (token budgets);
//! - **inference backends**: [`BertEmbedder`], a BERT sentence-transformers model run
//!   on the CPU with candle (mean pooling, L2 normalisation);
//! - **batching**: texts are sorted by token length and run in batches, then returned
//!   in the caller's order.
//!
//! It must never know about spaces, storage or ranking: it does not cache embeddings
//! (the engine does, keyed by [`Embedder::model_id`]), does not search, and does not
//! decide what gets embedded. It depends on `cairn-core` only for the trait and error.
//!
//! ```no_run
//! use cairn_core::Embedder;
//! use cairn_embed::{BertEmbedder, EmbedConfig};
//!
//! let embedder = BertEmbedder::load(&EmbedConfig::default())?;
//! let vectors = embedder.embed(&["A man is eating food."])?;
//! assert_eq!(vectors[0].len(), embedder.dim());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod bert;
pub mod download;
mod error;
mod int8;
pub mod resolve;

pub use bert::{
    Backend, BertEmbedder, EmbedConfig, DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS, DEFAULT_MODEL,
};
pub use cairn_core::{EmbedError, Embedder};
pub use error::{EmbedLoadError, Tried};
#[doc(hidden)]
pub use int8::{Kernel as Int8Kernel, LinearBench};
pub use resolve::{resolve_model_dir, ModelEnv, ModelSource, ResolvedModel};
