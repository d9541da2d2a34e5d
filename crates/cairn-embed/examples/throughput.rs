//! Embedding throughput of the default model on this machine.
//!
//! ```text
//! cargo run --release -p cairn-embed --example throughput [-- SENTENCES [BATCH_SIZE [BACKEND]]]
//! ```
//!
//! Embeds SENTENCES (default 500) synthetic sentences of about 50 tokens each, in
//! batches of BATCH_SIZE (default 32) with BACKEND (`fp32`, the default, or `int8`),
//! and prints sentences and tokens per second; then embeds 200 short queries one at a
//! time, as recall does, and prints their median and p95 latency.
//! The thread count
//! of candle's matrix multiplication follows `RAYON_NUM_THREADS` (default: all cores).
//! On Linux the CPU seconds the process spent embedding the sentences are printed too
//! (as `scripts/onnx-minilm.py throughput` prints them for ONNX Runtime).
use cairn_core::Embedder;
use cairn_embed::{Backend, BertEmbedder, EmbedConfig};
use std::time::Instant;

#[path = "common/cpu.rs"]
mod cpu;
use cpu::process_cpu_secs;

const WORDS: &[&str] = &[
    "the",
    "agent",
    "remembered",
    "that",
    "user",
    "prefers",
    "dark",
    "roast",
    "coffee",
    "meeting",
    "moved",
    "to",
    "thursday",
    "afternoon",
    "because",
    "of",
    "travel",
    "plans",
    "project",
    "deadline",
    "is",
    "next",
    "week",
    "and",
    "budget",
    "was",
    "approved",
    "by",
    "finance",
    "team",
    "yesterday",
    "she",
    "asked",
    "about",
    "vegetarian",
    "restaurants",
    "near",
    "office",
    "in",
    "berlin",
    "he",
    "mentioned",
    "his",
    "daughter",
    "starts",
    "school",
    "september",
    "database",
    "migration",
    "failed",
    "twice",
    "during",
    "night",
    "we",
    "should",
    "schedule",
    "a",
    "review",
    "before",
    "release",
    "allergic",
    "peanuts",
    "flight",
    "lands",
    "at",
    "seven",
    "thirty",
    "conference",
    "keynote",
    "slides",
    "need",
    "updates",
    "from",
    "marketing",
];

/// Deterministic pseudo-random sentences of `words` words.
fn sentences(n: usize, words: usize) -> Vec<String> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            let mut s = Vec::with_capacity(words);
            for _ in 0..words {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                s.push(WORDS[(state >> 33) as usize % WORDS.len()]);
            }
            let mut sentence = s.join(" ");
            sentence.push('.');
            sentence
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(500);
    let batch_size: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(32);
    let backend = match args.next().as_deref() {
        None | Some("fp32") => Backend::Fp32,
        Some("int8") => Backend::Int8,
        Some(other) => return Err(format!("unknown backend {other:?}").into()),
    };
    let config = EmbedConfig {
        batch_size,
        backend,
        ..EmbedConfig::default()
    };
    let started = Instant::now();
    let embedder = BertEmbedder::load(&config)?;
    println!(
        "loaded {} ({}) from {} in {:.2?}",
        embedder.model_id(),
        embedder.backend(),
        embedder.model_dir().display(),
        started.elapsed()
    );

    let texts = sentences(n, 44);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens: usize = refs.iter().map(|t| embedder.count_tokens(t)).sum();
    println!(
        "{n} sentences, {:.1} tokens each on average (without special tokens), batch size {batch_size}, rayon threads {}",
        tokens as f64 / n as f64,
        std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "default".into())
    );

    // Warm up (first-touch allocations, page faults on the weights).
    embedder.embed(&refs[..refs.len().min(batch_size)])?;

    let started = Instant::now();
    let cpu = process_cpu_secs();
    let vectors = embedder.embed(&refs)?;
    let elapsed = started.elapsed();
    let cpu = process_cpu_secs().zip(cpu).map(|(b, a)| b - a);
    assert_eq!(vectors.len(), n);
    println!(
        "embedded {n} sentences in {:.2?}: {:.1} sentences/s, {:.0} tokens/s (special tokens included)",
        elapsed,
        n as f64 / elapsed.as_secs_f64(),
        (tokens + 2 * n) as f64 / elapsed.as_secs_f64()
    );
    if let Some(cpu) = cpu {
        println!("process CPU while embedding them: {cpu:.2} s");
    }

    // One short text at a time, as recall embeds its query.
    let queries = sentences(200, 9);
    let mut times: Vec<f64> = Vec::with_capacity(queries.len());
    for q in &queries {
        let started = Instant::now();
        embedder.embed(&[q.as_str()])?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "one 9-word query at a time: p50 {:.2} ms, p95 {:.2} ms",
        times[times.len() / 2],
        times[times.len() * 95 / 100]
    );
    Ok(())
}
