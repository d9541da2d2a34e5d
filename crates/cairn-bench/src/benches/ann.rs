//! The embedded store's vector index alone (`cairn bench ann`), on vectors and queries
//! given as files, so other vector stores can be measured on exactly the same data
//! (`scripts/bench-side-by-side.py` runs ChromaDB and LanceDB beside it).
//!
//! What is measured is `cairn-store`'s [`AnnVectorIndex`], the HNSW graph (USearch) that
//! the embedded store searches a space through above [`ANN_THRESHOLD`] vectors, built
//! with the store's own parameters by the store's own code: the build time, then one
//! query at a time on one thread (as a recall asks), its latency and recall@k against
//! the exact top-k given in `--truth`. The rest of a recall (embedding, BM25, ranking)
//! is not in it; `cairn bench scale` measures that.
//!
//! Files are little-endian arrays without headers (numpy's `tofile`): vectors and
//! queries `f32`, rows of `--dim`; truth `i32`, rows of `--k` row numbers of the vectors
//! file, nearest first.
use crate::env::{reset_peak_rss, rss};
use anyhow::{bail, Context as _};
use cairn_load::stats::percentiles;
use cairn_store::{AnnVectorIndex, ExactBuilder, ANN_THRESHOLD};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `cairn bench ann` options.
#[derive(Debug, Clone, Args)]
pub struct AnnBenchArgs {
    /// Vectors to index: f32 rows of `--dim`, unit length (the store's vectors are).
    #[arg(long, value_name = "FILE")]
    pub vectors: PathBuf,
    /// Queries: f32 rows of `--dim`.
    #[arg(long, value_name = "FILE")]
    pub queries: PathBuf,
    /// Exact nearest neighbours of each query: i32 rows of `--k` vector row numbers.
    #[arg(long, value_name = "FILE")]
    pub truth: PathBuf,
    /// Dimensions of a vector.
    #[arg(long, default_value_t = 384)]
    pub dim: usize,
    /// Neighbours asked per query, and per row of the truth file.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Where to write the result (JSON) [default: print it only].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

fn read_f32(path: &Path, dim: usize) -> anyhow::Result<Vec<f32>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if dim == 0 || bytes.len() % (4 * dim) != 0 {
        bail!(
            "{}: {} bytes is not a whole number of f32 rows of {dim}",
            path.display(),
            bytes.len()
        );
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

fn read_truth(path: &Path, k: usize, rows: usize) -> anyhow::Result<Vec<Vec<usize>>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if k == 0 || bytes.len() != 4 * k * rows {
        bail!(
            "{}: {} bytes, expected {rows} rows of {k} i32",
            path.display(),
            bytes.len()
        );
    }
    let ids: Vec<usize> = bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]).max(0) as usize)
        .collect();
    Ok(ids.chunks(k).map(<[usize]>::to_vec).collect())
}

pub(crate) fn run(args: &AnnBenchArgs, stdout: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let dim = args.dim;
    let data = read_f32(&args.vectors, dim)?;
    let queries = read_f32(&args.queries, dim)?;
    let n = data.len() / dim;
    let nq = queries.len() / dim;
    let truth = read_truth(&args.truth, args.k, nq)?;
    if n <= ANN_THRESHOLD {
        eprintln!(
            "note: {n} vectors; the store scans spaces of up to {ANN_THRESHOLD} exactly, \
             this bench measures its HNSW index anyway"
        );
    }
    // The store's own loading path: rows named by unit id, in one contiguous matrix.
    let mut b = ExactBuilder::with_capacity(n);
    for (i, row) in data.chunks_exact(dim).enumerate() {
        b.push(i.to_string(), row);
    }
    drop(data);
    reset_peak_rss();
    let t = Instant::now();
    let index = AnnVectorIndex::build(b.finish()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let build_s = t.elapsed().as_secs_f64();
    let (build_rss, build_peak_rss) = rss();
    let mut latencies = Vec::with_capacity(nq);
    let mut found = 0usize;
    for (q, want) in queries.chunks_exact(dim).zip(&truth) {
        let t = Instant::now();
        let hits = index
            .search(q, args.k)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        latencies.push(t.elapsed().as_secs_f64() * 1000.0);
        found += hits
            .iter()
            .filter(|(id, _)| id.parse::<usize>().is_ok_and(|i| want.contains(&i)))
            .count();
    }
    let p = percentiles(&latencies);
    let result = serde_json::json!({
        "system": "cairn",
        "index": "cairn-store AnnVectorIndex (USearch HNSW, the embedded store's parameters)",
        "vectors": n,
        "queries": nq,
        "dim": dim,
        "k": args.k,
        "build_seconds": build_s,
        "rss_bytes_after_build": build_rss,
        "peak_rss_bytes_during_build": build_peak_rss,
        "latency_ms": p,
        "recall_at_k": found as f64 / (nq * args.k).max(1) as f64,
        "threads_build": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "threads_query": 1,
    });
    let text = serde_json::to_string_pretty(&result)?;
    writeln!(stdout, "{text}")?;
    if let Some(out) = &args.out {
        std::fs::write(out, text + "\n").with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_f32(path: &Path, rows: &[Vec<f32>]) {
        let bytes: Vec<u8> = rows
            .iter()
            .flatten()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn measures_the_store_index_against_the_exact_answers() {
        let dir = tempfile::tempdir().unwrap();
        let dim = 8;
        let unit = |i: usize| {
            let v: Vec<f32> = (0..dim)
                .map(|d| ((i + 1) as f32 * (d + 3) as f32 * 0.71).sin())
                .collect();
            let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
            v.into_iter().map(|a| a / n).collect::<Vec<f32>>()
        };
        let rows: Vec<Vec<f32>> = (0..300).map(unit).collect();
        let queries: Vec<Vec<f32>> = (1000..1020).map(unit).collect();
        let k = 5;
        let mut truth = Vec::new();
        for q in &queries {
            let mut scored: Vec<(f32, usize)> = rows
                .iter()
                .enumerate()
                .map(|(i, r)| (r.iter().zip(q).map(|(a, b)| a * b).sum(), i))
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0));
            truth.extend(scored[..k].iter().map(|s| s.1 as i32));
        }
        let (v, q, t, out) = (
            dir.path().join("v.f32"),
            dir.path().join("q.f32"),
            dir.path().join("t.i32"),
            dir.path().join("out.json"),
        );
        write_f32(&v, &rows);
        write_f32(&q, &queries);
        let tb: Vec<u8> = truth.iter().flat_map(|x| x.to_le_bytes()).collect();
        std::fs::write(&t, tb).unwrap();
        let mut args = AnnBenchArgs {
            vectors: v,
            queries: q,
            truth: t.clone(),
            dim,
            k,
            out: Some(out.clone()),
        };
        let mut printed = Vec::new();
        run(&args, &mut printed).unwrap();
        let written = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            printed,
            written.as_bytes(),
            "the result is printed as written"
        );
        let r: serde_json::Value = serde_json::from_str(&written).unwrap();
        assert_eq!(r["vectors"], 300);
        assert_eq!(r["queries"], 20);
        assert_eq!(r["latency_ms"]["n"], 20);
        let recall = r["recall_at_k"].as_f64().unwrap();
        assert!(recall >= 0.9, "recall@5 {recall}");
        // A truth file of the wrong shape is refused, naming the file.
        std::fs::write(&t, [0u8; 12]).unwrap();
        let err = run(&args, &mut Vec::new()).unwrap_err().to_string();
        assert!(err.contains("t.i32"), "{err}");
        args.dim = 7;
        assert!(
            run(&args, &mut Vec::new()).is_err(),
            "rows of another width are refused"
        );
    }
}
