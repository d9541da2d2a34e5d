//! The report of `cairn bench trajectories-scale`: insert cost, what was embedded, disk,
//! query latency against the targets; its summary.md and METHODOLOGY.md.
use super::methodology;
use super::{latency_table, mib, ms};
use crate::datasets::web_trajectories::SECTIONS;
use crate::env::shell_join;
use crate::records::trajectories_scale::QueryRecord;
use crate::run::RunMeta;
use cairn::Timings;
use cairn_load::stats::{percentiles, Percentiles};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScaleInsert {
    pub trajectories: usize,
    pub states: usize,
    /// Bytes of the observations inserted (accessibility-tree text).
    pub observation_bytes: usize,
    pub units: usize,
    pub units_by_pool: BTreeMap<String, usize>,
    pub vectors_computed: usize,
    pub vectors_cached: usize,
    /// Event units that got a vector: all vectors minus one per slice and one per note
    /// (slices and notes are always embedded).
    pub events_embedded: usize,
    /// Per trajectory: one `Trajectories::insert` call.
    pub per_trajectory_ms: Percentiles,
    pub flush_ms: f64,
    /// Every insert call plus the flush.
    pub total_seconds: f64,
    /// The data directory after the insert (embedding cache excluded when it is elsewhere).
    pub disk_bytes: u64,
    pub disk_by_entry: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleSummary {
    pub meta: RunMeta,
    pub complete: bool,
    pub insert: ScaleInsert,
    pub queries: usize,
    pub query_wall_ms: Percentiles,
    pub query_engine_ms: Percentiles,
    pub stage_means_ms: BTreeMap<String, f64>,
    pub mean_context_tokens: f64,
    pub hits_by_kind: BTreeMap<String, usize>,
    /// The targets, and whether this run met them.
    pub target_insert_seconds: f64,
    pub target_query_p95_ms: f64,
    pub insert_target_met: bool,
    pub query_target_met: bool,
}

/// The summary of a run: the insert, and the queries' latency and hits against the
/// issue's targets.
pub fn summarize(
    meta: &RunMeta,
    insert: ScaleInsert,
    records: &[QueryRecord],
    complete: bool,
) -> ScaleSummary {
    let n = records.len().max(1) as f64;
    let mut stage_means_ms = BTreeMap::new();
    for (k, f) in [
        ("embed", (|t: &Timings| t.embed_ms) as fn(&Timings) -> f64),
        ("lexical", |t| t.lexical_ms),
        ("dense", |t| t.dense_ms),
        ("rank", |t| t.rank_ms),
        ("pack", |t| t.pack_ms),
    ] {
        stage_means_ms.insert(
            k.to_string(),
            records.iter().map(|r| f(&r.timings)).sum::<f64>() / n,
        );
    }
    let mut hits_by_kind = BTreeMap::new();
    for r in records {
        for (k, v) in &r.hits_by_kind {
            *hits_by_kind.entry(k.clone()).or_default() += v;
        }
    }
    let query_wall_ms = percentiles(&records.iter().map(|r| r.wall_ms).collect::<Vec<_>>());
    ScaleSummary {
        complete,
        queries: records.len(),
        query_engine_ms: percentiles(
            &records
                .iter()
                .map(|r| r.timings.total_ms)
                .collect::<Vec<_>>(),
        ),
        stage_means_ms,
        mean_context_tokens: records.iter().map(|r| r.context_tokens as f64).sum::<f64>() / n,
        hits_by_kind,
        target_insert_seconds: 180.0,
        target_query_p95_ms: 100.0,
        insert_target_met: insert.total_seconds < 180.0,
        query_target_met: query_wall_ms.p95 < 100.0,
        query_wall_ms,
        insert,
        meta: meta.clone(),
    }
}

pub fn render_summary(s: &ScaleSummary) -> String {
    let m = &s.meta;
    let mut out = String::new();
    let _ = writeln!(out, "# {} — trajectories-scale\n", m.run_label);
    let _ = writeln!(
        out,
        "- {}\n- Cairn {} (git {}, built {}), embedding model `{}`\n- machine: {} logical CPUs \
            (`{}`)\n- command line: `{}`\n",
        m.dataset_notes.join("\n- "),
        m.cairn_version,
        m.git_sha,
        m.build_time,
        m.embedding_model,
        m.machine.nproc,
        m.machine.cpu_model,
        shell_join(&m.command_line)
    );
    insert_table(&mut out, s);
    let _ = writeln!(out, "\n## Queries\n");
    latency_table(
        &mut out,
        "latency (ms)",
        &[
            ("wall", &s.query_wall_ms),
            ("engine `timings.total_ms`", &s.query_engine_ms),
        ],
    );
    let stages = s
        .stage_means_ms
        .iter()
        .map(|(k, v)| format!("{k} {}", ms(*v)))
        .collect::<Vec<_>>()
        .join(", ");
    let kinds = s
        .hits_by_kind
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        out,
        "\nQuery p95 target < {:.0} ms: {}. Mean engine stages (ms): {stages}. Mean context \
            tokens {:.0}. Hits by pool: {kinds}.",
        s.target_query_p95_ms,
        if s.query_target_met {
            "met"
        } else {
            "**missed**"
        },
        s.mean_context_tokens
    );
    out
}

/// The insert section of summary.md.
fn insert_table(out: &mut String, s: &ScaleSummary) {
    let i = &s.insert;
    let _ = writeln!(out, "## Insert\n\n| measure | value |\n|---|---:|");
    let _ = writeln!(
        out,
        "| trajectories / states | {} / {} |",
        i.trajectories, i.states
    );
    let _ = writeln!(
        out,
        "| observation text inserted | {} |",
        mib(i.observation_bytes as u64)
    );
    let _ =
        writeln!(
        out,
        "| insert total (every `Trajectories::insert` + flush) | **{:.1} s** (target < {:.0} s: {}) |",
        i.total_seconds,
        s.target_insert_seconds,
        if s.insert_target_met { "met" } else { "**missed**" }
    );
    let _ = writeln!(
        out,
        "| per trajectory p50 / p95 / max | {} / {} / {} ms |",
        ms(i.per_trajectory_ms.p50),
        ms(i.per_trajectory_ms.p95),
        ms(i.per_trajectory_ms.max)
    );
    let _ = writeln!(out, "| final flush | {} ms |", ms(i.flush_ms));
    let pools = i
        .units_by_pool
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(out, "| units by pool | {pools} |");
    let _ = writeln!(
        out,
        "| vectors computed / from cache | {} / {} |",
        i.vectors_computed, i.vectors_cached
    );
    let _ = writeln!(
        out,
        "| embedded by pool | slice {}, note {}, event {} (derived: all vectors − slices − notes) |",
        i.units_by_pool.get("slice").copied().unwrap_or(0),
        i.units_by_pool.get("note").copied().unwrap_or(0),
        i.events_embedded
    );
    let _ = writeln!(out, "| data directory on disk | {} |", mib(i.disk_bytes));
    for (k, v) in &i.disk_by_entry {
        let _ = writeln!(out, "| &nbsp;&nbsp;`{k}` | {} |", mib(*v));
    }
}

pub fn render_methodology(s: &ScaleSummary) -> String {
    let m = &s.meta;
    methodology::render(
        methodology::TRAJECTORIES_SCALE,
        m,
        &[
            ("sections", SECTIONS.len().to_string()),
            (
                "embedding_cache_or_own",
                m.embedding_cache
                    .as_deref()
                    .map_or("the data directory's own".into(), |c| format!("`{c}`")),
            ),
            ("queries", s.queries.to_string()),
            (
                "recall_options",
                m.configs.first().map_or(String::new(), |c| {
                    serde_json::to_string(&c.options).unwrap_or_default()
                }),
            ),
            (
                "target_insert_seconds",
                format!("{:.0}", s.target_insert_seconds),
            ),
            (
                "target_query_p95_ms",
                format!("{:.0}", s.target_query_p95_ms),
            ),
            (
                "memory_or_unknown",
                m.machine
                    .memory_gib
                    .map_or("unknown memory".into(), |g| format!("{g} GiB")),
            ),
        ],
    )
}

pub fn short_report(s: &ScaleSummary) -> String {
    format!(
        "{}: inserted {} trajectories ({} states) in {:.1} s ({} ms p50 per trajectory), \
            vectors computed {} / cached {}, disk {}; query p50 {} ms p95 {} ms",
        s.meta.run_label,
        s.insert.trajectories,
        s.insert.states,
        s.insert.total_seconds,
        ms(s.insert.per_trajectory_ms.p50),
        s.insert.vectors_computed,
        s.insert.vectors_cached,
        mib(s.insert.disk_bytes),
        ms(s.query_wall_ms.p50),
        ms(s.query_wall_ms.p95)
    )
}
