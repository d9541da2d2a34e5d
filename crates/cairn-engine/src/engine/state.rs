//! The engine's state and lifecycle: its backends and configuration, the write lock,
//! opening (and re-deriving when the rules changed), spaces, flushing, stats.
use super::{append, cache, staged};
use crate::derive::DERIVE_VERSION;
use crate::embedding::CachedEmbedError;
use crate::rank::RankConfig;
use cairn_core::{
    ConflictError, EmbedError, Embedder, EmbeddingCache, InputError, RecordStore, SpaceId,
    SpaceStats, StoreError, TextIndex, VectorIndex,
};
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
pub(super) struct WriteLock<'a> {
    _store: Option<Box<dyn Send>>,
    _mutex: std::sync::MutexGuard<'a, ()>,
}

pub struct Engine {
    pub(super) b: EngineBackends,
    pub(super) cfg: EngineConfig,
    /// Serializes writers: sequence numbers then reach the indexes in order. Writes of
    /// new input embed before taking it (see `staged.rs`).
    pub(super) write: Mutex<()>,
    /// Highest unit sequence handed to the text index (committed or not).
    pub(super) text_seq: AtomicU64,
    /// Derived reads of recently used spaces and scopes (session catalogs, the sessions
    /// a scope admits, entity graphs, facts and profile contributions, fact indexes),
    /// each valid for one generation of its space, bounded in bytes (`cache.rs`).
    pub(super) derived: cache::SpaceCache,
    /// An index update failed after its records were committed (a full disk): the
    /// indexes lag the record store, and no write moves their watermarks until a heal
    /// has indexed what they lack (`Engine::index_after_commit`).
    pub(super) behind: AtomicBool,
    /// Text entries mended by heals since this engine opened (see `reconcile.rs`):
    /// what `check` reports as `text_mended`, the mends when it opened included.
    pub(super) text_mended: std::sync::atomic::AtomicUsize,
    /// A read already logged that the text index could not commit (see
    /// `Engine::flush_for_read`); cleared by the next commit that succeeds.
    pub(super) read_warned: AtomicBool,
    /// Appends waiting for the write lock; whoever takes it writes all of them in one
    /// transaction (group commit, see `append.rs`).
    pub(super) appends: append::Queue,
    /// Vectors of writes waiting for the write lock, embedded before it (`staged.rs`).
    pub(super) staged: staged::Staged,
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
    pub(super) fn rederive_if_rules_changed(&self) -> Result<(), EngineError> {
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
    pub(super) fn lock(&self) -> Result<WriteLock<'_>, EngineError> {
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
    pub(super) fn lock_to_forget(&self) -> Result<WriteLock<'_>, EngineError> {
        let guard = self.lock()?;
        self.b.records.release_reserve()?;
        Ok(guard)
    }

    /// After a forget, under its lock: the reserve is taken again when the disk has room
    /// for it (if not, the next write tries again, and is refused until it can).
    pub(super) fn forgotten(&self) {
        if let Err(e) = self.b.records.hold_reserve() {
            tracing::warn!(error = %e, "the disk reserve could not be re-created after a forget; writes are refused until there is room for it");
        }
    }

    /// Indexes what an earlier failure left out, if one did; the caller holds the write
    /// lock. A failure is logged and left for the next try: the write that takes the
    /// lock is not refused for it (its records do not depend on the indexes).
    pub(super) fn heal_if_behind(&self) {
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

    pub(super) fn lock_only(&self) -> Result<(WriteLock<'_>, bool), EngineError> {
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

    pub(super) fn require_space(&self, space: &SpaceId) -> Result<(), EngineError> {
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

pub(super) fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}
