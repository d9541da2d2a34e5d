//! What writes and checks report.

/// What an ingest did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct IngestReport {
    pub sessions: usize,
    /// Trajectories written (new ones; identical re-inserts count as unchanged).
    pub trajectories: usize,
    /// Sessions or trajectories that were already stored identically (nothing to do).
    pub unchanged: usize,
    pub messages_added: usize,
    /// Messages added without a time of their own or of their session: each was given
    /// the time it was recorded, so every message stored has a time.
    pub dated_at_recording: usize,
    pub units: usize,
    pub vectors_computed: usize,
    pub vectors_cached: usize,
    /// The request carried an idempotency key already answered: this is the first
    /// answer again, and nothing was written now.
    pub replayed: bool,
}

impl std::ops::AddAssign<&IngestReport> for IngestReport {
    fn add_assign(&mut self, r: &IngestReport) {
        self.sessions += r.sessions;
        self.trajectories += r.trajectories;
        self.unchanged += r.unchanged;
        self.messages_added += r.messages_added;
        self.dated_at_recording += r.dated_at_recording;
        self.units += r.units;
        self.vectors_computed += r.vectors_computed;
        self.vectors_cached += r.vectors_cached;
    }
}

/// What `check` found (and, with rebuild, repaired).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct CheckReport {
    pub spaces: usize,
    pub units: usize,
    pub text_reindexed: usize,
    /// Text-index entries of units the record does not hold, removed, and units it
    /// held that the index lacked, indexed, since the engine opened (its opening
    /// included): found by counting each space against the record (`reconcile.rs`). Not
    /// 0 means something left the index out of step beyond what the removal log heals.
    pub text_mended: usize,
    pub vectors_rebuilt: usize,
    pub text_watermark: u64,
    pub vector_watermark: u64,
    pub last_seq: u64,
    /// Per space: the units of the record against the entries of each index.
    pub indexes: Vec<SpaceIndexCheck>,
    /// Stored rows that do not decode (`space "a", session "s1": ...`); any makes the
    /// store inconsistent.
    pub unreadable: Vec<String>,
    /// Every record decodes, and every index holds exactly the units of the record (and
    /// the watermarks reach the last sequence number).
    pub consistent: bool,
}

/// One space's derived indexes against its record.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SpaceIndexCheck {
    pub space: String,
    /// Units in the record store.
    pub units: usize,
    /// Units the text index should hold (every searchable unit) and what it holds
    /// (`None`: the backend cannot count).
    pub text_expected: usize,
    pub text_entries: Option<usize>,
    /// Units with an embedding text, and the vectors held.
    pub vectors_expected: usize,
    pub vector_entries: usize,
    pub agree: bool,
}
