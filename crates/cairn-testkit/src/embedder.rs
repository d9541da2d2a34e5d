//! A deterministic embedder that needs no model, for tests of everything around the
//! embedding (stores, ranking plumbing, isolation, enrichment).
use cairn_core::{EmbedError, Embedder};

/// Bag of words hashed into 64 dimensions, unit length: texts sharing words are near,
/// texts sharing none are orthogonal. Tokens: lowercased alphanumeric runs; a count of
/// words stands in for the tokenizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct HashEmbedder;

/// What [`HashEmbedder`] calls itself (stores record the model their vectors come from).
pub const HASH_MODEL: &str = "test-hash-64";
pub const HASH_DIM: usize = 64;

impl HashEmbedder {
    /// The vector of one text.
    pub fn vector(text: &str) -> Vec<f32> {
        let mut v = vec![0f32; HASH_DIM];
        for w in text.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
            if !w.is_empty() {
                let h = w
                    .bytes()
                    .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
                v[(h % HASH_DIM as u64) as usize] += 1.0;
            }
        }
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
        v.iter().map(|x| x / n).collect()
    }
}

impl Embedder for HashEmbedder {
    fn model_id(&self) -> &str {
        HASH_MODEL
    }
    fn dim(&self) -> usize {
        HASH_DIM
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| Self::vector(t)).collect())
    }
    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
    fn whitespace_additive(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similar_texts_are_near_and_vectors_are_unit_length() {
        let e = HashEmbedder;
        let v = e
            .embed(&["the red kettle", "Kettle, red!", "passport office"])
            .unwrap();
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-5);
        assert!(
            dot(&v[0], &v[1]) > 0.8,
            "same words, other case and punctuation"
        );
        assert!(dot(&v[0], &v[2]) < 0.5);
        assert_eq!(e.embed(&[""]).unwrap()[0], vec![0.0; HASH_DIM]);
    }
}
