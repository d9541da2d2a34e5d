//! An optional LLM for Cairn: one blocking client for OpenAI-compatible endpoints
//! (`/v1/chat/completions`, `/v1/embeddings`), as served by Ollama, vLLM, the llama.cpp
//! server, LM Studio and hosted APIs.
//!
//! Owns: configuration ([`LlmConfig`]: base URL, model, API key from an environment
//! variable, timeout, retries with exponential backoff on transport errors, 429 and 5xx,
//! a concurrency limit), chat with temperature, `max_tokens` and structured output
//! (`response_format` with a JSON schema where the server takes it; the request is sent
//! again without it where the server refuses it, and the answer is parsed tolerantly:
//! code fences, prose around the JSON, trailing commas), usage accounting (calls,
//! retries, failures, prompt and completion tokens), and an [`Embedder`] over the
//! embeddings endpoint.
//!
//! Must never: be needed. Nothing on Cairn's default path calls an LLM; the engine never
//! waits on one during ingest or recall, and every caller treats an [`LlmError`] as
//! "no answer now", never as a failed write. This crate knows no spaces, storage or
//! ranking, and never logs prompts or keys. Its tests talk to the scripted stub server of
//! `cairn-testkit` (`llm_stub`), which is not part of this library.
//!
//! [`Embedder`]: cairn_core::Embedder

mod client;
mod config;
mod embedder;
mod json;

pub use client::{ChatMessage, ChatRequest, ChatResponse, LlmClient, Usage};
pub use config::LlmConfig;
pub use embedder::LlmEmbedder;
pub use json::extract_json;

/// What went wrong talking to the LLM server.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("LLM configuration: {0}")]
    Config(String),
    /// Connection refused, reset, DNS, timeout: the server may come back.
    #[error("LLM server unreachable at {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("LLM server answered HTTP {status}: {body}")]
    Status { status: u16, body: String },
    /// The answer is not the shape the API promises.
    #[error("LLM answer malformed: {0}")]
    BadResponse(String),
    /// The model's text holds no JSON value where one was asked for.
    #[error("LLM gave no JSON: {0:.200}")]
    NoJson(String),
}

impl LlmError {
    /// Whether trying again later may succeed (the server is down, busy or failing).
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Unreachable { .. } => true,
            LlmError::Status { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }
}
