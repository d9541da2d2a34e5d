//! Embedding through the persistent cache: each distinct text is embedded once per model,
//! in one batch per call so the embedder can sort by length.
use cairn_core::{EmbedError, Embedder, EmbeddingCache, StoreError};
use sha2::{Digest, Sha256};
use std::collections::HashMap;

#[derive(Debug, thiserror::Error)]
pub enum CachedEmbedError {
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Whitespace-normalized text: the tokenizer ignores whitespace runs, so texts that
/// differ only there share one vector.
pub fn cache_key(text: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    for (i, w) in text.split_whitespace().enumerate() {
        if i > 0 {
            h.update(b" ");
        }
        h.update(w.as_bytes());
    }
    h.finalize().into()
}

/// Counts of one embedding call.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct EmbedCounts {
    pub computed: usize,
    pub cached: usize,
}

pub fn embed_cached(
    embedder: &dyn Embedder,
    cache: &dyn EmbeddingCache,
    texts: &[&str],
) -> Result<(Vec<Vec<f32>>, EmbedCounts), CachedEmbedError> {
    let keys: Vec<[u8; 32]> = texts.iter().map(|t| cache_key(t)).collect();
    let model = embedder.model_id();
    let found = cache.get(model, &keys)?;
    let mut missing: Vec<usize> = Vec::new();
    let mut first_of: HashMap<[u8; 32], usize> = HashMap::new();
    for (i, f) in found.iter().enumerate() {
        if f.is_none() && !first_of.contains_key(&keys[i]) {
            first_of.insert(keys[i], missing.len());
            missing.push(i);
        }
    }
    let computed = if missing.is_empty() {
        Vec::new()
    } else {
        let batch: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
        embedder.embed(&batch)?
    };
    if !computed.is_empty() {
        let items: Vec<([u8; 32], Vec<f32>)> = missing
            .iter()
            .zip(&computed)
            .map(|(&i, v)| (keys[i], v.clone()))
            .collect();
        cache.put(model, &items)?;
    }
    let counts = EmbedCounts {
        computed: computed.len(),
        cached: texts.len() - found.iter().filter(|f| f.is_none()).count(),
    };
    let vectors = found
        .into_iter()
        .enumerate()
        .map(|(i, f)| f.unwrap_or_else(|| computed[first_of[&keys[i]]].clone()))
        .collect();
    Ok((vectors, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_does_not_change_the_key() {
        assert_eq!(cache_key("a  b\n c"), cache_key(" a b c "));
        assert_ne!(cache_key("a b"), cache_key("ab"));
    }
}
