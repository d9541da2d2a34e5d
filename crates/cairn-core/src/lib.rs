//! Core vocabulary of Cairn: spaces, sources (the verbatim record), memory units,
//! recall options and results, and the traits that storage backends and embedders
//! implement.
//!
//! This crate owns *what things are*. It must never do I/O: no files, no network, no
//! clocks other than values handed to it. Every other crate depends on it; it depends on
//! no other Cairn crate.

pub mod agent;
pub mod bounds;
pub mod enrich;
pub mod entity;
pub mod error;
pub mod explain;
pub mod fact;
pub mod filter;
pub mod group;
pub mod ids;
pub mod inspect;
pub mod profile;
pub mod recall;
pub mod scope;
pub mod source;
pub mod text;
pub mod time;
pub mod traits;
pub mod trajectory;
pub mod unit;
pub mod warning;

pub use agent::{
    AgentFallback, AgentMessage, AgentMode, AgentModel, AgentModelError, AgentOptions, AgentRun,
    AgentStep,
};
pub use enrich::{EnrichError, EnrichInput, EnrichedFact, Enricher, Enrichment, EnrichmentStore};
pub use entity::{
    EdgeKind, EntityDetail, EntityKind, EntityMention, EntityRelation, EntitySummary, TimelineEntry,
};
pub use error::{ConflictError, CoreError, InputError, TooLarge};
pub use fact::{FactCategory, FactDetail, FactHistory, FactSubject, FactVersion};
pub use filter::Filter;
pub use group::GroupMessage;
pub use ids::SpaceId;
pub use inspect::{
    ContextRequest, ContextSpan, InspectRecallOptions, InspectedRecall, Manifest, ManifestEntry,
    ManifestForm, MatchField, MatchLine, Matches, PatternMode, RenderedContext, RenderedSpan,
    SpanView, StateMatch, StateView, StepLine, TrajectoryOverview,
};
pub use profile::{Evidence, ProfileFact, SpeakerProfile, SpeakerStats, Style};
pub use recall::{CardLine, Format, Hit, HitPart, Recall, RecallOptions, Timings};
pub use scope::{partition_of, Partition, Scope, ScopeOptions, SessionLists, PARTITION_KEYS};
pub use source::{
    has_roles, AppendInput, Memo, Message, RememberInput, Role, SessionHeader, SessionInput,
    SessionRecord,
};
pub use time::Timestamp;
pub use traits::{
    EmbedError, Embedder, EmbeddingCache, KeyRecords, KeyRow, ListingPart, Receipt, RecordStore,
    SessionWrite, SpaceStats, Stale, StoreError, TextIndex, TextQuery, UnitPage, UnitQuery,
    VectorIndex, RECEIPT_TTL_HOURS,
};
pub use trajectory::{AgentState, TrajectoryInput, TrajectoryRecord, TrajectorySummary};
pub use unit::{Provenance, Unit, UnitDetail, UnitKind, KEY_HEAD_BYTES};
pub use warning::{Warning, UNKNOWN_FILTER_KEY};
