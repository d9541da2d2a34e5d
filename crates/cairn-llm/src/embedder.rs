use crate::{LlmClient, LlmError};
use cairn_core::{EmbedError, Embedder};

/// An [`Embedder`] over the server's `/v1/embeddings` (the `embedding_model` of the
/// config). Vectors are normalized to unit length. The server's tokenizer is not known
/// here, so token counts (used for context budgets) are a conservative estimate: one token
/// per 3 characters, at least one per word.
pub struct LlmEmbedder {
    client: LlmClient,
    id: String,
    dim: usize,
}

impl LlmEmbedder {
    /// Probes the server once for the vector size.
    pub fn new(client: LlmClient) -> Result<Self, LlmError> {
        let model = client
            .config()
            .embedding_model
            .clone()
            .ok_or_else(|| LlmError::Config("no embedding_model configured".into()))?;
        let probe = client.embed(&["dimension probe"])?;
        let dim = probe.first().map_or(0, Vec::len);
        if dim == 0 {
            return Err(LlmError::BadResponse("empty embedding".into()));
        }
        let id = format!("openai:{}@{}", model, client.config().base_url);
        Ok(Self { client, id, dim })
    }
}

impl Embedder for LlmEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(64) {
            let vectors = self
                .client
                .embed(chunk)
                .map_err(|e| EmbedError(e.to_string()))?;
            for mut v in vectors {
                if v.len() != self.dim {
                    return Err(EmbedError(format!(
                        "server returned {} dimensions, expected {}",
                        v.len(),
                        self.dim
                    )));
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                if norm > 0.0 {
                    v.iter_mut().for_each(|x| *x /= norm);
                }
                out.push(v);
            }
        }
        Ok(out)
    }

    fn count_tokens(&self, text: &str) -> usize {
        let words = text.split_whitespace().count();
        words.max(text.chars().count().div_ceil(3))
    }
}
