//! The int8 backend: the same BERT model with its linear layers quantized to int8 when
//! the safetensors are loaded (weights: one scale per output column; activations: one
//! scale per token, computed on every call; the query/key/value projection's input in
//! two passes, see [`gemm::QLinear::forward_two_pass`]), everything else in fp32.
//!
//! Sequences run without padding: the linear layers see the tokens of every sequence of
//! a chunk as one matrix, attention runs per sequence over its own tokens. A text's
//! vector therefore does not depend on the other texts of its call (no padding, no
//! per-batch scale), nor on which kernel the CPU has (see [`gemm`]).
mod gemm;
mod ops;

pub use gemm::Kernel;
use gemm::{Epilogue, QLinear};
use ops::AttentionScratch;

use candle_core::{DType, Tensor};
use candle_transformers::models::bert::{Config as BertConfig, HiddenAct, PositionEmbeddingType};
use std::collections::HashMap;

struct Norm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
}

struct Layer {
    /// Query, key and value projections as one layer (outputs side by side).
    qkv: QLinear,
    out: QLinear,
    attention_norm: Norm,
    up: QLinear,
    down: QLinear,
    output_norm: Norm,
}

/// A BERT encoder with int8 linear layers, mean pooling and L2 normalisation.
pub struct Int8Bert {
    word: Vec<f32>,
    position: Vec<f32>,
    /// Token type 0's embedding (every token is type 0).
    token_type: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    vocab: usize,
    positions: usize,
    hidden: usize,
    heads: usize,
    intermediate: usize,
    eps: f32,
    kernel: Kernel,
}

/// One int8 linear layer as [`Int8Bert`] runs it (the input quantized per row, one
/// pass, then multiplied, the bias added), on the detected kernel and compiled for its
/// target features like [`Int8Bert::embed`]: what `examples/matmul.rs` times against
/// candle's quantized and fp32 matmuls. Not a stable API.
#[doc(hidden)]
pub struct LinearBench {
    layer: QLinear,
    kernel: Kernel,
}

impl LinearBench {
    /// `weight`: `n` rows of `k` (PyTorch's layout), quantized now.
    pub fn new(weight: &[f32], bias: &[f32], n: usize, k: usize) -> Self {
        let kernel = Kernel::detect();
        Self {
            layer: QLinear::new(weight, bias, n, k, kernel),
            kernel,
        }
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// `out = x·Wᵀ + b` for `rows` rows of `x`.
    pub fn run(&self, x: &[f32], rows: usize, out: &mut [f32]) {
        match self.kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: this kernel is only offered on CPUs with AVX-512 F/BW/VNNI.
            Kernel::Vnni512 => unsafe { self.run_avx512(x, rows, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: this kernel is only offered on CPUs with AVX2.
            Kernel::Avx2 => unsafe { self.run_avx2(x, rows, out) },
            Kernel::Scalar => self.run_here(x, rows, out),
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
    unsafe fn run_avx512(&self, x: &[f32], rows: usize, out: &mut [f32]) {
        self.run_here(x, rows, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2(&self, x: &[f32], rows: usize, out: &mut [f32]) {
        self.run_here(x, rows, out)
    }

    #[inline(always)]
    fn run_here(&self, x: &[f32], rows: usize, out: &mut [f32]) {
        let q = self.layer.quantize(x, rows);
        self.layer.forward(&q, out, Epilogue::Bias);
    }
}

impl std::fmt::Debug for Int8Bert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Int8Bert")
            .field("layers", &self.layers.len())
            .field("hidden", &self.hidden)
            .field("kernel", &self.kernel)
            .finish_non_exhaustive()
    }
}

/// The tensors of a safetensors file, by name, under a prefix (`""` or `"bert."`).
struct Weights<'a> {
    tensors: &'a HashMap<String, Tensor>,
    prefix: &'a str,
}

impl Weights<'_> {
    /// The tensor `name` as f32, checked to have `shape`.
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let full = format!("{}{name}", self.prefix);
        let t = self
            .tensors
            .get(&full)
            .ok_or_else(|| format!("no tensor {full}"))?;
        if t.dims() != shape {
            return Err(format!(
                "tensor {full} has shape {:?}, expected {shape:?}",
                t.dims()
            ));
        }
        t.to_dtype(DType::F32)
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|e| format!("tensor {full}: {e}"))
    }

    fn norm(&self, name: &str, h: usize) -> Result<Norm, String> {
        Ok(Norm {
            gamma: self.get(&format!("{name}.weight"), &[h])?,
            beta: self.get(&format!("{name}.bias"), &[h])?,
        })
    }

    /// The linear layers `names` (each `n_i x k`) stacked into one int8 layer.
    fn linear(
        &self,
        names: &[&str],
        n: usize,
        k: usize,
        kernel: Kernel,
    ) -> Result<QLinear, String> {
        let mut weight = Vec::with_capacity(names.len() * n * k);
        let mut bias = Vec::with_capacity(names.len() * n);
        for name in names {
            weight.extend(self.get(&format!("{name}.weight"), &[n, k])?);
            bias.extend(self.get(&format!("{name}.bias"), &[n])?);
        }
        Ok(QLinear::new(&weight, &bias, names.len() * n, k, kernel))
    }
}

impl Int8Bert {
    /// Builds the model from the tensors of `model.safetensors` (names under `prefix`),
    /// quantizing the linear layers for `kernel`. Errors name the tensor or setting.
    pub fn load(
        tensors: &HashMap<String, Tensor>,
        prefix: &str,
        config: &BertConfig,
        kernel: Kernel,
    ) -> Result<Self, String> {
        if config.hidden_act != HiddenAct::Gelu {
            return Err(format!(
                "the int8 backend runs hidden_act \"gelu\" models only, this one has {:?}; use backend = \"fp32\"",
                config.hidden_act
            ));
        }
        if config.position_embedding_type != PositionEmbeddingType::Absolute {
            return Err("the int8 backend needs absolute position embeddings".into());
        }
        let w = Weights { tensors, prefix };
        let (h, i) = (config.hidden_size, config.intermediate_size);
        let token_types = w.get(
            "embeddings.token_type_embeddings.weight",
            &[config.type_vocab_size, h],
        )?;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for l in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            let qkv = [
                format!("{p}.attention.self.query"),
                format!("{p}.attention.self.key"),
                format!("{p}.attention.self.value"),
            ];
            let qkv: Vec<&str> = qkv.iter().map(String::as_str).collect();
            layers.push(Layer {
                qkv: w.linear(&qkv, h, h, kernel)?,
                out: w.linear(&[&format!("{p}.attention.output.dense")], h, h, kernel)?,
                attention_norm: w.norm(&format!("{p}.attention.output.LayerNorm"), h)?,
                up: w.linear(&[&format!("{p}.intermediate.dense")], i, h, kernel)?,
                down: w.linear(&[&format!("{p}.output.dense")], h, i, kernel)?,
                output_norm: w.norm(&format!("{p}.output.LayerNorm"), h)?,
            });
        }
        Ok(Self {
            word: w.get("embeddings.word_embeddings.weight", &[config.vocab_size, h])?,
            position: w.get(
                "embeddings.position_embeddings.weight",
                &[config.max_position_embeddings, h],
            )?,
            token_type: token_types[..h].to_vec(),
            embedding_norm: w.norm("embeddings.LayerNorm", h)?,
            layers,
            vocab: config.vocab_size,
            positions: config.max_position_embeddings,
            hidden: h,
            heads: config.num_attention_heads,
            intermediate: i,
            eps: config.layer_norm_eps as f32,
            kernel,
        })
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Unit vectors of `seqs` (token ids, special tokens included), on this thread.
    pub fn embed(&self, seqs: &[&[u32]]) -> Result<Vec<Vec<f32>>, String> {
        for s in seqs {
            if s.len() > self.positions {
                return Err(format!(
                    "{} tokens exceed the model's {} positions",
                    s.len(),
                    self.positions
                ));
            }
            if let Some(id) = s.iter().find(|&&id| id as usize >= self.vocab) {
                return Err(format!("token id {id} outside the vocabulary"));
            }
        }
        Ok(match self.kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: this kernel is only offered on CPUs with AVX-512 F/BW/VNNI.
            Kernel::Vnni512 => unsafe { self.forward_avx512(seqs) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: this kernel is only offered on CPUs with AVX2.
            Kernel::Avx2 => unsafe { self.forward_avx2(seqs) },
            Kernel::Scalar => self.forward(seqs),
        })
    }

    /// [`Self::forward`] compiled for AVX-512, so the float loops use 16 lanes.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2")]
    unsafe fn forward_avx512(&self, seqs: &[&[u32]]) -> Vec<Vec<f32>> {
        self.forward(seqs)
    }

    /// [`Self::forward`] compiled for AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn forward_avx2(&self, seqs: &[&[u32]]) -> Vec<Vec<f32>> {
        self.forward(seqs)
    }

    #[inline(always)]
    fn forward(&self, seqs: &[&[u32]]) -> Vec<Vec<f32>> {
        let (h, i) = (self.hidden, self.intermediate);
        let rows: usize = seqs.iter().map(|s| s.len()).sum();
        let mut x = vec![0f32; rows * h];
        let mut at = 0;
        for s in seqs {
            for (pos, &id) in s.iter().enumerate() {
                let word = &self.word[id as usize * h..(id as usize + 1) * h];
                let position = &self.position[pos * h..(pos + 1) * h];
                let dst = &mut x[at * h..(at + 1) * h];
                for d in 0..h {
                    dst[d] = word[d] + self.token_type[d] + position[d];
                }
                at += 1;
            }
        }
        let n = &self.embedding_norm;
        ops::layer_norm(&mut x, &n.gamma, &n.beta, self.eps);
        let mut qkv = vec![0f32; rows * 3 * h];
        let mut ctx = vec![0f32; rows * h];
        let mut mid = vec![0f32; rows * h];
        let mut inner = vec![0f32; rows * i];
        let mut scratch = AttentionScratch::default();
        let head_dim = h / self.heads;
        for layer in &self.layers {
            // Queries and keys meet in a product whose softmax magnifies their error:
            // their input is quantized in two passes (see experiments.md: LoCoMo turn
            // any@10 -0.7 point from fp32 with one pass, +0.1 with two).
            layer
                .qkv
                .forward_two_pass(&x, rows, &mut qkv, Epilogue::Bias);
            let mut start = 0;
            for s in seqs {
                let end = start + s.len();
                ops::attention(
                    &qkv[start * 3 * h..end * 3 * h],
                    s.len(),
                    self.heads,
                    head_dim,
                    &mut ctx[start * h..end * h],
                    &mut scratch,
                );
                start = end;
            }
            let q = layer.out.quantize(&ctx, rows);
            layer.out.forward(&q, &mut mid, Epilogue::BiasResidual(&x));
            let n = &layer.attention_norm;
            ops::layer_norm(&mut mid, &n.gamma, &n.beta, self.eps);
            let q = layer.up.quantize(&mid, rows);
            layer.up.forward(&q, &mut inner, Epilogue::BiasGelu);
            let q = layer.down.quantize(&inner, rows);
            layer.down.forward(&q, &mut x, Epilogue::BiasResidual(&mid));
            let n = &layer.output_norm;
            ops::layer_norm(&mut x, &n.gamma, &n.beta, self.eps);
        }
        let mut out = Vec::with_capacity(seqs.len());
        let mut start = 0;
        for s in seqs {
            let end = start + s.len();
            out.push(ops::mean_pool_normalize(&x[start * h..end * h], h));
            start = end;
        }
        out
    }
}
