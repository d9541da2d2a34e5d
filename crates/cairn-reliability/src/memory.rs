//! What a server's resident memory does under the requests issue 54 found growing it
//! (findings 7 and 8): concurrent exports of a large space, and many recalls each with a
//! distinct large filter. Before the fixes, 8 concurrent exports took a server from 770
//! to 1,450 MiB (each held its space's whole answer) and 150 recalls with distinct 6 MiB
//! filters from 298 to 1,668 MiB (caches keyed by the filter's text, by count).
//!
//! The run writes `sessions` sessions of `session_kib` KiB each, measures the server's
//! RSS (sampled every 20 ms while requests run), then:
//! - `exports` exports of the space at once, each read slowly by its client (so that an
//!   export that builds its answer first holds all of it): the peak RSS above the start
//!   must stay under half of `exports` times the space (what a server holding every
//!   export whole needs at the least);
//! - `filters` recalls, each with a distinct `in` list of `filter_values` values
//!   (about 100 bytes each) over the session ids: what the second half of them adds to
//!   the RSS must stay under a tenth of their filters' bytes (the allocator keeps what
//!   the first requests took; a cache that keeps what each filter holds keeps growing).
use crate::serve::{Cairn, Client, Server};
use anyhow::{bail, Result};
use serde::Serialize;
use serde_json::{json, Value};
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct MemoryOptions {
    pub sessions: usize,
    pub session_kib: usize,
    pub exports: usize,
    pub filters: usize,
    pub filter_values: usize,
}

impl Default for MemoryOptions {
    fn default() -> Self {
        Self {
            sessions: 64,
            session_kib: 256,
            exports: 8,
            filters: 150,
            filter_values: 10_000,
        }
    }
}

#[derive(Debug, Default, Serialize)]
pub struct MemoryReport {
    /// Bytes of message text written to the space.
    pub space_mib: f64,
    pub rss_start_mib: f64,
    pub rss_peak_during_exports_mib: f64,
    pub exports_completed: usize,
    pub export_mib_each: f64,
    pub filters_mib: f64,
    pub rss_after_half_the_filters_mib: f64,
    pub rss_after_filters_mib: f64,
    pub recalls_answered: usize,
    pub failures: Vec<String>,
}

impl MemoryReport {
    /// Growth during the exports under half of what holding each whole takes, growth
    /// over the second half of the filters under a tenth of their bytes, and every
    /// request answered.
    pub fn passed(&self, opts: &MemoryOptions) -> bool {
        let whole_exports = opts.exports as f64 * self.space_mib;
        self.failures.is_empty()
            && self.exports_completed == opts.exports
            && self.recalls_answered == opts.filters
            && self.rss_peak_during_exports_mib - self.rss_start_mib < whole_exports / 2.0
            && self.rss_after_filters_mib - self.rss_after_half_the_filters_mib
                < self.filters_mib / 20.0
    }
}

const SPACE: &str = "memory";

pub fn run(cairn: &Cairn, opts: &MemoryOptions, say: impl Fn(&str)) -> Result<MemoryReport> {
    let server = cairn.serve(&[])?;
    let mut report = MemoryReport::default();
    let t = std::time::Instant::now();
    let bytes = fill(&server.client, opts)?;
    report.space_mib = mib(bytes as u64);
    // Settles what the writes left (their text-index merges) before the baseline.
    std::thread::sleep(Duration::from_millis(500));
    report.rss_start_mib = rss(&server);
    say(&format!(
        "memory: {:.0} MiB written in {:.1} s, RSS {:.0} MiB",
        report.space_mib,
        t.elapsed().as_secs_f64(),
        report.rss_start_mib
    ));
    let (peak, exported) = sampling(&server, || exports(&server, opts.exports));
    report.rss_peak_during_exports_mib = peak;
    match exported {
        Ok(sizes) => {
            report.exports_completed = sizes.len();
            report.export_mib_each = sizes.first().map_or(0.0, |b| mib(*b));
        }
        Err(e) => report.failures.push(format!("exports: {e:#}")),
    }
    say(&format!(
        "memory: exports done at {:.1} s",
        t.elapsed().as_secs_f64()
    ));
    let (answered, filter_bytes) = filtered_recalls(&server, opts, &mut report);
    report.recalls_answered = answered;
    report.filters_mib = mib(filter_bytes);
    report.rss_after_filters_mib = rss(&server);
    say(&format!(
        "memory: recalls done at {:.1} s",
        t.elapsed().as_secs_f64()
    ));
    say(&format!(
        "memory: peak {:.0} MiB during {} exports of {:.0} MiB, {:.0} MiB after {} recalls with {:.0} MiB of filters",
        report.rss_peak_during_exports_mib,
        report.exports_completed,
        report.export_mib_each,
        report.rss_after_filters_mib,
        report.recalls_answered,
        report.filters_mib
    ));
    server.stop()?;
    Ok(report)
}

/// Writes the sessions; the bytes of text written.
fn fill(c: &Client, opts: &MemoryOptions) -> Result<usize> {
    let mut bytes = 0;
    for s in 0..opts.sessions {
        // Messages of 16 KiB, words no other message repeats.
        let messages: Vec<Value> = (0..opts.session_kib / 16)
            .map(
                |m| json!({"speaker": "user", "text": crate::unique_words(s * 1000 + m, 16 << 10)}),
            )
            .collect();
        bytes += messages.len() * (16 << 10);
        let r = c
            .post(
                &format!("/v1/spaces/{SPACE}/sessions"),
                &json!({"id": format!("s{s}"), "messages": messages}),
            )
            .map_err(anyhow::Error::msg)?;
        if r.status != 200 {
            bail!("writing session s{s}: {} {}", r.status, r.body);
        }
    }
    Ok(bytes)
}

/// Runs `work` while sampling the server's RSS every 20 ms; the peak, in MiB.
fn sampling<T>(server: &Server, work: impl FnOnce() -> T) -> (f64, T) {
    let stop = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    let pid = server.pid;
    let sampler = {
        let (stop, peak) = (stop.clone(), peak.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Some(kib) = crate::serve::rss_kib_of(pid) {
                    peak.fetch_max(kib, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let out = work();
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    (peak.load(Ordering::Relaxed) as f64 / 1024.0, out)
}

/// `n` exports at once, each client reading 64 KiB every 5 ms; the bytes each read.
fn exports(server: &Server, n: usize) -> Result<Vec<u64>> {
    let base = server.client.base().to_string();
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let base = base.clone();
            std::thread::spawn(move || -> Result<u64> {
                let agent = cairn_load::client::agent(Duration::from_secs(600));
                let resp = agent
                    .get(format!("{base}/v1/spaces/{SPACE}/export"))
                    .header(
                        "Authorization",
                        format!("Bearer {}", crate::serve::ADMIN_KEY),
                    )
                    .call()?;
                if resp.status() != 200 {
                    bail!("export answered {}", resp.status());
                }
                let mut body = resp.into_body().into_reader();
                let mut buf = vec![0u8; 64 << 10];
                let mut total = 0u64;
                loop {
                    let k = body.read(&mut buf)?;
                    if k == 0 {
                        return Ok(total);
                    }
                    total += k as u64;
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("export thread panicked")))
        })
        .collect()
}

/// Recalls each with a distinct `in` list; how many answered 200, and the filters' bytes.
fn filtered_recalls(
    server: &Server,
    opts: &MemoryOptions,
    report: &mut MemoryReport,
) -> (usize, u64) {
    let c = &server.client;
    let (mut answered, mut bytes) = (0, 0u64);
    for f in 0..opts.filters {
        if f == opts.filters / 2 {
            report.rss_after_half_the_filters_mib = rss(server);
        }
        let values: Vec<String> = (1..opts.filter_values)
            .map(|v| format!("s{v}-{f}-{}", "x".repeat(90)))
            .chain(std::iter::once("s0".to_string()))
            .collect();
        let body = json!({"query": "w1", "filter": {"session_id": {"in": values}}});
        bytes += body.to_string().len() as u64;
        match c.post(&format!("/v1/spaces/{SPACE}/recall"), &body) {
            Ok(r) if r.status == 200 => answered += 1,
            Ok(r) => report
                .failures
                .push(format!("recall {f}: {} {}", r.status, r.body)),
            Err(e) => report.failures.push(format!("recall {f}: {e}")),
        }
        if report.failures.len() >= 5 {
            break;
        }
    }
    (answered, bytes)
}

fn rss(server: &Server) -> f64 {
    server.rss_kib().map_or(0.0, |k| k as f64 / 1024.0)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}
