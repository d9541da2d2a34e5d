//! The Cairn engine: ingest and recall pipelines over the storage and embedding traits of
//! `cairn-core`.
//!
//! Data flow (each step a plain function over plain data, testable alone):
//! ```text
//! ingest: SessionInput -> validate -> derive units (derive.rs) -> store (ground + units)
//!         -> vectors (embedding cache first) -> text index
//! recall: query + options -> analyze (query.rs: terms, time expressions)
//!         -> lexical + dense candidates -> fuse (rank.rs) -> second pass (containers,
//!         sessions, time) -> pack into the token budget (pack.rs) -> Recall
//! ```
//! Modules by when they run. At ingest: `derive.rs` (session units), `tail.rs` (what an append
//! re-derives), `trajectory.rs`
//! (trajectory units), `facts/` (extraction), `profile/` (per-session speaker
//! statistics), `embedding.rs` (vectors through the cache). At recall: `query.rs`,
//! `rank.rs`, `facts/index.rs` (version chains), `profile/sums.rs` (profiles kept by
//! writes), `graph.rs`
//! (the entity graph, built from units), `pack.rs`, `text.rs`. When the optional LLM reads
//! messages: `fact_reading.rs` (its prompt and how its answer is read). When an agent inspects trajectories: `inspect.rs`, `context.rs`,
//! `workspace.rs` (the controller that drives them is `engine/agent.rs`). `engine/` orchestrates them (its `mod.rs` has its map).
//!
//! This crate owns every ranking and derivation decision. It must never know a storage
//! engine (SQLite, tantivy, PostgreSQL), HTTP, or a model file format.

/// What the agent controller tells its model (the workflow, the schema of one step); the
/// controller itself is `Trajectories::run_trajectory_agent` (`engine/agent.rs`).
pub mod agent {
    pub use crate::engine::agent::{step_schema, AGENT_WORKFLOW};
}
pub mod budget;
mod calendar;
mod card;
pub mod context;
mod derive;
mod embedding;
mod engine;
pub mod fact_reading;
mod facts;
mod graph;
pub mod inspect;
mod learned;
mod pack;
mod personal;
mod places;
mod present;
mod profile;
mod query;
mod query_embed;
mod rank;
mod tail;
mod text;
mod trajectory;
mod work;
pub mod workspace;

pub use card::CardConfig;
pub use derive::{derive_session_units, segment, Window, DERIVE_VERSION};
pub use embedding::{cache_key, cache_key_in, cache_key_within};
pub use engine::{
    enrichment_units, llm_fact_id, CheckReport, Engine, EngineBackends, EngineConfig, EngineError,
    EnrichReport, Exported, ForgetReport, Forgetting, IngestReport, Knowledge, MessageForgetReport,
    PartitionForgetReport, Remembered, Retrieval, SessionPage, SpaceIndexCheck, TextCommitter,
    Trajectories, WriteOptions, Writes, NOTE_SPEAKER,
};
pub use learned::Features;
pub use pack::{pack, PackInput};
pub use query::{analyze_query, QueryAnalysis, TimeRange};
pub use rank::{fuse, rrf_fuse, Fusion, RankConfig};
pub use tail::{derive_appended, APPEND_LOOKBACK};
pub use trajectory::derive_trajectory_units;
