use crate::sqlite::{be, Shared};
use cairn_core::{SpaceId, StoreError, VectorIndex};
use rusqlite::{params, types::Type, OptionalExtension};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, Mutex};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS vectors(
    space TEXT NOT NULL REFERENCES spaces(name) ON DELETE CASCADE,
    unit_id TEXT NOT NULL,
    vec BLOB NOT NULL,
    PRIMARY KEY(space, unit_id));
INSERT OR IGNORE INTO meta(key, value) VALUES ('vector_watermark', '0'), ('vector_model', '');
";

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
    /// Shared with the HNSW graph built over it, so a large space holds one copy.
    data: Arc<Vec<f32>>,
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
            let s: f32 = row.iter().zip(query).map(|(a, b)| a * b).sum();
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
            data: Arc::new(self.data),
            dim: self.dim,
        }
    }
}

/// A point of the HNSW graph: a row of a shared contiguous matrix, so the graph holds no
/// copy of the vectors.
#[derive(Clone)]
struct Row {
    data: Arc<Vec<f32>>,
    start: usize,
    dim: usize,
}

impl instant_distance::Point for Row {
    fn distance(&self, other: &Self) -> f32 {
        let a = &self.data[self.start..self.start + self.dim];
        let b = &other.data[other.start..other.start + other.dim];
        1.0 - a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>()
    }
}

/// Approximate search (HNSW) for spaces too large to scan on every query.
pub struct AnnVectorIndex {
    map: instant_distance::HnswMap<Row, usize>,
    exact: ExactVectorIndex,
}

/// Results an ANN search can return; larger requests fall back to an exact scan.
const ANN_EF_SEARCH: usize = 256;

impl AnnVectorIndex {
    pub fn build(exact: ExactVectorIndex) -> Self {
        let data = exact.data.clone();
        let dim = exact.dim.max(1);
        let points: Vec<Row> = (0..exact.len())
            .map(|i| Row {
                data: data.clone(),
                start: i * dim,
                dim,
            })
            .collect();
        let values: Vec<usize> = (0..exact.len()).collect();
        let map = instant_distance::Builder::default()
            .ef_search(ANN_EF_SEARCH)
            .seed(7)
            .build(points, values);
        Self { map, exact }
    }

    pub fn search(&self, query: &[f32], limit: usize) -> Vec<(String, f32)> {
        if limit > ANN_EF_SEARCH || query.len() != self.exact.dim {
            return self.exact.search(query, limit);
        }
        let q = Row {
            data: Arc::new(query.to_vec()),
            start: 0,
            dim: query.len(),
        };
        let mut search = instant_distance::Search::default();
        self.map
            .search(&q, &mut search)
            .take(limit)
            .map(|item| (self.exact.ids[*item.value].clone(), 1.0 - item.distance))
            .collect()
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
    pub fn new(exact: ExactVectorIndex, ann_threshold: usize) -> Self {
        if exact.len() > ann_threshold {
            SpaceVectors::Ann(Box::new(AnnVectorIndex::build(exact)))
        } else {
            SpaceVectors::Exact(exact)
        }
    }

    pub fn len(&self) -> usize {
        match self {
            SpaceVectors::Exact(e) => e.len(),
            SpaceVectors::Ann(a) => a.exact.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn search(&self, query: &[f32], limit: usize) -> Vec<(String, f32)> {
        match self {
            SpaceVectors::Exact(e) => e.search(query, limit),
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
        })
    }

    /// Sets the size above which a space is searched through HNSW instead of exactly.
    pub fn with_ann_threshold(mut self, n: usize) -> Self {
        self.ann_threshold = n;
        self
    }

    fn forget_loaded(&self, space: &SpaceId) {
        self.loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(space);
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
        let ix = Arc::new(SpaceVectors::new(exact, self.ann_threshold));
        self.loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(space.clone(), ix.clone());
        Ok(ix)
    }
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
            be(tx.commit())?;
        }
        self.forget_loaded(space);
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
        self.forget_loaded(space);
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
        Ok(self.space_index(space)?.search(query, limit))
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
        let ann = SpaceVectors::new(ExactVectorIndex::from_items(items), 1000);
        assert!(matches!(ann, SpaceVectors::Ann(_)));
        let mut found = 0;
        for q in &queries {
            let truth: Vec<String> = exact.search(q, 10).into_iter().map(|h| h.0).collect();
            let got: Vec<String> = ann.search(q, 10).into_iter().map(|h| h.0).collect();
            found += truth.iter().filter(|t| got.contains(t)).count();
        }
        let recall = found as f64 / 500.0;
        assert!(recall >= 0.9, "ANN recall@10 {recall}");
    }

    #[test]
    fn codec_round_trips() {
        let v = vec![0.25, -1.5, 3.0e-7];
        assert_eq!(decode(&encode(&v)), v);
    }
}
