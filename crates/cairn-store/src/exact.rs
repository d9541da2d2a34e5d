//! Exact (brute-force) vector search over one space's rows, and the little-endian `f32`
//! encoding every stored vector uses. The HNSW index (`ann.rs`) keeps an exact index
//! beside its graph; the vector store (`vectors.rs`) chooses between the two.
use std::cmp::Ordering;
use std::collections::BinaryHeap;

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
/// tight loop over `f32` slices that the compiler vectorizes.
#[derive(Default)]
pub struct ExactVectorIndex {
    pub(crate) ids: Vec<String>,
    pub(crate) data: Vec<f32>,
    pub(crate) dim: usize,
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
