//! Exact (brute-force) vector search over one space's rows, and the little-endian `f32`
//! encoding every stored vector uses. The HNSW index (`ann.rs`) keeps an exact index
//! beside its graph; the vector store (`vectors.rs`) chooses between the two.
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// Cosine similarity of unit-length vectors.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub(crate) fn encode(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn decode(b: &[u8]) -> Vec<f32> {
    decode_iter(b).collect()
}

pub(crate) fn decode_iter(b: &[u8]) -> impl Iterator<Item = f32> + '_ {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// Exact (brute-force) search over one space's vectors, kept contiguous so scoring is a
/// tight loop over `f32` slices that the compiler vectorizes. A write changes it in
/// place ([`ExactVectorIndex::upsert`], [`ExactVectorIndex::remove`]): its rows are in no
/// order a search depends on (equal scores are ordered by unit id), so a row written is
/// added last and a row removed is replaced by the last.
#[derive(Default)]
pub struct ExactVectorIndex {
    pub(crate) ids: Vec<String>,
    pub(crate) data: Vec<f32>,
    pub(crate) dim: usize,
    /// The row of each id, made on the first write (a read-only index never needs it).
    rows: Option<HashMap<String, usize>>,
}

/// A row's score and id, ordered best first: higher score, then smaller id.
#[derive(PartialEq)]
struct Scored<'a>(f32, &'a str);
impl Eq for Scored<'_> {}
impl PartialOrd for Scored<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(other.1))
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
        // The heap's top is the worst kept row (`Scored` orders best first).
        let mut heap: BinaryHeap<Scored<'_>> = BinaryHeap::with_capacity(limit + 1);
        for (id, row) in self.ids.iter().zip(self.data.chunks_exact(self.dim)) {
            let scored = Scored(dot(row, query), id);
            if heap.len() < limit {
                heap.push(scored);
            } else if heap.peek().is_some_and(|worst| scored < *worst) {
                heap.pop();
                heap.push(scored);
            }
        }
        heap.into_sorted_vec()
            .into_iter()
            .map(|Scored(s, id)| (id.to_string(), s))
            .collect()
    }

    /// Takes a write in place: each item's row replaced, or added last; an item of
    /// another dimension than the index's is skipped (as loading skips it).
    pub fn upsert(&mut self, items: &[(String, Vec<f32>)]) {
        for (id, v) in items {
            if self.ids.is_empty() && self.dim == 0 {
                self.dim = v.len();
            }
            if v.len() != self.dim {
                continue;
            }
            let dim = self.dim;
            match self.rows().get(id).copied() {
                Some(r) => self.data[r * dim..(r + 1) * dim].copy_from_slice(v),
                None => {
                    let r = self.ids.len();
                    self.ids.push(id.clone());
                    self.data.extend_from_slice(v);
                    self.rows().insert(id.clone(), r);
                }
            }
        }
    }

    /// Removes the rows of `ids` (an id not held is skipped): each replaced by the last.
    pub fn remove(&mut self, ids: &[String]) {
        for id in ids {
            let Some(r) = self.rows().remove(id) else {
                continue;
            };
            let (dim, last) = (self.dim, self.ids.len() - 1);
            if r != last {
                self.data.copy_within(last * dim..(last + 1) * dim, r * dim);
                self.ids.swap(r, last);
                let moved = self.ids[r].clone();
                self.rows().insert(moved, r);
            }
            self.ids.pop();
            self.data.truncate(last * dim);
        }
    }

    fn rows(&mut self) -> &mut HashMap<String, usize> {
        let ids = &self.ids;
        self.rows.get_or_insert_with(|| {
            ids.iter()
                .enumerate()
                .map(|(r, id)| (id.clone(), r))
                .collect()
        })
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
            rows: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic unit vector of `dim` for a seed (a few seeds repeat, so equal
    /// scores occur and their order by id is exercised).
    fn vector(seed: u64, dim: usize) -> Vec<f32> {
        let mut x = seed % 7 + 1;
        let v: Vec<f32> = (0..dim)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 40) as f32 / (1u64 << 24) as f32) - 0.5
            })
            .collect();
        let n = dot(&v, &v).sqrt();
        v.into_iter().map(|y| y / n).collect()
    }

    #[test]
    fn writes_in_place_search_as_an_index_loaded_from_the_result() {
        let dim = 8;
        let mut live: std::collections::BTreeMap<String, Vec<f32>> = Default::default();
        let mut index = ExactVectorIndex::default();
        let mut x = 11u64;
        for step in 0..400u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let id = format!("u{}", (x >> 33) % 60);
            if (x >> 20).is_multiple_of(3) {
                index.remove(std::slice::from_ref(&id));
                live.remove(&id);
            } else {
                let v = vector(step, dim);
                index.upsert(&[(id.clone(), v.clone())]);
                live.insert(id, v);
            }
            if step % 40 == 0 {
                let loaded = ExactVectorIndex::from_items(
                    live.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                );
                assert_eq!(index.len(), loaded.len(), "rows after step {step}");
                for q in 0..5 {
                    let q = vector(q, dim);
                    assert_eq!(index.search(&q, 10), loaded.search(&q, 10), "step {step}");
                }
            }
        }
        // An id written twice holds one row, with the later vector.
        let v = vector(3, dim);
        index.upsert(&[
            ("again".into(), vector(1, dim)),
            ("again".into(), v.clone()),
        ]);
        let top = index.search(&v, 1);
        assert_eq!(top[0].0, "again");
        assert!((top[0].1 - 1.0).abs() < 1e-5);
    }
}
