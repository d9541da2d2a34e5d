//! Cairn: long-term memory for AI agents, as a Rust library.
//!
//! ```no_run
//! use cairn::{Memory, RecallOptions, SessionInput};
//! # fn main() -> Result<(), cairn::Error> {
//! let memory = Memory::open("./cairn-data")?;
//! let session: SessionInput = serde_json::from_str(
//!     r#"{"id": "s1", "date": "2024-03-01", "messages": [
//!         {"role": "user", "text": "I moved to Lisbon last week."},
//!         {"role": "assistant", "text": "Welcome to Lisbon!"}]}"#,
//! ).expect("valid json");
//! memory.ingest_session("alice", session)?;
//! let recall = memory.recall("alice", "Where do I live?", &RecallOptions::default())?;
//! println!("{}", recall.context);
//! # Ok(()) }
//! ```
//!
//! This crate wires the engine to a store (the embedded one, or PostgreSQL with pgvector
//! through `Memory::open_postgres`) and the local embedding model. It
//! owns the public Rust API and its error type; it must not hold logic of its own beyond
//! wiring, configuration and (de)serialization of the export format.

/// The library guide, `docs/library.md`: its examples are doctests of this crate, so the
/// guide cannot drift from the API (`crates/cairn-cli/tests/docs.rs` checks this include).
#[cfg(doctest)]
#[doc = include_str!("../../../docs/library.md")]
pub struct LibraryGuide;

mod browse;
pub mod enrich;
mod error;
mod memory;
mod open;
mod trajectories;
mod workspace;

pub use browse::parse_filter;
/// The bounds of every request option (validation, MCP schemas and the OpenAPI spec).
pub use cairn_core::bounds;
/// Why a recall answered what it did (`RecallOptions::explain`).
pub use cairn_core::explain;
/// Metadata filter expressions (see [`cairn_core::filter`]).
pub use cairn_core::filter;
/// Sizes and limits of the inspection verbs.
pub use cairn_core::inspect as inspect_limits;
/// The stock relevance floor (`RecallOptions::min_relevance`).
pub use cairn_core::recall::DEFAULT_MIN_RELEVANCE;
/// Serde readers of times from outside (every shape `parse_timestamp` reads): for
/// types that mirror the library's formats, such as the server's wire types.
pub use cairn_core::time::serde_time;
pub use cairn_core::{
    time::parse_timestamp, AgentState, AppendInput, CardLine, ConflictError, EdgeKind,
    EntityDetail, EntityKind, EntityMention, EntityRelation, EntitySummary, Evidence, FactCategory,
    FactDetail, FactHistory, FactSubject, FactVersion, Format, GroupMessage, Hit, HitPart,
    InputError, KeyRecords, KeyRow, Memo, Message, Partition, ProfileFact, Recall, RecallOptions,
    RememberInput, Role, Scope, ScopeOptions, SessionHeader, SessionInput, SessionRecord, SpaceId,
    SpaceStats, SpeakerProfile, StoreError, Style, TimelineEntry, Timestamp, Timings, TooLarge,
    TrajectoryInput, TrajectoryRecord, TrajectorySummary, Unit, UnitDetail, UnitKind, UnitPage,
    UnitQuery, Warning, PARTITION_KEYS, UNKNOWN_FILTER_KEY,
};
/// Trajectory inspection: the verbs' answers, context requests, the agent controller's
/// options and runs (see `Memory::trajectories`).
pub use cairn_core::{
    AgentFallback, AgentMessage, AgentMode, AgentModel, AgentModelError, AgentOptions, AgentRun,
    AgentStep, ContextRequest, ContextSpan, InspectRecallOptions, InspectedRecall, Manifest,
    ManifestEntry, ManifestForm, MatchField, MatchLine, Matches, PatternMode, RenderedContext,
    RenderedSpan, SpanView, StateMatch, StateView, StepLine, TrajectoryOverview,
};
pub use cairn_core::{EmbedError, Embedder};
pub use cairn_embed::{Backend as EmbedBackend, BertEmbedder, EmbedConfig, DEFAULT_MODEL};
/// What the agent controller tells its model, and the schema of one step.
pub use cairn_engine::agent::{step_schema as agent_step_schema, AGENT_WORKFLOW};
/// A request's bound on work: a deadline, and a cancellation by whoever waits for it;
/// `check_deadline` is the check the engine's loops make (for callers' own loops).
pub use cairn_engine::budget::{
    check as check_deadline, within as with_deadline, Cancel, OutOfTime,
};
/// How recall reads a question before it searches: its content words, the period it
/// names ("last week", resolved against a time), whether it asks for advice, whom it
/// asks about.
pub use cairn_engine::{analyze_query, QueryAnalysis, TimeRange};
pub use cairn_engine::{
    CheckReport, EngineConfig, EnrichReport, Features as RankFeatures, ForgetReport, IngestReport,
    MessageForgetReport, PartitionForgetReport, RankConfig, Remembered, SessionPage,
    SpaceIndexCheck, WriteOptions, NOTE_SPEAKER,
};
pub use cairn_llm::{LlmConfig, Usage as LlmUsage};
/// File name of the API key rows inside an embedded data directory.
#[cfg(feature = "embedded")]
pub use cairn_store::KEYS_FILE;
pub use enrich::EnrichmentConfig;
pub use error::Error;
pub use memory::{dir_size, Memory, MemoryConfig};
pub use trajectories::{AgentLlm, Trajectories};
pub use workspace::{
    WorkspaceHelper, WorkspaceOptions, WorkspaceReport, STATE_FILE as WORKSPACE_STATE_FILE,
};

/// Parsers of outside formats (JSONL sessions, LongMemEval, LoCoMo, ...).
pub use cairn_formats as formats;

/// The version of this build, with the git revision when known.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
