//! Saving and loading large spaces' HNSW graphs for [`SqliteVectorIndex`]: when a graph
//! matches the rows (by its [`Stamp`]), when it is saved, and what happens to one that
//! does not match (it is deleted and the graph built again from the rows: the rows are the
//! truth, the graph only derived from them).
use crate::ann::AnnVectorIndex;
use crate::graph_file::{GraphFiles, LoadError, Stamp};
use crate::sqlite::be;
use crate::vectors::{Loaded, SpaceVectors, SqliteVectorIndex};
use cairn_core::{SpaceId, StoreError};
use rusqlite::OptionalExtension;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

impl SqliteVectorIndex {
    fn files(&self, space: &SpaceId) -> Option<GraphFiles> {
        Some(GraphFiles::of(self.graph_dir.as_ref()?, space.as_str()))
    }

    /// The space's last vector change (0: none recorded).
    pub(crate) fn changed(&self, space: &SpaceId) -> Result<u64, StoreError> {
        let v: Option<i64> = be(self
            .db
            .lock()
            .query_row(
                "SELECT changed FROM vector_spaces WHERE space=?1",
                [space.as_str()],
                |r| r.get(0),
            )
            .optional())?;
        Ok(v.unwrap_or(0) as u64)
    }

    /// What identifies the space's vector rows now, read in one lock hold.
    pub(crate) fn stamp(&self, space: &SpaceId) -> Result<Stamp, StoreError> {
        let conn = self.db.lock();
        let changed: Option<i64> = be(conn
            .query_row(
                "SELECT changed FROM vector_spaces WHERE space=?1",
                [space.as_str()],
                |r| r.get(0),
            )
            .optional())?;
        let (rows, max_rowid): (i64, i64) = be(conn.query_row(
            "SELECT COUNT(*), COALESCE(MAX(rowid), 0) FROM vectors WHERE space=?1",
            [space.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        ))?;
        Ok(Stamp {
            store: self.store_id.clone(),
            space: space.to_string(),
            changed: changed.unwrap_or(0) as u64,
            rows: rows.max(0) as u64,
            max_rowid,
        })
    }

    /// The saved graph of `space` if it was saved for exactly the rows of `stamp`; a
    /// saved graph that is stale or unreadable is deleted (and logged), and the caller
    /// builds from the rows.
    pub(crate) fn load_graph(&self, space: &SpaceId, stamp: &Stamp) -> Option<AnnVectorIndex> {
        let files = self.files(space)?;
        let t = Instant::now();
        match AnnVectorIndex::load(&files, stamp) {
            Ok(ann) => {
                self.events.loaded.fetch_add(1, Ordering::SeqCst);
                tracing::info!(%space, units = ann.len(), seconds = t.elapsed().as_secs_f64(), "loaded the saved vector graph");
                Some(ann)
            }
            Err(LoadError::Missing) => None,
            Err(e) => {
                self.events.rejected.fetch_add(1, Ordering::SeqCst);
                match e {
                    LoadError::Stale(why) => {
                        tracing::info!(%space, %why, "saved vector graph is stale: rebuilding")
                    }
                    LoadError::Corrupt(why) => {
                        tracing::warn!(%space, %why, "saved vector graph is unreadable: rebuilding")
                    }
                    LoadError::Missing => {}
                }
                files.remove();
                None
            }
        }
    }

    /// Before a write to a space whose graph is saved but not loaded: loads it (if it
    /// still matches the rows), so the write lands in it in place and the next process
    /// finds it saved again, instead of a graph that the write made stale and that would
    /// be built from scratch. The caller holds the write lock.
    pub(crate) fn adopt_graph(&self, space: &SpaceId) {
        let Some(files) = self.files(space) else {
            return;
        };
        if self.loaded().contains_key(space) || !files.exists() {
            return;
        }
        let stamp = match self.stamp(space) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(%space, error = %e, "reading the vector stamp failed");
                return;
            }
        };
        if stamp.rows as usize <= self.ann_threshold {
            files.remove();
            return;
        }
        if let Some(ann) = self.load_graph(space, &stamp) {
            self.loaded().insert(
                space.clone(),
                Loaded {
                    vectors: Arc::new(SpaceVectors::Ann(Box::new(ann))),
                    changed: stamp.changed,
                    unsaved: 0,
                },
            );
        }
    }

    /// Saves `ann` as the state of the space's vector change `changed`. The caller holds
    /// the write lock (so no write lands between the graph and the stamp read here).
    /// Failures are logged and leave no file behind: the graph is only derived state.
    pub(crate) fn save_graph(&self, space: &SpaceId, ann: &AnnVectorIndex, changed: u64) -> bool {
        let Some(files) = self.files(space) else {
            return false;
        };
        let t = Instant::now();
        let saved = self.stamp(space).and_then(|stamp| {
            if stamp.changed != changed {
                return Err(StoreError::Backend(format!(
                    "the rows moved to change {} past the graph's {changed}",
                    stamp.changed
                )));
            }
            ann.save(&files, &stamp)
        });
        match saved {
            Ok(()) => {
                self.events.saved.fetch_add(1, Ordering::SeqCst);
                tracing::info!(%space, units = ann.len(), seconds = t.elapsed().as_secs_f64(), "saved the vector graph");
                true
            }
            Err(e) => {
                tracing::warn!(%space, error = %e, "saving the vector graph failed");
                files.remove();
                false
            }
        }
    }

    /// Deletes the space's saved graph (dropped space, `check --rebuild`).
    pub(crate) fn discard_graph(&self, space: &SpaceId) {
        if let Some(files) = self.files(space) {
            files.remove();
        }
    }
}

impl Drop for SqliteVectorIndex {
    /// Closing saves the graphs that took writes since they were saved or loaded.
    fn drop(&mut self) {
        let unsaved: Vec<(SpaceId, Arc<SpaceVectors>, u64)> = self
            .loaded()
            .iter()
            .filter(|(_, l)| l.unsaved > 0)
            .map(|(s, l)| (s.clone(), l.vectors.clone(), l.changed))
            .collect();
        let _w = self.write_lock();
        for (space, vectors, changed) in unsaved {
            if let SpaceVectors::Ann(a) = vectors.as_ref() {
                self.save_graph(&space, a, changed);
            }
        }
    }
}
