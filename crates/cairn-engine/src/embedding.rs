//! Embedding through the persistent cache: each distinct text is embedded once per model,
//! in one batch per call so the embedder can sort by length.
use cairn_core::{EmbedError, Embedder, EmbeddingCache, SpaceId, StoreError};
use sha2::{Digest, Sha256};
use std::collections::hash_map::Entry;
use std::collections::HashMap;

#[derive(Debug, thiserror::Error)]
pub enum CachedEmbedError {
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Whitespace-normalized text: the tokenizer ignores whitespace runs, so texts that
/// differ only there share one vector. The key of a cache shared by every space (see
/// [`cache_key_in`]).
pub fn cache_key(text: &str) -> [u8; 32] {
    cache_key_in(None, text)
}

/// The cache key of `text` for a space: with `Some(space)` the key is the space's own, so
/// one space's entries never answer another's lookups (whether a text is cached, and how
/// fast a query embeds, must not tell one tenant what another stored or asked). `None`
/// is the store-wide key that replays of public data share.
pub fn cache_key_in(space: Option<&SpaceId>, text: &str) -> [u8; 32] {
    cache_key_within(space, None, text)
}

/// [`cache_key_in`] within a part of the space (`within`: an end-user partition, a
/// query's scope), so no part's entries answer another part's lookups: a writer must
/// not learn that another user of the space stored a text. `None` is the space's key.
pub fn cache_key_within(space: Option<&SpaceId>, within: Option<&str>, text: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    if let Some(space) = space {
        // Space names hold no NUL, so the prefix cannot be forged by a text.
        h.update(b"space\0");
        h.update(space.as_str().as_bytes());
        h.update(b"\0");
        if let Some(part) = within {
            // A NUL in a partition's JSON is escaped (`\u0000`): no forged prefix either.
            h.update(b"within\0");
            h.update(part.as_bytes());
            h.update(b"\0");
        }
    }
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

/// Where one vector of [`embed_keyed`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Computed by the embedder now (and cached).
    Computed,
    /// Found in the cache.
    Cached,
    /// The same key as an earlier text of the call, computed once for both.
    Repeated,
}

/// Vectors of `texts`, from the cache where it has them (under `scope`'s keys, see
/// [`cache_key_in`]), else from the embedder (one batch) and then cached.
pub fn embed_cached(
    embedder: &dyn Embedder,
    cache: &dyn EmbeddingCache,
    key: impl Fn(&str) -> [u8; 32],
    texts: &[&str],
) -> Result<(Vec<Vec<f32>>, EmbedCounts), CachedEmbedError> {
    let keys: Vec<[u8; 32]> = texts.iter().map(|t| key(t)).collect();
    let (vectors, origins) = embed_keyed(embedder, cache, &keys, texts)?;
    Ok((vectors, counts(&origins)))
}

/// What a call's origins add up to.
pub fn counts(origins: &[Origin]) -> EmbedCounts {
    EmbedCounts {
        computed: origins.iter().filter(|o| **o == Origin::Computed).count(),
        cached: origins.iter().filter(|o| **o == Origin::Cached).count(),
    }
}

/// Vectors of `texts` under their cache keys (each text may have a scope of its own),
/// from the cache where it has them, else from the embedder in one batch for all (so
/// writes to many spaces share one model call), then cached; with each vector's origin.
pub fn embed_keyed(
    embedder: &dyn Embedder,
    cache: &dyn EmbeddingCache,
    keys: &[[u8; 32]],
    texts: &[&str],
) -> Result<(Vec<Vec<f32>>, Vec<Origin>), CachedEmbedError> {
    embed_keyed_staged(embedder, cache, keys, texts, &|_| None)
}

/// [`embed_keyed`], where a text the cache lacks is first looked up in `staged` (vectors
/// computed for this write before it took the write lock) and embedded only if absent
/// there; either way it counts as computed and is cached.
pub fn embed_keyed_staged(
    embedder: &dyn Embedder,
    cache: &dyn EmbeddingCache,
    keys: &[[u8; 32]],
    texts: &[&str],
    staged: &dyn Fn(&[u8; 32]) -> Option<Vec<f32>>,
) -> Result<(Vec<Vec<f32>>, Vec<Origin>), CachedEmbedError> {
    let model = embedder.model_id();
    let found = cache.get(model, keys)?;
    let mut missing: Vec<usize> = Vec::new();
    let mut first_of: HashMap<[u8; 32], usize> = HashMap::new();
    let mut origins = Vec::with_capacity(texts.len());
    for (i, f) in found.iter().enumerate() {
        origins.push(match (f, first_of.entry(keys[i])) {
            (Some(_), _) => Origin::Cached,
            (None, Entry::Occupied(_)) => Origin::Repeated,
            (None, Entry::Vacant(e)) => {
                e.insert(missing.len());
                missing.push(i);
                Origin::Computed
            }
        });
    }
    let mut computed: Vec<Option<Vec<f32>>> = missing.iter().map(|&i| staged(&keys[i])).collect();
    let todo: Vec<usize> = (0..missing.len())
        .filter(|&m| computed[m].is_none())
        .collect();
    if !todo.is_empty() {
        let batch: Vec<&str> = todo.iter().map(|&m| texts[missing[m]]).collect();
        let vectors = embedder.embed(&batch)?;
        if vectors.len() != batch.len() {
            return Err(EmbedError(format!(
                "the embedder returned {} vectors for {} texts",
                vectors.len(),
                batch.len()
            ))
            .into());
        }
        for (&m, v) in todo.iter().zip(vectors) {
            computed[m] = Some(v);
        }
    }
    let computed: Vec<Vec<f32>> = computed
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect();
    if !computed.is_empty() {
        let items: Vec<([u8; 32], Vec<f32>)> = missing
            .iter()
            .zip(&computed)
            .map(|(&i, v)| (keys[i], v.clone()))
            .collect();
        match cache.put(model, &items) {
            Ok(()) => {}
            // A cache only saves work: a disk too full to keep these vectors must not
            // fail the read (a recall's question) or write they were computed for.
            Err(e) if e.is_unwritable() => {
                tracing::warn!(error = %e, "the embedding cache could not keep new vectors");
            }
            Err(e) => return Err(e.into()),
        }
    }
    let vectors = found
        .into_iter()
        .enumerate()
        .map(|(i, f)| f.unwrap_or_else(|| computed[first_of[&keys[i]]].clone()))
        .collect();
    Ok((vectors, origins))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_does_not_change_the_key() {
        assert_eq!(cache_key("a  b\n c"), cache_key(" a b c "));
        assert_ne!(cache_key("a b"), cache_key("ab"));
    }

    #[test]
    fn spaces_have_keys_of_their_own() {
        let (a, b) = (SpaceId::new("a").unwrap(), SpaceId::new("b").unwrap());
        assert_ne!(cache_key_in(Some(&a), "x"), cache_key_in(Some(&b), "x"));
        assert_ne!(cache_key_in(Some(&a), "x"), cache_key("x"));
        assert_eq!(
            cache_key_in(Some(&a), "x  y"),
            cache_key_in(Some(&a), "x y")
        );
    }
}
