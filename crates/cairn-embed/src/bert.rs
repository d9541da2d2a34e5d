//! Sentence embeddings with a BERT model (sentence-transformers layout) on the CPU, with
//! candle: mean pooling over the attention mask, then L2 normalisation, exactly like
//! sentence-transformers' `all-MiniLM-L6-v2` pipeline (Transformer, Pooling(mean),
//! Normalize).
use crate::download::{download_model, DEFAULT_ENDPOINT};
use crate::error::EmbedLoadError;
use crate::int8::{Int8Bert, Kernel};
use crate::resolve::{resolve_model_dir, ModelEnv, ModelSource, ResolvedModel};
use cairn_core::{EmbedError, Embedder};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

/// The default model: a hub id.
pub const DEFAULT_MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";
/// Bytes of text read per token the model sees. Tokenizing a text costs time in its
/// length, but only its first `max_tokens` tokens are kept: a message of hundreds of KB
/// (pasted code or documents) is cut to `max_tokens * 64` bytes first. Real text averages
/// under 8 bytes a token (code and other scripts included), so the tokens kept are the
/// same unless the text runs 64 bytes a token for `max_tokens` tokens.
const MAX_BYTES_PER_TOKEN: usize = 64;

/// Default truncation length in tokens, special tokens included (sentence-transformers'
/// `max_seq_length` of the default model).
pub const DEFAULT_MAX_TOKENS: usize = 256;
/// Default number of texts run through the model at once.
pub const DEFAULT_BATCH_SIZE: usize = 32;
/// Tokens the int8 backend runs through the model at once (one chunk per thread): its
/// activations then stay in the core's cache.
const INT8_CHUNK_TOKENS: usize = 512;

/// How the model is computed. The two give slightly different vectors, so the backend
/// is part of [`Embedder::model_id`] (and thus of the embedding cache's key).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The default: whichever backend the store's vectors were made with (so an upgrade
    /// or a config without a backend never recomputes a store's vectors), else `int8`
    /// where this CPU runs an int8 SIMD kernel (AVX-512 VNNI or AVX2), else `fp32`. See
    /// [`EmbedConfig::resolved`].
    #[default]
    Auto,
    /// The model as published, in fp32 (candle).
    Fp32,
    /// Linear layers quantized to int8 at load time (weights per output column,
    /// activations per token), the rest in fp32 (see `int8`): 4-7x the tokens/s on
    /// CPUs with AVX-512 VNNI, 2x with AVX2, but 5x slower without either (portable
    /// loops); mean cosine 0.999 to fp32 (docs/benchmarks/experiments.md).
    Int8,
}

/// Settings of a [`BertEmbedder`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedConfig {
    /// Hub id of the model, e.g. `sentence-transformers/all-MiniLM-L6-v2`. Names the
    /// model in [`Embedder::model_id`] and locates it in the model caches.
    pub model: String,
    /// A local model directory to use instead of looking in the caches. It must hold
    /// the model named by `model` (the id is not checked against the files).
    pub model_dir: Option<PathBuf>,
    /// Texts are truncated to this many tokens, special tokens included. At most the
    /// model's `max_position_embeddings`.
    pub max_tokens: usize,
    /// Texts per forward pass. Texts are sorted by length before batching, so padding
    /// waste stays small even with large batches.
    pub batch_size: usize,
    /// Download the model from the hub (`HF_ENDPOINT`, default the public hub) into
    /// Cairn's model cache when no local copy is found. `HF_HUB_OFFLINE=1` also stops it.
    pub download: bool,
    /// `"auto"` (default), `"fp32"` or `"int8"`: see [`Backend`].
    pub backend: Backend,
}

impl Default for EmbedConfig {
    fn default() -> Self {
        Self {
            model: DEFAULT_MODEL.to_string(),
            model_dir: None,
            max_tokens: DEFAULT_MAX_TOKENS,
            batch_size: DEFAULT_BATCH_SIZE,
            download: true,
            backend: Backend::default(),
        }
    }
}

impl EmbedConfig {
    /// This configuration with `Auto` replaced by a concrete backend: the one whose model
    /// id is `stored` (the id of the vectors a store already holds, if any), else `int8`
    /// where this CPU has an int8 SIMD kernel, else `fp32`. An explicit backend is kept.
    pub fn resolved(&self, stored: Option<&str>) -> EmbedConfig {
        let mut config = self.clone();
        if config.backend != Backend::Auto {
            return config;
        }
        let holds = |backend: Backend| stored == Some(config.model_id(backend).as_str());
        config.backend = if holds(Backend::Fp32) {
            Backend::Fp32
        } else if holds(Backend::Int8) || Kernel::available()[0] != Kernel::Scalar {
            Backend::Int8
        } else {
            Backend::Fp32
        };
        config
    }

    /// The model id of this model's vectors computed by `backend` (fp32 for `Auto`:
    /// resolve first).
    fn model_id(&self, backend: Backend) -> String {
        match backend {
            Backend::Int8 => format!("{}@max{}@int8", self.model, self.max_tokens),
            // fp32 keeps the id it always had, so existing caches and stores stay valid.
            Backend::Fp32 | Backend::Auto => format!("{}@max{}", self.model, self.max_tokens),
        }
    }
}

/// A BERT sentence embedder running on the CPU.
///
/// `embed` tokenizes every text (truncated to `max_tokens`), sorts the texts by token
/// length, runs them in batches of `batch_size` padded to the longest text of the batch,
/// mean-pools the last hidden states over the attention mask, L2-normalises, and returns
/// the vectors in the caller's order.
///
/// Batches run in parallel on rayon's global pool (its size follows
/// `RAYON_NUM_THREADS`, default: one thread per core), and candle's matrix
/// multiplication is parallel on the same pool. On 2 cores this runs about 35% more
/// sentences per second than running batches one after another with only the matrix
/// multiplication parallel, since the element-wise work (GELU, layer norm, softmax) is
/// single-threaded in candle.
pub struct BertEmbedder {
    model: Model,
    /// Truncating to `max_tokens`, no padding (padding is done per batch here).
    tokenizer: Tokenizer,
    /// No truncation, no padding: for [`Embedder::count_tokens`].
    counter: Tokenizer,
    /// See [`whitespace_additive`].
    additive: bool,
    device: Device,
    model_id: String,
    dim: usize,
    max_tokens: usize,
    batch_size: usize,
    pad_id: u32,
    dir: PathBuf,
}

/// The loaded model, per backend.
enum Model {
    Fp32(BertModel),
    Int8(Int8Bert),
}

impl std::fmt::Debug for BertEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BertEmbedder")
            .field("model_id", &self.model_id)
            .field("dir", &self.dir)
            .field("dim", &self.dim)
            .field("max_tokens", &self.max_tokens)
            .field("batch_size", &self.batch_size)
            .finish_non_exhaustive()
    }
}

fn read(path: &Path) -> Result<Vec<u8>, EmbedLoadError> {
    std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => EmbedLoadError::MissingFile {
            path: path.to_path_buf(),
        },
        _ => EmbedLoadError::Io {
            path: path.to_path_buf(),
            source,
        },
    })
}

/// Exported sentence-transformers models name the weights `embeddings.…`; checkpoints
/// of BertFor* heads prefix them with `bert.`. Picked explicitly rather than relying on
/// candle's model_type fallback (config.json may lack it).
fn weight_prefix(has: impl Fn(&str) -> bool) -> Result<&'static str, String> {
    let probe = "embeddings.word_embeddings.weight";
    if has(probe) {
        Ok("")
    } else if has(&format!("bert.{probe}")) {
        Ok("bert.")
    } else {
        Err(format!(
            "no {probe} or bert.{probe} tensor; not a BERT model"
        ))
    }
}

fn load_fp32(weights: Vec<u8>, config: &BertConfig, device: &Device) -> Result<BertModel, String> {
    let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, device)
        .map_err(|e| e.to_string())?;
    let vb = match weight_prefix(|name| vb.contains_tensor(name))? {
        "" => vb,
        _ => vb.pp("bert"),
    };
    BertModel::load(vb, config).map_err(|e| e.to_string())
}

fn load_int8(weights: &[u8], config: &BertConfig, device: &Device) -> Result<Int8Bert, String> {
    let tensors =
        candle_core::safetensors::load_buffer(weights, device).map_err(|e| e.to_string())?;
    let prefix = weight_prefix(|name| tensors.contains_key(name))?;
    Int8Bert::load(&tensors, prefix, config, Kernel::detect())
}

/// Refuses settings no model can run with.
fn check_settings(config: &EmbedConfig) -> Result<(), EmbedLoadError> {
    if config.batch_size == 0 {
        return Err(EmbedLoadError::InvalidSettings(
            "batch_size must be at least 1".into(),
        ));
    }
    if config.max_tokens < 2 {
        return Err(EmbedLoadError::InvalidSettings(
            "max_tokens must be at least 2 (room for the special tokens)".into(),
        ));
    }
    if config.model.trim().is_empty() {
        return Err(EmbedLoadError::InvalidSettings(
            "model must name the model (a hub id)".into(),
        ));
    }
    Ok(())
}

/// The model's `config.json`, checked (a BERT model whose heads divide its hidden size,
/// with room for `max_tokens`), and its padding token.
fn read_bert_config(dir: &Path, config: &EmbedConfig) -> Result<(BertConfig, u32), EmbedLoadError> {
    let config_path = dir.join("config.json");
    let bert_config: BertConfig =
        serde_json::from_slice(&read(&config_path)?).map_err(|e| EmbedLoadError::BadConfig {
            path: config_path.clone(),
            reason: e.to_string(),
        })?;
    let bad_config = |reason: String| EmbedLoadError::BadConfig {
        path: config_path.clone(),
        reason,
    };
    if let Some(kind) = &bert_config.model_type {
        if kind != "bert" {
            return Err(bad_config(format!(
                "model_type is {kind:?}; only \"bert\" models are supported"
            )));
        }
    }
    if bert_config.hidden_size == 0
        || bert_config.num_attention_heads == 0
        || !bert_config
            .hidden_size
            .is_multiple_of(bert_config.num_attention_heads)
    {
        return Err(bad_config(format!(
            "hidden_size {} is not a positive multiple of num_attention_heads {}",
            bert_config.hidden_size, bert_config.num_attention_heads
        )));
    }
    if config.max_tokens > bert_config.max_position_embeddings {
        return Err(EmbedLoadError::InvalidSettings(format!(
            "max_tokens {} exceeds the model's max_position_embeddings {}",
            config.max_tokens, bert_config.max_position_embeddings
        )));
    }
    let pad_id = u32::try_from(bert_config.pad_token_id)
        .map_err(|_| bad_config("pad_token_id out of range".into()))?;
    Ok((bert_config, pad_id))
}

/// The model's `tokenizer.json` twice: one that counts tokens (no truncation, no
/// padding) and one that truncates to `max_tokens`, checked against the model's vocabulary.
fn read_tokenizer(
    dir: &Path,
    config: &EmbedConfig,
    bert_config: &BertConfig,
) -> Result<(Tokenizer, Tokenizer), EmbedLoadError> {
    let tokenizer_path = dir.join("tokenizer.json");
    let tokenizer_bytes = read(&tokenizer_path)?;
    let bad_tokenizer = |reason: String| EmbedLoadError::Tokenizer {
        path: tokenizer_path.clone(),
        reason,
    };
    let mut counter =
        Tokenizer::from_bytes(&tokenizer_bytes).map_err(|e| bad_tokenizer(e.to_string()))?;
    // tokenizer.json files often carry their own truncation and fixed padding (the
    // default model's says 128 tokens, fixed): override both.
    counter.with_padding(None);
    counter
        .with_truncation(None)
        .map_err(|e| bad_tokenizer(e.to_string()))?;
    let mut tokenizer = counter.clone();
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: config.max_tokens,
            strategy: TruncationStrategy::LongestFirst,
            stride: 0,
            direction: TruncationDirection::Right,
        }))
        .map_err(|e| bad_tokenizer(e.to_string()))?;
    let vocab = tokenizer.get_vocab_size(true);
    if vocab > bert_config.vocab_size {
        return Err(bad_tokenizer(format!(
            "tokenizer has {vocab} tokens but the model's vocab_size is {}",
            bert_config.vocab_size
        )));
    }
    Ok((counter, tokenizer))
}

/// The model's `model.safetensors`, loaded for the backend the settings name.
fn read_model(
    dir: &Path,
    config: &EmbedConfig,
    bert_config: &BertConfig,
    device: &Device,
) -> Result<Model, EmbedLoadError> {
    let weights_path = dir.join("model.safetensors");
    let weights = read(&weights_path)?;
    let bad_weights = |reason: String| EmbedLoadError::Weights {
        path: weights_path.clone(),
        reason,
    };
    let model = match config.backend {
        Backend::Int8 => {
            Model::Int8(load_int8(&weights, bert_config, device).map_err(bad_weights)?)
        }
        Backend::Fp32 | Backend::Auto => {
            Model::Fp32(load_fp32(weights, bert_config, device).map_err(bad_weights)?)
        }
    };
    Ok(model)
}

impl BertEmbedder {
    /// Resolves the model named by `config.model` (see [`crate::resolve`]; the process
    /// environment is read) and loads it.
    pub fn load(config: &EmbedConfig) -> Result<Self, EmbedLoadError> {
        let env = ModelEnv::from_process();
        let resolved = match resolve_model_dir(&config.model, config.model_dir.as_deref(), &env) {
            Err(EmbedLoadError::ModelNotFound { model, tried }) => {
                // An explicit directory is the user's choice: never replace it silently.
                let target = env.cairn_models_dir().map(|d| d.join(&model));
                match target {
                    Some(dest) if config.download && config.model_dir.is_none() && !env.offline => {
                        let endpoint = env.hf_endpoint.as_deref().unwrap_or(DEFAULT_ENDPOINT);
                        download_model(&model, endpoint, &dest)?;
                        ResolvedModel {
                            dir: dest,
                            source: ModelSource::Downloaded,
                        }
                    }
                    _ => return Err(EmbedLoadError::ModelNotFound { model, tried }),
                }
            }
            other => other?,
        };
        tracing::debug!(dir = %resolved.dir.display(), source = ?resolved.source, "embedding model resolved");
        Self::from_dir(&resolved.dir, config)
    }

    /// Loads the model in `dir` (config.json, tokenizer.json, model.safetensors);
    /// `config.model_dir` is ignored, `config.model` only names the model.
    pub fn from_dir(dir: &Path, config: &EmbedConfig) -> Result<Self, EmbedLoadError> {
        let started = Instant::now();
        let config = &config.resolved(None);
        check_settings(config)?;
        let (bert_config, pad_id) = read_bert_config(dir, config)?;
        let (counter, tokenizer) = read_tokenizer(dir, config, &bert_config)?;
        let device = Device::Cpu;
        let model = read_model(dir, config, &bert_config, &device)?;
        let model_id = config.model_id(config.backend);
        tracing::info!(
            model = %model_id,
            dir = %dir.display(),
            dim = bert_config.hidden_size,
            backend = ?config.backend,
            kernel = match &model { Model::Int8(m) => m.kernel().name(), Model::Fp32(_) => "candle" },
            elapsed_ms = started.elapsed().as_millis() as u64,
            "embedding model loaded"
        );
        Ok(Self {
            model,
            tokenizer,
            additive: whitespace_additive(&counter),
            counter,
            device,
            model_id,
            dim: bert_config.hidden_size,
            max_tokens: config.max_tokens,
            batch_size: config.batch_size,
            pad_id,
            dir: dir.to_path_buf(),
        })
    }

    /// The directory the model was loaded from.
    pub fn model_dir(&self) -> &Path {
        &self.dir
    }

    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    pub fn batch_size(&self) -> usize {
        self.batch_size
    }

    /// Token ids of `texts` as the model sees them: special tokens added, truncated to
    /// `max_tokens`.
    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, EmbedError> {
        let limit = self.max_tokens * MAX_BYTES_PER_TOKEN;
        let texts: Vec<&str> = texts
            .iter()
            .map(|t| cairn_core::text::prefix(t, limit))
            .collect();
        let encodings = self
            .tokenizer
            .encode_batch(texts, true)
            .map_err(|e| EmbedError(format!("tokenizing: {e}")))?;
        Ok(encodings
            .into_iter()
            .map(|e| e.get_ids().to_vec())
            .collect())
    }

    /// The backend name and, for int8, the integer kernel this CPU runs
    /// (`"fp32"`, `"int8/vnni512"`, `"int8/avx2"`, `"int8/scalar"`).
    pub fn backend(&self) -> String {
        match &self.model {
            Model::Fp32(_) => "fp32".into(),
            Model::Int8(m) => format!("int8/{}", m.kernel().name()),
        }
    }

    /// Runs one batch (token ids, any lengths) through the model; unit vectors in the
    /// batch's order.
    fn run_batch(&self, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let fail = |e: String| EmbedError(format!("model {}: {e}", self.model_id));
        match &self.model {
            Model::Fp32(model) => self.run_fp32(model, batch).map_err(|e| fail(e.to_string())),
            Model::Int8(model) => model.embed(batch).map_err(fail),
        }
    }

    /// [`Self::run_batch`] with candle: padded to the longest text, masked.
    fn run_fp32(
        &self,
        model: &BertModel,
        batch: &[&[u32]],
    ) -> Result<Vec<Vec<f32>>, candle_core::Error> {
        let rows = batch.len();
        let width = batch.iter().map(|ids| ids.len()).max().unwrap_or(0).max(1);
        let mut input = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for ids in batch {
            let pad = width - ids.len();
            input.extend_from_slice(ids);
            input.extend(std::iter::repeat_n(self.pad_id, pad));
            mask.extend(std::iter::repeat_n(1u32, ids.len()));
            mask.extend(std::iter::repeat_n(0u32, pad));
        }
        let input_ids = Tensor::from_vec(input, (rows, width), &self.device)?;
        let token_type_ids = input_ids.zeros_like()?;
        let mask = Tensor::from_vec(mask, (rows, width), &self.device)?;
        // (rows, width, dim)
        let hidden = model.forward(&input_ids, &token_type_ids, Some(&mask))?;
        // Mean over the real tokens (sentence-transformers clamps the count at 1e-9).
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        // L2 normalisation (torch.nn.functional.normalize clamps the norm at 1e-12).
        let norms = mean
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12f32, f32::MAX)?;
        mean.broadcast_div(&norms)?.to_vec2::<f32>()
    }
}

/// Splits `order` (text indices sorted by token count) into the batches the model runs.
/// Normally batches of `batch_size`; but when there are fewer texts than one batch per
/// thread, a lone batch would run its element-wise work (GELU, layer norm, softmax) on
/// one thread, so the texts are cut into one run per thread of about equal tokens
/// (equal counts would give one thread all the short texts and the other the long ones).
fn batches<'a>(
    order: &'a [usize],
    lens: &[usize],
    batch_size: usize,
    threads: usize,
) -> Vec<&'a [usize]> {
    if threads <= 1 || order.len() > batch_size.max(1) * threads {
        return order.chunks(batch_size.max(1)).collect();
    }
    even_runs(order, lens, threads)
}

/// The int8 backend's chunks: runs of `order` of at most `max_tokens` tokens and
/// `max_texts` texts (a longer text alone), each run on one thread. When all of them
/// fit in one chunk per thread, one run per thread of about equal tokens instead.
fn token_chunks<'a>(
    order: &'a [usize],
    lens: &[usize],
    max_tokens: usize,
    max_texts: usize,
    threads: usize,
) -> Vec<&'a [usize]> {
    let total: usize = order.iter().map(|&i| lens[i]).sum();
    if threads > 1 && total <= max_tokens * threads && order.len() <= max_texts * threads {
        return even_runs(order, lens, threads);
    }
    let mut out = Vec::new();
    let (mut start, mut acc) = (0, 0);
    for (k, &i) in order.iter().enumerate() {
        let full = acc + lens[i] > max_tokens || k - start >= max_texts.max(1);
        if k > start && full {
            out.push(&order[start..k]);
            start = k;
            acc = 0;
        }
        acc += lens[i];
    }
    if start < order.len() {
        out.push(&order[start..]);
    }
    out
}

/// `order` cut into at most `parts` runs of about equal tokens.
fn even_runs<'a>(order: &'a [usize], lens: &[usize], parts: usize) -> Vec<&'a [usize]> {
    let total: usize = order.iter().map(|&i| lens[i]).sum();
    let mut out = Vec::with_capacity(parts);
    let (mut start, mut acc) = (0, 0);
    for (k, &i) in order.iter().enumerate() {
        acc += lens[i];
        if acc * parts >= total * (out.len() + 1) && out.len() + 1 < parts {
            out.push(&order[start..=k]);
            start = k + 1;
        }
    }
    if start < order.len() {
        out.push(&order[start..]);
    }
    out
}

/// Whether `tokenizer` counts texts joined by whitespace as the sum of their counts: a
/// BERT normalizer (character by character) or none, a pre-tokenizer that splits at
/// whitespace first, and WordPiece (word by word). The default model's is; a tokenizer
/// that prepends to the text or merges across spaces (Metaspace, byte-level BPE) is not
/// taken to be.
fn whitespace_additive(tokenizer: &Tokenizer) -> bool {
    use tokenizers::{ModelWrapper, NormalizerWrapper, PreTokenizerWrapper};
    let normalizer = matches!(
        tokenizer.get_normalizer(),
        None | Some(NormalizerWrapper::BertNormalizer(_))
    );
    let pre = matches!(
        tokenizer.get_pre_tokenizer(),
        Some(
            PreTokenizerWrapper::BertPreTokenizer(_)
                | PreTokenizerWrapper::Whitespace(_)
                | PreTokenizerWrapper::WhitespaceSplit(_)
        )
    );
    let model = matches!(tokenizer.get_model(), ModelWrapper::WordPiece(_));
    normalizer && pre && model
}

impl Embedder for BertEmbedder {
    fn whitespace_additive(&self) -> bool {
        self.additive
    }

    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let ids = self.encode(texts)?;
        // Sort by length (stable, so equal lengths keep their order) and batch the
        // sorted run, so each batch pads to nearly its own length.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| ids[i].len());
        let lens: Vec<usize> = ids.iter().map(Vec::len).collect();
        let threads = rayon::current_num_threads();
        let chunks = match self.model {
            Model::Fp32(_) => batches(&order, &lens, self.batch_size, threads),
            Model::Int8(_) => {
                token_chunks(&order, &lens, INT8_CHUNK_TOKENS, self.batch_size, threads)
            }
        };
        let run = |chunk: &[usize]| -> Result<Vec<Vec<f32>>, EmbedError> {
            let batch: Vec<&[u32]> = chunk.iter().map(|&i| ids[i].as_slice()).collect();
            let vectors = self.run_batch(&batch)?;
            if vectors.len() != chunk.len() {
                return Err(EmbedError(format!(
                    "model {} returned {} vectors for {} texts",
                    self.model_id,
                    vectors.len(),
                    chunk.len()
                )));
            }
            Ok(vectors)
        };
        // Batches run in parallel on rayon's pool, one batch per task. candle's matrix
        // multiplication is itself parallel on the same pool, so a lone batch still uses
        // every core, while several batches also parallelise the single-threaded
        // element-wise work (GELU, layer norm, softmax) without oversubscribing.
        let results: Vec<Result<Vec<Vec<f32>>, EmbedError>> = if chunks.len() == 1 {
            vec![run(chunks[0])]
        } else {
            chunks.par_iter().with_max_len(1).map(|c| run(c)).collect()
        };
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for (chunk, vectors) in chunks.iter().zip(results) {
            for (&i, v) in chunk.iter().zip(vectors?) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn count_tokens(&self, text: &str) -> usize {
        // Without offsets: only the count is read, and tracking them is a good part of
        // what packing spends in the tokenizer.
        match self.counter.encode_fast(text, false) {
            Ok(encoding) => encoding.len(),
            Err(e) => {
                // Not expected for BERT tokenizers; fall back to a rough estimate rather
                // than pretending the text is empty.
                tracing::warn!(error = %e, "count_tokens: tokenizer failed, estimating");
                text.len().div_ceil(4)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{batches, token_chunks};

    #[test]
    fn int8_chunks_hold_at_most_max_tokens_unless_one_text_is_longer() {
        let lens = [3, 4, 5, 100, 200, 600];
        let order: Vec<usize> = (0..lens.len()).collect();
        // Fits in one chunk per thread: split in two runs of about equal tokens.
        let two = token_chunks(
            &order,
            &lens[..5].iter().chain(&[300]).copied().collect::<Vec<_>>(),
            512,
            32,
            2,
        );
        assert_eq!(two, vec![&order[..5], &order[5..]]);
        // One thread: runs of at most 512 tokens; the 600-token text alone.
        let one = token_chunks(&order, &lens, 512, 32, 1);
        assert_eq!(one.concat(), order);
        assert_eq!(one, vec![&order[..5], &order[5..]]);
        // At most max_texts texts per chunk.
        let many: Vec<usize> = (0..10).collect();
        let short = vec![1; 10];
        let c = token_chunks(&many, &short, 512, 4, 1);
        assert_eq!(c.iter().map(|r| r.len()).collect::<Vec<_>>(), [4, 4, 2]);
        assert!(token_chunks(&[], &short, 512, 4, 2).is_empty());
    }

    #[test]
    fn few_texts_split_into_one_run_per_thread_of_equal_tokens() {
        // Sorted by length: many short texts, then a few long ones.
        let lens = [5, 5, 5, 5, 5, 5, 5, 5, 40, 40];
        let order: Vec<usize> = (0..lens.len()).collect();
        let b = batches(&order, &lens, 32, 2);
        assert_eq!(b.len(), 2);
        let tokens = |run: &[usize]| run.iter().map(|&i| lens[i]).sum::<usize>();
        assert_eq!(b.concat(), order);
        assert!(tokens(b[0]).abs_diff(tokens(b[1])) <= 40, "{b:?}");
        assert_eq!(batches(&order, &lens, 32, 1), vec![&order[..]]);
        // More texts than a batch per thread: plain batches.
        let many: Vec<usize> = (0..100).collect();
        let lens = vec![7; 100];
        let b = batches(&many, &lens, 32, 2);
        assert_eq!(
            b.iter().map(|r| r.len()).collect::<Vec<_>>(),
            [32, 32, 32, 4]
        );
        assert!(batches(&[], &lens, 32, 2).is_empty());
    }
}
