//! The int8 backend against fp32 on real texts: speed of each, and how close their
//! vectors are.
//!
//! ```text
//! cargo run --release -p cairn-embed --example compare_backends -- TEXTS.jsonl [LIMIT [OUT [BACKENDS]]]
//! ```
//!
//! TEXTS.jsonl holds one JSON string per line (e.g. the user turns of a benchmark). Each
//! backend embeds the first LIMIT texts (default all) in one call, as ingest does; the
//! report gives texts and tokens per second for each (tokens as the model sees them:
//! truncated, special tokens included) and the cosine between the two vectors of each
//! text (mean, minimum, 1st and 5th percentile). With OUT, the vectors are written to
//! `OUT.fp32.f32` and `OUT.int8.f32` (little-endian f32, 384 per text, in input order),
//! for `scripts/onnx-minilm.py texts` to compare ONNX Runtime's with. BACKENDS (default
//! `fp32,int8`) names the backends to run; the cosine needs both. On Linux each line
//! also gives the process's CPU seconds for the call.
use cairn_core::Embedder;
use cairn_embed::{Backend, BertEmbedder, EmbedConfig};
use std::time::Instant;

#[path = "common/cpu.rs"]
mod cpu;
use cpu::process_cpu_secs;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: compare_backends TEXTS.jsonl [LIMIT [OUT [BACKENDS]]]")?;
    let limit: Option<usize> = args.next().map(|a| a.parse()).transpose()?;
    let out = args.next().filter(|o| !o.is_empty());
    let backends = args.next().unwrap_or_else(|| "fp32,int8".into());
    let mut texts: Vec<String> = Vec::new();
    for (i, line) in std::fs::read_to_string(&path)?.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let text: String =
            serde_json::from_str(line).map_err(|e| format!("{path} line {}: {e}", i + 1))?;
        texts.push(text);
    }
    if let Some(n) = limit {
        texts.truncate(n);
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut results = Vec::new();
    for name in backends.split(',') {
        let backend = match name {
            "fp32" => Backend::Fp32,
            "int8" => Backend::Int8,
            other => return Err(format!("unknown backend {other:?}").into()),
        };
        let e = BertEmbedder::load(&EmbedConfig {
            backend,
            ..EmbedConfig::default()
        })?;
        let tokens: usize = refs
            .iter()
            .map(|t| (e.count_tokens(t) + 2).min(e.max_tokens()))
            .sum();
        e.embed(&refs[..refs.len().min(16)])?;
        let started = Instant::now();
        let cpu = process_cpu_secs();
        let vectors = e.embed(&refs)?;
        let secs = started.elapsed().as_secs_f64();
        let cpu = process_cpu_secs()
            .zip(cpu)
            .map(|(b, a)| format!(", process CPU {:.2} s", b - a))
            .unwrap_or_default();
        println!(
            "{:<14} {} texts, {tokens} tokens in {secs:.2} s: {:.1} texts/s, {:.0} tokens/s{cpu}",
            e.backend(),
            refs.len(),
            refs.len() as f64 / secs,
            tokens as f64 / secs
        );
        if let Some(out) = &out {
            let bytes: Vec<u8> = vectors
                .iter()
                .flatten()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            std::fs::write(format!("{out}.{name}.f32"), bytes)?;
        }
        results.push(vectors);
    }
    if results.len() < 2 {
        return Ok(());
    }
    let mut cos: Vec<f32> = results[0]
        .iter()
        .zip(&results[1])
        .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x * y).sum())
        .collect();
    cos.sort_by(f32::total_cmp);
    let at = |q: f64| cos[((cos.len() as f64 - 1.0) * q) as usize];
    println!(
        "cosine fp32 vs int8: mean {:.5}, min {:.5}, p1 {:.5}, p5 {:.5}, median {:.5}",
        cos.iter().map(|&c| f64::from(c)).sum::<f64>() / cos.len() as f64,
        cos[0],
        at(0.01),
        at(0.05),
        at(0.5)
    );
    Ok(())
}
