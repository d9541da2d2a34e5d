//! When the text index is committed. A write is acknowledged once the record store has
//! committed it (the ground truth, durable); the text index is derived state, and
//! committing it (segments serialized and synced) cost most of an append: about 100 ms of
//! a 120 ms append on the 2-core reference machine. So writes leave their text entries
//! pending, and the index commits them when
//! - a recall or a check needs them (`Engine::flush` first: a write is visible to the
//!   next recall, whoever makes it, as before),
//! - `text_commit_ms` after a write, here (one commit covers every write of the
//!   interval, so writes that arrive faster than commits share them),
//! - the memory closes.
//!
//! A crash in between loses no acknowledged write: the index's watermark is still at its
//! last commit, and opening heals it from the record store (`Engine::heal`).
use super::state::Engine;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The background committer of one engine; stops (and is joined) when dropped.
pub struct TextCommitter {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl TextCommitter {
    /// Starts committing `engine`'s pending text entries every configured
    /// `text_commit_ms`; `None` when that is 0.
    pub fn start(engine: Arc<Engine>) -> Option<Self> {
        let every = Duration::from_millis(engine.cfg.text_commit_ms);
        if every.is_zero() {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let handle = std::thread::Builder::new()
            .name("cairn-text-commit".into())
            .spawn(move || {
                while !stopped.load(Ordering::SeqCst) {
                    std::thread::park_timeout(every);
                    let pending = engine.b.text.has_pending();
                    if let Err(e) = engine.flush() {
                        tracing::warn!(error = %e, "committing the text index failed; will retry");
                    } else if pending {
                        // Writes' stale units log removals too: pruned here, as the
                        // watermarks pass them, not by a recall's commit (a read must
                        // not write), nor only by forgets and on open.
                        if let Err(e) = engine.prune_removals() {
                            tracing::warn!(error = %e, "pruning the removal log failed; will retry");
                        }
                    }
                }
            })
            .ok();
        Some(Self { stop, handle })
    }
}

impl Drop for TextCommitter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}
