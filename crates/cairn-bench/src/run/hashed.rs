//! A seeded cheap embedder for the scale bench only (`cairn bench scale --embedder
//! hashed`): feature hashing of lowercased word tokens into the model's dimensions, then
//! L2 normalisation. Texts that share words are near each other, distinct texts get
//! distinct vectors, and a million of them are computed in seconds, so a space of a
//! million distinct vectors can be built on two cores (the model embeds ~230 texts a
//! second). It has no notion of meaning: it stands in for the model only to load the
//! vector index, never to measure retrieval quality.
use cairn_embed::{EmbedError, Embedder};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Hashes words into `dim` signed buckets; token counts (token budgets) come from the
/// real model's tokenizer, so packing behaves as it does with the model.
pub struct HashedEmbedder {
    seed: u64,
    dim: usize,
    model_id: String,
    tokens: Arc<dyn Embedder>,
}

impl HashedEmbedder {
    /// Vectors of `tokens.dim()` dimensions; `tokens` counts tokens.
    pub fn new(seed: u64, tokens: Arc<dyn Embedder>) -> Self {
        let dim = tokens.dim();
        Self {
            seed,
            dim,
            model_id: format!("hashed-words-{dim}-seed{seed}"),
            tokens,
        }
    }

    fn hash(&self, word: &str) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.seed.hash(&mut h);
        word.hash(&mut h);
        h.finish()
    }

    /// The vector of one text: each word adds +-1 to one bucket (sign and bucket from
    /// the word's hash), so two texts' cosine grows with the words they share.
    pub fn vector(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dim];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let h = self.hash(&word.to_lowercase());
            let bucket = (h % self.dim as u64) as usize;
            v[bucket] += if h >> 63 == 0 { 1.0 } else { -1.0 };
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        } else {
            // A text without words still needs a unit vector.
            v[0] = 1.0;
        }
        v
    }
}

impl Embedder for HashedEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.tokens.count_tokens(text)
    }
    fn whitespace_additive(&self) -> bool {
        self.tokens.whitespace_additive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts words; stands in for the model's tokenizer.
    struct Words;
    impl Embedder for Words {
        fn model_id(&self) -> &str {
            "words"
        }
        fn dim(&self) -> usize {
            384
        }
        fn embed(&self, _: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(Vec::new())
        }
        fn count_tokens(&self, text: &str) -> usize {
            text.split_whitespace().count()
        }
    }

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn shared_words_are_near_and_vectors_are_unit_length() {
        let e = HashedEmbedder::new(7, Arc::new(Words));
        let needle = e.vector("Oh, before I forget: my sister's wifi password is cobalt-4411.");
        let question = e.vector("What is my sister's wifi password?");
        let other = e.vector("I tried making ramen last night but it came out bland.");
        assert!((cos(&needle, &needle) - 1.0).abs() < 1e-5);
        assert!(cos(&needle, &question) > cos(&other, &question) + 0.2);
        assert_eq!(e.vector("Sister WIFI"), e.vector("sister wifi"));
        assert_ne!(e.vector("note 1"), e.vector("note 2"));
        assert_eq!(e.count_tokens("three words here"), 3);
        assert_eq!(e.model_id(), "hashed-words-384-seed7");
    }

    #[test]
    fn seeds_give_other_vectors_and_empty_text_a_unit_one() {
        let a = HashedEmbedder::new(1, Arc::new(Words));
        let b = HashedEmbedder::new(2, Arc::new(Words));
        assert_ne!(a.vector("the same words"), b.vector("the same words"));
        let empty = a.vector("...");
        assert!((cos(&empty, &empty) - 1.0).abs() < 1e-6);
    }
}
