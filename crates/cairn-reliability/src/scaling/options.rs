//! What a scaling run is asked for: the sizes of each dimension, the repetitions of each
//! measurement, the dimensions, the seed.
#[derive(Debug, Clone)]
pub struct ScalingOptions {
    /// N at the first size of each dimension (filter conditions start at `base / 16`,
    /// capped by the filter language's 256 conditions).
    pub base: usize,
    /// Doublings after the first size.
    pub doublings: usize,
    /// Cold measurements per probe and size; their median counts. Five by default: at
    /// three, a row moved by 0.2-0.4x between runs of the same binary (docs/reliability.md).
    pub reps: usize,
    /// Only the dimensions named (all when empty).
    pub only: Vec<String>,
    pub seed: u64,
}

impl Default for ScalingOptions {
    fn default() -> Self {
        Self {
            base: 250,
            doublings: 3,
            reps: 5,
            only: Vec::new(),
            seed: 1,
        }
    }
}
