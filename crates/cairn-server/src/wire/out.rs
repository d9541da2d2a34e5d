//! Response bodies, mapped from the library's types field by field; their schemas in
//! `openapi.json` are derived from these types (`ToSchema`). A field typed by the library
//! names the schema that describes it (`value_type`, see `doc.rs`).
use super::explain::{HitExplanationOut, HitPartOut, RecallExplanationOut};
use super::formats::SessionInputWire;
use super::records::{FactSubjectOut, TrajectorySummaryOut};
use super::warning::{warnings_out, WarningOut};
use cairn::UnitKind;
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

type Time = cairn::Timestamp;

/// What a write did (`IngestReport`). A replayed answer is the same body, marked by the
/// `Idempotency-Replayed: true` header.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = IngestReport)]
pub struct Ingested {
    pub sessions: usize,
    pub trajectories: usize,
    pub unchanged: usize,
    pub messages_added: usize,
    /// Messages that came without an `occurred_at` (neither their own nor their session's): each was given the time it was recorded, so every message stored has a time.
    pub dated_at_recording: usize,
    pub units: usize,
    pub vectors_computed: usize,
    pub vectors_cached: usize,
}

impl From<cairn::IngestReport> for Ingested {
    fn from(r: cairn::IngestReport) -> Self {
        Self {
            sessions: r.sessions,
            trajectories: r.trajectories,
            unchanged: r.unchanged,
            messages_added: r.messages_added,
            dated_at_recording: r.dated_at_recording,
            units: r.units,
            vectors_computed: r.vectors_computed,
            vectors_cached: r.vectors_cached,
        }
    }
}

/// Where a memory comes from.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProvenanceOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub message_ids: Vec<String>,
    pub first_position: u32,
    pub speakers: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<u32>>)]
    pub states: Option<[u32; 2]>,
}

/// A memory unit.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Unit)]
pub struct MemoryOut {
    pub id: String,
    pub space: String,
    #[schema(value_type = String)]
    pub kind: UnitKind,
    pub text: String,
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed_text: Option<String>,
    #[schema(inline)]
    pub provenance: ProvenanceOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part_of: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub occurred_at: Option<Time>,
    #[schema(value_type = String, format = DateTime)]
    pub recorded_at: Time,
    /// A fact's subject and value (`fact`), or a profile contribution's statistics (`speaker`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub detail: Option<cairn::UnitDetail>,
}

impl From<cairn::Unit> for MemoryOut {
    fn from(u: cairn::Unit) -> Self {
        let p = u.provenance;
        Self {
            id: u.id,
            space: u.space.to_string(),
            kind: u.kind,
            text: u.text,
            key: u.key,
            embed_text: u.embed_text,
            provenance: ProvenanceOut {
                session_id: p.session_id,
                message_ids: p.message_ids,
                first_position: p.first_position,
                speakers: p.speakers,
                group: p.group,
                trajectory_id: p.trajectory_id,
                states: p.states,
            },
            part_of: u.part_of,
            occurred_at: u.occurred_at,
            recorded_at: u.recorded_at,
            detail: u.detail,
        }
    }
}

/// One ranked piece of evidence.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Hit)]
pub struct HitOut {
    pub unit_id: String,
    #[schema(value_type = String)]
    pub kind: UnitKind,
    pub text: String,
    /// Orders the hits of this recall (fused lexical and dense scores, each scaled over this recall's candidates, then adjusted). Not comparable across recalls: a lone candidate scores high whatever it says; threshold on `relevance`.
    pub score: f32,
    /// Cosine similarity of the hit's embedding and the query's (in practice 0..1): the same scale for every recall, so it can be thresholded (`min_relevance` does). A place hit has the best of its units', a fact that of the message stating it. Absent for hits without a vector (computed profiles, episodes, events not embedded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relevance: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub turn_ids: Vec<String>,
    pub speakers: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub occurred_at: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    /// Trajectory states `[first, end)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<u32>>, min_items = 2, max_items = 2)]
    pub states: Option<[u32; 2]>,
    /// The fact unit that replaced this one as of the recall time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// The units this hit's text shows, when it shows several: a hit is a place (one conversation), its text an excerpt of the place's best units in conversation order, `unit_id` the best of them (listed first, then the others in rank order); `turn_ids` covers them all. `context_unit_ids` names each part the context shows. Absent when the hit is one unit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<HitPartOut>,
    /// How the entity graph linked the hit to the question ("graph: Melanie (speaker_of)"; "graph-only: ..." when only the graph found it). Absent: the graph played no part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Where the score came from (with `explain: true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<HitExplanationOut>,
}

impl From<cairn::Hit> for HitOut {
    fn from(h: cairn::Hit) -> Self {
        Self {
            unit_id: h.unit_id,
            kind: h.kind,
            text: h.text,
            score: h.score,
            relevance: h.relevance,
            session_id: h.session_id,
            turn_ids: h.turn_ids,
            speakers: h.speakers,
            occurred_at: h.occurred_at,
            trajectory_id: h.trajectory_id,
            states: h.states,
            superseded_by: h.superseded_by,
            parts: h.parts.into_iter().map(HitPartOut::from).collect(),
            via: h.via,
            explain: h.explain.map(HitExplanationOut::from),
        }
    }
}

/// Where recall spent its time, in milliseconds (a map of stage to time in the document,
/// as the clients read it).
#[derive(Debug, Serialize)]
pub struct TimingsOut {
    pub embed_ms: f64,
    pub lexical_ms: f64,
    pub dense_ms: f64,
    pub rank_ms: f64,
    pub pack_ms: f64,
    pub total_ms: f64,
}

/// The answer to a recall.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Recall)]
pub struct RecallOut {
    pub hits: Vec<HitOut>,
    /// Places ranked after the first `top_k` that the context also shows, because the budget had room once the hits were in: cited like `hits`, in rank order. Absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra_hits: Vec<HitOut>,
    pub context: String,
    /// The user's card at the head of `context`: their standing instructions, then what they said of themself that holds now and bears on the query, each citing its fact unit. Absent when the request sees no statement of the user's, or the space holds several end users' and the request pins no `partition`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub card: Vec<CardLineOut>,
    pub context_tokens: usize,
    pub hits_cut: usize,
    /// The unit_id of each hit not shown whole in the context: trimmed to what fitted, shown in part or left out.
    pub hits_cut_ids: Vec<String>,
    /// True when nothing the recall found reaches the relevance floor (`min_relevance`): then there are no hits and the context holds at most the user's card.
    pub no_relevant_memory: bool,
    pub context_unit_ids: Vec<String>,
    #[schema(value_type = BTreeMap<String, f64>)]
    pub timings: TimingsOut,
    /// What each stage kept and what packing did (with `explain: true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<RecallExplanationOut>,
    /// What the caller should know about its request: a `filter` key no session it may see carries (`unknown_filter_key`). Absent when there is nothing to say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<WarningOut>,
}

/// One line of the user's card: the newest statement of one of the user's chains.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = CardLine)]
pub struct CardLineOut {
    /// The fact unit it cites.
    pub unit_id: String,
    /// `instruction` for a standing instruction, else the fact's category (`diet`, `home`, ...).
    #[schema(value_type = String)]
    pub category: cairn::FactCategory,
    /// The sentence that states it, verbatim.
    pub statement: String,
    /// When it was said.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub stated_at: Option<cairn::Timestamp>,
    pub session_id: String,
    pub message_id: String,
}

impl From<cairn::CardLine> for CardLineOut {
    fn from(l: cairn::CardLine) -> Self {
        let cairn::CardLine {
            unit_id,
            category,
            statement,
            stated_at,
            session_id,
            message_id,
        } = l;
        Self {
            unit_id,
            category,
            statement,
            stated_at,
            session_id,
            message_id,
        }
    }
}

impl From<cairn::Recall> for RecallOut {
    fn from(r: cairn::Recall) -> Self {
        let t = r.timings;
        Self {
            hits: r.hits.into_iter().map(HitOut::from).collect(),
            extra_hits: r.extra_hits.into_iter().map(HitOut::from).collect(),
            context: r.context,
            card: r.card.into_iter().map(CardLineOut::from).collect(),
            context_tokens: r.context_tokens,
            hits_cut: r.hits_cut,
            hits_cut_ids: r.hits_cut_ids,
            no_relevant_memory: r.no_relevant_memory,
            context_unit_ids: r.context_unit_ids,
            timings: TimingsOut {
                embed_ms: t.embed_ms,
                lexical_ms: t.lexical_ms,
                dense_ms: t.dense_ms,
                rank_ms: t.rank_ms,
                pack_ms: t.pack_ms,
                total_ms: t.total_ms,
            },
            explain: r.explain.map(RecallExplanationOut::from),
            warnings: warnings_out(r.warnings),
        }
    }
}

/// A session as stored: the ingested session (the ingest format) and when it was
/// recorded.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SessionRecord)]
pub struct SessionOut {
    pub space: String,
    #[schema(value_type = String, format = DateTime)]
    pub recorded_at: Time,
    pub session: SessionInputWire,
}

impl From<cairn::SessionRecord> for SessionOut {
    fn from(r: cairn::SessionRecord) -> Self {
        Self {
            space: r.space.to_string(),
            recorded_at: r.recorded_at,
            session: r.session.into(),
        }
    }
}

/// Counts of one space.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SpaceStats)]
pub struct StatsOut {
    pub space: String,
    pub sessions: usize,
    pub messages: usize,
    pub trajectories: usize,
    pub units: usize,
    pub units_by_kind: BTreeMap<String, usize>,
    /// Estimated bytes of the space's rows in the store (records, units, trajectories and observations, vectors; not shared index files or the embedding cache).
    pub disk_bytes: u64,
    /// When the newest session or trajectory was recorded (appends keep a session's first time).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_recorded_at: Option<Time>,
}

impl From<cairn::SpaceStats> for StatsOut {
    fn from(s: cairn::SpaceStats) -> Self {
        Self {
            space: s.space,
            sessions: s.sessions,
            messages: s.messages,
            trajectories: s.trajectories,
            units: s.units,
            units_by_kind: s.units_by_kind,
            disk_bytes: s.disk_bytes,
            last_recorded_at: s.last_recorded_at,
        }
    }
}

/// What forgetting a memory removed: the messages it cites (the session goes when none is left), or for a trajectory unit its whole trajectory.
#[derive(Debug, Serialize, ToSchema)]
pub struct ForgotMemory {
    pub memory_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub forgotten_messages: Vec<String>,
    pub forgotten_session: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    pub forgotten_trajectory: bool,
    pub removed_units: usize,
}

impl From<cairn::ForgetReport> for ForgotMemory {
    fn from(r: cairn::ForgetReport) -> Self {
        Self {
            memory_id: r.unit_id,
            session_id: r.session_id,
            forgotten_messages: r.forgotten_messages,
            forgotten_session: r.forgotten_session,
            trajectory_id: r.trajectory_id,
            forgotten_trajectory: r.forgotten_trajectory,
            removed_units: r.removed_units,
        }
    }
}

/// What forgetting a message (with `exchange`, the message and its reply) removed.
#[derive(Debug, Serialize, ToSchema)]
pub struct ForgotMessages {
    pub session_id: String,
    /// The messages forgotten, in session order.
    pub forgotten_messages: Vec<String>,
    /// The session went: it had no message left.
    pub forgotten_session: bool,
    pub removed_units: usize,
}

impl From<cairn::MessageForgetReport> for ForgotMessages {
    fn from(r: cairn::MessageForgetReport) -> Self {
        Self {
            session_id: r.session_id,
            forgotten_messages: r.forgotten_messages,
            forgotten_session: r.forgotten_session,
            removed_units: r.removed_units,
        }
    }
}

/// What forgetting an end-user partition removed; all zero when it held no session.
#[derive(Debug, Serialize, ToSchema)]
pub struct ForgotPartition {
    /// Sessions forgotten.
    pub sessions: usize,
    /// Messages they held.
    pub messages: usize,
    /// Units removed.
    pub units: usize,
}

impl From<cairn::PartitionForgetReport> for ForgotPartition {
    fn from(r: cairn::PartitionForgetReport) -> Self {
        Self {
            sessions: r.sessions,
            messages: r.messages,
            units: r.units,
        }
    }
}

/// Units removed by a forget.
#[derive(Debug, Serialize, ToSchema)]
pub struct Removed {
    pub removed_units: usize,
}

/// `POST /v1/spaces` (200: it existed, 201: created).
#[derive(Debug, Serialize, ToSchema)]
pub struct SpaceCreated {
    pub name: String,
    pub created: bool,
}

// The pages of the listings, as the document names them: the answers are `wire::Page`s of
// these items (`tests/http.rs` checks every answer against these schemas).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct SessionPage {
    items: Vec<SessionOut>,
    total: usize,
    offset: usize,
    next_offset: Option<usize>,
    /// A `filter` key no session carries (`unknown_filter_key`); absent when none.
    warnings: Option<Vec<WarningOut>>,
}

#[derive(ToSchema)]
#[allow(dead_code)]
pub struct UnitPage {
    items: Vec<MemoryOut>,
    total: usize,
    offset: usize,
    next_offset: Option<usize>,
    /// A `filter` key no session carries (`unknown_filter_key`); absent when none.
    warnings: Option<Vec<WarningOut>>,
}

/// `GET /v1/health`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    pub status: &'static str,
    pub version: &'static str,
}

/// `GET /v1/ready`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Ready {
    pub status: &'static str,
    pub spaces: usize,
}

/// `GET /v1/spaces`: the spaces a key may see.
#[derive(Debug, Serialize, ToSchema)]
pub struct SpaceList {
    pub spaces: Vec<String>,
}

/// `DELETE /v1/spaces/{space}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Deleted {
    pub deleted: bool,
}

/// `GET /v1/stats`: the counts of every space a key may see.
#[derive(Debug, Serialize, ToSchema)]
pub struct AllStats {
    pub spaces: Vec<StatsOut>,
}

/// `GET /v1/spaces/{space}/trajectories`: every trajectory's summary.
#[derive(Debug, Serialize, ToSchema)]
pub struct TrajectoryList {
    pub trajectories: Vec<TrajectorySummaryOut>,
}

/// `GET /v1/spaces/{space}/speakers`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SpeakerList {
    pub speakers: Vec<String>,
    /// What the caller should know about its request: a `filter` key no session it may see carries (`unknown_filter_key`). Absent when there is nothing to say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<WarningOut>,
}

/// `GET /v1/me`: the caller as the server sees it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Me {
    // The key's public id; `admin` for the admin key, `local` without auth.
    pub key_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    // Sees every space (the admin key, or a server without auth).
    pub admin: bool,
    pub read_only: bool,
    /// Existing spaces the caller sees.
    pub spaces: Vec<String>,
    /// Spaces the key is for (absent for admin).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<Vec<String>>,
    /// The end-user partition the key is pinned to (`{"user_id": "u1"}`): every read is
    /// that partition's, every write is tagged with it. Absent for a key that is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub partition: Option<serde_json::Value>,
}

/// `GET /v1/spaces/{space}/subjects`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Subjects {
    pub subjects: Vec<FactSubjectOut>,
    /// What the caller should know about its request: a `filter` key no session it may see carries (`unknown_filter_key`). Absent when there is nothing to say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<WarningOut>,
}

/// A list of units.
#[derive(Debug, Serialize, ToSchema)]
pub struct Units {
    pub units: Vec<MemoryOut>,
}

/// `GET /v1/spaces/{space}/entities`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Entities {
    pub entities: Vec<super::entities::EntitySummaryOut>,
    /// What the caller should know about its request: a `filter` key no session it may see carries (`unknown_filter_key`). Absent when there is nothing to say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<WarningOut>,
}
