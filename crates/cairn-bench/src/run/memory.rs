//! The memory under test, opened as a user would (the public `cairn` API), and the
//! embedding calls the option scorer makes through the memory's own embedder.
use super::hashed::HashedEmbedder;
use crate::env;
use anyhow::Context as _;
use cairn::{Memory, MemoryConfig};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Opens the run's memory in `data_dir`: the embedding cache (`--cache`, else the shared
/// default) and engine settings (`--memory-config`, else stock). Returns the memory, the
/// cache path and the settings in force (for METHODOLOGY.md).
pub fn open_memory(
    data_dir: &Path,
    cache: Option<&Path>,
    memory_config: Option<&Path>,
) -> anyhow::Result<(Memory, Option<PathBuf>, serde_json::Value)> {
    open_memory_in(data_dir, None, cache, memory_config)
}

/// [`open_memory`] on the store `store` names (a `postgres://` URL) when given; the
/// embedding cache file is used by either store.
pub fn open_memory_in(
    data_dir: &Path,
    store: Option<&str>,
    cache: Option<&Path>,
    memory_config: Option<&Path>,
) -> anyhow::Result<(Memory, Option<PathBuf>, serde_json::Value)> {
    let (config, cache, settings) = bench_config(store, cache, memory_config)?;
    let memory = Memory::open_with(data_dir, config).map_err(|e| open_error(data_dir, e))?;
    Ok((memory, cache, settings))
}

/// [`open_memory_in`] with the scale bench's hashed embedder ([`HashedEmbedder`], seeded
/// by `seed`) in place of the model's vectors; the model still counts tokens.
pub fn open_memory_hashed(
    data_dir: &Path,
    store: Option<&str>,
    cache: Option<&Path>,
    memory_config: Option<&Path>,
    seed: u64,
) -> anyhow::Result<(Memory, Option<PathBuf>, serde_json::Value)> {
    let (config, cache, settings) = bench_config(store, cache, memory_config)?;
    let tokens = cairn_embed::BertEmbedder::load(&config.embed)
        .map_err(|e| open_error(data_dir, cairn::Error::from(e)))?;
    let embedder = Arc::new(HashedEmbedder::new(seed, Arc::new(tokens)));
    let memory = match config.store.clone() {
        Some(url) => Memory::open_postgres_with_embedder(&url, data_dir, config, embedder),
        None => Memory::open_with_embedder(data_dir, config, embedder),
    }
    .map_err(|e| open_error(data_dir, e))?;
    Ok((memory, cache, settings))
}

/// The configuration a bench opens its memory with, the cache path and the settings in
/// force.
fn bench_config(
    store: Option<&str>,
    cache: Option<&Path>,
    memory_config: Option<&Path>,
) -> anyhow::Result<(MemoryConfig, Option<PathBuf>, serde_json::Value)> {
    let cache = cache
        .map(Path::to_path_buf)
        .or_else(env::default_embedding_cache);
    let base = match memory_config {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            toml::from_str::<MemoryConfig>(&text)
                .with_context(|| format!("parsing {}", p.display()))?
        }
        None => MemoryConfig::default(),
    };
    let mut config = MemoryConfig {
        embedding_cache: cache.clone(),
        store: store.map(str::to_string).or(base.store.clone()),
        ..base
    };
    // Benches replay public data and drop their spaces when done: the cache keeps the
    // vectors, so a rerun measures a warm ingest (a cold one takes a fresh --cache file).
    // Their spaces are not tenants of each other: a text shared by many questions'
    // haystacks is embedded once.
    config.engine.purge_cache_on_forget = false;
    config.engine.share_embedding_cache = true;
    let settings = serde_json::json!({"embed": &config.embed, "engine": &config.engine});
    Ok((config, cache, settings))
}

fn open_error(data_dir: &Path, e: cairn::Error) -> anyhow::Error {
    let hint = if matches!(e, cairn::Error::Model(_)) {
        " (install the embedding model with ./scripts/setup.sh, or set CAIRN_MODEL_DIR)"
    } else {
        ""
    };
    anyhow::anyhow!("opening the memory in {}: {e}{hint}", data_dir.display())
}

/// Embeds `texts` in one call of the memory's embedder (none for no texts).
pub fn embed(memory: &Memory, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    memory
        .embedder()
        .embed(texts)
        .map_err(|e| anyhow::anyhow!("embedding: {e}"))
}

/// Embeds texts, memoized (evidence texts repeat across questions and rows): each call
/// embeds the texts not seen before in one call of the embedder.
pub struct VecCache<'m> {
    memory: &'m Memory,
    map: HashMap<String, Vec<f32>>,
}

impl<'m> VecCache<'m> {
    pub fn new(memory: &'m Memory) -> Self {
        Self {
            memory,
            map: HashMap::new(),
        }
    }
}

impl VecCache<'_> {
    pub fn get(&mut self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        let missing: Vec<&str> = {
            let mut seen = HashSet::new();
            texts
                .iter()
                .copied()
                .filter(|t| !self.map.contains_key(*t) && seen.insert(*t))
                .collect()
        };
        if !missing.is_empty() {
            let vecs = embed(self.memory, &missing)?;
            for (t, v) in missing.into_iter().zip(vecs) {
                self.map.insert(t.to_string(), v);
            }
        }
        Ok(texts.iter().map(|t| self.map[*t].clone()).collect())
    }
}
