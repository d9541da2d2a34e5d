//! Writes waiting for the write lock: appends queued for a group commit (`append.rs`)
//! and the vectors writes embedded before taking it (`staged.rs`). Data only: the
//! engine's state holds them, and the write path fills and drains them.
use super::error::EngineError;
use super::receipt::Request;
use super::reports::IngestReport;
use cairn_core::{AppendInput, SessionInput, SpaceId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One append waiting to be written, and its answer once written.
pub(super) struct Pending {
    pub(super) space: SpaceId,
    pub(super) input: AppendInput,
    /// The session this append makes when none is stored.
    pub(super) new_session: SessionInput,
    pub(super) request: Option<Request>,
    pub(super) answer: Mutex<Option<Result<IngestReport, EngineError>>>,
}

impl Pending {
    pub(super) fn answer(&self, r: Result<IngestReport, EngineError>) {
        *self.answer.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
    }

    /// The answer, left in place (a retry of this append gets it too).
    pub(super) fn peek(&self) -> Option<Result<IngestReport, EngineError>> {
        self.answer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(super) fn take(&self) -> Option<Result<IngestReport, EngineError>> {
        self.answer.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// Appends waiting for the write lock.
#[derive(Default)]
pub(super) struct Queue(Mutex<Vec<Arc<Pending>>>);

impl Queue {
    pub(super) fn push(&self, p: Arc<Pending>) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(p);
    }

    /// Appends waiting now.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub(super) fn drain(&self) -> Vec<Arc<Pending>> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// A staged vector by its cache key, with how many writes staged it.
type ByKey = HashMap<[u8; 32], (Arc<Vec<f32>>, usize)>;

/// Staged vectors by cache key, each with how many writes staged it.
#[derive(Default)]
pub(super) struct Staged(Mutex<ByKey>);

impl Staged {
    pub(super) fn map(&self) -> std::sync::MutexGuard<'_, ByKey> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The vector staged under `key`, if any.
    pub(super) fn get(&self, key: &[u8; 32]) -> Option<Vec<f32>> {
        self.map().get(key).map(|(v, _)| v.as_ref().clone())
    }
}

/// A write's staged vectors, released when it is done (answered or failed).
pub(super) struct StagedGuard<'a> {
    pub(super) staged: &'a Staged,
    pub(super) keys: Vec<[u8; 32]>,
}

impl Drop for StagedGuard<'_> {
    fn drop(&mut self) {
        let mut map = self.staged.map();
        for k in &self.keys {
            if let Some((_, n)) = map.get_mut(k) {
                *n -= 1;
                if *n == 0 {
                    map.remove(k);
                }
            }
        }
    }
}
