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
//! browsing): `recall.rs` (with `versions.rs`: fact versions among the hits; `profiles.rs`:
//! profiles of the people a question names; `relevance.rs`: the relevance floor and the
//! newest statement first), `graph.rs` (the entity graph: its cache, listings, recall
//! stages), `knowledge.rs` (fact histories, profiles), `browse.rs` (listings and metadata
//! filters), `scope.rs` (what a request sees: its scope resolved against a space, and the
//! error of a name several partitions know), `inspect.rs` (the trajectory inspection
//! verbs), `agent.rs` (the agent controller: a model working through them), `cache.rs` (the one cache of derived reads: by space and a hash of the scope, for one
//! generation of the space, bounded in bytes), `flight.rs` (one build at a time of what it holds). This file:
//! opening, healing, checking, indexing.
mod advance;
#[cfg(test)]
mod advance_tests;
pub(crate) mod agent;
mod append;
#[cfg(test)]
mod append_tests;
mod browse;
mod cache;
mod card;
mod committer;
#[cfg(test)]
mod cost_tests;
mod enrich;
mod flight;
mod forget;
mod graph;
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
mod trajectories;
mod versions;

use crate::derive::DERIVE_VERSION;
use crate::embedding::{self, cache_key_within, embed_keyed_staged, CachedEmbedError, EmbedCounts};
use crate::rank::RankConfig;
pub use browse::SessionPage;
use cairn_core::{
    ConflictError, EmbedError, Embedder, EmbeddingCache, InputError, RecordStore, SpaceId,
    SpaceStats, StoreError, TextIndex, Unit, VectorIndex,
};
pub use committer::TextCommitter;
pub use enrich::{enrichment_units, llm_fact_id, EnrichReport};
pub use forget::{ForgetReport, MessageForgetReport, PartitionForgetReport};
pub use ingest::Exported;
use ingest::WriteMode;
pub use receipt::WriteOptions;
pub use remember::{Remembered, NOTE_SPEAKER};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use thiserror::Error;

#[derive(Debug, Clone, Error)]
pub enum EngineError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Conflict(#[from] ConflictError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// An idempotency key came again with another request than the one it first named.
    #[error("idempotency key {0:?} was already used for a different request")]
    IdempotencyKeyReused(String),
    /// A memory that cannot be forgotten on its own (a profile: computed from a speaker's
    /// messages); the message says what to forget instead.
    #[error("{0}")]
    NotDeletable(String),
    /// The request ran past the deadline its caller set (`budget.rs`).
    #[error(transparent)]
    OutOfTime(#[from] crate::budget::OutOfTime),
}

impl From<CachedEmbedError> for EngineError {
    fn from(e: CachedEmbedError) -> Self {
        match e {
            CachedEmbedError::Embed(e) => EngineError::Embed(e),
            CachedEmbedError::Store(e) => EngineError::Store(e),
        }
    }
}

/// The storage and model implementations an engine runs on.
#[derive(Clone)]
pub struct EngineBackends {
    pub records: Arc<dyn RecordStore>,
    pub text: Arc<dyn TextIndex>,
    pub vectors: Arc<dyn VectorIndex>,
    pub embedder: Arc<dyn Embedder>,
    pub cache: Arc<dyn EmbeddingCache>,
    /// Stored LLM readings (enrichment); `None`: the store keeps none.
    pub enrich: Option<Arc<dyn cairn_core::EnrichmentStore>>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    pub rank: RankConfig,
    /// The user's card at the head of every recall's context (see `card.rs`).
    pub card: crate::card::CardConfig,
    /// Forgetting (a space, a session, a message, a trajectory) also removes the vectors of
    /// the forgotten text from the embedding cache (default). Off, the cache keeps them, so
    /// the same text ingested again is not embedded again: for replays of public data
    /// (benchmarks), never for data that must be forgotten, since a cached vector and its
    /// key (the text's SHA-256) can confirm a guessed text.
    pub purge_cache_on_forget: bool,
    /// One embedding-cache entry per distinct text for the whole store, shared by every
    /// space. Off (default), each space has entries of its own: otherwise a tenant could
    /// tell whether another space holds a text (its ingest would count the vector as
    /// cached) or asked a query (its embedding would come back at once). On, for replays
    /// of public data across many spaces (benchmarks), where a text is embedded once.
    pub share_embedding_cache: bool,
    /// Milliseconds a write's text-index entries may stay uncommitted on disk (see
    /// `committer.rs`): a recall commits them first, a [`TextCommitter`] within this
    /// interval. 0: no background commits (only recalls, checks and closing commit).
    pub text_commit_ms: u64,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            rank: RankConfig::default(),
            card: crate::card::CardConfig::default(),
            purge_cache_on_forget: true,
            share_embedding_cache: false,
            text_commit_ms: 1000,
        }
    }
}

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

/// Held while writing (see [`Engine::lock`]); fields drop in order: the store's lock
/// first, then the process's mutex.
struct WriteLock<'a> {
    _store: Option<Box<dyn Send>>,
    _mutex: std::sync::MutexGuard<'a, ()>,
}

pub struct Engine {
    b: EngineBackends,
    cfg: EngineConfig,
    /// Serializes writers: sequence numbers then reach the indexes in order. Writes of
    /// new input embed before taking it (see `staged.rs`).
    write: Mutex<()>,
    /// Highest unit sequence handed to the text index (committed or not).
    text_seq: AtomicU64,
    /// Derived reads of recently used spaces and scopes (session catalogs, the sessions
    /// a scope admits, entity graphs, facts and profile contributions, fact indexes),
    /// each valid for one generation of its space, bounded in bytes (`cache.rs`).
    derived: cache::SpaceCache,
    /// An index update failed after its records were committed (a full disk): the
    /// indexes lag the record store, and no write moves their watermarks until a heal
    /// has indexed what they lack (`Engine::index_after_commit`).
    behind: AtomicBool,
    /// Text entries mended by heals since this engine opened (see `reconcile.rs`):
    /// what `check` reports as `text_mended`, the mends when it opened included.
    text_mended: std::sync::atomic::AtomicUsize,
    /// A read already logged that the text index could not commit (see
    /// `Engine::flush_for_read`); cleared by the next commit that succeeds.
    read_warned: AtomicBool,
    /// Appends waiting for the write lock; whoever takes it writes all of them in one
    /// transaction (group commit, see `append.rs`).
    appends: append::Queue,
    /// Vectors of writes waiting for the write lock, embedded before it (`staged.rs`).
    staged: staged::Staged,
}

impl Engine {
    /// Opens the engine and heals derived state that a crash left behind.
    pub fn open(b: EngineBackends, cfg: EngineConfig) -> Result<Self, EngineError> {
        let engine = Self {
            b,
            cfg,
            write: Mutex::new(()),
            derived: cache::SpaceCache::default(),
            text_seq: AtomicU64::new(0),
            behind: AtomicBool::new(false),
            text_mended: Default::default(),
            read_warned: AtomicBool::new(false),
            appends: append::Queue::default(),
            staged: staged::Staged::default(),
        };
        match engine.heal() {
            Ok(_) => {}
            // A full or read-only disk must not keep what is committed from being read:
            // the indexes serve what they hold, and heal when the disk can be written.
            Err(EngineError::Store(e)) if e.is_unwritable() => {
                tracing::warn!(error = %e, "the indexes could not be brought up to the record store; they heal when the disk can be written");
                engine.behind.store(true, Ordering::SeqCst);
            }
            Err(e) => return Err(e),
        }
        match engine.rederive_if_rules_changed() {
            // A store that cannot be written serves the units it holds, derived by the
            // rules it was written with, until it can be.
            Err(EngineError::Store(e)) if e.is_unwritable() => {
                tracing::warn!(error = %e, "units made by other derivation rules are served as they are: the store cannot be written");
            }
            r => r?,
        }
        Ok(engine)
    }

    /// Units made by other derivation rules than this build's are derived again from the
    /// record, so an upgrade never serves stale or missing units.
    fn rederive_if_rules_changed(&self) -> Result<(), EngineError> {
        let stored = self.b.records.derive_version()?;
        if stored == DERIVE_VERSION {
            return Ok(());
        }
        if self.b.records.last_seq()? > 0 {
            tracing::info!(
                from = stored,
                to = DERIVE_VERSION,
                "derivation rules changed; re-deriving every unit"
            );
            self.check(true)?;
        }
        self.b.records.set_derive_version(DERIVE_VERSION)?;
        Ok(())
    }

    pub fn config(&self) -> &EngineConfig {
        &self.cfg
    }

    pub fn embedder(&self) -> &dyn Embedder {
        self.b.embedder.as_ref()
    }

    /// The write lock: this process's mutex, then the store's lock on the writers of other
    /// processes sharing it (PostgreSQL), released in the reverse order.
    ///
    /// With a store shared by several processes, every complete write leaves the vector
    /// watermark at the last sequence number; finding it behind when the lock is taken
    /// means a writer of another process died between its record and its indexes, so
    /// they are healed first (this process's own crash is healed by `open`).
    fn lock(&self) -> Result<WriteLock<'_>, EngineError> {
        let (guard, shared) = self.lock_only()?;
        if shared && self.b.vectors.watermark()? < self.b.records.last_seq()? {
            tracing::warn!("another process left units unindexed; healing");
            self.heal_locked()?;
        }
        self.heal_if_behind();
        Ok(guard)
    }

    /// Before a write of new records, under the write lock (after a retried request is
    /// answered from its receipt, which needs no room): the store's reserve of disk space
    /// must be held (re-created if a forget used it), so a full disk refuses the write
    /// with `StoreError::Full` while a forget still has room (`cairn-store`'s `disk.rs`).
    pub(super) fn hold_reserve(&self) -> Result<(), EngineError> {
        Ok(self.b.records.hold_reserve()?)
    }

    /// The write lock for a forget: the store's reserve is given back to the disk for the
    /// forget's deletions to run in; [`Engine::forgotten`] takes it again.
    fn lock_to_forget(&self) -> Result<WriteLock<'_>, EngineError> {
        let guard = self.lock()?;
        self.b.records.release_reserve()?;
        Ok(guard)
    }

    /// After a forget, under its lock: the reserve is taken again when the disk has room
    /// for it (if not, the next write tries again, and is refused until it can).
    fn forgotten(&self) {
        if let Err(e) = self.b.records.hold_reserve() {
            tracing::warn!(error = %e, "the disk reserve could not be re-created after a forget; writes are refused until there is room for it");
        }
    }

    /// Indexes what an earlier failure left out, if one did; the caller holds the write
    /// lock. A failure is logged and left for the next try: the write that takes the
    /// lock is not refused for it (its records do not depend on the indexes).
    fn heal_if_behind(&self) {
        if self.behind.load(Ordering::SeqCst) {
            if let Err(e) = self.heal_locked() {
                tracing::warn!(error = %e, "the indexes still lag the record store; will retry");
            }
        }
    }

    /// The index updates of a write whose records are committed (acknowledged: the
    /// record store is the ground truth). A failure (a full disk) does not fail the
    /// write: it is logged, and the indexes heal from their watermarks at the next write
    /// lock, text commit or open. While they lag, later writes leave their updates to
    /// that heal too: an update past a missing one would move a watermark over it.
    pub(super) fn index_after_commit(&self, update: impl FnOnce() -> Result<(), EngineError>) {
        if self.behind.load(Ordering::SeqCst) {
            return;
        }
        if let Err(e) = update() {
            tracing::warn!(error = %e, "indexing a committed write failed; the indexes heal from the record store");
            self.lagging();
        }
    }

    fn lock_only(&self) -> Result<(WriteLock<'_>, bool), EngineError> {
        let mutex = self.write.lock().unwrap_or_else(|p| p.into_inner());
        let store = self.b.records.lock_writers()?;
        let shared = store.is_some();
        Ok((
            WriteLock {
                _store: store,
                _mutex: mutex,
            },
            shared,
        ))
    }

    /// Brings both indexes up to the record store: units written after an index's
    /// watermark are (re)indexed, then each space's text entries are counted against
    /// its units and a space that disagrees is mended.
    fn heal(&self) -> Result<CheckReport, EngineError> {
        let _w = self.lock_only()?;
        let mut report = self.heal_locked()?;
        let (removed, added) = self.reconcile_text()?;
        report.text_mended = self
            .text_mended
            .fetch_add(removed + added, Ordering::SeqCst)
            + removed
            + added;
        Ok(report)
    }

    fn heal_locked(&self) -> Result<CheckReport, EngineError> {
        self.heal_inner().inspect_err(|_| self.lagging())
    }

    /// The indexes lag the record store after a failed update: no write moves their
    /// watermarks until a heal succeeds, and the text entries handed to the index since
    /// its last commit may have been dropped (`TextIndex::commit`), so the next commit's
    /// watermark is the committed one.
    pub(super) fn lagging(&self) {
        self.behind.store(true, Ordering::SeqCst);
        match self.b.text.watermark() {
            Ok(w) => self.text_seq.store(w, Ordering::SeqCst),
            Err(e) => tracing::warn!(error = %e, "reading the text index's watermark failed"),
        }
    }

    /// Commits the text index at `watermark`; a failure leaves the indexes lagging
    /// ([`Engine::lagging`]).
    pub(super) fn commit_text(&self, watermark: u64) -> Result<(), EngineError> {
        self.b.text.commit(watermark).map_err(|e| {
            self.lagging();
            e.into()
        })
    }

    /// The watermarks (text, vectors) a forget's re-derived units are indexed at: the
    /// write's `last`, or while the indexes lag, the ones they have (a forget must not
    /// move them over units a heal has yet to index).
    pub(super) fn forget_marks(&self, last: u64) -> Result<(u64, u64), EngineError> {
        if self.behind.load(Ordering::SeqCst) {
            Ok((self.b.text.watermark()?, self.b.vectors.watermark()?))
        } else {
            Ok((last, last))
        }
    }

    fn heal_inner(&self) -> Result<CheckReport, EngineError> {
        let last = self.b.records.last_seq()?;
        let tw = self.b.text.watermark()?;
        let vw = self.b.vectors.watermark()?;
        let mut report = CheckReport {
            last_seq: last,
            text_watermark: tw,
            vector_watermark: vw,
            ..Default::default()
        };
        if tw.min(vw) < last {
            // One read serves both indexes: each takes the units and removals past its
            // own watermark.
            let from = tw.min(vw);
            let pending = self.b.records.units_since(from)?;
            let removed = self.b.records.removals_since(from)?;
            let past = |w: u64| -> Vec<Unit> {
                pending
                    .iter()
                    .filter(|(seq, _)| *seq > w)
                    .map(|(_, u)| u.clone())
                    .collect()
            };
            let removed_past = |w: u64| -> BTreeMap<&SpaceId, Vec<String>> {
                let mut by_space: BTreeMap<&SpaceId, Vec<String>> = BTreeMap::new();
                for (_, space, id) in removed.iter().filter(|(seq, _, _)| *seq > w) {
                    by_space.entry(space).or_default().push(id.clone());
                }
                by_space
            };
            // Removals before writes: a unit removed and written again has a later
            // sequence number than its removal and is still stored, so it is indexed
            // again below.
            if tw < last {
                let gone = removed_past(tw);
                for (space, ids) in &gone {
                    self.b.text.remove(space, ids)?;
                }
                let units: Vec<Unit> = past(tw).into_iter().filter(Unit::is_searchable).collect();
                tracing::info!(
                    units = units.len(),
                    removed = gone.values().map(Vec::len).sum::<usize>(),
                    "healing text index"
                );
                self.b.text.upsert(&units)?;
                self.b.text.commit(last)?;
                report.text_reindexed = units.len();
            }
            if vw < last {
                let gone = removed_past(vw);
                for (space, ids) in &gone {
                    self.b.vectors.remove(space, ids)?;
                }
                let units = past(vw);
                tracing::info!(
                    units = units.len(),
                    removed = gone.values().map(Vec::len).sum::<usize>(),
                    "healing vectors"
                );
                report.vectors_rebuilt = self.index_vectors(&units, last)?.computed;
                if units.is_empty() {
                    // Only removals past the watermark: nothing written moves it.
                    if let Some(space) = gone.keys().next() {
                        self.b.vectors.upsert(space, &[], last)?;
                    }
                }
            }
        }
        self.text_seq.store(last, Ordering::SeqCst);
        self.behind.store(false, Ordering::SeqCst);
        self.prune_removals()?;
        Ok(report)
    }

    /// Drops the logged removals both indexes have applied (their committed watermarks
    /// are past them).
    fn prune_removals(&self) -> Result<(), EngineError> {
        let applied = self.b.text.watermark()?.min(self.b.vectors.watermark()?);
        self.b.records.prune_removals(applied)?;
        Ok(())
    }

    /// After a forget removed units from the record (which logged each removal with a
    /// sequence number past both watermarks, see [`RecordStore::removals_since`]) and
    /// then from both indexes: commits the text index and moves both watermarks to the
    /// record's last sequence number, so the removal is done and healing has nothing
    /// left of it. The caller holds the write lock, so every unit written before was
    /// handed to both indexes.
    fn removals_applied(&self, space: &SpaceId) -> Result<(), EngineError> {
        if !self.behind.load(Ordering::SeqCst) {
            let last = self.b.records.last_seq()?;
            if self.b.vectors.watermark()? < last {
                self.b.vectors.upsert(space, &[], last)?;
            }
            self.text_seq.fetch_max(last, Ordering::SeqCst);
        }
        // While the indexes lag, the watermarks stay: the heal that indexes what they
        // lack applies this removal again from the log (it is idempotent).
        self.commit_text(self.text_seq.load(Ordering::SeqCst))
    }

    /// Verifies that the derived state matches the record; with `rebuild`, recomputes all
    /// of it from the verbatim sessions (re-deriving units too).
    pub fn check(&self, rebuild: bool) -> Result<CheckReport, EngineError> {
        let mut r = self.check_or_rebuild(rebuild)?;
        self.flush()?;
        let _w = self.lock()?;
        for space in self.b.records.list_spaces()? {
            r.unreadable.extend(
                self.b
                    .records
                    .decode_failures(&space)?
                    .into_iter()
                    .map(|f| format!("space {space:?}, {f}")),
            );
            if !r.unreadable.is_empty() {
                continue;
            }
            let units = self.b.records.space_units(&space)?;
            let text_expected = units.iter().filter(|u| u.is_searchable()).count();
            let vectors_expected = units.iter().filter(|u| u.embed_text.is_some()).count();
            let text_entries = self.b.text.count(&space)?;
            let vector_entries = self.b.vectors.len(&space)?;
            r.indexes.push(SpaceIndexCheck {
                space: space.to_string(),
                units: units.len(),
                text_expected,
                text_entries,
                vectors_expected,
                vector_entries,
                agree: text_entries.is_none_or(|n| n == text_expected)
                    && vector_entries == vectors_expected,
            });
        }
        r.consistent = r.unreadable.is_empty()
            && r.indexes.iter().all(|s| s.agree)
            && r.text_watermark.max(self.b.text.watermark()?) >= r.last_seq
            && r.vector_watermark.max(self.b.vectors.watermark()?) >= r.last_seq;
        Ok(r)
    }

    fn check_or_rebuild(&self, rebuild: bool) -> Result<CheckReport, EngineError> {
        if !rebuild {
            let mut r = self.heal()?;
            r.spaces = self.b.records.list_spaces()?.len();
            return Ok(r);
        }
        let mut report = CheckReport::default();
        for space in self.b.records.list_spaces()? {
            report.spaces += 1;
            let records = self.b.records.sessions(&space)?;
            {
                let _w = self.lock()?;
                let old: Vec<String> = self
                    .b
                    .records
                    .space_units(&space)?
                    .into_iter()
                    .map(|u| u.id)
                    .collect();
                self.b.text.remove(&space, &old)?;
                // A saved search graph is rebuilt from the rows, not edited row by row.
                self.b.vectors.reset_derived(&space)?;
                self.b.vectors.remove(&space, &old)?;
            }
            for rec in records {
                let r = self.write_records(vec![(rec, WriteMode::Rederive)], None)?;
                report.units += r.units;
                report.vectors_rebuilt += r.vectors_computed + r.vectors_cached;
                report.text_reindexed += r.units;
            }
            for rec in self.b.records.trajectories(&space)? {
                let r = self.write_trajectories(vec![rec], true, None)?;
                report.units += r.units;
                report.vectors_rebuilt += r.vectors_computed + r.vectors_cached;
                report.text_reindexed += r.units;
            }
        }
        self.flush()?;
        report.last_seq = self.b.records.last_seq()?;
        report.text_watermark = self.b.text.watermark()?;
        report.vector_watermark = self.b.vectors.watermark()?;
        Ok(report)
    }

    pub fn create_space(&self, space: &SpaceId) -> Result<bool, EngineError> {
        Ok(self.b.records.create_space(space)?)
    }

    pub fn space_exists(&self, space: &SpaceId) -> Result<bool, EngineError> {
        Ok(self.b.records.space_exists(space)?)
    }

    pub fn spaces(&self) -> Result<Vec<SpaceId>, EngineError> {
        Ok(self.b.records.list_spaces()?)
    }

    /// Deletes a space and everything derived from it.
    pub fn drop_space(&self, space: &SpaceId) -> Result<bool, EngineError> {
        let w = self.lock_to_forget()?;
        if self.b.records.space_exists(space)? {
            self.purge_cached(&self.b.records.space_units(space)?, &[])?;
        }
        // The record first: its removals are logged, so a crash before the indexes
        // commit theirs heals on open (the other order left indexes emptied of units
        // still stored).
        let existed = self.b.records.drop_space(space)?;
        self.b.text.drop_space(space)?;
        self.b.vectors.drop_space(space)?;
        self.removals_applied(space)?;
        self.scrub(w)?;
        self.forgotten();
        Ok(existed)
    }

    /// Indexes units just written to the record store (vectors, then text); the caller
    /// holds the write lock.
    fn index_written(
        &self,
        mut written: Vec<Unit>,
        last: u64,
        report: &mut IngestReport,
    ) -> Result<(), EngineError> {
        if written.is_empty() {
            return Ok(());
        }
        self.index_after_commit(|| {
            let counts = self.index_vectors(&written, last)?;
            report.vectors_computed += counts.computed;
            report.vectors_cached += counts.cached;
            written.retain(Unit::is_searchable);
            self.b.text.upsert(&written)?;
            self.text_seq.store(last, Ordering::SeqCst);
            Ok(())
        });
        Ok(())
    }

    fn index_vectors(&self, units: &[Unit], watermark: u64) -> Result<EmbedCounts, EngineError> {
        let embedded = self.embed_units(units)?;
        self.store_vectors(units, embedded, watermark)
    }

    /// The vectors of `units` that have an embedding text, per space (each space's cache
    /// scope; see [`EngineConfig::share_embedding_cache`]).
    pub(super) fn embed_units(&self, units: &[Unit]) -> Result<EmbeddedUnits, EngineError> {
        Ok(self.embed_groups(&[units])?.0)
    }

    /// The vectors of several groups of units (the sessions of one group commit, in any
    /// spaces) in one embedder call, each text under its space's cache key; with each
    /// group's counts.
    pub(super) fn embed_groups(
        &self,
        groups: &[&[Unit]],
    ) -> Result<(EmbeddedUnits, Vec<EmbedCounts>), EngineError> {
        let todo: Vec<(usize, &Unit, &str)> = groups
            .iter()
            .enumerate()
            .flat_map(|(g, units)| {
                units
                    .iter()
                    .filter_map(move |u| u.embed_text.as_deref().map(|t| (g, u, t)))
            })
            .collect();
        let keys: Vec<[u8; 32]> = todo
            .iter()
            .map(|(_, u, t)| self.unit_cache_key(u, t))
            .collect();
        let texts: Vec<&str> = todo.iter().map(|(_, _, t)| *t).collect();
        let (vectors, origins) = embed_keyed_staged(
            self.b.embedder.as_ref(),
            self.b.cache.as_ref(),
            &keys,
            &texts,
            &|k| self.staged.get(k),
        )?;
        let mut per_group = vec![Vec::new(); groups.len()];
        let mut by_space: BTreeMap<&SpaceId, UnitVectors> = BTreeMap::new();
        for (((g, u, _), v), o) in todo.iter().zip(vectors).zip(origins.iter()) {
            per_group[*g].push(*o);
            by_space
                .entry(&u.space)
                .or_default()
                .push((u.id.clone(), v));
        }
        let out = EmbeddedUnits {
            by_space: by_space
                .into_iter()
                .map(|(s, items)| (s.clone(), items))
                .collect(),
            counts: embedding::counts(&origins),
        };
        Ok((
            out,
            per_group.iter().map(|o| embedding::counts(o)).collect(),
        ))
    }

    /// Writes embedded vectors with `watermark` (which moves past `units` even when none
    /// of them has a vector).
    fn store_vectors(
        &self,
        units: &[Unit],
        embedded: EmbeddedUnits,
        watermark: u64,
    ) -> Result<EmbedCounts, EngineError> {
        if embedded.by_space.is_empty() {
            if let Some(u) = units.first() {
                self.b.vectors.upsert(&u.space, &[], watermark)?;
            }
        }
        for (space, items) in &embedded.by_space {
            self.b.vectors.upsert(space, items, watermark)?;
        }
        Ok(embedded.counts)
    }

    /// The embedding-cache key of a text embedded for a space, within a part of it (an
    /// end-user partition, a query's scope): each part's own, unless the cache is shared
    /// (see [`EngineConfig::share_embedding_cache`]).
    pub(super) fn cache_key(&self, space: &SpaceId, within: Option<&str>, text: &str) -> [u8; 32] {
        if self.cfg.share_embedding_cache {
            cache_key_within(None, None, text)
        } else {
            cache_key_within(Some(space), within, text)
        }
    }

    /// The cache key of a unit's text: its space's and partition's own, so an ingest's
    /// `vectors_cached` says nothing of what another user of the space stored.
    fn unit_cache_key(&self, u: &Unit, text: &str) -> [u8; 32] {
        self.cache_key(&u.space, u.provenance.partition.as_deref(), text)
    }

    /// Vectors of `texts` with the memory's model, through the embedding cache under
    /// `space`'s keys (those its unpartitioned units' text uses): as passages (a unit's
    /// text), or with `query` as a question is embedded for recall.
    pub fn embed(
        &self,
        space: &SpaceId,
        texts: &[&str],
        query: bool,
    ) -> Result<Vec<Vec<f32>>, EngineError> {
        let q = crate::query_embed::QueryEmbedder::new(self.b.embedder.as_ref());
        let embedder: &dyn Embedder = if query { &q } else { self.b.embedder.as_ref() };
        let (vectors, _) = embedding::embed_cached(
            embedder,
            self.b.cache.as_ref(),
            |t| self.cache_key(space, None, t),
            texts,
        )?;
        Ok(vectors)
    }

    /// Drops from the embedding cache the vectors of `gone` units' text that `kept`
    /// units do not embed too: forgetting removes the text from every derived store. With
    /// a shared cache, another space holding the same text only pays one re-embedding.
    fn purge_cached(&self, gone: &[Unit], kept: &[Unit]) -> Result<(), EngineError> {
        if !self.cfg.purge_cache_on_forget {
            return Ok(());
        }
        let key = |u: &Unit| u.embed_text.as_deref().map(|t| self.unit_cache_key(u, t));
        let keep: std::collections::HashSet<[u8; 32]> = kept.iter().filter_map(key).collect();
        let keys: Vec<[u8; 32]> = gone
            .iter()
            .filter_map(key)
            .filter(|k| !keep.contains(k))
            .collect();
        if !keys.is_empty() {
            self.b.cache.remove(self.b.embedder.model_id(), &keys)?;
        }
        Ok(())
    }

    /// Makes every ingested unit searchable and the text index durable.
    pub fn flush(&self) -> Result<(), EngineError> {
        if self.behind.load(Ordering::SeqCst) {
            self.heal()?;
        }
        if self.b.text.has_pending() {
            // Only this process's mutex: committing the text index moves no record and
            // its watermark only moves up, so a recall never waits on other servers.
            let _w = self.write.lock().unwrap_or_else(|p| p.into_inner());
            // On failure the pending entries are dropped (`TextIndex::commit`): a heal
            // indexes them again from the index's watermark.
            self.commit_text(self.text_seq.load(Ordering::SeqCst))?;
        }
        self.read_warned.store(false, Ordering::SeqCst);
        Ok(())
    }

    /// [`Engine::flush`] before a read. The text index is derived state: when it cannot
    /// commit or heal (a full or read-only disk, or any other failure of its own) the
    /// read answers from what it committed, and a write acknowledged since may be
    /// missing from its text search until the index heals. Logged once until a commit
    /// succeeds.
    ///
    /// A text index that searches what is pending without a commit (the embedded one,
    /// up to a size) is not committed here: a read after a write then costs what a read
    /// costs, and the committer makes the write durable within `text_commit_ms`.
    pub(super) fn flush_for_read(&self) -> Result<(), EngineError> {
        if self.b.text.searches_pending() && !self.behind.load(Ordering::SeqCst) {
            return Ok(());
        }
        if let Err(e) = self.flush() {
            if !self.read_warned.swap(true, Ordering::SeqCst) {
                tracing::warn!(error = %e, "the text index cannot commit; reads answer from what it committed");
            }
        }
        Ok(())
    }

    fn require_space(&self, space: &SpaceId) -> Result<(), EngineError> {
        if self.b.records.space_exists(space)? {
            Ok(())
        } else {
            Err(StoreError::NoSuchSpace(space.to_string()).into())
        }
    }

    pub fn stats(&self, space: &SpaceId) -> Result<SpaceStats, EngineError> {
        Ok(self.b.records.stats(space)?)
    }

    /// See [`RecordStore::disk_bytes`].
    pub fn store_disk_bytes(&self) -> Result<Option<u64>, EngineError> {
        Ok(self.b.records.disk_bytes()?)
    }
}

/// `(unit id, vector)` pairs.
type UnitVectors = Vec<(String, Vec<f32>)>;

/// Vectors computed for units before their write, per space.
#[derive(Default)]
pub(super) struct EmbeddedUnits {
    by_space: Vec<(SpaceId, UnitVectors)>,
    counts: EmbedCounts,
}

pub(super) fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}
