//! The concurrency loop every load shares: `clients` threads, each sending the requests a
//! [`Workload`] plans for it, one after another, until the time is up. A workload says
//! what to send (reads, writes, any mix of them) and what counts as a success; the
//! driver times each request, counts errors, keeps what acknowledged writes leave to
//! check afterwards, and calls back every quarter second so the caller can sample the
//! server (memory, progress) while it runs.
use crate::client::{Client, Resp};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Reads are answered from what is stored; writes change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
}

/// One request a client sends.
#[derive(Debug, Clone)]
pub struct Op<A> {
    pub kind: Kind,
    pub method: &'static str,
    /// Already percent-encoded.
    pub path: String,
    pub body: Option<Value>,
    /// What to keep once the server accepted the request (a write to read back later).
    pub ack: Option<A>,
}

/// What a load sends.
pub trait Workload: Sync {
    /// Per-client state: a seeded generator, a counter.
    type State: Send;
    /// What an accepted request leaves behind to check or count afterwards.
    type Ack: Send;
    /// The state of client `client` (0-based), before its first request.
    fn client(&self, client: usize) -> Self::State;
    /// The `i`-th request (0-based) of client `client`.
    fn next(&self, state: &mut Self::State, client: usize, i: usize) -> Op<Self::Ack>;
    /// Whether an answer is a success; by default any 2xx status.
    fn accept(&self, _kind: Kind, resp: &Resp) -> bool {
        (200..300).contains(&resp.status)
    }
}

/// Error messages kept per client (the count covers them all).
const SAMPLES: usize = 10;

/// What a load did.
#[derive(Debug)]
pub struct Driven<A> {
    pub seconds: f64,
    /// Latency of every accepted read and write, milliseconds, in no particular order.
    pub reads_ms: Vec<f64>,
    pub writes_ms: Vec<f64>,
    /// Requests refused or unanswered.
    pub errors: usize,
    /// The first error messages (at most 10 per client, in client order).
    pub error_samples: Vec<String>,
    /// What the accepted requests left ([`Op::ack`]), in the order they were accepted.
    pub acked: Vec<A>,
}

struct ClientResult {
    reads: Vec<f64>,
    writes: Vec<f64>,
    errors: usize,
    samples: Vec<String>,
}

/// Runs `clients` concurrent clients of `client`'s server for `duration`. `tick` is
/// called on this thread every 250 ms with the time elapsed and the number of
/// acknowledgements kept so far ([`Op::ack`]).
pub fn drive<W: Workload>(
    client: &Client,
    clients: usize,
    duration: Duration,
    workload: &W,
    mut tick: impl FnMut(Duration, usize),
) -> Driven<W::Ack> {
    let stop = AtomicBool::new(false);
    let acked: Mutex<Vec<W::Ack>> = Mutex::new(Vec::new());
    let n_acked = AtomicUsize::new(0);
    let start = Instant::now();
    let results: Vec<ClientResult> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients.max(1))
            .map(|c| {
                let (client, stop, acked, n_acked) = (client.clone(), &stop, &acked, &n_acked);
                s.spawn(move || run_client(&client, c, workload, stop, acked, n_acked))
            })
            .collect();
        while start.elapsed() < duration {
            std::thread::sleep(
                Duration::from_millis(250).min(duration.saturating_sub(start.elapsed())),
            );
            tick(start.elapsed(), n_acked.load(Ordering::Relaxed));
        }
        stop.store(true, Ordering::SeqCst);
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| ClientResult {
                    reads: Vec::new(),
                    writes: Vec::new(),
                    errors: 1,
                    samples: vec!["a client thread panicked".into()],
                })
            })
            .collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let mut out = Driven {
        seconds,
        reads_ms: Vec::new(),
        writes_ms: Vec::new(),
        errors: 0,
        error_samples: Vec::new(),
        acked: acked.into_inner().unwrap_or_else(|p| p.into_inner()),
    };
    for r in results {
        out.reads_ms.extend(r.reads);
        out.writes_ms.extend(r.writes);
        out.errors += r.errors;
        out.error_samples.extend(r.samples);
    }
    out
}

fn run_client<W: Workload>(
    client: &Client,
    c: usize,
    workload: &W,
    stop: &AtomicBool,
    acked: &Mutex<Vec<W::Ack>>,
    n_acked: &AtomicUsize,
) -> ClientResult {
    let mut state = workload.client(c);
    let mut r = ClientResult {
        reads: Vec::new(),
        writes: Vec::new(),
        errors: 0,
        samples: Vec::new(),
    };
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let op = workload.next(&mut state, c, i);
        i += 1;
        let body = op.body.as_ref().map(Value::to_string);
        let t = Instant::now();
        let answer = client.request(
            op.method,
            &op.path,
            body.as_deref().map(|b| ("application/json", b.as_bytes())),
            None,
        );
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let failure = match answer {
            Ok(resp) if workload.accept(op.kind, &resp) => {
                match op.kind {
                    Kind::Read => r.reads.push(ms),
                    Kind::Write => r.writes.push(ms),
                }
                if let Some(a) = op.ack {
                    acked.lock().unwrap_or_else(|p| p.into_inner()).push(a);
                    n_acked.fetch_add(1, Ordering::Relaxed);
                }
                continue;
            }
            Ok(resp) => format!("{} {}: {} {}", op.method, op.path, resp.status, resp.text),
            Err(e) => e,
        };
        tracing::warn!(error = %failure, "request failed under load");
        r.errors += 1;
        if r.samples.len() < SAMPLES {
            r.samples.push(failure);
        }
    }
    r
}
