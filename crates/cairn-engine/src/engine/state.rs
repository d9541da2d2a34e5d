//! The engine's state and lifecycle: its backends and configuration, the write lock,
//! opening (and re-deriving when the rules changed), spaces, flushing, stats.
use super::config::{EngineBackends, EngineConfig};
use super::error::EngineError;
use super::{cache, waiting};
use crate::derive::DERIVE_VERSION;
use cairn_core::{Embedder, SpaceId, SpaceStats, StoreError};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

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
    pub(super) appends: waiting::Queue,
    /// Vectors of writes waiting for the write lock, embedded before it (`staged.rs`).
    pub(super) staged: waiting::Staged,
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
            appends: waiting::Queue::default(),
            staged: waiting::Staged::default(),
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
