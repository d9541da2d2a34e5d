//! Vectors computed before the write lock. Embedding is most of a write's time, and under
//! the lock it made every other write (in any space), and every recall that commits the
//! text index, wait for it. So a write first derives what it will write without the lock
//! (reads only), embeds the texts the cache lacks and stages those vectors by cache key;
//! then, under the lock, the same derivation (now the one that counts) finds them here
//! instead of calling the model. A text the first derivation did not foresee (another
//! write changed the session meanwhile) is embedded under the lock, as before. Nothing
//! staged is stored: a write that is refused leaves no vector anywhere.
use super::ingest::{Planned, WriteMode};
use super::reports::IngestReport;
use super::services::Writes;
use super::waiting::{Pending, StagedGuard};
use cairn_core::{SessionRecord, TrajectoryRecord, Unit};
use std::collections::HashSet;
use std::sync::Arc;

impl<'e> Writes<'e> {
    /// Embeds the texts of `units` that neither the cache nor the stage holds and stages
    /// them until the guard drops. Best effort: an error is left for the locked write to
    /// meet and report.
    fn stage_units(&self, units: &[Unit]) -> StagedGuard<'e> {
        let mut guard = StagedGuard {
            staged: &self.0.staged,
            keys: Vec::new(),
        };
        let mut todo: Vec<([u8; 32], &str)> = Vec::new();
        let mut seen = HashSet::new();
        {
            let mut map = self.staged.map();
            for u in units {
                let Some(text) = u.embed_text.as_deref() else {
                    continue;
                };
                let key = self.unit_cache_key(u, text);
                if !seen.insert(key) {
                    continue;
                }
                match map.get_mut(&key) {
                    Some((_, n)) => {
                        *n += 1;
                        guard.keys.push(key);
                    }
                    None => todo.push((key, text)),
                }
            }
        }
        if todo.is_empty() {
            return guard;
        }
        let keys: Vec<[u8; 32]> = todo.iter().map(|(k, _)| *k).collect();
        let Ok(cached) = self.b.cache.get(self.b.embedder.model_id(), &keys) else {
            return guard;
        };
        let missing: Vec<([u8; 32], &str)> = todo
            .into_iter()
            .zip(cached)
            .filter(|(_, c)| c.is_none())
            .map(|(t, _)| t)
            .collect();
        let texts: Vec<&str> = missing.iter().map(|(_, t)| *t).collect();
        let Ok(vectors) = self.b.embedder.embed(&texts) else {
            return guard;
        };
        let mut map = self.staged.map();
        for ((key, _), v) in missing.into_iter().zip(vectors) {
            map.entry(key).or_insert_with(|| (Arc::new(v), 0)).1 += 1;
            guard.keys.push(key);
        }
        guard
    }

    /// Stages the vectors of a session write: planned and derived as the locked write
    /// will, from what is stored now. Rebuilds stage nothing (nothing waits on them).
    pub(super) fn stage_sessions(
        &self,
        records: &[(SessionRecord, WriteMode)],
    ) -> Option<StagedGuard<'e>> {
        if records.iter().all(|(_, m)| *m == WriteMode::Rederive) {
            return None;
        }
        let planned = self
            .plan_writes(records.to_vec(), &mut IngestReport::default())
            .ok()?;
        let units: Vec<Unit> = planned
            .into_iter()
            .filter_map(|p| self.changes_of(p).ok())
            .flat_map(|c| c.units)
            .collect();
        Some(self.stage_units(&units))
    }

    /// Stages the vectors of trajectories about to be inserted.
    pub(super) fn stage_trajectories(&self, records: &[TrajectoryRecord]) -> StagedGuard<'e> {
        let units: Vec<Unit> = records
            .iter()
            .flat_map(|r| {
                crate::trajectory::derive_trajectory_units(&r.space, &r.trajectory, r.recorded_at)
            })
            .collect();
        self.stage_units(&units)
    }

    /// Stages the vectors of an append: the session as stored now, extended by it.
    pub(super) fn stage_append(&self, p: &Pending) -> Option<StagedGuard<'e>> {
        let (record, stored_len) = self.dry_run(p)?;
        let units = self
            .changes_of(Planned {
                record,
                added: 0,
                stored: stored_len.is_some(),
                rewrite_all: false,
                appended_to: stored_len,
            })
            .ok()?
            .units;
        Some(self.stage_units(&units))
    }
}
