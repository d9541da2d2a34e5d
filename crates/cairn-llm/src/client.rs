use crate::{extract_json, LlmConfig, LlmError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// One message of a chat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: "system".into(),
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: "user".into(),
            content: content.into(),
        }
    }
}

/// A chat completion request.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    pub temperature: f32,
    pub max_tokens: u32,
    /// Structured output: a schema name and a JSON schema for the answer.
    pub json_schema: Option<(String, Value)>,
}

impl ChatRequest {
    /// A deterministic (temperature 0) request.
    pub fn new(messages: Vec<ChatMessage>, max_tokens: u32) -> Self {
        Self {
            messages,
            temperature: 0.0,
            max_tokens,
            json_schema: None,
        }
    }

    pub fn with_schema(mut self, name: &str, schema: Value) -> Self {
        self.json_schema = Some((name.to_string(), schema));
        self
    }
}

/// What a chat call returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub text: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Wall time of the call, retries included.
    pub latency_ms: f64,
}

/// Counts of everything a client did (cost is part of every report).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Successful calls.
    pub calls: u64,
    /// Calls that failed after their retries.
    pub failed_calls: u64,
    /// Extra attempts after transient failures.
    pub retries: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Texts embedded.
    pub embedded_texts: u64,
}

/// A blocking client for one OpenAI-compatible server and model. Shareable across threads;
/// at most `max_concurrency` requests are in flight at once.
pub struct LlmClient {
    cfg: LlmConfig,
    agent: ureq::Agent,
    in_flight: Mutex<usize>,
    slot_free: Condvar,
    usage: Mutex<Usage>,
    /// Set once the server refused `response_format`; later calls do not send it.
    no_schema: AtomicBool,
}

struct Slot<'a>(&'a LlmClient);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut n = self.0.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        *n -= 1;
        self.0.slot_free.notify_one();
    }
}

/// The largest answer read from the endpoint (an answer is a few kilobytes of JSON).
const MAX_ANSWER_BYTES: u64 = 16 << 20;

impl LlmClient {
    pub fn new(cfg: LlmConfig) -> Result<Self, LlmError> {
        cfg.validate()?;
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(cfg.timeout_secs)))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(Self {
            cfg,
            agent,
            in_flight: Mutex::new(0),
            slot_free: Condvar::new(),
            usage: Mutex::new(Usage::default()),
            no_schema: AtomicBool::new(false),
        })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.cfg
    }

    /// `MODEL @ URL`.
    pub fn name(&self) -> String {
        self.cfg.name()
    }

    /// Everything counted so far.
    pub fn usage(&self) -> Usage {
        self.usage.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn slot(&self) -> Slot<'_> {
        let mut n = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        while *n >= self.cfg.max_concurrency {
            n = self.slot_free.wait(n).unwrap_or_else(|p| p.into_inner());
        }
        *n += 1;
        Slot(self)
    }

    fn count(&self, f: impl FnOnce(&mut Usage)) {
        f(&mut self.usage.lock().unwrap_or_else(|p| p.into_inner()));
    }

    /// POSTs JSON to `path` under the base URL, retrying transient failures with
    /// exponential backoff.
    fn post(&self, path: &str, body: &Value) -> Result<Value, LlmError> {
        let url = format!("{}/{}", self.cfg.base_url.trim_end_matches('/'), path);
        let _slot = self.slot();
        let key = self.cfg.api_key();
        let mut attempt = 0;
        loop {
            let mut req = self
                .agent
                .post(&url)
                .header("Content-Type", "application/json");
            if let Some(k) = &key {
                req = req.header("Authorization", &format!("Bearer {k}"));
            }
            let unreachable = |message: String| LlmError::Unreachable {
                url: url.clone(),
                message,
            };
            let result = match req.send(body.to_string()) {
                Ok(mut resp) => {
                    let status = resp.status().as_u16();
                    let text = resp
                        .body_mut()
                        .with_config()
                        .limit(MAX_ANSWER_BYTES)
                        .read_to_string()
                        .map_err(|e| unreachable(format!("reading the answer: {e}")));
                    match text {
                        Ok(s) if (200..300).contains(&status) => serde_json::from_str::<Value>(&s)
                            .map_err(|e| {
                                LlmError::BadResponse(format!("not JSON ({e}): {s:.200}"))
                            }),
                        Ok(s) => Err(LlmError::Status {
                            status,
                            body: s.chars().take(500).collect(),
                        }),
                        Err(e) => Err(e),
                    }
                }
                Err(e) => Err(unreachable(e.to_string())),
            };
            match result {
                Err(e) if e.is_transient() && attempt < self.cfg.retries => {
                    let wait = self.cfg.backoff_ms.saturating_mul(1 << attempt.min(16));
                    tracing::debug!(error = %e, attempt, wait_ms = wait, "LLM call failed; retrying");
                    self.count(|u| u.retries += 1);
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(wait));
                }
                Err(e) => {
                    self.count(|u| u.failed_calls += 1);
                    return Err(e);
                }
                Ok(v) => return Ok(v),
            }
        }
    }

    /// One chat completion.
    pub fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let t = Instant::now();
        let mut body = json!({
            "model": self.cfg.model,
            "messages": req.messages,
            "temperature": req.temperature,
            "max_tokens": req.max_tokens,
        });
        let schema = req
            .json_schema
            .as_ref()
            .filter(|_| self.cfg.json_schema && !self.no_schema.load(Ordering::Relaxed));
        if let Some((name, schema)) = schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": true},
            });
        }
        let answer = match self.post("chat/completions", &body) {
            // A server that does not know `response_format` (or this use of it) is asked
            // again without; the answer is then parsed tolerantly.
            Err(LlmError::Status { status, .. })
                if schema.is_some() && (400..500).contains(&status) && status != 429 =>
            {
                self.no_schema.store(true, Ordering::Relaxed);
                body.as_object_mut().map(|o| o.remove("response_format"));
                self.post("chat/completions", &body)?
            }
            other => other?,
        };
        let text = answer
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                LlmError::BadResponse(format!("no choices[0].message.content in {answer:.300}"))
            })?
            .to_string();
        let tokens = |k: &str| {
            answer
                .pointer(&format!("/usage/{k}"))
                .and_then(Value::as_u64)
        };
        let response = ChatResponse {
            text,
            prompt_tokens: tokens("prompt_tokens").unwrap_or(0),
            completion_tokens: tokens("completion_tokens").unwrap_or(0),
            latency_ms: t.elapsed().as_secs_f64() * 1000.0,
        };
        self.count(|u| {
            u.calls += 1;
            u.prompt_tokens += response.prompt_tokens;
            u.completion_tokens += response.completion_tokens;
        });
        Ok(response)
    }

    /// A chat whose answer must be JSON (structured output where the server supports it,
    /// tolerant extraction always).
    pub fn chat_json(&self, req: &ChatRequest) -> Result<(Value, ChatResponse), LlmError> {
        let response = self.chat(req)?;
        match extract_json(&response.text) {
            Some(v) => Ok((v, response)),
            None => Err(LlmError::NoJson(response.text)),
        }
    }

    /// Embeddings of `texts` from the configured embedding model, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, LlmError> {
        let model = self
            .cfg
            .embedding_model
            .as_deref()
            .ok_or_else(|| LlmError::Config("no embedding_model configured".into()))?;
        let answer = self.post("embeddings", &json!({"model": model, "input": texts}))?;
        let data = answer
            .get("data")
            .and_then(Value::as_array)
            .ok_or_else(|| LlmError::BadResponse("no `data` array".into()))?;
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (i, d) in data.iter().enumerate() {
            let index = d
                .get("index")
                .and_then(Value::as_u64)
                .map_or(i, |x| x as usize);
            let v: Vec<f32> = d
                .get("embedding")
                .and_then(Value::as_array)
                .ok_or_else(|| LlmError::BadResponse("no `embedding` array".into()))?
                .iter()
                .map(|x| x.as_f64().unwrap_or(0.0) as f32)
                .collect();
            if let Some(slot) = out.get_mut(index) {
                *slot = Some(v);
            }
        }
        let tokens = answer
            .pointer("/usage/prompt_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        self.count(|u| {
            u.calls += 1;
            u.prompt_tokens += tokens;
            u.embedded_texts += texts.len() as u64;
        });
        out.into_iter()
            .enumerate()
            .map(|(i, v)| {
                v.ok_or_else(|| LlmError::BadResponse(format!("no embedding for input {i}")))
            })
            .collect()
    }
}
