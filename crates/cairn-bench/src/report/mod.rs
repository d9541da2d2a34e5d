//! Reports: what a run's records add up to (`summary.json`), their markdown
//! (`summary.md`), the run's `METHODOLOGY.md` (from the templates in `methodology/`,
//! [`methodology`]), and the comparison table of several runs. One module per bench
//! shape; the formatting every report shares is here, so all runs print numbers alike.
use crate::qa::QaSummary;
use anyhow::Context as _;
use cairn::RecallOptions;
use cairn_load::stats::Percentiles;
use std::fmt::Write as _;
use std::path::Path;

pub mod evermembench;
pub mod headline;
pub mod lme_v2;
pub mod methodology;
pub mod personal;
pub mod retrieval;
pub mod scale;
pub mod trajectories_scale;

/// A rate or score, three decimals.
pub fn f3(x: f64) -> String {
    format!("{x:.3}")
}

/// Milliseconds: one decimal below 100, none above.
pub fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// Bytes in MiB, one decimal.
pub fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0))
}

/// Bytes in MiB below a GiB, else in GiB (two decimals).
pub fn gib(b: u64) -> String {
    let mib = b as f64 / (1024.0 * 1024.0);
    if mib < 1024.0 {
        format!("{mib:.0} MiB")
    } else {
        format!("{:.2} GiB", mib / 1024.0)
    }
}

/// A data file's path as recorded in a run (absolute when it exists).
pub fn canonical(p: &Path) -> String {
    std::fs::canonicalize(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

/// `top_k=…, token_budget=…, format=…` for a config row's heading.
pub fn options_line(o: &RecallOptions) -> String {
    format!(
        "top_k={}, token_budget={}, format={}, min_relevance={}",
        o.top_k,
        o.token_budget,
        serde_json::to_value(o.format)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        o.min_relevance
    )
}

/// `k1 v1, k2 v2` of a count or mean per key (hits by kind, stages).
pub fn joined<V>(
    items: impl IntoIterator<Item = (impl AsRef<str>, V)>,
    f: impl Fn(V) -> String,
) -> String {
    items
        .into_iter()
        .map(|(k, v)| format!("{} {}", k.as_ref(), f(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A latency table (milliseconds): `heading` names the first column, one row per
/// distribution.
pub fn latency_table(out: &mut String, heading: &str, rows: &[(&str, &Percentiles)]) {
    let _ = writeln!(
        out,
        "| {heading} | n | mean | p50 | p95 | p99 | max |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    for (name, p) in rows {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} |",
            p.n,
            ms(p.mean),
            ms(p.p50),
            ms(p.p95),
            ms(p.p99),
            ms(p.max)
        );
    }
}

/// Writes `(file name, text)` pairs into a run folder.
pub fn write_files(dir: &Path, files: &[(&str, String)]) -> anyhow::Result<()> {
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

/// A run's `summary.json`, `summary.md` and `METHODOLOGY.md`.
pub fn write_summary<S: serde::Serialize>(
    dir: &Path,
    s: &S,
    markdown: String,
    methodology: String,
) -> anyhow::Result<()> {
    write_files(
        dir,
        &[
            ("summary.json", serde_json::to_string_pretty(s)?),
            ("summary.md", markdown),
            ("METHODOLOGY.md", methodology),
        ],
    )
}

/// The mean of some values (0 for none).
pub fn mean(v: impl IntoIterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.into_iter().collect();
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// The share of `true` (0 for none).
pub fn share(v: impl IntoIterator<Item = bool>) -> f64 {
    mean(v.into_iter().map(|b| if b { 1.0 } else { 0.0 }))
}

/// The QA section of a row in summary.md.
pub fn qa_markdown(out: &mut String, q: &QaSummary) {
    let s = &q.setup;
    let _ = writeln!(
        out,
        "### QA (reader `{}`, judge `{}`{})
",
        s.reader,
        s.judge,
        if s.judge_is_reader {
            ": **the judge is the reader**"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "Judge style: {}. Accuracy **{}** ({} of {} judged){}; {} errors.\n",
        s.judge_style,
        f3(q.accuracy),
        q.correct,
        q.judged,
        q.mean_f1
            .map(|f| format!(", mean token F1 {}", f3(f)))
            .unwrap_or_default(),
        q.errors
    );
    let _ = writeln!(
        out,
        "| type | judged | correct | accuracy |\n|---|---:|---:|---:|"
    );
    for (t, (n, c, a)) in &q.by_type {
        let _ = writeln!(out, "| {t} | {n} | {c} | {} |", f3(*a));
    }
    let _ = writeln!(
        out,
        "\nCost: {} reader calls, {} judge calls, {} prompt + {} completion tokens; mean reader \
            {} ms, judge {} ms.\n",
        q.reader_calls,
        q.judge_calls,
        q.prompt_tokens,
        q.completion_tokens,
        ms(q.mean_reader_ms),
        ms(q.mean_judge_ms)
    );
}
