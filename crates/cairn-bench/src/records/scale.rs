//! The record of `cairn bench scale`: one store at one size, measured.
use cairn_load::stats::Percentiles;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalePoint {
    /// `embedded` or `postgres`.
    pub store: String,
    pub size: usize,
    pub sessions: usize,
    pub units: usize,
    pub vectors_computed: usize,
    pub vectors_cached: usize,
    /// Every ingest call and the final flush.
    pub ingest_seconds: f64,
    pub ingest_units_per_second: f64,
    /// The data directory, or the growth of the PostgreSQL database during the ingest.
    pub disk_bytes: u64,
    /// Resident memory of the bench process after the ingest and its peak during it.
    pub ingest_rss_bytes: u64,
    pub ingest_peak_rss_bytes: u64,
    /// Reopening the memory for the queries.
    pub open_ms: f64,
    /// The first recall: loads the space's vectors (and builds HNSW on the embedded
    /// store above its threshold). Not among the latencies.
    pub first_recall_ms: f64,
    pub queries: usize,
    /// Wall time of `recall`, the query's embedding computed (never cached).
    pub latency_ms: Percentiles,
    /// The same minus the time spent embedding the query.
    pub latency_without_embedding_ms: Percentiles,
    pub stage_means_ms: BTreeMap<String, f64>,
    /// Resident memory while serving the queries (model, indexes, vectors) and its peak.
    pub serving_rss_bytes: u64,
    pub serving_peak_rss_bytes: u64,
    pub needles: usize,
    pub needles_found: usize,
    pub needle_recall: f64,
    pub missed_needles: Vec<usize>,
    /// Measured with `--queries-only`: the ingest fields are empty.
    #[serde(default)]
    pub ingest_skipped: bool,
    /// `hashed` when the vectors came from the bench's seeded word-hashing embedder
    /// (`--embedder hashed`); empty for the embedding model.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub embedder: String,
    /// Every message ended with a code of its own (`--distinct-text`), so the space's
    /// texts, and vectors, do not repeat.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub distinct_text: bool,
    /// The live loop measured after the queries (`--loop N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_loop: Option<crate::benches::scale_loop::LoopPoint>,
}

impl ScalePoint {
    /// How the point's vectors were made, for tables and plot legends: empty for the
    /// model over the repeating history.
    pub fn variant(&self) -> String {
        match (self.embedder.as_str(), self.distinct_text) {
            ("", false) => String::new(),
            ("", true) => "distinct text".into(),
            (e, false) => format!("{e} embedder"),
            (e, true) => format!("{e} embedder, distinct text"),
        }
    }
}

impl ScalePoint {
    /// A point with nothing measured yet.
    pub fn empty(store: &str, size: usize, needles: usize) -> Self {
        Self {
            store: store.into(),
            size,
            sessions: 0,
            units: 0,
            vectors_computed: 0,
            vectors_cached: 0,
            ingest_seconds: 0.0,
            ingest_units_per_second: 0.0,
            disk_bytes: 0,
            ingest_rss_bytes: 0,
            ingest_peak_rss_bytes: 0,
            open_ms: 0.0,
            first_recall_ms: 0.0,
            queries: 0,
            latency_ms: Percentiles::default(),
            latency_without_embedding_ms: Percentiles::default(),
            stage_means_ms: BTreeMap::new(),
            serving_rss_bytes: 0,
            serving_peak_rss_bytes: 0,
            needles,
            needles_found: 0,
            needle_recall: 0.0,
            missed_needles: Vec::new(),
            ingest_skipped: false,
            embedder: String::new(),
            distinct_text: false,
            live_loop: None,
        }
    }
}
