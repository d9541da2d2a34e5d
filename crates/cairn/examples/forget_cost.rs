//! What a forget costs beside other tenants (issue 54, finding 5): a large space ("big",
//! about `--units` units across many sessions), a small one ("small", one-message
//! sessions to forget) and a third ("c", one session). While the big space keeps taking
//! appends (a live server's traffic, each re-deriving units and so replacing text-index
//! entries), the small space forgets its sessions one by one and the third appends one
//! message at a time; the forgets and the third space's appends are timed, and the third
//! space's appends are also timed with no forget running (the baseline).
//!
//! `cargo run --release -p cairn --example forget_cost -- [--units N] [--forgets K] [--dir D]`
//! (the hash embedder: no model; the store is the embedded one).
use cairn::{AppendInput, Memory, MemoryConfig, WriteOptions};
use cairn_testkit::words::Words;
use cairn_testkit::HashEmbedder;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const WORDS: &[&str] = &[
    "salary",
    "cat",
    "luna",
    "tea",
    "oolong",
    "accountant",
    "money",
    "hike",
    "garden",
    "piano",
    "lisbon",
    "train",
    "doctor",
    "recipe",
    "camera",
    "marathon",
    "river",
    "mountain",
    "coffee",
    "violin",
    "paris",
    "berlin",
    "sister",
    "brother",
    "office",
    "project",
    "deadline",
    "budget",
    "holiday",
    "flight",
    "hotel",
    "museum",
    "painting",
    "novel",
    "poem",
    "garage",
    "bicycle",
    "kitchen",
    "window",
    "letter",
    "stamp",
    "market",
    "cheese",
    "bread",
    "apple",
    "orange",
];

/// "I think" and `words` words drawn evenly from [`WORDS`], a rare word after about one
/// in four (so the term dictionary grows with the index).
fn sentence(rng: &mut Words, words: usize) -> String {
    let mut s = String::from("I think");
    for _ in 0..words {
        s.push(' ');
        s.push_str(WORDS[rng.below(WORDS.len())]);
        if rng.below(4) == 0 {
            s.push_str(&format!(" w{}", rng.below(50_000)));
        }
    }
    s.push('.');
    s
}

fn session(id: &str, rng: &mut Words, messages: usize) -> cairn::SessionInput {
    let msgs: Vec<serde_json::Value> = (0..messages)
        .map(|i| {
            json!({"role": if i % 2 == 0 { "user" } else { "assistant" },
                   "text": sentence(rng, 12)})
        })
        .collect();
    serde_json::from_value(json!({"id": id, "messages": msgs})).expect("session")
}

fn append(m: &Memory, space: &str, session: &str, text: &str) -> Duration {
    let input: AppendInput = serde_json::from_value(json!({
        "session_id": session, "messages": [{"role": "user", "text": text}]}))
    .expect("append");
    let t = Instant::now();
    m.append(space, input, &WriteOptions::default())
        .expect("append");
    t.elapsed()
}

fn ms(d: &[Duration]) -> Vec<f64> {
    let mut v: Vec<f64> = d.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

fn summary(name: &str, d: &[Duration]) {
    let v = ms(d);
    if v.is_empty() {
        println!("{name}: none");
        return;
    }
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    println!(
        "{name}: n={} p50={:.1} ms p90={:.1} ms p99={:.1} ms max={:.1} ms",
        v.len(),
        q(0.5),
        q(0.9),
        q(0.99),
        v[v.len() - 1]
    );
}

/// The third space's appends (one every 20 ms) and the big space's (one every 10 ms)
/// while `work` runs; returns the third space's latencies.
fn beside(m: &Arc<Memory>, sessions: usize, work: impl FnOnce()) -> Vec<Duration> {
    let stop = Arc::new(AtomicBool::new(false));
    let big = {
        let (m, stop) = (m.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut rng = Words::new(7, WORDS);
            while !stop.load(Ordering::SeqCst) {
                let s = format!("b{}", rng.below(sessions));
                append(&m, "big", &s, &sentence(&mut rng, 12));
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let third = {
        let (m, stop) = (m.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut rng = Words::new(11, WORDS);
            let mut out = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                out.push(append(&m, "c", "c1", &sentence(&mut rng, 12)));
                std::thread::sleep(Duration::from_millis(20));
            }
            out
        })
    };
    work();
    stop.store(true, Ordering::SeqCst);
    big.join().expect("big");
    third.join().expect("third")
}

fn main() {
    let mut units_wanted = 50_000usize;
    let mut forgets = 30usize;
    let mut dir: Option<std::path::PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--units" => {
                units_wanted = args.next().and_then(|v| v.parse().ok()).expect("--units N")
            }
            "--forgets" => {
                forgets = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--forgets K")
            }
            "--dir" => dir = args.next().map(Into::into),
            other => panic!("unknown argument {other}"),
        }
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = dir.unwrap_or_else(|| tmp.path().to_path_buf());
    let m = Arc::new(
        Memory::open_with_embedder(&dir, MemoryConfig::default(), Arc::new(HashEmbedder))
            .expect("open"),
    );
    let mut rng = Words::new(3, WORDS);
    let t = Instant::now();
    let mut sessions = 0;
    while m.stats("big").map(|s| s.units).unwrap_or(0) < units_wanted {
        let batch: Vec<cairn::SessionInput> = (0..200)
            .map(|i| session(&format!("b{}", sessions + i), &mut rng, 8))
            .collect();
        sessions += batch.len();
        m.ingest_sessions("big", batch).expect("ingest");
    }
    for i in 0..forgets {
        m.ingest_session("small", session(&format!("s{i}"), &mut rng, 1))
            .expect("small");
    }
    append(&m, "c", "c1", "first");
    m.flush().expect("flush");
    let big = m.stats("big").expect("stats");
    println!(
        "filled: big {} sessions {} units, small {} sessions, in {:.0} s; data dir {} MB",
        big.sessions,
        big.units,
        forgets,
        t.elapsed().as_secs_f64(),
        m.disk_bytes().unwrap_or(0) / 1_000_000
    );
    // Idle a while so the fill's merges end (they are not what is measured).
    std::thread::sleep(Duration::from_secs(5));

    let baseline = beside(&m, sessions, || std::thread::sleep(Duration::from_secs(6)));
    let mut forget_times = Vec::new();
    let during = beside(&m, sessions, || {
        for i in 0..forgets {
            // Appends of the big space in between replace entries in its segments.
            std::thread::sleep(Duration::from_millis(200));
            let t = Instant::now();
            m.forget_session("small", &format!("s{i}")).expect("forget");
            forget_times.push(t.elapsed());
        }
    });
    summary("forget (small space, one session)", &forget_times);
    summary("append (third space), no forget running", &baseline);
    summary("append (third space), forgets running", &during);
    // What the cap on segments costs a search of the big space (more segments to read).
    let mut recalls = Vec::new();
    for i in 0..30 {
        let q = format!(
            "{} {} {}",
            WORDS[i % WORDS.len()],
            WORDS[(i * 7) % WORDS.len()],
            WORDS[(i * 13) % WORDS.len()]
        );
        let t = Instant::now();
        m.recall("big", &q, &cairn::RecallOptions::default())
            .expect("recall");
        recalls.push(t.elapsed());
    }
    summary("recall (big space)", &recalls);
    let text_dir = dir.join("text");
    let segments = std::fs::read_dir(&text_dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "store"))
                .count()
        })
        .unwrap_or(0);
    println!("text index segments: {segments}");
    let check = m.check(false).expect("check");
    println!("check consistent: {}", check.consistent);
}
