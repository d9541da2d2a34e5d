//! Deterministic word salad for the text index's tests: a failure reruns the same corpus.

/// A small deterministic generator (xorshift) over a vocabulary.
pub struct Words {
    state: u64,
    vocabulary: &'static [&'static str],
}

impl Words {
    /// `seed` must not be 0 (xorshift stays at 0).
    pub fn new(seed: u64, vocabulary: &'static [&'static str]) -> Self {
        Self {
            state: seed.max(1),
            vocabulary,
        }
    }

    /// The generator's state, to start another one where this one is.
    pub fn state(&self) -> u64 {
        self.state
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        (self.state % n as u64) as usize
    }

    /// A word, the first ones far more often than the last (so frequencies differ).
    pub fn word(&mut self) -> &'static str {
        let upto = 1 + self.below(self.vocabulary.len());
        self.vocabulary[self.below(upto)]
    }

    /// `n` words joined by spaces.
    pub fn words(&mut self, n: usize) -> String {
        (0..n).map(|_| self.word()).collect::<Vec<_>>().join(" ")
    }
}
