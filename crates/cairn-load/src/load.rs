//! `cairn load`: seeds a space with synthetic conversations through the batch endpoint
//! (when asked), then runs N concurrent clients for a fixed time and reports requests/s
//! and latency percentiles, per kind of request. It talks HTTP only, so it measures what
//! a client gets.
//!
//! Mixes: `read` (recalls of generated questions), `write` (appends of one message to a
//! session: every client to one session, or spread over many), `mixed` (each request a
//! write with probability `write_percent`).
use crate::client::{encode, Client};
use crate::corpus::{self, Lcg};
use crate::driver::{self, Kind, Op, Workload};
use crate::stats::{percentile, sorted};
use serde::Serialize;
use serde_json::json;
use std::time::{Duration, Instant};

/// What the clients send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mix {
    /// Recall only.
    Read,
    /// Appends of one message only.
    Write,
    /// Recalls and appends.
    Mixed,
}

#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Base URL, e.g. `http://127.0.0.1:7700`.
    pub url: String,
    pub key: Option<String>,
    pub space: String,
    pub concurrency: usize,
    pub duration: Duration,
    /// Messages to ingest before measuring (0: use the space as it is).
    pub seed_messages: usize,
    pub top_k: usize,
    /// Make every query text unique, so none is served from the embedding cache (the
    /// query set is otherwise 256 texts, embedded once each).
    pub fresh_queries: bool,
    pub mix: Mix,
    /// `mixed`: the share of requests that append, in percent.
    pub write_percent: usize,
    /// Sessions the appends go to: 1 = every client appends to the same session; N =
    /// request i of client c goes to session (c + i * clients) mod N.
    pub sessions: usize,
}

/// Throughput and latency of one kind of request (accepted requests only).
#[derive(Debug, Clone, Default, Serialize)]
pub struct KindReport {
    pub requests: usize,
    pub per_second: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    pub space: String,
    pub messages_in_space: u64,
    pub mix: Mix,
    pub concurrency: usize,
    pub fresh_queries: bool,
    pub seconds: f64,
    /// Every accepted request, reads and writes together.
    pub requests: usize,
    pub errors: usize,
    pub requests_per_second: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Recalls (mixes `read` and `mixed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<KindReport>,
    /// Acknowledged appends (mixes `write` and `mixed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write: Option<KindReport>,
    /// Sessions the appends went to, and the prefix of their ids.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub append_sessions: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub append_session_prefix: Option<String>,
    /// Seconds the seeding took (0 when nothing was seeded).
    pub seed_seconds: f64,
    /// The first error messages.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub error_samples: Vec<String>,
}

/// Percentiles (nearest rank, [`crate::stats`]) of latencies over `seconds`.
pub fn kind_report(ms: &[f64], seconds: f64) -> KindReport {
    let s = sorted(ms);
    KindReport {
        requests: s.len(),
        per_second: s.len() as f64 / seconds.max(1e-9),
        p50_ms: percentile(&s, 50.0),
        p90_ms: percentile(&s, 90.0),
        p99_ms: percentile(&s, 99.0),
        max_ms: s.last().copied().unwrap_or(0.0),
    }
}

/// The requests of `cairn load`.
struct LoadMix<'a> {
    opts: &'a LoadOptions,
    queries: Vec<String>,
    recall_path: String,
    append_path: String,
    prefix: String,
}

impl LoadMix<'_> {
    fn recall(&self, client: usize, n: usize) -> Op<()> {
        let q = &self.queries[n % self.queries.len()];
        let query = if self.opts.fresh_queries {
            format!("{q} {client}x{n}")
        } else {
            q.clone()
        };
        Op {
            kind: Kind::Read,
            method: "POST",
            path: self.recall_path.clone(),
            body: Some(json!({"query": query, "top_k": self.opts.top_k})),
            ack: None,
        }
    }

    fn append(&self, session: &str, g: &mut Lcg) -> Op<()> {
        Op {
            kind: Kind::Write,
            method: "POST",
            path: self.append_path.clone(),
            body: Some(json!({
                "session_id": session,
                "messages": [{"role": "user", "text": corpus::note(g)}],
            })),
            ack: Some(()),
        }
    }
}

impl Workload for LoadMix<'_> {
    /// A generator of notes and mix draws, and the position in the query cycle.
    type State = (Lcg, usize);
    type Ack = ();

    fn client(&self, client: usize) -> (Lcg, usize) {
        (Lcg(1000 + client as u64), client * 17)
    }

    fn next(&self, (g, n): &mut (Lcg, usize), client: usize, i: usize) -> Op<()> {
        let write = match self.opts.mix {
            Mix::Read => false,
            Mix::Write => true,
            Mix::Mixed => g.draw() % 100 < self.opts.write_percent,
        };
        if write {
            let clients = self.opts.concurrency.max(1);
            let k = (client + i * clients) % self.opts.sessions.max(1);
            self.append(&format!("{}-{k}", self.prefix), g)
        } else {
            *n += 1;
            self.recall(client, *n - 1)
        }
    }
}

fn err(e: impl std::fmt::Display) -> LoadError {
    LoadError(e.to_string())
}

/// A load that could not run (seeding, the warm-up or the stats request failed).
#[derive(Debug, thiserror::Error)]
#[error("load: {0}")]
pub struct LoadError(pub String);

/// Seeds (when asked), warms up, then measures the mix under `concurrency` clients.
pub fn run(opts: &LoadOptions) -> Result<LoadReport, LoadError> {
    let client = Client::with_timeout(&opts.url, opts.key.as_deref(), Duration::from_secs(300));
    let space = encode(&opts.space);
    let mut seed_seconds = 0.0;
    if opts.seed_messages > 0 {
        let t = Instant::now();
        let path = format!("/v1/spaces/{space}/sessions/batch");
        for chunk in corpus::synthetic_sessions(opts.seed_messages, 7).chunks(100) {
            client
                .call_ok("POST", &path, Some(&json!({ "sessions": chunk })))
                .map_err(err)?;
        }
        seed_seconds = t.elapsed().as_secs_f64();
    }
    let stats = client
        .get(&format!("/v1/spaces/{space}/stats"))
        .map_err(err)?;
    let messages_in_space = match stats.status {
        200 => stats.body["messages"].as_u64().unwrap_or(0),
        404 if opts.mix != Mix::Read => 0,
        s => return Err(err(format!("stats: HTTP {s}: {}", stats.text))),
    };
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mix = LoadMix {
        opts,
        queries: corpus::queries(11, 256),
        recall_path: format!("/v1/spaces/{space}/recall"),
        append_path: format!("/v1/spaces/{space}/messages"),
        prefix: format!("append-{stamp}"),
    };
    // Warm-up outside the clock: first-touch costs (vector index load, caches) are not
    // what a steady server does.
    let mut g = Lcg(1);
    for i in 0..4 {
        let op = match opts.mix {
            Mix::Read => mix.recall(0, i),
            Mix::Write => mix.append(&format!("{}-warmup", mix.prefix), &mut g),
            Mix::Mixed if i % 2 == 0 => mix.recall(0, i),
            Mix::Mixed => mix.append(&format!("{}-warmup", mix.prefix), &mut g),
        };
        client
            .call_ok(op.method, &op.path, op.body.as_ref())
            .map_err(|e| err(format!("warm-up: {e}")))?;
    }
    let d = driver::drive(&client, opts.concurrency, opts.duration, &mix, |_, _| {});
    let all: Vec<f64> = d.reads_ms.iter().chain(&d.writes_ms).copied().collect();
    let total = kind_report(&all, d.seconds);
    let writes = opts.mix != Mix::Read;
    Ok(LoadReport {
        space: opts.space.clone(),
        messages_in_space,
        mix: opts.mix,
        concurrency: opts.concurrency,
        fresh_queries: opts.fresh_queries,
        seconds: d.seconds,
        requests: total.requests,
        errors: d.errors,
        requests_per_second: total.per_second,
        p50_ms: total.p50_ms,
        p90_ms: total.p90_ms,
        p99_ms: total.p99_ms,
        max_ms: total.max_ms,
        read: (opts.mix != Mix::Write).then(|| kind_report(&d.reads_ms, d.seconds)),
        write: writes.then(|| kind_report(&d.writes_ms, d.seconds)),
        append_sessions: writes.then_some(opts.sessions.max(1)),
        append_session_prefix: writes.then(|| mix.prefix.clone()),
        seed_seconds,
        error_samples: d.error_samples,
    })
}
