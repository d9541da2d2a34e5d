//! A load driver for a running server: seeds a space with synthetic conversations through
//! the batch endpoint, then runs N concurrent clients issuing recalls for a fixed time and
//! reports requests/s and latency percentiles. It talks HTTP only, so it measures what a
//! client gets.
use crate::error::ServerError;
use serde::Serialize;
use serde_json::json;
use std::time::{Duration, Instant};

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
}

#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    pub space: String,
    pub messages_in_space: u64,
    pub concurrency: usize,
    pub fresh_queries: bool,
    pub seconds: f64,
    pub requests: usize,
    pub errors: usize,
    pub requests_per_second: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Seconds the seeding took (0 when nothing was seeded).
    pub seed_seconds: f64,
}

const PEOPLE: &[&str] = &[
    "Maya", "Tom", "Priya", "Lucas", "Aiko", "Omar", "Elena", "Kofi", "Sven", "Lena",
];
const THINGS: &[&str] = &[
    "bicycle",
    "guitar",
    "camera",
    "laptop",
    "kayak",
    "telescope",
    "sewing machine",
    "espresso maker",
    "tent",
    "keyboard",
    "drone",
    "bookshelf",
];
const PLACES: &[&str] = &[
    "Lisbon", "Kyoto", "Denver", "Nairobi", "Oslo", "Hanoi", "Lima", "Tallinn", "Perth",
    "Montreal", "Seville", "Busan",
];
const ADJ: &[&str] = &[
    "red",
    "second-hand",
    "vintage",
    "tiny",
    "waterproof",
    "noisy",
    "borrowed",
    "blue",
];

/// Small deterministic generator: the same seed gives the same corpus and queries.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.next() % xs.len()]
    }
}

/// Synthetic sessions of 10 messages (5 exchanges) each.
pub fn synthetic_sessions(n_messages: usize, seed: u64) -> Vec<serde_json::Value> {
    let mut g = Lcg(seed);
    let sessions = n_messages.div_ceil(10);
    (0..sessions)
        .map(|s| {
            let mut messages = Vec::new();
            for i in 0..5 {
                let (p, t, pl, a) = (g.pick(PEOPLE), g.pick(THINGS), g.pick(PLACES), g.pick(ADJ));
                let n = g.next() % 900 + 100;
                messages.push(json!({"role": "user", "text": format!(
                    "Session {s} note {i}: {p} lent me a {a} {t} when we met in {pl}; it cost about {n} dollars."
                )}));
                messages.push(json!({"role": "assistant", "text": format!(
                    "Got it: the {a} {t} came from {p}, in {pl}, roughly {n} dollars."
                )}));
            }
            json!({
                "id": format!("load-{s}"),
                "date": format!("2024-{:02}-{:02} 10:00", 1 + s % 12, 1 + s % 28),
                "messages": messages,
            })
        })
        .collect()
}

fn queries(seed: u64, n: usize) -> Vec<String> {
    let mut g = Lcg(seed);
    (0..n)
        .map(|i| match i % 3 {
            0 => format!("Who lent me the {} {}?", g.pick(ADJ), g.pick(THINGS)),
            1 => format!("What did I get in {}?", g.pick(PLACES)),
            _ => format!(
                "How much was the {} from {}?",
                g.pick(THINGS),
                g.pick(PEOPLE)
            ),
        })
        .collect()
}

fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(300))
        .build()
}

fn post(
    agent: &ureq::Agent,
    url: &str,
    key: Option<&str>,
    body: &serde_json::Value,
) -> Result<String, String> {
    let mut req = agent.post(url).set("Content-Type", "application/json");
    if let Some(k) = key {
        req = req.set("Authorization", &format!("Bearer {k}"));
    }
    match req.send_string(&body.to_string()) {
        Ok(resp) => resp.into_string().map_err(|e| e.to_string()),
        Err(ureq::Error::Status(code, resp)) => Err(format!(
            "HTTP {code}: {}",
            resp.into_string().unwrap_or_default()
        )),
        Err(e) => Err(e.to_string()),
    }
}

fn percentile(sorted_ms: &[f64], p: f64) -> f64 {
    if sorted_ms.is_empty() {
        return 0.0;
    }
    let idx = ((p / 100.0) * (sorted_ms.len() - 1) as f64).round() as usize;
    sorted_ms[idx.min(sorted_ms.len() - 1)]
}

/// Seeds (when asked), then measures recall under `concurrency` clients.
pub fn run(opts: &LoadOptions) -> Result<LoadReport, ServerError> {
    let base = opts.url.trim_end_matches('/');
    let key = opts.key.as_deref();
    let a = agent();
    let mut seed_seconds = 0.0;
    if opts.seed_messages > 0 {
        let t = Instant::now();
        let url = format!("{base}/v1/spaces/{}/sessions/batch", opts.space);
        for chunk in synthetic_sessions(opts.seed_messages, 7).chunks(100) {
            post(&a, &url, key, &json!({ "sessions": chunk })).map_err(ServerError::Load)?;
        }
        seed_seconds = t.elapsed().as_secs_f64();
    }
    let stats_url = format!("{base}/v1/spaces/{}/stats", opts.space);
    let mut req = a.get(&stats_url);
    if let Some(k) = key {
        req = req.set("Authorization", &format!("Bearer {k}"));
    }
    let stats: serde_json::Value = req
        .call()
        .map_err(|e| ServerError::Load(format!("stats: {e}")))?
        .into_string()
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    let messages_in_space = stats["messages"].as_u64().unwrap_or(0);

    let recall_url = format!("{base}/v1/spaces/{}/recall", opts.space);
    let qs = queries(11, 256);
    // Warm-up outside the clock: first-touch costs (vector index load, caches) are not
    // what a steady server does.
    for q in qs.iter().take(4) {
        post(
            &a,
            &recall_url,
            key,
            &json!({"query": q, "top_k": opts.top_k}),
        )
        .map_err(ServerError::Load)?;
    }
    let deadline = Instant::now() + opts.duration;
    let start = Instant::now();
    let results: Vec<(Vec<f64>, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..opts.concurrency.max(1))
            .map(|c| {
                let (qs, url) = (&qs, &recall_url);
                s.spawn(move || {
                    let a = agent();
                    let mut lat = Vec::new();
                    let mut errors = 0;
                    let mut i = c * 17;
                    while Instant::now() < deadline {
                        let q = if opts.fresh_queries {
                            format!("{} {c}x{i}", qs[i % qs.len()])
                        } else {
                            qs[i % qs.len()].clone()
                        };
                        i += 1;
                        let t = Instant::now();
                        match post(&a, url, key, &json!({"query": q, "top_k": opts.top_k})) {
                            Ok(_) => lat.push(t.elapsed().as_secs_f64() * 1000.0),
                            Err(e) => {
                                errors += 1;
                                tracing::warn!(error = %e, "recall failed under load");
                            }
                        }
                    }
                    (lat, errors)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let errors = results.iter().map(|r| r.1).sum();
    let mut lat: Vec<f64> = results.into_iter().flat_map(|r| r.0).collect();
    lat.sort_by(|a, b| a.total_cmp(b));
    Ok(LoadReport {
        space: opts.space.clone(),
        messages_in_space,
        concurrency: opts.concurrency,
        fresh_queries: opts.fresh_queries,
        seconds,
        requests: lat.len(),
        errors,
        requests_per_second: lat.len() as f64 / seconds.max(1e-9),
        p50_ms: percentile(&lat, 50.0),
        p90_ms: percentile(&lat, 90.0),
        p99_ms: percentile(&lat, 99.0),
        max_ms: lat.last().copied().unwrap_or(0.0),
        seed_seconds,
    })
}
