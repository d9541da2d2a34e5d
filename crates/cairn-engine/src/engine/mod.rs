//! The engine: the one place where ingest and recall are orchestrated.
//!
//! Write side (ingest): `ingest.rs` (sessions, group messages, the shared write path),
//! `import.rs` (restoring an export as one request), `append.rs` (appends to one
//! session, group-committed), `remember.rs` (what an agent asks to keep: a note or turns,
//! as an append to a new or named session), `receipt.rs` (idempotency keys: the receipts that make any
//! write safe to retry), `staged.rs` (vectors embedded before the write lock), `forget.rs`
//! (and scrubbing what was forgotten from the stores' files), `trajectories.rs`,
//! `enrich.rs`, `committer.rs` (when the text index commits), `advance.rs` (a session
//! write bringing its space's cached derived state to the new generation). Read side (recall and
//! browsing): `recall.rs` (with `candidates.rs`: what the indexes find within the view, loaded; `versions.rs`: fact versions among the hits; `profiles.rs`:
//! profiles of the people a question names; `relevance.rs`: the relevance floor and the
//! newest statement first), `graph.rs` (the entity graph: its cache, listings, recall
//! stages), `knowledge.rs` (fact histories, profiles), `browse.rs` (listings and metadata
//! filters), `scope.rs` (what a request sees: its scope resolved against a space, and the
//! error of a name several partitions know), `inspect.rs` (the trajectory inspection
//! verbs), `agent.rs` (the agent controller: a model working through them), `cache.rs` (the one cache of derived reads: by space and a hash of the scope, for one
//! generation of the space, bounded in bytes), `flight.rs` (one build at a time of what it holds).
//! The engine itself: `state.rs` (the `Engine`, its errors and configuration, opening,
//! the write lock, spaces), `heal.rs` (healing and `check`), `vectors.rs` (embedding and
//! storing the vectors of what is written). This file is the map and what it exports.
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
#[cfg(test)]
mod cost_tests;
mod enrich;
mod flight;
mod forget;
mod graph;
mod heal;
mod import;
mod ingest;
mod inspect;
mod knowledge;
mod profiles;
mod recall;
mod receipt;
mod reconcile;
mod relevance;
mod remember;
mod scope;
mod staged;
mod state;
mod trajectories;
mod vectors;
mod versions;

pub use browse::SessionPage;
pub use committer::TextCommitter;
pub use enrich::{enrichment_units, llm_fact_id, EnrichReport};
pub use forget::{ForgetReport, MessageForgetReport, PartitionForgetReport};
pub use ingest::Exported;
pub use receipt::WriteOptions;
pub use remember::{Remembered, NOTE_SPEAKER};
pub use state::{
    CheckReport, Engine, EngineBackends, EngineConfig, EngineError, IngestReport, SpaceIndexCheck,
};
