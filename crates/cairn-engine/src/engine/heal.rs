//! Healing and checking: what a crash or a full disk left the indexes without, indexed
//! again; removals completed; `check` (and `--rebuild`).
use super::error::EngineError;
use super::ingest::WriteMode;
use super::reports::{CheckReport, SpaceIndexCheck};
use super::state::Engine;
use cairn_core::{SpaceId, Unit};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

impl Engine {
    /// Brings both indexes up to the record store: units written after an index's
    /// watermark are (re)indexed, then each space's text entries are counted against
    /// its units and a space that disagrees is mended.
    pub(super) fn heal(&self) -> Result<CheckReport, EngineError> {
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

    pub(super) fn heal_locked(&self) -> Result<CheckReport, EngineError> {
        self.heal_inner().inspect_err(|_| self.lagging())
    }

    pub(super) fn heal_inner(&self) -> Result<CheckReport, EngineError> {
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
    pub(super) fn prune_removals(&self) -> Result<(), EngineError> {
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
    pub(super) fn removals_applied(&self, space: &SpaceId) -> Result<(), EngineError> {
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

    pub(super) fn check_or_rebuild(&self, rebuild: bool) -> Result<CheckReport, EngineError> {
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
                let r = self
                    .writes()
                    .write_records(vec![(rec, WriteMode::Rederive)], None)?;
                report.units += r.units;
                report.vectors_rebuilt += r.vectors_computed + r.vectors_cached;
                report.text_reindexed += r.units;
            }
            for rec in self.b.records.trajectories(&space)? {
                let r = self
                    .trajectories()
                    .write_trajectories(vec![rec], true, None)?;
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
}
