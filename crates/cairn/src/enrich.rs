//! Wiring of the optional LLM into enrichment: the fact reader over an OpenAI-compatible
//! server (what it asks and how its answer is read: `cairn_engine::fact_reading`), and the background worker that keeps enrichment caught up. Ingest never waits
//! for either; a server that is down only delays enrichment (retried with backoff).
use cairn_core::{EnrichError, EnrichInput, EnrichedFact, Enricher};
use cairn_engine::{fact_reading, Engine};
use cairn_llm::{ChatMessage, ChatRequest, LlmClient};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How enrichment runs (the `[enrichment]` table of `cairn.toml`). It only runs with an
/// `[llm]` configured, and only for spaces switched on (`Memory::set_enrichment`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnrichmentConfig {
    /// Run a background worker while the memory is open (else only `Memory::enrich_now`).
    pub background: bool,
    /// Seconds the worker waits when nothing is pending.
    pub idle_secs: u64,
    /// Longest wait between tries while the LLM is unreachable, seconds (the wait doubles
    /// from 1 s up to this).
    pub max_backoff_secs: u64,
    /// Messages read per pass.
    pub batch: usize,
}

impl Default for EnrichmentConfig {
    fn default() -> Self {
        Self {
            background: true,
            idle_secs: 5,
            max_backoff_secs: 300,
            batch: 16,
        }
    }
}

/// Reads facts with an LLM (structured output where the server supports it).
pub struct LlmFactReader {
    client: LlmClient,
    name: String,
}

impl LlmFactReader {
    pub fn new(client: LlmClient) -> Self {
        let name = client.name();
        Self { client, name }
    }

    pub fn client(&self) -> &LlmClient {
        &self.client
    }
}

impl Enricher for LlmFactReader {
    fn model_id(&self) -> &str {
        &self.name
    }

    fn read_facts(&self, m: &EnrichInput<'_>) -> Result<Vec<EnrichedFact>, EnrichError> {
        let req = ChatRequest::new(
            vec![
                ChatMessage::system(fact_reading::SYSTEM),
                ChatMessage::user(fact_reading::message(m)),
            ],
            256,
        )
        .with_schema("facts", fact_reading::answer_schema());
        match self.client.chat_json(&req) {
            Ok((v, _)) => fact_reading::parse_facts(&v).ok_or_else(|| EnrichError {
                message: format!("no facts array in {v:.200}"),
                transient: false,
            }),
            Err(e) => Err(EnrichError {
                transient: e.is_transient(),
                message: e.to_string(),
            }),
        }
    }
}

/// The background worker; stops (and is joined) when dropped.
pub(crate) struct Worker {
    stop: Arc<AtomicBool>,
    pub(crate) wake: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Worker {
    pub(crate) fn start(
        engine: Arc<Engine>,
        enricher: Arc<dyn Enricher>,
        cfg: EnrichmentConfig,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let wake = Arc::new(AtomicBool::new(true));
        let (s, w) = (stop.clone(), wake.clone());
        let handle = std::thread::Builder::new()
            .name("cairn-enrich".into())
            .spawn(move || run(engine, enricher, cfg, s, w))
            .ok();
        Self { stop, wake, handle }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn run(
    engine: Arc<Engine>,
    enricher: Arc<dyn Enricher>,
    cfg: EnrichmentConfig,
    stop: Arc<AtomicBool>,
    wake: Arc<AtomicBool>,
) {
    let stopped = || stop.load(Ordering::SeqCst);
    let max_backoff = Duration::from_secs(cfg.max_backoff_secs.max(1));
    let mut backoff = Duration::from_secs(1);
    while !stopped() {
        wake.store(false, Ordering::SeqCst);
        let wait = match engine.writes().enrich_pending(
            enricher.as_ref(),
            cfg.batch.max(1),
            &stopped,
        ) {
            Ok(r) if r.unavailable.is_some() => {
                tracing::warn!(reason = ?r.unavailable, retry_in_s = backoff.as_secs(), "enrichment: LLM unavailable; will retry");
                let w = backoff;
                backoff = (backoff * 2).min(max_backoff);
                w
            }
            Ok(r) => {
                backoff = Duration::from_secs(1);
                if r.pending {
                    Duration::ZERO
                } else {
                    Duration::from_secs(cfg.idle_secs)
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "enrichment pass failed; will retry");
                let w = backoff;
                backoff = (backoff * 2).min(max_backoff);
                w
            }
        };
        let until = Instant::now() + wait;
        while !stopped() && Instant::now() < until && !wake.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
