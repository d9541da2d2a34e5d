use crate::ann::{AnnBuilder, AnnVectorIndex};
use crate::exact::{decode_iter, encode, ExactBuilder, ExactVectorIndex};
use crate::sqlite::{be, Shared};
use cairn_core::{SpaceId, StoreError, VectorIndex};
use rusqlite::{params, types::Type, OptionalExtension};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS vectors(
    space TEXT NOT NULL REFERENCES spaces(name) ON DELETE CASCADE,
    unit_id TEXT NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY(space, unit_id));
INSERT OR IGNORE INTO meta(key, value) VALUES ('vector_watermark', '0'), ('vector_model', ''),
    ('vector_changes', '0');
-- Each space's last vector change (the store-wide counter `vector_changes` at that write):
-- what a saved HNSW graph is stamped with. No foreign key: a dropped space keeps its row,
-- so a space of the same name made later never reuses a counter value.
CREATE TABLE IF NOT EXISTS vector_spaces(
    space TEXT PRIMARY KEY,
    changed INTEGER NOT NULL);
";

/// One space's vectors in memory: scanned exactly while small, through HNSW once large.
/// Both take a write in place (searches wait for it only while it is applied).
pub enum SpaceVectors {
    Exact(RwLock<ExactVectorIndex>),
    Ann(Box<AnnVectorIndex>),
}

/// A write a loaded space's vectors take in place.
#[derive(Clone, Copy)]
enum Change<'a> {
    Upsert(&'a [(String, Vec<f32>)]),
    Remove(&'a [String]),
}

/// Spaces with more vectors than this are searched through HNSW. Exact search over
/// 384-dimensional vectors scans ~50k rows in a few milliseconds on one core.
pub const ANN_THRESHOLD: usize = 50_000;

impl SpaceVectors {
    pub fn new(exact: ExactVectorIndex, ann_threshold: usize) -> Result<Self, StoreError> {
        Ok(if exact.len() > ann_threshold {
            SpaceVectors::Ann(Box::new(AnnVectorIndex::build(exact)?))
        } else {
            SpaceVectors::Exact(RwLock::new(exact))
        })
    }

    pub fn len(&self) -> usize {
        match self {
            SpaceVectors::Exact(e) => read(e).len(),
            SpaceVectors::Ann(a) => a.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn search(&self, query: &[f32], limit: usize) -> Result<Vec<(String, f32)>, StoreError> {
        match self {
            SpaceVectors::Exact(e) => Ok(read(e).search(query, limit)),
            SpaceVectors::Ann(a) => a.search(query, limit),
        }
    }

    fn apply(&self, change: Change<'_>) -> Result<(), StoreError> {
        match (self, change) {
            (SpaceVectors::Ann(a), Change::Upsert(items)) => a.upsert(items),
            (SpaceVectors::Ann(a), Change::Remove(ids)) => a.remove(ids),
            (SpaceVectors::Exact(e), Change::Upsert(items)) => {
                write(e).upsert(items);
                Ok(())
            }
            (SpaceVectors::Exact(e), Change::Remove(ids)) => {
                write(e).remove(ids);
                Ok(())
            }
        }
    }
}

// A panic while the lock was held leaves the index whole: every change is applied row by
// row, each row complete before the next.
fn read(e: &RwLock<ExactVectorIndex>) -> RwLockReadGuard<'_, ExactVectorIndex> {
    e.read().unwrap_or_else(|p| p.into_inner())
}

fn write(e: &RwLock<ExactVectorIndex>) -> RwLockWriteGuard<'_, ExactVectorIndex> {
    e.write().unwrap_or_else(|p| p.into_inner())
}

/// A space's vectors in memory, with the vector state they reflect.
pub(crate) struct Loaded {
    pub vectors: Arc<SpaceVectors>,
    /// The space's vector change counter (`vector_spaces.changed`) these vectors reflect.
    pub changed: u64,
    /// Rows written in place since the graph was last saved or loaded.
    pub unsaved: usize,
}

/// What the graphs of large spaces did since open (tests and logs tell a load from a
/// build by these, without timing anything).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GraphEvents {
    /// Graphs built from the rows.
    pub built: u64,
    /// Graphs loaded from the data directory instead.
    pub loaded: u64,
    /// Graphs saved to the data directory.
    pub saved: u64,
    /// Saved graphs found stale or unreadable (deleted, and built again from the rows).
    pub rejected: u64,
}

#[derive(Default)]
pub(crate) struct GraphCounters {
    pub built: AtomicU64,
    pub loaded: AtomicU64,
    pub saved: AtomicU64,
    pub rejected: AtomicU64,
}

/// Unit vectors persisted in the records database, searched in memory. A space's vectors
/// are loaded on first search; a large space's HNSW graph is then updated in place by
/// writes, and saved in the data directory (`graph_store.rs`) so the next process loads it
/// instead of building it.
pub struct SqliteVectorIndex {
    pub(crate) db: Shared,
    pub(crate) loaded: Mutex<HashMap<SpaceId, Loaded>>,
    pub(crate) ann_threshold: usize,
    /// Where large spaces' graphs are saved (`<data dir>/hnsw`); none: never saved.
    pub(crate) graph_dir: Option<PathBuf>,
    /// A random id of this database (`meta.vector_store_id`), in every saved graph's stamp.
    pub(crate) store_id: String,
    /// Held by every vector write from its commit through its in-place graph update, and
    /// by every save: a graph is never saved half-way through a write.
    pub(crate) writes: Mutex<()>,
    pub(crate) events: GraphCounters,
}

/// Rows read from SQLite per lock hold while loading a space.
const READ_CHUNK: usize = 8192;

impl SqliteVectorIndex {
    /// Vectors of another model than `model` are discarded (they are derived state and
    /// will be recomputed from the units), and so are saved graphs.
    pub(crate) fn new(
        db: Shared,
        model: &str,
        graph_dir: Option<PathBuf>,
    ) -> Result<Self, StoreError> {
        let store_id = {
            let conn = db.lock();
            be(conn.execute_batch(SCHEMA))?;
            let mut seed = [0u8; 16];
            getrandom::fill(&mut seed)
                .map_err(|e| StoreError::Backend(format!("random store id: {e}")))?;
            let seed = hex::encode(seed);
            be(conn.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('vector_store_id', ?1)",
                [seed],
            ))?;
            let stored: String = be(conn.query_row(
                "SELECT value FROM meta WHERE key='vector_model'",
                [],
                |r| r.get(0),
            ))?;
            if stored != model {
                if !stored.is_empty() {
                    tracing::warn!(old = %stored, new = %model, "embedding model changed: vectors will be rebuilt");
                }
                be(conn.execute_batch(
                    "DELETE FROM vectors; UPDATE meta SET value='0' WHERE key='vector_watermark';",
                ))?;
                be(conn.execute("UPDATE meta SET value=?1 WHERE key='vector_model'", [model]))?;
                if let Some(dir) = &graph_dir {
                    let _ = std::fs::remove_dir_all(dir);
                }
            }
            be(conn.query_row(
                "SELECT value FROM meta WHERE key='vector_store_id'",
                [],
                |r| r.get(0),
            ))?
        };
        Ok(Self::with_store_id(db, graph_dir, store_id))
    }

    /// The vectors of a data directory that cannot be written, for reading: vectors of
    /// another model than `model` cannot be rebuilt there, so they are refused.
    pub(crate) fn open_read_only(
        db: Shared,
        model: &str,
        graph_dir: Option<PathBuf>,
    ) -> Result<Self, StoreError> {
        let meta = |key: &str| -> Result<String, StoreError> {
            be(db
                .lock()
                .query_row("SELECT value FROM meta WHERE key=?1", [key], |r| r.get(0)))
        };
        let stored = meta("vector_model")?;
        if !stored.is_empty() && stored != model {
            return Err(StoreError::ReadOnly(format!(
                "the data directory holds vectors of {stored}, not of {model}; they are rebuilt on opening, which a read-only data directory cannot be, so open it with {stored} or writable once"
            )));
        }
        let store_id = meta("vector_store_id")?;
        Ok(Self::with_store_id(db, graph_dir, store_id))
    }

    fn with_store_id(db: Shared, graph_dir: Option<PathBuf>, store_id: String) -> Self {
        Self {
            db,
            loaded: Mutex::new(HashMap::new()),
            ann_threshold: ANN_THRESHOLD,
            graph_dir,
            store_id,
            writes: Mutex::new(()),
            events: GraphCounters::default(),
        }
    }

    /// Sets the size above which a space is searched through HNSW instead of exactly.
    pub fn with_ann_threshold(mut self, n: usize) -> Self {
        self.ann_threshold = n;
        self
    }

    pub fn graph_events(&self) -> GraphEvents {
        let c = &self.events;
        let get = |a: &AtomicU64| a.load(AtomicOrdering::SeqCst);
        GraphEvents {
            built: get(&c.built),
            loaded: get(&c.loaded),
            saved: get(&c.saved),
            rejected: get(&c.rejected),
        }
    }

    pub(crate) fn loaded(&self) -> MutexGuard<'_, HashMap<SpaceId, Loaded>> {
        self.loaded.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn write_lock(&self) -> MutexGuard<'_, ()> {
        self.writes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// After a write to `space` committed (as vector change `changed`, of `rows` rows):
    /// the loaded vectors take it in place (reading a space's vectors again, or indexing
    /// a large space again, would cost the next search the whole space); an HNSW graph is
    /// saved once enough writes have accumulated. An exact index grown past the HNSW
    /// threshold, or one whose update failed, is dropped and reloaded by the next search.
    /// The caller holds the write lock.
    fn refresh_loaded(&self, space: &SpaceId, changed: u64, rows: usize, change: Change<'_>) {
        let mut loaded = self.loaded();
        let Some(l) = loaded.get_mut(space) else {
            return;
        };
        if let Err(e) = l.vectors.apply(change) {
            tracing::warn!(%space, error = %e, "vector index update failed: reloading");
            loaded.remove(space);
            return;
        }
        l.changed = changed;
        let save = match l.vectors.as_ref() {
            SpaceVectors::Exact(e) => {
                if read(e).len() > self.ann_threshold {
                    loaded.remove(space);
                }
                return;
            }
            SpaceVectors::Ann(a) => {
                l.unsaved += rows;
                (l.unsaved >= save_after(a.len())).then(|| l.vectors.clone())
            }
        };
        drop(loaded);
        if let Some(vectors) = save {
            if let SpaceVectors::Ann(a) = vectors.as_ref() {
                if self.save_graph(space, a, changed) {
                    if let Some(l) = self.loaded().get_mut(space) {
                        l.unsaved = 0;
                    }
                }
            }
        }
    }

    fn space_index(&self, space: &SpaceId) -> Result<Arc<SpaceVectors>, StoreError> {
        if let Some(l) = self.loaded().get(space) {
            return Ok(l.vectors.clone());
        }
        let stamp = self.stamp(space)?;
        let large = stamp.rows as usize > self.ann_threshold;
        let (ix, built) = match large.then(|| self.load_graph(space, &stamp)).flatten() {
            Some(ann) => (SpaceVectors::Ann(Box::new(ann)), false),
            None => (self.read_rows(space, stamp.rows as usize, large)?, large),
        };
        let ix = Arc::new(ix);
        let _w = self.write_lock();
        // Rows are read a chunk per lock hold: kept only if no write to the space landed
        // since the stamp (the writes of this process are the only ones: one process owns
        // the data directory).
        if self.changed(space)? != stamp.changed {
            return Ok(ix);
        }
        if let (true, SpaceVectors::Ann(a)) = (built, ix.as_ref()) {
            self.events.built.fetch_add(1, AtomicOrdering::SeqCst);
            self.save_graph(space, a, stamp.changed);
        }
        self.loaded().insert(
            space.clone(),
            Loaded {
                vectors: ix.clone(),
                changed: stamp.changed,
                unsaved: 0,
            },
        );
        Ok(ix)
    }

    /// Streams the space's rows, in unit-id order, into an HNSW graph (`large`) or an
    /// exact index: SQLite is locked one chunk at a time, and no second copy of the
    /// vectors is ever held.
    fn read_rows(
        &self,
        space: &SpaceId,
        rows: usize,
        large: bool,
    ) -> Result<SpaceVectors, StoreError> {
        if large {
            let t = std::time::Instant::now();
            let mut b = AnnBuilder::with_capacity(rows);
            self.each_row(space, |id, v| b.push(id, v))?;
            let ann = b.finish()?;
            tracing::info!(%space, rows, seconds = t.elapsed().as_secs_f64(), "built the vector graph");
            Ok(SpaceVectors::Ann(Box::new(ann)))
        } else {
            let mut b = ExactBuilder::with_capacity(rows);
            self.each_row(space, |id, v| {
                b.push(id.to_string(), v);
                Ok(())
            })?;
            Ok(SpaceVectors::Exact(RwLock::new(b.finish())))
        }
    }

    fn each_row(
        &self,
        space: &SpaceId,
        mut f: impl FnMut(&str, &[f32]) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut after: Option<String> = None;
        let mut ids = Vec::with_capacity(READ_CHUNK);
        let mut data: Vec<f32> = Vec::new();
        let mut lens = Vec::with_capacity(READ_CHUNK);
        loop {
            ids.clear();
            data.clear();
            lens.clear();
            {
                let conn = self.db.lock();
                let mut stmt = be(conn.prepare_cached(if after.is_some() {
                    "SELECT unit_id, vec FROM vectors WHERE space=?1 AND unit_id>?2
                     ORDER BY unit_id LIMIT ?3"
                } else {
                    "SELECT unit_id, vec FROM vectors WHERE space=?1 AND ?2 IS NULL
                     ORDER BY unit_id LIMIT ?3"
                }))?;
                let mut rows = be(stmt.query(params![space.as_str(), after, READ_CHUNK as i64]))?;
                while let Some(r) = be(rows.next())? {
                    ids.push(be(r.get::<_, String>(0))?);
                    let bytes = be(r.get_ref(1).and_then(|v| {
                        v.as_blob().map_err(|e| {
                            rusqlite::Error::FromSqlConversionFailure(1, Type::Blob, Box::new(e))
                        })
                    }))?;
                    lens.push(bytes.len() / 4);
                    data.extend(decode_iter(bytes));
                }
            }
            let mut at = 0;
            for (id, n) in ids.iter().zip(&lens) {
                f(id, &data[at..at + n])?;
                at += n;
            }
            if ids.len() < READ_CHUNK {
                return Ok(());
            }
            after = ids.pop();
        }
    }
}

/// In-place writes a loaded graph takes before it is saved again: an eighth of its units
/// (at least 1,000), so a long-lived process that crashes leaves a saved graph at most
/// that far behind (rebuilt from the rows then), and saving (seconds for a million points)
/// costs a fraction of the writes' own time. Closing saves whatever is unsaved.
fn save_after(units: usize) -> usize {
    (units / 8).max(1000)
}

/// Writes `items` and moves the space's vector change counter in one transaction;
/// returns the new counter.
fn write_vectors(
    conn: &mut rusqlite::Connection,
    space: &SpaceId,
    items: &[(String, Vec<f32>)],
    watermark: u64,
) -> Result<u64, StoreError> {
    let tx = be(conn.transaction())?;
    {
        let mut stmt = be(tx.prepare_cached(
            "INSERT OR REPLACE INTO vectors(space, unit_id, vec) VALUES (?1, ?2, ?3)",
        ))?;
        for (id, v) in items {
            be(stmt.execute(params![space.as_str(), id, encode(v)]))?;
        }
    }
    be(tx.execute(
        "UPDATE meta SET value=MAX(CAST(value AS INTEGER), ?1) WHERE key='vector_watermark'",
        [watermark as i64],
    ))?;
    let changed = bump(&tx, space)?;
    be(tx.commit())?;
    Ok(changed)
}

/// Moves the store-wide vector change counter and records it as `space`'s last change,
/// inside the caller's transaction: the stamp every saved graph is checked against.
pub(crate) fn bump(tx: &rusqlite::Transaction<'_>, space: &SpaceId) -> Result<u64, StoreError> {
    be(tx.execute(
        "UPDATE meta SET value=CAST(value AS INTEGER)+1 WHERE key='vector_changes'",
        [],
    ))?;
    let n: i64 = be(tx.query_row(
        "SELECT CAST(value AS INTEGER) FROM meta WHERE key='vector_changes'",
        [],
        |r| r.get(0),
    ))?;
    be(tx.execute(
        "INSERT INTO vector_spaces(space, changed) VALUES (?1, ?2)
         ON CONFLICT(space) DO UPDATE SET changed=excluded.changed",
        params![space.as_str(), n],
    ))?;
    Ok(n as u64)
}

impl VectorIndex for SqliteVectorIndex {
    fn upsert(
        &self,
        space: &SpaceId,
        items: &[(String, Vec<f32>)],
        watermark: u64,
    ) -> Result<(), StoreError> {
        let _w = self.write_lock();
        self.adopt_graph(space);
        let changed = {
            let mut conn = self.db.lock();
            // Vectors are derived, and their watermark commits with them: a power cut
            // that loses this commit leaves the watermark behind, and opening heals them
            // from the record. So this commit skips the WAL sync (synchronous=NORMAL:
            // still safe against a killed process) that the record's commit just paid;
            // the next record commit syncs both. Removals keep FULL: forgotten stays
            // forgotten.
            be(conn.pragma_update(None, "synchronous", "NORMAL"))?;
            let written = write_vectors(&mut conn, space, items, watermark);
            be(conn.pragma_update(None, "synchronous", "FULL"))?;
            written?
        };
        self.refresh_loaded(space, changed, items.len(), Change::Upsert(items));
        Ok(())
    }

    fn remove(&self, space: &SpaceId, unit_ids: &[String]) -> Result<(), StoreError> {
        let _w = self.write_lock();
        self.adopt_graph(space);
        let changed = {
            let mut conn = self.db.lock();
            let tx = be(conn.transaction())?;
            {
                let mut stmt =
                    be(tx.prepare_cached("DELETE FROM vectors WHERE space=?1 AND unit_id=?2"))?;
                for id in unit_ids {
                    be(stmt.execute(params![space.as_str(), id]))?;
                }
            }
            let changed = bump(&tx, space)?;
            be(tx.commit())?;
            changed
        };
        self.refresh_loaded(space, changed, unit_ids.len(), Change::Remove(unit_ids));
        Ok(())
    }

    fn drop_space(&self, space: &SpaceId) -> Result<(), StoreError> {
        let _w = self.write_lock();
        {
            let mut conn = self.db.lock();
            let tx = be(conn.transaction())?;
            be(tx.execute("DELETE FROM vectors WHERE space=?1", [space.as_str()]))?;
            bump(&tx, space)?;
            be(tx.commit())?;
        }
        self.loaded().remove(space);
        self.discard_graph(space);
        Ok(())
    }

    fn reset_derived(&self, space: &SpaceId) -> Result<(), StoreError> {
        let _w = self.write_lock();
        self.loaded().remove(space);
        self.discard_graph(space);
        Ok(())
    }

    fn watermark(&self) -> Result<u64, StoreError> {
        let v: Option<String> = be(self
            .db
            .lock()
            .query_row(
                "SELECT value FROM meta WHERE key='vector_watermark'",
                [],
                |r| r.get(0),
            )
            .optional())?;
        Ok(v.and_then(|s| s.parse().ok()).unwrap_or(0))
    }

    fn search(
        &self,
        space: &SpaceId,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(String, f32)>, StoreError> {
        self.space_index(space)?.search(query, limit)
    }

    fn similarities(
        &self,
        space: &SpaceId,
        query: &[f32],
        unit_ids: &[String],
    ) -> Result<Vec<(String, f32)>, StoreError> {
        if unit_ids.is_empty() {
            return Ok(Vec::new());
        }
        // One statement for all ids (a scope's exact search asks for thousands).
        let conn = self.db.lock();
        let mut stmt = be(conn.prepare_cached(
            "SELECT unit_id, vec FROM vectors
              WHERE space=?1 AND unit_id IN (SELECT value FROM json_each(?2))",
        ))?;
        let listed = serde_json::to_string(unit_ids)
            .map_err(|e| StoreError::Backend(format!("encode: {e}")))?;
        let mut rows = be(stmt.query(params![space.as_str(), listed]))?;
        let mut out = Vec::with_capacity(unit_ids.len());
        while let Some(row) = be(rows.next())? {
            let id: String = be(row.get(0))?;
            let bytes = be(row.get_ref(1).and_then(|v| Ok(v.as_blob()?)))?;
            if bytes.len() == query.len() * 4 {
                let s: f32 = decode_iter(bytes).zip(query).map(|(x, y)| x * y).sum();
                out.push((id, s));
            }
        }
        Ok(out)
    }

    fn len(&self, space: &SpaceId) -> Result<usize, StoreError> {
        Ok(self.space_index(space)?.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::decode;

    #[test]
    fn exact_search_returns_best_first() {
        let ix = ExactVectorIndex::from_items(vec![
            ("a".into(), vec![1.0, 0.0]),
            ("b".into(), vec![0.0, 1.0]),
            ("c".into(), vec![0.6, 0.8]),
        ]);
        let hits = ix.search(&[0.0, 1.0], 2);
        assert_eq!(
            hits.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(),
            ["b", "c"]
        );
        assert!((hits[1].1 - 0.8).abs() < 1e-6);
        assert!(
            ix.search(&[1.0], 2).is_empty(),
            "wrong dimension must not match"
        );
    }

    #[test]
    fn codec_round_trips() {
        let v = vec![0.25, -1.5, 3.0e-7];
        assert_eq!(decode(&encode(&v)), v);
    }
}
