//! Approximate vector search (HNSW through USearch) of one large space, built from rows
//! streamed out of SQLite, updated in place by writes, and saved to / loaded from the data
//! directory (`graph_file.rs`).
use crate::exact::ExactVectorIndex;
use crate::graph_file::{self, GraphFiles, KeysHeader, LoadError, Stamp};
use cairn_core::StoreError;
use std::collections::HashMap;
use std::sync::RwLock;

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
/// empty (keys are never reused). Each unit id is held once, in its point: the maps key
/// units and vectors by hashes, which at a million units saves about 100 MB against
/// keying them by copies of the ids.
struct AnnKeys {
    points: Vec<Point>,
    /// [`id_hash`] (tests make every id collide).
    hash: fn(&str) -> u64,
    /// The point of each unit, by [`id_hash`]; [`AnnKeys::point_of`] checks that the
    /// point names the id.
    by_id: HashMap<u64, u64>,
    /// Units whose id hash another id in `by_id` already has (practically none).
    collided: HashMap<Box<str>, u64>,
    /// The point of each distinct vector, by [`fingerprint`] (as two halves: a `u128`
    /// key would pad every entry to 32 bytes).
    by_vector: HashMap<[u64; 2], u64>,
    units: usize,
}

impl Default for AnnKeys {
    fn default() -> Self {
        Self {
            points: Vec::new(),
            hash: id_hash,
            by_id: HashMap::new(),
            collided: HashMap::new(),
            by_vector: HashMap::new(),
            units: 0,
        }
    }
}

struct Point {
    fingerprint: [u64; 2],
    /// In the order they were added.
    units: Box<[Box<str>]>,
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

fn halves(fingerprint: u128) -> [u64; 2] {
    [(fingerprint >> 64) as u64, fingerprint as u64]
}

fn whole([hi, lo]: [u64; 2]) -> u128 {
    (u128::from(hi) << 64) | u128::from(lo)
}

fn id_hash(id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

impl AnnKeys {
    fn point_of(&self, id: &str) -> Option<u64> {
        if let Some(&key) = self.collided.get(id) {
            return Some(key);
        }
        let &key = self.by_id.get(&(self.hash)(id))?;
        self.points[key as usize]
            .units
            .iter()
            .any(|u| &**u == id)
            .then_some(key)
    }

    /// Names `id` (not yet assigned) as a unit of the point of `fingerprint`; returns the
    /// key of a new point the caller must add to the graph, if there was none.
    fn assign(&mut self, id: &str, fingerprint: u128) -> Option<u64> {
        let fingerprint = halves(fingerprint);
        let (key, new) = match self.by_vector.get(&fingerprint) {
            Some(&key) => (key, false),
            None => {
                let key = self.points.len() as u64;
                self.points.push(Point {
                    fingerprint,
                    units: Box::default(),
                });
                self.by_vector.insert(fingerprint, key);
                (key, true)
            }
        };
        self.name(key, id.into());
        new.then_some(key)
    }

    /// Adds `id` to the point `key` and to the unit map.
    fn name(&mut self, key: u64, id: Box<str>) {
        match self.by_id.entry((self.hash)(&id)) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(key);
            }
            std::collections::hash_map::Entry::Occupied(_) => {
                self.collided.insert(id.clone(), key);
            }
        }
        let point = &mut self.points[key as usize];
        let mut units = std::mem::take(&mut point.units).into_vec();
        units.push(id);
        point.units = units.into_boxed_slice();
        self.units += 1;
    }

    /// Removes `id` from its point; returns the point's key when it has no unit left
    /// (the caller removes it from the graph).
    fn unassign(&mut self, id: &str) -> Option<u64> {
        let key = match self.collided.remove(id) {
            Some(key) => key,
            None => {
                let key = self.point_of(id)?;
                self.by_id.remove(&(self.hash)(id));
                key
            }
        };
        let point = &mut self.points[key as usize];
        let mut units = std::mem::take(&mut point.units).into_vec();
        units.retain(|u| &**u != id);
        point.units = units.into_boxed_slice();
        self.units -= 1;
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

fn new_index(dim: usize) -> Result<usearch::Index, StoreError> {
    usearch::Index::new(&usearch::IndexOptions {
        dimensions: dim,
        metric: usearch::MetricKind::IP,
        quantization: usearch::ScalarKind::F16,
        connectivity: ANN_CONNECTIVITY,
        expansion_add: ANN_EF_CONSTRUCTION,
        expansion_search: ANN_EF_SEARCH,
        multi: false,
    })
    .map_err(ann_err)
}

/// Rows added between two parallel insertion rounds of [`AnnBuilder`]: 8192 rows of 384
/// f32 are 12 MiB, all a build holds besides the graph itself.
const BUILD_CHUNK: usize = 8192;

/// Builds a graph from rows pushed one at a time (streamed from SQLite), so a build never
/// holds the space's vectors twice: each distinct row waits in a small chunk until the
/// chunk is inserted, on every core, into the graph (which keeps it as f16). Rows of
/// another dimension than the first are skipped.
pub struct AnnBuilder {
    index: Option<usearch::Index>,
    keys: AnnKeys,
    dim: usize,
    capacity: usize,
    threads: usize,
    chunk_keys: Vec<u64>,
    chunk: Vec<f32>,
}

impl AnnBuilder {
    /// `rows`: how many rows will be pushed at most (the graph reserves that many points).
    pub fn with_capacity(rows: usize) -> Self {
        Self {
            index: None,
            keys: AnnKeys::default(),
            dim: 0,
            capacity: rows.max(1),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            chunk_keys: Vec::new(),
            chunk: Vec::new(),
        }
    }

    pub fn push(&mut self, id: &str, v: &[f32]) -> Result<(), StoreError> {
        if self.index.is_none() {
            self.dim = v.len().max(1);
            let index = new_index(self.dim)?;
            index
                .reserve_capacity_and_threads(self.capacity, self.threads)
                .map_err(ann_err)?;
            self.index = Some(index);
            self.chunk.reserve_exact(BUILD_CHUNK * self.dim);
        }
        if v.len() != self.dim {
            return Ok(());
        }
        if let Some(key) = self.keys.assign(id, fingerprint(v)) {
            self.chunk_keys.push(key);
            self.chunk.extend_from_slice(v);
            if self.chunk_keys.len() == BUILD_CHUNK {
                self.insert_chunk()?;
            }
        }
        Ok(())
    }

    /// Inserts the waiting rows into the graph, split over every core.
    fn insert_chunk(&mut self) -> Result<(), StoreError> {
        let (Some(index), dim) = (&self.index, self.dim) else {
            return Ok(());
        };
        let per = self.chunk_keys.len().div_ceil(self.threads).max(1);
        std::thread::scope(|scope| {
            let workers: Vec<_> = self
                .chunk_keys
                .chunks(per)
                .zip(self.chunk.chunks(per * dim))
                .map(|(keys, rows)| {
                    scope.spawn(move || {
                        for (key, row) in keys.iter().zip(rows.chunks_exact(dim)) {
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
        self.chunk_keys.clear();
        self.chunk.clear();
        Ok(())
    }

    pub fn finish(mut self) -> Result<AnnVectorIndex, StoreError> {
        self.insert_chunk()?;
        let index = match self.index.take() {
            Some(index) => index,
            None => new_index(1)?,
        };
        Ok(AnnVectorIndex {
            index,
            keys: RwLock::new(self.keys),
            dim: self.dim.max(1),
        })
    }
}

impl AnnVectorIndex {
    /// Builds the graph over `exact`'s distinct rows on every core (see [`AnnBuilder`]).
    pub fn build(exact: ExactVectorIndex) -> Result<Self, StoreError> {
        let mut b = AnnBuilder::with_capacity(exact.len());
        for (id, row) in exact
            .ids
            .iter()
            .zip(exact.data.chunks_exact(exact.dim.max(1)))
        {
            b.push(id, row)?;
        }
        b.finish()
    }

    fn keys(&self) -> std::sync::RwLockReadGuard<'_, AnnKeys> {
        self.keys.read().unwrap_or_else(|p| p.into_inner())
    }

    fn keys_mut(&self) -> std::sync::RwLockWriteGuard<'_, AnnKeys> {
        self.keys.write().unwrap_or_else(|p| p.into_inner())
    }

    pub fn len(&self) -> usize {
        self.keys().units
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
                out.push((id.to_string(), 1.0 - d));
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

impl AnnVectorIndex {
    /// Saves the graph and its keys as the state of `stamp` (the caller guarantees no
    /// write lands meanwhile). Searches may run during the save; writes wait for it.
    pub(crate) fn save(&self, files: &GraphFiles, stamp: &Stamp) -> Result<(), StoreError> {
        let keys = self.keys();
        if let Some(dir) = files.graph.parent() {
            std::fs::create_dir_all(dir).map_err(|e| crate::io_err(dir, e))?;
        }
        let graph_tmp = graph_file::tmp(&files.graph);
        let path = graph_tmp.to_str().ok_or_else(|| {
            StoreError::Backend(format!("{}: not a UTF-8 path", graph_tmp.display()))
        })?;
        self.index.save(path).map_err(ann_err)?;
        let (graph_len, graph_crc) =
            graph_file::file_crc(&graph_tmp).map_err(|e| crate::io_err(&graph_tmp, e))?;
        std::fs::rename(&graph_tmp, &files.graph).map_err(|e| crate::io_err(&files.graph, e))?;
        let header = KeysHeader {
            stamp: stamp.clone(),
            dim: self.dim as u32,
            graph_len,
            graph_crc,
        };
        let points = keys
            .points
            .iter()
            .map(|p| (whole(p.fingerprint), &*p.units));
        graph_file::write_keys(&files.keys, &header, points)
    }

    /// Loads a saved graph if it was saved for exactly `expect`'s rows and every check
    /// passes (keys checksum, graph length and checksum, dimensions, point count).
    pub(crate) fn load(files: &GraphFiles, expect: &Stamp) -> Result<Self, LoadError> {
        let (header, saved) = graph_file::read_keys(&files.keys, expect)?;
        let (len, crc) = graph_file::file_crc(&files.graph)
            .map_err(|e| LoadError::Corrupt(format!("graph file: {e}")))?;
        if (len, crc) != (header.graph_len, header.graph_crc) {
            return Err(LoadError::Corrupt(format!(
                "graph file is {len} bytes with CRC {crc:08x}, the keys name {} bytes with {:08x}",
                header.graph_len, header.graph_crc
            )));
        }
        let dim = header.dim as usize;
        let index = new_index(dim).map_err(|e| LoadError::Corrupt(e.to_string()))?;
        let path = files
            .graph
            .to_str()
            .ok_or_else(|| LoadError::Corrupt("not a UTF-8 path".into()))?;
        index
            .load(path)
            .map_err(|e| LoadError::Corrupt(format!("graph file: {e}")))?;
        index.change_expansion_add(ANN_EF_CONSTRUCTION);
        index.change_expansion_search(ANN_EF_SEARCH);
        let mut keys = AnnKeys::default();
        keys.points.reserve_exact(saved.len());
        for (key, p) in saved.into_iter().enumerate() {
            let fingerprint = halves(p.fingerprint);
            keys.points.push(Point {
                fingerprint,
                units: Box::default(),
            });
            if !p.units.is_empty() {
                keys.by_vector.insert(fingerprint, key as u64);
            }
            for u in p.units {
                keys.name(key as u64, u);
            }
        }
        let live = keys.by_vector.len();
        if index.dimensions() != dim || index.size() != live {
            return Err(LoadError::Corrupt(format!(
                "graph of {} points of dimension {}, the keys name {live} of {dim}",
                index.size(),
                index.dimensions()
            )));
        }
        Ok(Self {
            index,
            keys: RwLock::new(keys),
            dim,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors::SpaceVectors;

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
    fn units_whose_id_hashes_collide_stay_apart() {
        let mut keys = AnnKeys {
            hash: |_| 7,
            ..AnnKeys::default()
        };
        assert_eq!(keys.assign("a", 1), Some(0));
        assert_eq!(keys.assign("b", 2), Some(1));
        assert_eq!(keys.assign("c", 1), None, "c joins a's vector");
        assert_eq!(
            ["a", "b", "c", "d"].map(|id| keys.point_of(id)),
            [Some(0), Some(1), Some(0), None]
        );
        assert_eq!(keys.unassign("d"), None);
        assert_eq!(keys.unassign("a"), None, "c still names point 0");
        assert_eq!(keys.point_of("a"), None);
        assert_eq!(keys.point_of("c"), Some(0));
        assert_eq!(keys.assign("e", 3), Some(2));
        assert_eq!(keys.point_of("e"), Some(2));
        assert_eq!(keys.unassign("c"), Some(0), "its last unit gone");
        assert_eq!(keys.unassign("b"), Some(1));
        assert_eq!((keys.units, keys.point_of("e")), (1, Some(2)));
    }
}
