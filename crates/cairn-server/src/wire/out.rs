//! Response bodies, mapped from the library's types field by field. The JSON shapes are
//! the ones `openapi.json` documents.
use cairn::UnitKind;
use serde::Serialize;
use std::collections::BTreeMap;

type Time = cairn::Timestamp;

/// What a write did (`IngestReport`). A replayed answer is the same body, marked by the
/// `Idempotency-Replayed: true` header.
#[derive(Debug, Serialize)]
pub struct Ingested {
    pub sessions: usize,
    pub trajectories: usize,
    pub unchanged: usize,
    pub messages_added: usize,
    /// Messages that came without a time and were given the time they were recorded.
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
#[derive(Debug, Serialize)]
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
    pub states: Option<[u32; 2]>,
}

/// A memory unit.
#[derive(Debug, Serialize)]
pub struct MemoryOut {
    pub id: String,
    pub space: String,
    pub kind: UnitKind,
    pub text: String,
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed_text: Option<String>,
    pub provenance: ProvenanceOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part_of: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occurred_at: Option<Time>,
    pub recorded_at: Time,
    /// A fact's subject and value, or a profile contribution's statistics.
    #[serde(skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Serialize)]
pub struct HitOut {
    pub unit_id: String,
    pub kind: UnitKind,
    pub text: String,
    /// Orders the hits of this recall; not comparable across recalls.
    pub score: f32,
    /// Cosine similarity of hit and query: comparable across recalls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relevance: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub turn_ids: Vec<String>,
    pub speakers: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occurred_at: Option<Time>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub states: Option<[u32; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// The units a place hit's excerpt shows, best first (absent for one unit).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<cairn::HitPart>,
    /// How the entity graph linked the hit to the question (absent: it did not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Where the score came from (with `explain: true`): the library's explanation
    /// document, as `openapi.json` describes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<cairn::explain::HitExplanation>,
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
            parts: h.parts,
            via: h.via,
            explain: h.explain,
        }
    }
}

/// Where recall spent its time, in milliseconds.
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
#[derive(Debug, Serialize)]
pub struct RecallOut {
    pub hits: Vec<HitOut>,
    /// Places after the first `top_k` that the context also shows (the budget had room).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra_hits: Vec<HitOut>,
    pub context: String,
    pub context_tokens: usize,
    pub hits_cut: usize,
    /// The hits not shown whole: trimmed, shown in part or left out.
    pub hits_cut_ids: Vec<String>,
    /// Nothing passed the relevance floor: no hits, an empty context.
    pub no_relevant_memory: bool,
    pub context_unit_ids: Vec<String>,
    pub timings: TimingsOut,
    /// What each stage kept and what packing did (with `explain: true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<cairn::explain::RecallExplanation>,
}

impl From<cairn::Recall> for RecallOut {
    fn from(r: cairn::Recall) -> Self {
        let t = r.timings;
        Self {
            hits: r.hits.into_iter().map(HitOut::from).collect(),
            extra_hits: r.extra_hits.into_iter().map(HitOut::from).collect(),
            context: r.context,
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
            explain: r.explain,
        }
    }
}

/// A session as stored: the ingested session (the ingest format) and when it was
/// recorded.
#[derive(Debug, Serialize)]
pub struct SessionOut {
    pub space: String,
    pub recorded_at: Time,
    pub session: cairn::SessionInput,
}

impl From<cairn::SessionRecord> for SessionOut {
    fn from(r: cairn::SessionRecord) -> Self {
        Self {
            space: r.space.to_string(),
            recorded_at: r.recorded_at,
            session: r.session,
        }
    }
}

/// Counts of one space.
#[derive(Debug, Serialize)]
pub struct StatsOut {
    pub space: String,
    pub sessions: usize,
    pub messages: usize,
    pub trajectories: usize,
    pub units: usize,
    pub units_by_kind: BTreeMap<String, usize>,
    /// An estimate of the bytes the space's rows take in the store.
    pub disk_bytes: u64,
    /// When the space's newest session or trajectory was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
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

/// What forgetting a memory removed.
#[derive(Debug, Serialize)]
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

/// Units removed by a forget.
#[derive(Debug, Serialize)]
pub struct Removed {
    pub removed_units: usize,
}
