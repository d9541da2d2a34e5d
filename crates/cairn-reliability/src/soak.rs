//! Soak: N concurrent clients mixing ingest and recall against one `cairn serve` on
//! loopback for a fixed time, driven by `cairn-load`'s driver (the one `cairn load`
//! uses). Reports errors (must be 0), latency percentiles per kind of request, and the
//! server's resident memory over time next to the data on disk; every acknowledged
//! session is read back afterwards.
use crate::corpus;
use crate::fuzz::Rng;
use crate::serve::{Cairn, Client, Resp};
use anyhow::{bail, Result};
use cairn_load::driver::{self, Kind, Op, Workload};
use cairn_load::stats::{percentile, sorted};
use serde::Serialize;
use serde_json::json;
use std::time::Duration;

pub const SPACE: &str = "soak";

#[derive(Debug, Clone)]
pub struct SoakOptions {
    pub clients: usize,
    pub duration: Duration,
    pub seed: u64,
    /// Share of requests that ingest (the rest recall), in percent.
    pub ingest_percent: usize,
}

impl Default for SoakOptions {
    fn default() -> Self {
        Self {
            clients: 32,
            duration: Duration::from_secs(10),
            seed: 1,
            ingest_percent: 20,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Latency {
    pub requests: usize,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// Nearest-rank percentiles ([`cairn_load::stats`]).
fn latency(ms: &[f64]) -> Latency {
    let s = sorted(ms);
    Latency {
        requests: s.len(),
        p50_ms: percentile(&s, 50.0),
        p95_ms: percentile(&s, 95.0),
        p99_ms: percentile(&s, 99.0),
        max_ms: s.last().copied().unwrap_or(0.0),
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RssSample {
    pub second: f64,
    pub rss_mib: f64,
    pub data_mib: f64,
    pub sessions_acknowledged: usize,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct SoakReport {
    pub clients: usize,
    pub seconds: f64,
    pub requests: usize,
    pub requests_per_second: f64,
    pub errors: usize,
    pub error_samples: Vec<String>,
    pub ingest: Latency,
    pub recall: Latency,
    pub sessions_acknowledged: usize,
    /// Acknowledged sessions read back after the run (all must be there).
    pub sessions_verified: usize,
    pub rss_start_mib: f64,
    /// After a quarter of the run (warm: model, caches and runtime loaded).
    pub rss_warm_mib: f64,
    pub rss_end_mib: f64,
    pub rss_max_mib: f64,
    pub data_start_mib: f64,
    pub data_end_mib: f64,
    pub rss_samples: Vec<RssSample>,
}

fn dir_mib(dir: &std::path::Path) -> f64 {
    fn walk(p: &std::path::Path) -> u64 {
        let Ok(rd) = std::fs::read_dir(p) else {
            return 0;
        };
        rd.flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => walk(&e.path()),
                Ok(m) => m.len(),
                Err(_) => 0,
            })
            .sum()
    }
    walk(dir) as f64 / (1 << 20) as f64
}

const QUESTIONS: &[&str] = &[
    "Where was the parcel with my bicycle shipped?",
    "What is the kayak insured for?",
    "Which pier did the telescope leave from?",
    "what did I send to Oslo last month",
    "How much is the guitar parcel insured for?",
    "Where did the camera go?",
];

/// The soak's requests: a new session of four messages (`ingest_percent` of them) or a
/// recall of one of [`QUESTIONS`]; each client draws from its own seeded generator.
struct SoakMix {
    seed: u64,
    ingest_percent: usize,
}

impl Workload for SoakMix {
    type State = Rng;
    /// An acknowledged session: its id and first message text.
    type Ack = (String, String);

    fn client(&self, client: usize) -> Rng {
        Rng(self.seed.wrapping_mul(1000) + client as u64)
    }

    fn next(&self, rng: &mut Rng, client: usize, i: usize) -> Op<(String, String)> {
        if rng.below(100) < self.ingest_percent {
            let id = format!("c{client}-{}", i + 1);
            let (s, texts) = corpus::session(&id, &corpus::nonce(rng), rng);
            Op {
                kind: Kind::Write,
                method: "POST",
                path: format!("/v1/spaces/{SPACE}/sessions"),
                body: Some(s),
                ack: Some((id, texts[0].clone())),
            }
        } else {
            let q = QUESTIONS[rng.below(QUESTIONS.len())];
            Op {
                kind: Kind::Read,
                method: "POST",
                path: format!("/v1/spaces/{SPACE}/recall"),
                body: Some(json!({"query": q, "top_k": 5, "token_budget": 400})),
                ack: None,
            }
        }
    }

    fn accept(&self, kind: Kind, r: &Resp) -> bool {
        r.status == 200 && (kind == Kind::Write || r.body["hits"].is_array())
    }
}

pub fn run(
    cairn: &Cairn,
    opts: &SoakOptions,
    mut progress: impl FnMut(&str),
) -> Result<SoakReport> {
    let server = cairn.serve(&[])?;
    let client = server.client.clone();
    seed_base(&client, opts.seed)?;
    let data_start = dir_mib(&cairn.dir);
    let rss_start = server.rss_kib().unwrap_or(0) as f64 / 1024.0;
    let mix = SoakMix {
        seed: opts.seed,
        ingest_percent: opts.ingest_percent,
    };
    let mut samples = Vec::new();
    let mut next_progress = Duration::from_secs(30);
    let d = driver::drive(&client, opts.clients, opts.duration, &mix, |elapsed, n| {
        samples.push(RssSample {
            second: elapsed.as_secs_f64(),
            rss_mib: server.rss_kib().unwrap_or(0) as f64 / 1024.0,
            data_mib: 0.0,
            sessions_acknowledged: n,
        });
        if elapsed >= next_progress {
            next_progress += Duration::from_secs(30);
            progress(&format!(
                "{:.0}s: {n} sessions ingested, RSS {:.0} MiB",
                elapsed.as_secs_f64(),
                samples.last().map_or(0.0, |s| s.rss_mib)
            ));
        }
    });
    let mut errs = d.error_samples;
    let mut errors = d.errors;
    let seconds = d.seconds;
    let rss_end = server.rss_kib().unwrap_or(0) as f64 / 1024.0;
    // Every acknowledged session is there, exactly.
    let acked = d.acked;
    let verified = read_back(&client, &acked, &mut errs, &mut errors);
    server.stop()?;
    // Keep ~60 samples, evenly spread.
    let step = samples.len().div_ceil(60).max(1);
    let rss_max = samples.iter().map(|s| s.rss_mib).fold(rss_end, f64::max);
    let rss_warm = samples
        .iter()
        .find(|s| s.second >= seconds / 4.0)
        .map_or(rss_start, |s| s.rss_mib);
    let mut kept: Vec<RssSample> = samples.into_iter().step_by(step).collect();
    let data_end = dir_mib(&cairn.dir);
    if let Some(last) = kept.last_mut() {
        last.data_mib = data_end;
    }
    let requests = d.writes_ms.len() + d.reads_ms.len();
    Ok(SoakReport {
        clients: opts.clients,
        seconds,
        requests,
        requests_per_second: requests as f64 / seconds,
        errors,
        error_samples: errs.into_iter().take(10).collect(),
        ingest: latency(&d.writes_ms),
        recall: latency(&d.reads_ms),
        sessions_acknowledged: acked.len(),
        sessions_verified: verified,
        rss_start_mib: rss_start,
        rss_warm_mib: rss_warm,
        rss_end_mib: rss_end,
        rss_max_mib: rss_max,
        data_start_mib: data_start,
        data_end_mib: data_end,
        rss_samples: kept,
    })
}

/// Creates the soak's space and ingests a base of 40 sessions to recall from.
fn seed_base(client: &Client, seed: u64) -> Result<()> {
    let r = client
        .post("/v1/spaces", &json!({"name": SPACE}))
        .map_err(anyhow::Error::msg)?;
    if !matches!(r.status, 200 | 201 | 409) {
        bail!("creating space: {} {}", r.status, r.text);
    }
    // A base to recall from.
    let mut rng = Rng(seed);
    let base: Vec<_> = (0..40)
        .map(|i| corpus::session(&format!("base-{i}"), &corpus::nonce(&mut rng), &mut rng).0)
        .collect();
    let r = client
        .post(
            &format!("/v1/spaces/{SPACE}/sessions/batch"),
            &json!({"sessions": base}),
        )
        .map_err(anyhow::Error::msg)?;
    if r.status != 200 {
        bail!("seeding: {} {}", r.status, r.text);
    }
    Ok(())
}

/// Reads every acknowledged session back; each that is not there exactly is an error.
/// Returns how many were.
fn read_back(
    client: &Client,
    acked: &[(String, String)],
    errs: &mut Vec<String>,
    errors: &mut usize,
) -> usize {
    let mut verified = 0;
    for (id, first) in acked {
        match client.get(&format!("/v1/spaces/{SPACE}/sessions/{id}")) {
            Ok(r)
                if r.status == 200
                    && r.body["session"]["messages"][0]["text"].as_str() == Some(first) =>
            {
                verified += 1
            }
            Ok(r) => {
                *errors += 1;
                errs.push(format!(
                    "acknowledged session {id} reads back as {} {}",
                    r.status, r.text
                ))
            }
            Err(e) => {
                *errors += 1;
                errs.push(e)
            }
        }
    }
    verified
}
