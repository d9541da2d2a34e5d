//! The int8 backend's linear layer against candle's quantized matmul (`QMatMul`, Q8_0)
//! and candle's fp32 matmul, on all-MiniLM-L6-v2's shapes.
//!
//! ```text
//! RAYON_NUM_THREADS=1 cargo run --release -p cairn-embed --example matmul [-- ROWS,... [REPS]]
//! ```
//!
//! For each ROWS (tokens in one call; default 47 and 256) and each of MiniLM's linear
//! layers (384->384 attention output, 384->1152 query/key/value, 384->1536 up,
//! 1536->384 down), every contender computes `x·Wᵀ + b` REPS times (default 200) on the
//! same pseudo-random weights and inputs; the median time of one call, its GFLOP/s
//! (2·rows·k·n), and the error against an f64 reference (max |y - ref| / max |ref|) are
//! printed. Each contender quantizes its input on every call, as in a model: ours to
//! int8 per row, Q8_0 in blocks of 32. candle picks its SIMD at compile time (`avx2`
//! for Q8_0's dot product), so a default build runs Q8_0 on portable code; build with
//! `RUSTFLAGS="-C target-cpu=native"` (its own `CARGO_TARGET_DIR`) to give it AVX2.
//! Thread count: `RAYON_NUM_THREADS` for candle (our layer runs on the calling thread).
use cairn_embed::LinearBench;
use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
use candle_core::{Device, Module, Tensor};
use std::time::Instant;

/// Deterministic values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 23) as f32) - 1.0
        })
        .collect()
}

fn median_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn rel_err(y: &[f32], reference: &[f64]) -> f64 {
    let scale = reference.iter().fold(0f64, |m, v| m.max(v.abs()));
    let err = y
        .iter()
        .zip(reference)
        .fold(0f64, |m, (a, b)| m.max((f64::from(*a) - b).abs()));
    err / scale
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let rows: Vec<usize> = match args.next() {
        Some(a) => a.split(',').map(str::parse).collect::<Result<_, _>>()?,
        None => vec![47, 256],
    };
    let reps: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(200);
    let shapes = [
        ("attention out", 384, 384),
        ("query/key/value", 384, 1152),
        ("up", 384, 1536),
        ("down", 1536, 384),
    ];
    let dev = Device::Cpu;
    println!(
        "rayon threads {}, candle avx2 compiled in: {}, reps {reps}",
        std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "default".into()),
        cfg!(target_feature = "avx2")
    );
    println!("| rows | layer (k->n) | contender | median ms | GFLOP/s | rel. error |");
    println!("|---:|---|---|---:|---:|---:|");
    for &m in &rows {
        for (i, &(name, k, n)) in shapes.iter().enumerate() {
            // Weights scaled like MiniLM's (|w| mostly under 0.1), inputs like a layer
            // norm's output.
            let w: Vec<f32> = values(n * k, 11 + i as u64)
                .iter()
                .map(|v| v * 0.1)
                .collect();
            let b: Vec<f32> = values(n, 97 + i as u64).iter().map(|v| v * 0.05).collect();
            let x: Vec<f32> = values(m * k, 1234 + i as u64)
                .iter()
                .map(|v| v * 2.0)
                .collect();
            let reference: Vec<f64> = (0..m * n)
                .map(|at| {
                    let (r, c) = (at / n, at % n);
                    (0..k)
                        .map(|j| f64::from(x[r * k + j]) * f64::from(w[c * k + j]))
                        .sum::<f64>()
                        + f64::from(b[c])
                })
                .collect();
            let flops = 2.0 * (m * k * n) as f64;
            let report = |who: &str, ms: f64, y: &[f32]| {
                println!(
                    "| {m} | {name} ({k}->{n}) | {who} | {ms:.3} | {:.1} | {:.5} |",
                    flops / ms / 1e6,
                    rel_err(y, &reference)
                );
            };

            let ours = LinearBench::new(&w, &b, n, k);
            let mut y = vec![0f32; m * n];
            let ms = median_ms(reps, || ours.run(&x, m, &mut y));
            report(&format!("cairn int8 ({})", ours.kernel().name()), ms, &y);

            let wt = Tensor::from_slice(&w, (n, k), &dev)?;
            let bt = Tensor::from_slice(&b, n, &dev)?;
            let xt = Tensor::from_slice(&x, (m, k), &dev)?;
            let q = QMatMul::from_qtensor(QTensor::quantize(&wt, GgmlDType::Q8_0)?)?;
            let run_q = || q.forward(&xt).and_then(|y| y.broadcast_add(&bt));
            let mut out = run_q()?;
            let ms = median_ms(reps, || out = run_q().expect("QMatMul"));
            report("candle QMatMul Q8_0", ms, &out.flatten_all()?.to_vec1()?);

            let wtt = wt.t()?;
            let run_f = || xt.matmul(&wtt).and_then(|y| y.broadcast_add(&bt));
            let mut out = run_f()?;
            let ms = median_ms(reps, || out = run_f().expect("matmul"));
            report("candle fp32 matmul", ms, &out.flatten_all()?.to_vec1()?);
        }
    }
    Ok(())
}
