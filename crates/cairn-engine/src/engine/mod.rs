//! The engine: the one place where ingest and recall are orchestrated.
//!
//! The engine itself (`Engine`, what every service shares): `state.rs` (its state,
//! opening, the write lock, spaces), `config.rs`, `error.rs`, `reports.rs`, `waiting.rs`
//! (writes waiting for the lock: queued appends, staged vectors), `heal.rs` (healing and
//! `check`) with `reconcile.rs`, `vectors.rs` (embedding and storing vectors), `scope.rs`
//! (what a request sees: its scope resolved against a space into a `View`), `cache.rs`
//! (the one cache of derived reads: by space and a hash of the scope, for one generation
//! of the space, bounded in bytes) with `flight.rs` (one build at a time of what it
//! holds), `committer.rs` (when the text index commits). The services (`services.rs`):
//! - `Writes`: `ingest.rs` (sessions, group messages, the shared write path), `import.rs`
//!   (an export restored as one request), `append.rs` (appends to one session,
//!   group-committed), `remember.rs` (what an agent asks to keep), `receipt.rs`
//!   (idempotency keys), `staged.rs` (vectors embedded before the write lock),
//!   `enrich.rs`, `advance.rs` (a write bringing its space's cached derived state to the
//!   new generation).
//! - `Forgetting`: `forget.rs` (and scrubbing what was forgotten from the stores' files).
//! - `Retrieval`: `recall.rs`, `candidates.rs` (what the indexes find within the view,
//!   loaded), `versions.rs` (fact versions among the hits), `profiles.rs` (profiles of
//!   the people a question names), `relevance.rs` (the relevance floor, the newest
//!   statement first), `card.rs` (the user's card).
//! - `Knowledge`: `knowledge.rs` (facts, histories, profiles), `graph.rs` (the entity
//!   graph: its cache, listings, recall stages), `browse.rs` (listings, exports).
//! - `Trajectories`: `trajectories.rs`, `inspect.rs` (the inspection verbs), `agent.rs`
//!   (the agent controller: a model working through them).
mod advance;
#[cfg(test)]
mod advance_tests;
pub(crate) mod agent;
mod append;
#[cfg(test)]
mod append_tests;
mod browse;
mod cache;
mod candidates;
mod card;
mod committer;
mod config;
#[cfg(test)]
mod cost_tests;
mod enrich;
mod error;
mod flight;
mod forget;
mod graph;
mod heal;
mod import;
mod ingest;
mod inspect;
mod knowledge;
mod preference;
mod profiles;
mod recall;
mod receipt;
mod reconcile;
mod relevance;
mod remember;
mod reports;
mod scope;
mod services;
mod staged;
mod state;
mod trajectories;
mod vectors;
mod versions;
mod waiting;

pub use browse::{Exported, SessionPage};
pub use committer::TextCommitter;
pub use config::{EngineBackends, EngineConfig};
pub use enrich::{enrichment_units, llm_fact_id, EnrichReport};
pub use error::EngineError;
pub use forget::{ForgetReport, MessageForgetReport, PartitionForgetReport};
pub use receipt::WriteOptions;
pub use remember::{Remembered, NOTE_SPEAKER};
pub use reports::{CheckReport, IngestReport, SpaceIndexCheck};
pub use services::{Forgetting, Knowledge, Retrieval, Trajectories, Writes};
pub use state::Engine;
