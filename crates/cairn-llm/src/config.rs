use crate::LlmError;
use serde::{Deserialize, Serialize};

/// Where and how to reach an OpenAI-compatible server (the `[llm]` table of `cairn.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// Base URL including the API version, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    /// Chat model name as the server knows it.
    pub model: String,
    /// Environment variable holding the API key (sent as `Authorization: Bearer`); unset
    /// or empty means no key (local servers).
    pub api_key_env: Option<String>,
    /// Per request, seconds.
    pub timeout_secs: u64,
    /// Extra attempts after a transient failure (unreachable, 429, 5xx).
    pub retries: u32,
    /// First wait before a retry, milliseconds; doubled after each.
    pub backoff_ms: u64,
    /// Requests in flight at once from this client.
    pub max_concurrency: usize,
    /// Ask for structured output with `response_format: json_schema` (servers that refuse
    /// it are asked again without; the answer is parsed tolerantly either way).
    pub json_schema: bool,
    /// Embedding model on the same server, when embeddings come from it.
    pub embedding_model: Option<String>,
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:8088/v1".into(),
            model: String::new(),
            api_key_env: None,
            timeout_secs: 120,
            retries: 2,
            backoff_ms: 500,
            max_concurrency: 4,
            json_schema: true,
            embedding_model: None,
        }
    }
}

impl LlmConfig {
    /// `URL,MODEL` as given on the command line (`--reader http://127.0.0.1:8088/v1,smollm2`).
    pub fn from_spec(spec: &str) -> Result<Self, LlmError> {
        let (url, model) = spec.rsplit_once(',').ok_or_else(|| {
            LlmError::Config(format!(
                "{spec:?}: expected URL,MODEL (e.g. http://127.0.0.1:8088/v1,smollm2)"
            ))
        })?;
        let (url, model) = (url.trim(), model.trim());
        if !(url.starts_with("http://") || url.starts_with("https://")) || model.is_empty() {
            return Err(LlmError::Config(format!(
                "{spec:?}: expected URL,MODEL with an http(s) URL and a model name"
            )));
        }
        Ok(Self {
            base_url: url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            ..Self::default()
        })
    }

    /// Checks the settings make a usable client.
    pub fn validate(&self) -> Result<(), LlmError> {
        if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            return Err(LlmError::Config(format!(
                "base_url {:?} is not an http(s) URL",
                self.base_url
            )));
        }
        if self.model.trim().is_empty() {
            return Err(LlmError::Config("model is empty".into()));
        }
        if self.max_concurrency == 0 || self.timeout_secs == 0 {
            return Err(LlmError::Config(
                "max_concurrency and timeout_secs must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// The API key, read from the environment now (never stored in the config).
    pub fn api_key(&self) -> Option<String> {
        let var = self.api_key_env.as_deref()?;
        std::env::var(var).ok().filter(|k| !k.is_empty())
    }

    /// `MODEL @ URL`, how reports name it.
    pub fn name(&self) -> String {
        format!("{} @ {}", self.model, self.base_url)
    }
}
