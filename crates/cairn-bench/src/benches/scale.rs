//! Recall at scale (`cairn bench scale`): one space filled with generated one-to-one chat
//! history to 10k, 100k and 1M units, on the embedded store and on PostgreSQL, with
//! planted needles. Measured per (store, size): ingest throughput, disk and memory
//! footprint, the first recall (which loads the vector index, and builds HNSW on the
//! embedded store), recall latency with and without the query's embedding, and the
//! recall@k of the needles.
//!
//! The history is generated deterministically (seeded), so every size holds the same
//! sessions up to its end, and vectors computed for one size are cache hits for the next
//! (and for the other store, through the shared `--cache` file). Each (store, size) is
//! one line of `results.jsonl`, written as soon as it is measured; `--resume` skips the
//! ones done.
use crate::args::RunFolderArgs;
use crate::datasets::chat_history::{
    plan, session, topic_query, Needle, ATTRIBUTES, PEOPLE, ROUNDS, UNITS_PER_SESSION,
};
use crate::env::{remove_sqlite, reset_peak_rss, rss};
use crate::records::scale::ScalePoint;
use crate::records::{read_jsonl, ResultsFile};
use crate::report::scale::{
    point_line, render_methodology, render_plot, render_summary, ScaleBenchSummary,
};
use crate::run::{
    arm_stop, check_label, open_memory_hashed, open_memory_in, stopped, RunFolder, RunMeta,
};
use anyhow::{bail, Context as _};
use cairn::{Memory, RecallOptions, SessionInput};
use cairn_load::stats::percentiles;
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `cairn bench scale` options.
#[derive(Debug, Clone, Args)]
pub struct ScaleBenchArgs {
    /// Sizes to fill the space to, in units (run smallest first).
    #[arg(long, value_delimiter = ',', default_values_t = [10_000, 100_000, 1_000_000])]
    pub sizes: Vec<usize>,
    /// Stores to measure: `embedded` (a fresh data directory per size) and/or a
    /// `postgres://` URL (one space per size in that database). Repeatable.
    #[arg(long = "store", value_name = "STORE", default_values_t = ["embedded".to_string()])]
    pub stores: Vec<String>,
    /// Needles planted through the history; each is asked once.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub needles: usize,
    /// Further recall queries (about the generated topics) timed but not scored.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub extra_queries: usize,
    /// Hits per recall; a needle counts as found when one of them cites its turn.
    #[arg(long, default_value_t = 10, value_name = "K")]
    pub top_k: usize,
    /// Token budget of each recall.
    #[arg(long, default_value_t = 600, value_name = "N")]
    pub token_budget: usize,
    /// Seed of the generator.
    #[arg(long, default_value_t = 11)]
    pub seed: u64,
    /// Where the run goes and what it reads: shared by every bench.
    #[command(flatten)]
    pub run: RunFolderArgs,
    /// Continue a run: (store, size) points already in results.jsonl are kept.
    #[arg(long)]
    pub resume: bool,
    /// Measure the queries only, against the spaces an earlier `--keep-data` run left
    /// (embedded: this run folder's `data/SIZE`; PostgreSQL: the space `scale-SIZE`), to
    /// try ranking changes at scale without filling the space again. Such points have no
    /// ingest figures (marked `ingest_skipped`).
    #[arg(long)]
    pub queries_only: bool,
    /// Where the vectors come from: the embedding `model`, or `hashed`, a seeded cheap
    /// embedder of this bench only (word feature hashing into the model's dimensions;
    /// token counts still from the model's tokenizer) that fills a space of a million
    /// distinct vectors in minutes. Hashed vectors measure the store, not retrieval
    /// quality.
    #[arg(long, value_enum, default_value_t = ScaleEmbedder::Model)]
    pub embedder: ScaleEmbedder,
    /// End every generated message with a code of its own and name the two speakers
    /// instead of giving roles, so no text (and no vector) of the history repeats and
    /// every turn and round is embedded: about one distinct vector per unit (the
    /// templates alone give a 1M-unit space ~39k distinct vectors).
    #[arg(long)]
    pub distinct_text: bool,
    /// Iterations of the live loop measured at each point after its queries (appends,
    /// then recall, knowledge routes and forgets right after them, beside read-only
    /// recalls; see `scale_loop.rs`); 0 for none. The loop writes to the space, so a
    /// later `--queries-only` run on kept data finds these exchanges in it.
    #[arg(long = "loop", default_value_t = 0, value_name = "N")]
    pub loop_iterations: usize,
}

/// `cairn bench scale --embedder`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScaleEmbedder {
    Model,
    Hashed,
}

impl ScaleBenchArgs {
    /// Spaces another run filled are never removed by a queries-only run.
    fn keeps_data(&self) -> bool {
        self.run.keep_data || self.queries_only
    }
}

/// Store kind of a `--store` value.
fn store_kind(store: &str) -> anyhow::Result<&'static str> {
    if store == "embedded" {
        Ok("embedded")
    } else if store.starts_with("postgres://") || store.starts_with("postgresql://") {
        Ok("postgres")
    } else {
        bail!("--store {store}: expected `embedded` or a postgres:// URL")
    }
}

struct Ctx<'a> {
    args: &'a ScaleBenchArgs,
    dir: PathBuf,
    cache: Option<PathBuf>,
}

impl Ctx<'_> {
    fn open(&self, store: &str, size: usize, cache: Option<&Path>) -> anyhow::Result<Memory> {
        let (data_dir, url) = match store_kind(store)? {
            "embedded" => (self.dir.join("data").join(size.to_string()), None),
            _ => (self.dir.join("data").join("postgres-local"), Some(store)),
        };
        std::fs::create_dir_all(&data_dir)?;
        let config = self.args.run.memory_config.as_deref();
        let (m, _, _) = match self.args.embedder {
            ScaleEmbedder::Model => open_memory_in(&data_dir, url, cache, config)?,
            ScaleEmbedder::Hashed => {
                open_memory_hashed(&data_dir, url, cache, config, self.args.seed)?
            }
        };
        Ok(m)
    }

    /// An empty point that names how its vectors are made.
    fn point(&self, kind: &str, size: usize, needles: usize) -> ScalePoint {
        let mut p = ScalePoint::empty(kind, size, needles);
        if self.args.embedder == ScaleEmbedder::Hashed {
            p.embedder = "hashed".into();
        }
        p.distinct_text = self.args.distinct_text;
        p
    }

    fn space(size: usize) -> String {
        format!("scale-{size}")
    }

    /// Fills a fresh space to `size` units; returns the point with its ingest fields.
    fn ingest(&self, store: &str, size: usize, needles: &[Needle]) -> anyhow::Result<ScalePoint> {
        let args = self.args;
        let kind = store_kind(store)?;
        if kind == "embedded" {
            let d = self.dir.join("data").join(size.to_string());
            if d.exists() {
                std::fs::remove_dir_all(&d)?;
            }
        }
        let memory = self.open(store, size, self.cache.as_deref())?;
        let space = Self::space(size);
        memory.forget_space(&space)?;
        let disk_before = if kind == "postgres" {
            memory.disk_bytes()?
        } else {
            0
        };
        let (sessions, _) = plan(size, args.needles, args.seed);
        let by_session: BTreeMap<&str, &str> = needles
            .iter()
            .map(|n| (n.session.as_str(), n.statement.as_str()))
            .collect();
        reset_peak_rss();
        let pb = indicatif::ProgressBar::with_draw_target(
            Some(sessions as u64),
            indicatif::ProgressDrawTarget::stderr(),
        );
        pb.set_message(format!("{kind} {size}"));
        let mut p = self.point(kind, size, needles.len());
        let t = Instant::now();
        const BATCH: usize = 64;
        let last_needle = needles
            .iter()
            .filter_map(|n| n.session.strip_prefix('s')?.parse::<usize>().ok())
            .max()
            .unwrap_or(0);
        let mut start = 0;
        while p.units < size || start <= last_needle {
            if stopped() {
                bail!("interrupted");
            }
            let batch: Vec<SessionInput> = (start..start + BATCH)
                .map(|i| {
                    let id = format!("s{i:07}");
                    session(
                        i,
                        args.seed,
                        by_session.get(id.as_str()).copied(),
                        args.needles,
                        args.distinct_text,
                    )
                })
                .collect();
            let r = memory.ingest_sessions(&space, batch)?;
            p.sessions += r.sessions;
            p.units += r.units;
            p.vectors_computed += r.vectors_computed;
            p.vectors_cached += r.vectors_cached;
            pb.inc(r.sessions as u64);
            start += BATCH;
        }
        memory.flush()?;
        pb.finish_and_clear();
        p.ingest_seconds = t.elapsed().as_secs_f64();
        p.ingest_units_per_second = p.units as f64 / p.ingest_seconds.max(1e-9);
        (p.ingest_rss_bytes, p.ingest_peak_rss_bytes) = rss();
        p.disk_bytes = memory.disk_bytes()?.saturating_sub(disk_before);
        Ok(p)
    }

    /// The point of a space filled by an earlier run (`--queries-only`), measured by
    /// `query`: its counts are read after the queries, in another memory, so that reading
    /// every unit for them does not weigh on the serving memory measured.
    fn kept(&self, store: &str, size: usize, needles: &[Needle]) -> anyhow::Result<ScalePoint> {
        let kind = store_kind(store)?;
        let space = Self::space(size);
        let kept = |m: &Memory| {
            m.spaces()
                .ok()
                .filter(|all| all.iter().any(|s| s.as_str() == space))
                .with_context(|| {
                    format!(
                        "--queries-only: no space of {size} units was kept for {kind} (run \
                        with --keep-data first)"
                    )
                })
        };
        kept(&self.open(store, size, self.cache.as_deref())?)?;
        let mut p = self.point(kind, size, needles.len());
        p.ingest_skipped = true;
        self.query(store, &mut p, needles)?;
        let memory = self.open(store, size, self.cache.as_deref())?;
        let stats = memory.stats(&space)?;
        p.units = stats.units;
        p.sessions = stats.sessions;
        Ok(p)
    }

    /// Reopens the memory with a scratch embedding cache and times the queries.
    fn query(&self, store: &str, p: &mut ScalePoint, needles: &[Needle]) -> anyhow::Result<()> {
        let args = self.args;
        let scratch = self
            .dir
            .join(format!("query-cache-{}-{}.sqlite3", p.store, p.size));
        remove_sqlite(&scratch);
        reset_peak_rss();
        let t = Instant::now();
        let memory = self.open(store, p.size, Some(&scratch))?;
        p.open_ms = t.elapsed().as_secs_f64() * 1000.0;
        let space = Self::space(p.size);
        let options = RecallOptions {
            top_k: args.top_k,
            token_budget: args.token_budget,
            ..RecallOptions::default()
        };
        let t = Instant::now();
        memory.recall(
            &space,
            "warm up: what did I plan for the weekend?",
            &options,
        )?;
        p.first_recall_ms = t.elapsed().as_secs_f64() * 1000.0;
        let extra = (0..args.extra_queries).map(|k| topic_query(k, args.seed));
        let questions: Vec<(Option<&Needle>, String)> = needles
            .iter()
            .map(|n| (Some(n), n.question.clone()))
            .chain(extra.map(|q| (None, q)))
            .collect();
        let (with, without, stages) = timed_recalls(&memory, &space, &options, &questions, p)?;
        (p.serving_rss_bytes, p.serving_peak_rss_bytes) = rss();
        if args.loop_iterations > 0 {
            let l = super::scale_loop::measure(
                &memory,
                &space,
                &options,
                args.loop_iterations,
                args.seed,
            )?;
            eprintln!("{}", super::scale_loop::line(&l));
            p.live_loop = Some(l);
        }
        p.queries = questions.len();
        p.latency_ms = percentiles(&with);
        p.latency_without_embedding_ms = percentiles(&without);
        p.stage_means_ms = stages;
        p.needle_recall = p.needles_found as f64 / p.needles.max(1) as f64;
        if !args.keeps_data() && p.store == "postgres" {
            memory.forget_space(&space)?;
        }
        drop(memory);
        remove_sqlite(&scratch);
        if !args.keeps_data() && p.store == "embedded" {
            let _ = std::fs::remove_dir_all(self.dir.join("data").join(p.size.to_string()));
        }
        Ok(())
    }
}

/// Recall latencies with the query's embedding and without it, and each stage's mean.
type Timed = (Vec<f64>, Vec<f64>, BTreeMap<String, f64>);

/// The timed recalls of a size's questions (the needles' first, then the extra topic
/// queries), each asked twice: the latencies with the query's embedding and without it
/// (cached by the first), the mean time of each stage, and which needles the hits found.
fn timed_recalls(
    memory: &Memory,
    space: &str,
    options: &RecallOptions,
    questions: &[(Option<&Needle>, String)],
    p: &mut ScalePoint,
) -> anyhow::Result<Timed> {
    let mut with = Vec::new();
    let mut without = Vec::new();
    let mut stages: BTreeMap<String, f64> = BTreeMap::new();
    for (needle, q) in questions {
        if stopped() {
            bail!("interrupted");
        }
        let t = Instant::now();
        let r = memory.recall(space, q, options)?;
        with.push(t.elapsed().as_secs_f64() * 1000.0);
        // Again, now that the query's embedding is in the cache.
        let t = Instant::now();
        memory.recall(space, q, options)?;
        without.push(t.elapsed().as_secs_f64() * 1000.0);
        for (k, v) in [
            ("embed", r.timings.embed_ms),
            ("lexical", r.timings.lexical_ms),
            ("dense", r.timings.dense_ms),
            ("rank", r.timings.rank_ms),
            ("pack", r.timings.pack_ms),
        ] {
            *stages.entry(k.into()).or_default() += v / questions.len() as f64;
        }
        if let Some(n) = needle {
            let found = r.hits.iter().take(options.top_k).any(|h| {
                h.session_id.as_deref() == Some(n.session.as_str())
                    && h.turn_ids.contains(&n.message)
            });
            if found {
                p.needles_found += 1;
            } else {
                p.missed_needles.push(n.index);
            }
        }
    }
    Ok((with, without, stages))
}

pub(crate) fn run(args: &ScaleBenchArgs) -> anyhow::Result<()> {
    if args.sizes.is_empty() || args.sizes.contains(&0) || args.needles == 0 || args.top_k == 0 {
        bail!("need at least one size above 0, one needle and top-k above 0");
    }
    if args.needles > PEOPLE.len() * ATTRIBUTES.len() {
        bail!(
            "--needles {}: at most {} (each needle has its own person and attribute)",
            args.needles,
            PEOPLE.len() * ATTRIBUTES.len()
        );
    }
    for s in &args.stores {
        store_kind(s)?;
    }
    let label = RunFolder::label(args.run.run_label.as_ref(), "scale");
    check_label(&label)?;
    let dir = args.run.out.join(&label);
    let results = dir.join("results.jsonl");
    if results.exists() && !args.resume {
        bail!(
            "{} already holds results: pass --resume or another --run-label",
            dir.display()
        );
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let (mut points, bad) = read_jsonl::<ScalePoint>(&results)?;
    if bad > 0 {
        bail!("reading {}: {bad} lines are not points", results.display());
    }
    let resumed_points = points.len();
    let cache = args
        .run
        .cache
        .clone()
        .or_else(crate::env::default_embedding_cache);
    let ctx = Ctx {
        args,
        dir: dir.clone(),
        cache: cache.clone(),
    };
    arm_stop();
    let meta = measure_all(&ctx, &results, &mut points)?;
    if !args.keeps_data() {
        let _ = std::fs::remove_dir_all(dir.join("data"));
    }
    let Some(mut meta) = meta else {
        bail!("nothing to run");
    };
    merge_previous(&mut meta, &dir, points.len() == resumed_points);
    meta.finished_at = Some(chrono::Utc::now());
    let summary = ScaleBenchSummary {
        meta,
        complete: !stopped(),
        top_k: args.top_k,
        token_budget: args.token_budget,
        points,
    };
    crate::report::write_files(
        &dir,
        &[
            ("summary.json", serde_json::to_string_pretty(&summary)?),
            ("summary.md", render_summary(&summary)),
            ("METHODOLOGY.md", render_methodology(&summary)),
            ("latency.svg", render_plot(&summary.points)),
        ],
    )?;
    eprintln!("wrote {}", dir.display());
    Ok(())
}

/// `cairn bench scale-plot`: one latency plot over the points of several runs.
pub(crate) fn plot(runs: &[PathBuf], out: &Path) -> anyhow::Result<()> {
    let mut points = Vec::new();
    for dir in runs {
        let file = dir.join("results.jsonl");
        let (mut p, bad) = read_jsonl::<ScalePoint>(&file)?;
        if bad > 0 || p.is_empty() {
            bail!(
                "{}: {bad} lines are not points, {} are",
                file.display(),
                p.len()
            );
        }
        points.append(&mut p);
    }
    std::fs::write(out, render_plot(&points))
        .with_context(|| format!("writing {}", out.display()))?;
    eprintln!("wrote {} ({} points)", out.display(), points.len());
    Ok(())
}

/// Measures every (store, size) not yet in `points`, smallest size first, appending each
/// to `results` as soon as it is measured; the run's record (from the first memory
/// opened), or none when nothing was opened.
fn measure_all(
    ctx: &Ctx<'_>,
    results: &Path,
    points: &mut Vec<ScalePoint>,
) -> anyhow::Result<Option<RunMeta>> {
    let args = ctx.args;
    let mut sizes = args.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let mut file = ResultsFile::open(results)?;
    let mut meta = None;
    for store in &args.stores {
        let kind = store_kind(store)?;
        if kind == "postgres" {
            Memory::migrate_postgres(store).map_err(|e| anyhow::anyhow!("migrating {e}"))?;
        }
        for &size in &sizes {
            if meta.is_none() {
                let m = ctx.open(store, size, ctx.cache.as_deref())?;
                meta = Some(run_meta(args, &ctx.dir, &m, ctx.cache.as_deref()));
            }
            if points.iter().any(|p| p.store == kind && p.size == size) {
                continue;
            }
            let (_, needles) = plan(size, args.needles, args.seed);
            eprintln!("scale: {kind}, {size} units");
            let p = if args.queries_only {
                ctx.kept(store, size, &needles)?
            } else {
                let mut p = ctx.ingest(store, size, &needles)?;
                ctx.query(store, &mut p, &needles)?;
                p
            };
            eprintln!("{}", point_line(&p));
            file.append(&p)?;
            points.push(p);
            if stopped() {
                break;
            }
        }
    }
    Ok(meta)
}

/// A resumed run lists the invocations that measured its earlier points; the build that
/// measured the points is what the record must name (`no_new_points`: this invocation
/// measured none).
fn merge_previous(meta: &mut RunMeta, dir: &Path, no_new_points: bool) {
    let Ok(prev) = std::fs::read_to_string(dir.join("summary.json")) else {
        return;
    };
    let Ok(prev) = serde_json::from_str::<ScaleBenchSummary>(&prev) else {
        return;
    };
    meta.previous_command_lines = prev.meta.previous_command_lines;
    meta.previous_command_lines.push(prev.meta.command_line);
    meta.started_at = prev.meta.started_at;
    if no_new_points {
        meta.git_sha = prev.meta.git_sha;
        meta.build_time = prev.meta.build_time;
    } else if prev.meta.git_sha != meta.git_sha {
        meta.git_sha = format!("{} (earlier points: {})", meta.git_sha, prev.meta.git_sha);
    }
}

fn run_meta(args: &ScaleBenchArgs, dir: &Path, m: &Memory, cache: Option<&Path>) -> RunMeta {
    let settings =
        serde_json::json!({"engine": "see memory_config", "memory_config": args.run.memory_config});
    let mut meta = RunMeta::new("scale", dir, m, cache, settings);
    meta.keep_data = args.run.keep_data;
    meta.questions_in_file = args.needles + args.extra_queries;
    meta.questions_selected = meta.questions_in_file;
    meta.dataset_notes = vec![format!(
        "Generated (seed {}): one-to-one chat sessions of {ROUNDS} rounds (user turn + \
            assistant reply), {UNITS_PER_SESSION} units each (about: the ingest runs until the \
            size is reached); {} needles, {} topic queries.",
        args.seed, args.needles, args.extra_queries
    )];
    meta.limitations =
        vec![
        "Generated text from templates: its vocabulary is narrower than real chat, which makes \
            lexical and dense neighbours denser than in real data (harder for needles, easier \
            for caches).".into(),
        "Stores are measured one after the other on one machine; PostgreSQL runs on the same 2 \
            cores as the bench.".into(),
    ];
    if args.distinct_text {
        meta.dataset_notes.push(
            "Distinct text (`--distinct-text`): every message ends with a code of its own \
                (`#s12m3`: session 12, message 3), so no message, round or episode repeats \
                a text, and the two sides are named speakers (`Alex`, `Assistant`) instead \
                of the user and assistant roles, so every turn and every round is embedded \
                by a text of its own (with roles, only user turns are embedded and a round \
                shares its user turn's vector): about one distinct vector per unit."
                .into(),
        );
    }
    if args.embedder == ScaleEmbedder::Hashed {
        meta.dataset_notes.push(format!(
            "Vectors from the bench's hashed embedder (`--embedder hashed`, seed {}), not \
                the model: each lowercased word token adds +-1 to one of the model's {} \
                dimensions (bucket and sign from a seeded hash of the word), then the \
                vector is scaled to unit length; token counts (budgets) still come from the \
                model's tokenizer, and the query is embedded the same way. Texts that share \
                words are near each other; meaning is not captured, so these points measure \
                the store (index size, build, latency, memory), not retrieval quality.",
            args.seed,
            m.embedder().dim()
        ));
        meta.limitations.push(
            "Hashed vectors are far cheaper to compute than the model's (the query's \
                embedding costs microseconds instead of ~8 ms), so latency with the query \
                embedding included is lower than with the model; the figures without \
                embedding compare with the model's points."
                .into(),
        );
    }
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_values_are_checked() {
        assert_eq!(store_kind("embedded").unwrap(), "embedded");
        assert_eq!(store_kind("postgres://u@h/db").unwrap(), "postgres");
        assert!(store_kind("mysql://x").is_err());
    }
}
