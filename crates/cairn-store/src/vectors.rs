use crate::sqlite::{be, Shared};
use cairn_core::{SpaceId, StoreError, VectorIndex};
use rusqlite::{params, types::Type, OptionalExtension};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, RwLock};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS vectors(
    space TEXT NOT NULL REFERENCES spaces(name) ON DELETE CASCADE,
    unit_id TEXT NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY(space, unit_id));
INSERT OR IGNORE INTO meta(key, value) VALUES ('vector_watermark', '0'), ('vector_model', '');
";

/// Cosine similarity of unit-length vectors.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub(crate) fn encode(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn decode(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Exact (brute-force) search over one space's vectors, kept contiguous so scoring is a
/// tight loop over `f32` slices that the compiler vectorizes.
#[derive(Default)]
pub struct ExactVectorIndex {
    ids: Vec<String>,
    data: Vec<f32>,
    dim: usize,
}

#[derive(PartialEq)]
struct Scored(f32, usize);
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    // Reversed so the heap's top is the worst kept score.
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

impl ExactVectorIndex {
    pub fn from_items(items: Vec<(String, Vec<f32>)>) -> Self {
        let mut b = ExactBuilder::with_capacity(items.len());
        for (id, v) in items {
            b.push(id, &v);
        }
        b.finish()
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub fn search(&self, query: &[f32], limit: usize) -> Vec<(String, f32)> {
        if self.dim == 0 || query.len() != self.dim || limit == 0 {
            return Vec::new();
        }
        let mut heap = BinaryHeap::with_capacity(limit + 1);
        for (i, row) in self.data.chunks_exact(self.dim).enumerate() {
            let s = dot(row, query);
            if heap.len() < limit {
                heap.push(Scored(s, i));
            } else if heap.peek().is_some_and(|w| s > w.0) {
                heap.pop();
                heap.push(Scored(s, i));
            }
        }
        let mut out: Vec<_> = heap
            .into_iter()
            .map(|Scored(s, i)| (self.ids[i].clone(), s))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out
    }
}

/// Collects rows straight into the contiguous matrix: loading a space never holds a
/// second copy of its vectors (a million 384-dimensional rows are 1.5 GB).
pub struct ExactBuilder {
    ids: Vec<String>,
    data: Vec<f32>,
    dim: usize,
}

impl ExactBuilder {
    pub fn with_capacity(rows: usize) -> Self {
        Self {
            ids: Vec::with_capacity(rows),
            data: Vec::new(),
            dim: 0,
        }
    }

    /// Adds a row; rows of another dimension than the first are skipped.
    pub fn push(&mut self, id: String, v: &[f32]) {
        if self.ids.is_empty() {
            self.dim = v.len();
            self.data.reserve_exact(self.ids.capacity() * self.dim);
        }
        if v.len() == self.dim {
            self.ids.push(id);
            self.data.extend_from_slice(v);
        }
    }

    pub fn finish(mut self) -> ExactVectorIndex {
        self.data.shrink_to_fit();
        ExactVectorIndex {
            ids: self.ids,
            data: self.data,
            dim: self.dim,
        }
    }
}

/// Approximate search (HNSW, through USearch) for spaces too large to scan on every
/// query. Kept up to date in place by writes, so a large space is indexed once per
/// process, not after every ingest.
///
/// The graph holds each distinct vector once, as a point naming its units: chat repeats
/// itself ("thanks!", a bot's template) and the embedding cache gives a repeated text the
/// same vector, so a large space has far fewer distinct vectors than units (the scale
/// bench's 1M space: 573k vectors, 39k distinct), and a graph of many identical elements
/// is slow to build and links poorly.
pub struct AnnVectorIndex {
    index: usearch::Index,
    keys: RwLock<AnnKeys>,
    dim: usize,
}

/// Graph keys are positions in `points`; a point whose units are all gone stays behind,
/// empty (keys are never reused).
#[derive(Default)]
struct AnnKeys {
    points: Vec<Point>,
    /// The point of each unit.
    by_id: HashMap<String, u64>,
    /// The point of each distinct vector, by [`fingerprint`].
    by_vector: HashMap<u128, u64>,
}

struct Point {
    fingerprint: u128,
    /// In the order they were added.
    units: Vec<String>,
}

/// Identifies a vector by its exact bits: two 64-bit SipHashes with different salts.
/// Identical texts get identical vectors through the embedding cache; a collision
/// between different vectors (below 2^-60 even among a billion) would merge two points.
fn fingerprint(v: &[f32]) -> u128 {
    use std::hash::{Hash, Hasher};
    let half = |salt: u8| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        salt.hash(&mut h);
        for x in v {
            x.to_bits().hash(&mut h);
        }
        h.finish()
    };
    (u128::from(half(0)) << 64) | u128::from(half(1))
}

impl AnnKeys {
    /// Names `id` as a unit of the point of `fingerprint`; returns the key of a new point
    /// the caller must add to the graph, if there was none.
    fn assign(&mut self, id: &str, fingerprint: u128) -> Option<u64> {
        let (key, new) = match self.by_vector.get(&fingerprint) {
            Some(&key) => (key, false),
            None => {
                let key = self.points.len() as u64;
                self.points.push(Point {
                    fingerprint,
                    units: Vec::new(),
                });
                self.by_vector.insert(fingerprint, key);
                (key, true)
            }
        };
        self.points[key as usize].units.push(id.to_string());
        self.by_id.insert(id.to_string(), key);
        new.then_some(key)
    }

    /// Removes `id` from its point; returns the point's key when it has no unit left
    /// (the caller removes it from the graph).
    fn unassign(&mut self, id: &str) -> Option<u64> {
        let key = self.by_id.remove(id)?;
        let point = &mut self.points[key as usize];
        point.units.retain(|u| u != id);
        if !point.units.is_empty() {
            return None;
        }
        self.by_vector.remove(&point.fingerprint);
        Some(key)
    }
}

/// Candidates the graph search keeps (HNSW `ef`); larger requests are answered exactly.
const ANN_EF_SEARCH: usize = 256;
/// Links per graph node (HNSW `M`) and the candidates kept while inserting. Chat history
/// holds many near-identical lines, which a graph built with USearch's default 128
/// links poorly: planted needles among a million units were found 94-97 times in 100
/// from one build to the next, 98 with 384 (for about three times the build time; a
/// larger `M` found as many but slowed every search).
const ANN_CONNECTIVITY: usize = 16;
const ANN_EF_CONSTRUCTION: usize = 384;

fn ann_err(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("vector index: {e}"))
}

impl AnnVectorIndex {
    /// Builds the graph over `exact`'s distinct rows on every core. Vectors are held as
    /// f16 in the graph: half the memory, and rank order (all fusion uses) barely moves.
    pub fn build(exact: ExactVectorIndex) -> Result<Self, StoreError> {
        let dim = exact.dim.max(1);
        let index = usearch::Index::new(&usearch::IndexOptions {
            dimensions: dim,
            metric: usearch::MetricKind::IP,
            quantization: usearch::ScalarKind::F16,
            connectivity: ANN_CONNECTIVITY,
            expansion_add: ANN_EF_CONSTRUCTION,
            expansion_search: ANN_EF_SEARCH,
            multi: false,
        })
        .map_err(ann_err)?;
        let mut keys = AnnKeys::default();
        let mut distinct: Vec<(u64, &[f32])> = Vec::new();
        for (id, row) in exact.ids.iter().zip(exact.data.chunks_exact(dim)) {
            if let Some(key) = keys.assign(id, fingerprint(row)) {
                distinct.push((key, row));
            }
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        index
            .reserve_capacity_and_threads(distinct.len().max(1), threads)
            .map_err(ann_err)?;
        let per = distinct.len().div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            let workers: Vec<_> = distinct
                .chunks(per)
                .map(|chunk| {
                    let index = &index;
                    scope.spawn(move || {
                        for (key, row) in chunk {
                            index.add(*key, row).map_err(ann_err)?;
                        }
                        Ok::<(), StoreError>(())
                    })
                })
                .collect();
            workers
                .into_iter()
                .try_for_each(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        })?;
        Ok(Self {
            index,
            keys: RwLock::new(keys),
            dim,
        })
    }

    fn keys(&self) -> std::sync::RwLockReadGuard<'_, AnnKeys> {
        self.keys.read().unwrap_or_else(|p| p.into_inner())
    }

    fn keys_mut(&self) -> std::sync::RwLockWriteGuard<'_, AnnKeys> {
        self.keys.write().unwrap_or_else(|p| p.into_inner())
    }

    pub fn len(&self) -> usize {
        self.keys().by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `limit` units nearest `query`: the nearest points, each expanded to its units
    /// (every point names at least one, so `limit` points are enough).
    pub fn search(&self, query: &[f32], limit: usize) -> Result<Vec<(String, f32)>, StoreError> {
        if query.len() != self.dim || limit == 0 {
            return Ok(Vec::new());
        }
        let keys = self.keys();
        let found = if limit > ANN_EF_SEARCH {
            self.index.exact_search(query, limit)
        } else {
            self.index.search(query, limit)
        }
        .map_err(ann_err)?;
        let mut out = Vec::with_capacity(limit);
        for (k, d) in found.keys.iter().zip(&found.distances) {
            let Some(point) = keys.points.get(*k as usize) else {
                continue;
            };
            for id in point.units.iter().take(limit - out.len()) {
                out.push((id.clone(), 1.0 - d));
            }
            if out.len() == limit {
                break;
            }
        }
        Ok(out)
    }

    /// Adds or replaces rows in place.
    pub fn upsert(&self, items: &[(String, Vec<f32>)]) -> Result<(), StoreError> {
        let mut keys = self.keys_mut();
        let needed = self.index.size() + items.len();
        if needed > self.index.capacity() {
            self.index
                .reserve(needed.max(self.index.capacity() * 3 / 2))
                .map_err(ann_err)?;
        }
        for (id, v) in items {
            if v.len() != self.dim {
                continue;
            }
            self.drop_row(&mut keys, id)?;
            if let Some(key) = keys.assign(id, fingerprint(v)) {
                self.index.add(key, v).map_err(ann_err)?;
            }
        }
        Ok(())
    }

    pub fn remove(&self, unit_ids: &[String]) -> Result<(), StoreError> {
        let mut keys = self.keys_mut();
        for id in unit_ids {
            self.drop_row(&mut keys, id)?;
        }
        Ok(())
    }

    /// Removes `id` from its point, and the point from the graph when it was its last
    /// unit.
    fn drop_row(&self, keys: &mut AnnKeys, id: &str) -> Result<(), StoreError> {
        if let Some(empty) = keys.unassign(id) {
            self.index.remove(empty).map_err(ann_err)?;
        }
        Ok(())
    }
}

/// One space's vectors in memory: scanned exactly while small, through HNSW once large.
pub enum SpaceVectors {
    Exact(ExactVectorIndex),
    Ann(Box<AnnVectorIndex>),
}

/// Spaces with more vectors than this are searched through HNSW. Exact search over
/// 384-dimensional vectors scans ~50k rows in a few milliseconds on one core.
pub const ANN_THRESHOLD: usize = 50_000;

impl SpaceVectors {
    pub fn new(exact: ExactVectorIndex, ann_threshold: usize) -> Result<Self, StoreError> {
        Ok(if exact.len() > ann_threshold {
            SpaceVectors::Ann(Box::new(AnnVectorIndex::build(exact)?))
        } else {
            SpaceVectors::Exact(exact)
        })
    }

    pub fn len(&self) -> usize {
        match self {
            SpaceVectors::Exact(e) => e.len(),
            SpaceVectors::Ann(a) => a.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn search(&self, query: &[f32], limit: usize) -> Result<Vec<(String, f32)>, StoreError> {
        match self {
            SpaceVectors::Exact(e) => Ok(e.search(query, limit)),
            SpaceVectors::Ann(a) => a.search(query, limit),
        }
    }
}

/// Unit vectors persisted in the records database, searched in memory. A space's vectors
/// are loaded on first search and dropped from memory when the space changes.
pub struct SqliteVectorIndex {
    db: Shared,
    loaded: Mutex<HashMap<SpaceId, Arc<SpaceVectors>>>,
    ann_threshold: usize,
    /// Moves on every write, so a space loaded while a write landed is not kept stale.
    generation: AtomicU64,
}

impl SqliteVectorIndex {
    /// Vectors of another model than `model` are discarded (they are derived state and
    /// will be recomputed from the units).
    pub(crate) fn new(db: Shared, model: &str) -> Result<Self, StoreError> {
        {
            let conn = db.lock();
            be(conn.execute_batch(SCHEMA))?;
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
            }
        }
        Ok(Self {
            db,
            loaded: Mutex::new(HashMap::new()),
            ann_threshold: ANN_THRESHOLD,
            generation: AtomicU64::new(0),
        })
    }

    /// Sets the size above which a space is searched through HNSW instead of exactly.
    pub fn with_ann_threshold(mut self, n: usize) -> Self {
        self.ann_threshold = n;
        self
    }

    fn forget_loaded(&self, space: &SpaceId) {
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        self.generation.fetch_add(1, AtomicOrdering::SeqCst);
        loaded.remove(space);
    }

    /// After a write to `space` committed: a loaded HNSW index takes it in place (indexing
    /// a large space again would take minutes); anything else is dropped and reloaded on
    /// the next search.
    fn refresh_loaded(
        &self,
        space: &SpaceId,
        apply: impl FnOnce(&AnnVectorIndex) -> Result<(), StoreError>,
    ) {
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        self.generation.fetch_add(1, AtomicOrdering::SeqCst);
        let kept = match loaded.get(space).map(|v| v.as_ref()) {
            Some(SpaceVectors::Ann(a)) => match apply(a) {
                Ok(()) => true,
                Err(e) => {
                    tracing::warn!(%space, error = %e, "vector index update failed: reloading");
                    false
                }
            },
            _ => false,
        };
        if !kept {
            loaded.remove(space);
        }
    }

    fn space_index(&self, space: &SpaceId) -> Result<Arc<SpaceVectors>, StoreError> {
        if let Some(ix) = self
            .loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(space)
        {
            return Ok(ix.clone());
        }
        let generation = self.generation.load(AtomicOrdering::SeqCst);
        let exact = {
            let conn = self.db.lock();
            let count: i64 = be(conn.query_row(
                "SELECT COUNT(*) FROM vectors WHERE space=?1",
                [space.as_str()],
                |r| r.get(0),
            ))?;
            let mut b = ExactBuilder::with_capacity(count.max(0) as usize);
            let mut stmt =
                be(conn
                    .prepare("SELECT unit_id, vec FROM vectors WHERE space=?1 ORDER BY unit_id"))?;
            let mut rows = be(stmt.query([space.as_str()]))?;
            while let Some(r) = be(rows.next())? {
                let id: String = be(r.get(0))?;
                let bytes = be(r.get_ref(1).and_then(|v| {
                    v.as_blob().map_err(|e| {
                        rusqlite::Error::FromSqlConversionFailure(1, Type::Blob, Box::new(e))
                    })
                }))?;
                b.push(id, &decode(bytes));
            }
            b.finish()
        };
        let ix = Arc::new(SpaceVectors::new(exact, self.ann_threshold)?);
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if self.generation.load(AtomicOrdering::SeqCst) == generation {
            loaded.insert(space.clone(), ix.clone());
        }
        Ok(ix)
    }
}

fn write_vectors(
    conn: &mut rusqlite::Connection,
    space: &SpaceId,
    items: &[(String, Vec<f32>)],
    watermark: u64,
) -> Result<(), StoreError> {
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
    be(tx.commit())
}

impl VectorIndex for SqliteVectorIndex {
    fn upsert(
        &self,
        space: &SpaceId,
        items: &[(String, Vec<f32>)],
        watermark: u64,
    ) -> Result<(), StoreError> {
        {
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
            written?;
        }
        self.refresh_loaded(space, |a| a.upsert(items));
        Ok(())
    }

    fn remove(&self, space: &SpaceId, unit_ids: &[String]) -> Result<(), StoreError> {
        {
            let mut conn = self.db.lock();
            let tx = be(conn.transaction())?;
            {
                let mut stmt =
                    be(tx.prepare_cached("DELETE FROM vectors WHERE space=?1 AND unit_id=?2"))?;
                for id in unit_ids {
                    be(stmt.execute(params![space.as_str(), id]))?;
                }
            }
            be(tx.commit())?;
        }
        self.refresh_loaded(space, |a| a.remove(unit_ids));
        Ok(())
    }

    fn drop_space(&self, space: &SpaceId) -> Result<(), StoreError> {
        be(self
            .db
            .lock()
            .execute("DELETE FROM vectors WHERE space=?1", [space.as_str()]))?;
        self.forget_loaded(space);
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
        let conn = self.db.lock();
        let mut stmt =
            be(conn.prepare_cached("SELECT vec FROM vectors WHERE space=?1 AND unit_id=?2"))?;
        let mut out = Vec::with_capacity(unit_ids.len());
        for id in unit_ids {
            let v: Option<Vec<u8>> = be(stmt
                .query_row(params![space.as_str(), id], |r| r.get(0))
                .optional())?;
            if let Some(bytes) = v {
                let v = decode(&bytes);
                if v.len() == query.len() {
                    out.push((id.clone(), dot(query, &v)));
                }
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
    fn ann_finds_what_exact_search_finds() {
        // Deterministic pseudo-random unit vectors.
        let mut x: u64 = 42;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2000) as f32 / 1000.0 - 1.0
        };
        let dim = 32;
        let mut unit = |_: usize| {
            let v: Vec<f32> = (0..dim).map(|_| next()).collect();
            let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
            v.into_iter().map(|a| a / n).collect::<Vec<f32>>()
        };
        let items: Vec<(String, Vec<f32>)> =
            (0..3000).map(|i| (format!("u{i}"), unit(i))).collect();
        let queries: Vec<Vec<f32>> = (0..50).map(&mut unit).collect();
        let exact = ExactVectorIndex::from_items(items.clone());
        let ann = SpaceVectors::new(ExactVectorIndex::from_items(items), 1000).unwrap();
        assert!(matches!(ann, SpaceVectors::Ann(_)));
        let mut found = 0;
        for q in &queries {
            let truth: Vec<String> = exact.search(q, 10).into_iter().map(|h| h.0).collect();
            let got: Vec<String> = ann
                .search(q, 10)
                .unwrap()
                .into_iter()
                .map(|h| h.0)
                .collect();
            found += truth.iter().filter(|t| got.contains(t)).count();
        }
        let recall = found as f64 / 500.0;
        assert!(recall >= 0.9, "ANN recall@10 {recall}");
    }

    #[test]
    fn ann_takes_writes_in_place() {
        let dim = 16;
        let unit = |i: usize| {
            let v: Vec<f32> = (0..dim)
                .map(|d| (((i * 31 + d * 17) % 23) as f32) - 11.0)
                .collect();
            let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
            v.into_iter().map(|a| a / n).collect::<Vec<f32>>()
        };
        let items: Vec<(String, Vec<f32>)> = (0..500).map(|i| (format!("u{i}"), unit(i))).collect();
        let SpaceVectors::Ann(ann) =
            SpaceVectors::new(ExactVectorIndex::from_items(items), 100).unwrap()
        else {
            panic!("500 rows over a threshold of 100 must be searched through HNSW");
        };
        let mut probe = vec![0.0; dim];
        probe[0] = 1.0;
        ann.upsert(&[("new".into(), probe.clone())]).unwrap();
        assert_eq!(ann.len(), 501);
        assert_eq!(ann.search(&probe, 3).unwrap()[0].0, "new");
        // Replacing a row moves its id to the new vector and keeps one entry for it.
        ann.upsert(&[("u7".into(), probe.clone())]).unwrap();
        assert_eq!(ann.len(), 501);
        let top: Vec<String> = ann
            .search(&probe, 2)
            .unwrap()
            .into_iter()
            .map(|h| h.0)
            .collect();
        assert!(
            top.contains(&"u7".to_string()) && top.contains(&"new".to_string()),
            "{top:?}"
        );
        ann.remove(&["new".into(), "u7".into()]).unwrap();
        assert_eq!(ann.len(), 499);
        let after: Vec<String> = ann
            .search(&probe, 10)
            .unwrap()
            .into_iter()
            .map(|h| h.0)
            .collect();
        assert!(
            !after.iter().any(|id| id == "new" || id == "u7"),
            "{after:?}"
        );
        // Requests beyond the graph's reach are answered exactly, without removed rows.
        assert_eq!(ann.search(&probe, 1000).unwrap().len(), 499);
    }

    #[test]
    fn ann_holds_a_repeated_vector_once_and_finds_every_unit_of_it() {
        let dim = 16;
        let unit = |i: usize| {
            let v: Vec<f32> = (0..dim)
                .map(|d| ((i + 1) as f32 * (d + 1) as f32 * 0.37).sin())
                .collect();
            let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
            v.into_iter().map(|a| a / n).collect::<Vec<f32>>()
        };
        // 300 units over 100 distinct vectors, each vector three times.
        let items: Vec<(String, Vec<f32>)> = (0..300)
            .map(|i| (format!("u{i:03}"), unit(i % 100)))
            .collect();
        let SpaceVectors::Ann(ann) =
            SpaceVectors::new(ExactVectorIndex::from_items(items), 50).unwrap()
        else {
            panic!("300 rows over a threshold of 50 must be searched through HNSW");
        };
        assert_eq!(ann.len(), 300);
        assert_eq!(
            ann.index.size(),
            100,
            "one graph element per distinct vector"
        );
        let copies = |hits: Vec<(String, f32)>| -> Vec<String> {
            let mut ids: Vec<String> = hits.into_iter().map(|h| h.0).collect();
            ids.sort();
            ids
        };
        assert_eq!(
            copies(ann.search(&unit(7), 3).unwrap()),
            ["u007", "u107", "u207"]
        );
        assert_eq!(
            ann.search(&unit(7), 2).unwrap().len(),
            2,
            "limit counts units"
        );
        // A new unit with a known vector joins its point; removing units keeps the rest.
        ann.upsert(&[("new".into(), unit(7))]).unwrap();
        assert_eq!(ann.index.size(), 100);
        assert_eq!(ann.len(), 301);
        ann.remove(&["u007".into(), "u107".into()]).unwrap();
        assert_eq!(copies(ann.search(&unit(7), 2).unwrap()), ["new", "u207"]);
        // The last units of a point take it out of the graph.
        ann.remove(&["new".into(), "u207".into()]).unwrap();
        assert_eq!(ann.index.size(), 99);
        let after = copies(ann.search(&unit(7), 10).unwrap());
        assert!(!after.iter().any(|id| id.ends_with("07")), "{after:?}");
        // Replacing a unit's vector moves it to the new vector's point.
        ann.upsert(&[("u008".into(), unit(9))]).unwrap();
        assert_eq!(ann.index.size(), 99);
        assert_eq!(
            copies(ann.search(&unit(9), 4).unwrap()),
            ["u008", "u009", "u109", "u209"]
        );
    }

    #[test]
    fn codec_round_trips() {
        let v = vec![0.25, -1.5, 3.0e-7];
        assert_eq!(decode(&encode(&v)), v);
    }
}
