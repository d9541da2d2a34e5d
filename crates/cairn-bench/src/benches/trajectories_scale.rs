//! The cost of trajectory memory at scale (`cairn bench trajectories-scale`): N generated
//! trajectories of S states each (accessibility trees of ~5 KB that repeat between states
//! and runs, like real pages) are inserted one by one into ONE space, then Q queries are
//! recalled. Measured: insert time (total, per trajectory), what was embedded (vectors
//! computed vs from cache, units by pool), disk size of the data directory, query latency.
//!
//! Everything is generated deterministically here (a seeded LCG); nothing is downloaded.
//! By default the embedding cache is a fresh file in the run folder, so every vector is
//! computed (a cold insert).
//!
//! After the recall queries, the same queries go through recall + inspection and a
//! search of the whole space ([`inspect`]).

pub mod inspect;
use crate::args::RunFolderArgs;
use crate::datasets::web_trajectories::{generate, queries, SECTIONS};
use crate::env::{dir_size, remove_sqlite};
use crate::records::trajectories_scale::QueryRecord;
use crate::records::ResultsFile;
use crate::report::trajectories_scale::{
    render_methodology, render_summary, short_report, summarize, ScaleInsert,
};
use crate::run::{arm_stop, open_memory, progress, stopped, ConfigRow, RunFolder, RunMeta};
use anyhow::bail;
use cairn::{Memory, RecallOptions, TrajectoryInput, UnitKind};
use clap::Args;
use indicatif::ProgressBar;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The one space everything is inserted into.
pub const SPACE: &str = "trajectories-scale";

/// `cairn bench trajectories-scale` options.
#[derive(Debug, Clone, Args)]
pub struct ScaleArgs {
    /// Trajectories generated and inserted.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub trajectories: usize,
    /// States per trajectory.
    #[arg(long, default_value_t = 30, value_name = "N")]
    pub states: usize,
    /// Queries recalled after the insert.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub queries: usize,
    /// Seed of the generator.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Token budget of each recall.
    #[arg(long, default_value_t = 2_000, value_name = "N")]
    pub token_budget: usize,
    /// Hits per recall.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top_k: usize,
    /// Where the run goes and what it reads: shared by every bench.
    #[command(flatten)]
    pub run: RunFolderArgs,
}

pub(crate) fn run(args: &ScaleArgs) -> anyhow::Result<()> {
    if args.trajectories == 0 || args.states < 6 || args.queries == 0 {
        bail!("need at least 1 trajectory, 6 states per trajectory and 1 query");
    }
    let folder = RunFolder::fresh(
        &args.run.out,
        RunFolder::label(args.run.run_label.as_ref(), "trajectories-scale"),
        "",
    )?;
    let cache_file = cache_file(args, &folder);
    let t = Instant::now();
    let trajectories: Vec<TrajectoryInput> = (0..args.trajectories)
        .map(|i| generate(i, args.states, args.seed))
        .collect();
    let qs = queries(args.queries, args.seed);
    let load_seconds = t.elapsed().as_secs_f64();
    let (memory, cache, memory_settings) = open_memory(
        &folder.data_dir,
        Some(&cache_file),
        args.run.memory_config.as_deref(),
    )?;
    let row = config_row(args);
    let observation_bytes: usize = trajectories
        .iter()
        .flat_map(|t| &t.states)
        .map(|s| s.observation.as_ref().map_or(0, String::len))
        .sum();
    let base = RunMeta::new(
        "trajectories-scale",
        &folder.dir,
        &memory,
        cache.as_deref(),
        memory_settings,
    );
    let mut meta = RunMeta {
        configs: vec![row.clone()],
        load_seconds,
        ..describe(args, base, qs.len(), observation_bytes)
    };
    folder.write_meta(&meta)?;

    arm_stop();
    let pb = progress::bar(args.trajectories + qs.len(), &folder.label);
    let mut ins = insert_all(&memory, trajectories, &folder.data_dir, &pb)?;
    ins.observation_bytes = observation_bytes;
    let records = ask_all(&memory, &qs, &row, &folder.results(), &pb)?;
    pb.finish_and_clear();
    let inspected = inspect::measure(&memory, SPACE, &qs, args.token_budget)?;
    drop(memory);
    if !args.run.keep_data {
        folder.remove_data()?;
    }
    // The run's own fresh cache is scratch (tens of MB), not a result: it must not end
    // up next to the results that get committed.
    if !args.run.keep_data && args.run.cache.is_none() {
        remove_sqlite(&cache_file);
    }
    meta.finished_at = Some(chrono::Utc::now());
    let s = summarize(&meta, ins, &records, !stopped());
    crate::report::write_files(
        &folder.dir,
        &[
            ("summary.json", serde_json::to_string_pretty(&s)?),
            ("summary.md", render_summary(&s)),
            ("METHODOLOGY.md", render_methodology(&s)),
            ("run.json", serde_json::to_string_pretty(&meta)?),
        ],
    )?;
    inspect::write(&folder.dir, &inspected)?;
    eprintln!("{}", short_report(&s));
    eprintln!("wrote {}", folder.dir.display());
    if !s.complete {
        bail!("interrupted");
    }
    Ok(())
}

/// The embedding cache: `--cache`, else a fresh file in the run folder (a cold insert).
fn cache_file(args: &ScaleArgs, folder: &RunFolder) -> PathBuf {
    match &args.run.cache {
        Some(c) => c.clone(),
        None => {
            let c = folder.dir.join("embedding-cache.sqlite3");
            remove_sqlite(&c);
            c
        }
    }
}

/// The one config row: `top_k` raw hits from the three pools in `token_budget` tokens.
fn config_row(args: &ScaleArgs) -> ConfigRow {
    ConfigRow {
        name: "bench".into(),
        options: RecallOptions {
            top_k: args.top_k,
            token_budget: args.token_budget,
            format: cairn::Format::Raw,
            scope: cairn::ScopeOptions {
                kinds: Some(vec![UnitKind::Slice, UnitKind::Event, UnitKind::Note]),
                ..Default::default()
            },
            ..RecallOptions::default()
        },
        peer: None,
    }
}

/// Inserts every trajectory into [`SPACE`], one `Trajectories::insert` call each, then
/// flushes; what was embedded, units by pool and the data directory's size on disk.
fn insert_all(
    memory: &Memory,
    trajectories: Vec<TrajectoryInput>,
    data_dir: &Path,
    pb: &ProgressBar,
) -> anyhow::Result<ScaleInsert> {
    let mut ins = ScaleInsert::default();
    let mut per = Vec::new();
    let t_all = Instant::now();
    for tr in trajectories {
        if stopped() {
            break;
        }
        ins.trajectories += 1;
        ins.states += tr.states.len();
        let t = Instant::now();
        let r = memory.trajectories().insert(SPACE, tr)?;
        per.push(t.elapsed().as_secs_f64() * 1000.0);
        ins.units += r.units;
        ins.vectors_computed += r.vectors_computed;
        ins.vectors_cached += r.vectors_cached;
        pb.inc(1);
    }
    let t = Instant::now();
    memory.flush()?;
    ins.flush_ms = t.elapsed().as_secs_f64() * 1000.0;
    ins.total_seconds = t_all.elapsed().as_secs_f64();
    ins.per_trajectory_ms = cairn_load::stats::percentiles(&per);
    let stats = memory.stats(SPACE)?;
    ins.units_by_pool = stats.units_by_kind.clone();
    let slices = stats.units_by_kind.get("slice").copied().unwrap_or(0);
    let notes = stats.units_by_kind.get("note").copied().unwrap_or(0);
    ins.events_embedded =
        (ins.vectors_computed + ins.vectors_cached).saturating_sub(slices + notes);
    ins.disk_bytes = dir_size(data_dir);
    if let Ok(rd) = std::fs::read_dir(data_dir) {
        for e in rd.filter_map(|e| e.ok()) {
            ins.disk_by_entry.insert(
                e.file_name().to_string_lossy().into_owned(),
                dir_size(&e.path()),
            );
        }
    }
    Ok(ins)
}

/// The run's record: what was generated and what this protocol notes.
fn describe(args: &ScaleArgs, base: RunMeta, queries: usize, observation_bytes: usize) -> RunMeta {
    RunMeta {
        as_of_policy: "none".into(),
        as_of_description: "as_of = none".into(),
        limit: None,
        questions_filter: Vec::new(),
        max_questions_per_conv: None,
        questions_in_file: queries,
        questions_selected: queries,
        keep_data: args.run.keep_data,
        dataset_notes: vec![format!(
            "Generated (seed {}): {} trajectories x {} states, {} sections of a shop admin, \
                {:.1} KB mean observation, {} queries.",
            args.seed,
            args.trajectories,
            args.states,
            SECTIONS.len(),
            observation_bytes as f64 / (args.trajectories * args.states) as f64 / 1024.0,
            queries
        )],
        limitations: vec![
            "Generated pages: their repetition (shared chrome, grid pages seen by \
            many runs, forms filled field by field) imitates real pages but is not real data."
                .into(),
        ],
        qa: None,
        ..base
    }
}

/// Recalls every query once, appending its record to `results` as it is done.
fn ask_all(
    memory: &Memory,
    qs: &[String],
    row: &ConfigRow,
    results: &Path,
    pb: &ProgressBar,
) -> anyhow::Result<Vec<QueryRecord>> {
    let mut results = ResultsFile::open(results)?;
    let mut records = Vec::new();
    for (i, q) in qs.iter().enumerate() {
        if stopped() {
            break;
        }
        let t = Instant::now();
        let r = memory.recall(SPACE, q, &row.options)?;
        let wall_ms = t.elapsed().as_secs_f64() * 1000.0;
        let mut by = BTreeMap::new();
        for h in &r.hits {
            *by.entry(h.kind.as_str().to_string()).or_default() += 1;
        }
        let rec = QueryRecord {
            query_index: i,
            hits: r.hits.len(),
            hits_by_kind: by,
            context_tokens: r.context_tokens,
            wall_ms,
            timings: r.timings,
        };
        results.append(&rec)?;
        records.push(rec);
        pb.inc(1);
    }
    Ok(records)
}
