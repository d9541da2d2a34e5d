//! What Cairn's tests share. A dev-dependency only: nothing here ships in a library or
//! the `cairn` binary.
//!
//! - [`HashEmbedder`]: a deterministic, model-free embedder (bag of hashed words).
//! - [`switches`]: `SKIPPED` or a failure when the embedding model
//!   (`CAIRN_REQUIRE_MODEL`) or PostgreSQL (`CAIRN_REQUIRE_POSTGRES`) is missing.
//! - [`fixtures`]: the workspace, the shared benchmark data, committed fixtures, inline
//!   sessions, a unit to store.
//! - [`llm_stub`]: a scripted OpenAI-compatible server on loopback, for everything that
//!   talks to an LLM (`cairn-llm`'s client, enrichment); `scripts/llm-server.mjs` is its
//!   counterpart for manual runs against a real small model.
//! - [`words`]: deterministic word salad over a vocabulary (the text index's tests).
//!
//! Percentiles are not here: they are reported by the harnesses themselves, so their one
//! definition lives in `cairn_load::stats`.
pub mod embedder;
pub mod fixtures;
pub mod llm_stub;
pub mod switches;
pub mod words;

pub use embedder::{HashEmbedder, HASH_DIM, HASH_MODEL};
pub use fixtures::files_holding;
pub use switches::{database_url, model_missing, model_required};
