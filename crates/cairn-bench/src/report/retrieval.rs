//! The report of the retrieval benches (LongMemEval, LoCoMo, FriendsQA): aggregates of
//! a run (`summary.json`), their markdown (`summary.md`), its METHODOLOGY.md, and the
//! comparison table of several runs (`cairn bench report`).
use super::methodology::{self, snippet};
use super::{f3, latency_table, ms, options_line, qa_markdown};
use crate::qa::{QaRecord, QaSetup, QaSummary};
use crate::records::retrieval::QuestionRecord;
use crate::run::{ConfigRow, RunMeta};
use crate::scoring::exclusion;
use crate::scoring::retrieval::{aggregate, metric_names, Grouped, Means, Scores};
use anyhow::Context as _;
use cairn_load::stats::{percentiles, Percentiles};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

pub const LEVELS: [&str; 3] = ["session", "turn", "session_ranking"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub meta: RunMeta,
    /// Every selected question has a record for every config row.
    pub complete: bool,
    pub questions: QuestionCounts,
    pub rows: Vec<RowSummary>,
    pub ingest: IngestSummary,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuestionCounts {
    pub in_file: usize,
    pub selected: usize,
    /// Selected questions with a record in at least one row.
    pub done: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowSummary {
    pub config: String,
    #[serde(deserialize_with = "crate::run::rows::options_of_run")]
    pub options: cairn::RecallOptions,
    /// Questions with a record in this row.
    pub questions: usize,
    /// Questions left out of every aggregate, by reason.
    pub excluded: BTreeMap<String, usize>,
    /// `session` and `turn`.
    pub levels: BTreeMap<String, LevelSummary>,
    pub latency: RecallLatency,
    /// Mean tokens of the packed context, and mean hits returned.
    pub mean_context_tokens: f64,
    pub mean_hits: f64,
    /// QA accuracy of the reader on this row's contexts (runs with `--reader`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qa: Option<QaSummary>,
    /// Messages a context showed in more than one of its entries, over all the row's
    /// records.
    #[serde(default)]
    pub messages_twice: usize,
    /// How often the recall answered `no_relevant_memory`.
    #[serde(default)]
    pub no_relevant_memory: NoRelevant,
}

/// How often recalls answered `no_relevant_memory`: on the scored questions (each one a
/// lost answer) and on the off-topic ones, by source (each one a right answer).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NoRelevant {
    pub scored: Share,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub off_topic: BTreeMap<String, Share>,
}

/// A share of `n` questions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Share {
    pub n: usize,
    pub share: f64,
}

impl Share {
    fn of(flags: impl IntoIterator<Item = bool>) -> Self {
        let (n, yes) = flags
            .into_iter()
            .fold((0usize, 0usize), |(n, y), f| (n + 1, y + usize::from(f)));
        let share = if n == 0 { 0.0 } else { yes as f64 / n as f64 };
        Self { n, share }
    }
}

/// The `no_relevant_memory` shares of a row's records.
fn no_relevant(recs: &[&QuestionRecord]) -> NoRelevant {
    let scored = Share::of(
        recs.iter()
            .filter(|r| r.exclusion.is_none())
            .map(|r| r.no_relevant_memory),
    );
    let mut by_source: BTreeMap<String, Vec<bool>> = BTreeMap::new();
    for r in recs
        .iter()
        .filter(|r| r.exclusion.as_deref() == Some(exclusion::OFF_TOPIC))
    {
        let source = r.question_type.trim_start_matches("off-topic ").to_string();
        by_source
            .entry(source)
            .or_default()
            .push(r.no_relevant_memory);
    }
    NoRelevant {
        scored,
        off_topic: by_source
            .into_iter()
            .map(|(k, v)| (k, Share::of(v)))
            .collect(),
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelSummary {
    #[serde(flatten)]
    pub grouped: Grouped,
    /// Included questions that could not be scored at this level (no evidence there).
    pub unscored: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecallLatency {
    /// `recall.timings.total_ms` (the engine's own clock).
    pub engine_total_ms: Percentiles,
    /// Wall time around the `recall` call.
    pub wall_ms: Percentiles,
    /// Means of the engine's stages (embed, lexical, dense, rank, pack).
    pub stage_means_ms: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IngestSummary {
    /// Spaces ingested (LongMemEval: questions; LoCoMo: conversations).
    pub spaces: usize,
    pub sessions: usize,
    pub messages: usize,
    pub units: usize,
    pub vectors_computed: usize,
    pub vectors_cached: usize,
    /// Per-space ingest wall time.
    pub ms: Percentiles,
    pub total_seconds: f64,
    /// Messages (turns) ingested per second of ingest wall time.
    pub turns_per_second: f64,
}

/// Aggregates the records of a run (records of unselected questions must be filtered out
/// by the caller).
pub fn summarize(meta: &RunMeta, records: &[QuestionRecord], complete: bool) -> Summary {
    let done: HashSet<&str> = records
        .iter()
        .filter(|r| r.exclusion.as_deref() != Some(exclusion::OFF_TOPIC))
        .map(|r| r.question_id.as_str())
        .collect();
    let rows = meta
        .configs
        .iter()
        .map(|c| {
            let mut row = summarize_row(c, records);
            row.qa = meta
                .qa
                .as_ref()
                .map(|setup| qa_row(setup, &c.name, records));
            row
        })
        .collect();
    Summary {
        meta: meta.clone(),
        complete,
        questions: QuestionCounts {
            in_file: meta.questions_in_file,
            selected: meta.questions_selected,
            done: done.len(),
        },
        rows,
        ingest: summarize_ingest(records),
    }
}

/// One row's aggregates. A record is scored at a level iff it has no exclusion and has
/// scores at that level; the first record of a question id wins.
pub fn summarize_row(row: &ConfigRow, records: &[QuestionRecord]) -> RowSummary {
    let mut seen = HashSet::new();
    let recs: Vec<&QuestionRecord> = records
        .iter()
        .filter(|r| r.config == row.name)
        .filter(|r| seen.insert(r.question_id.as_str()))
        .collect();
    let mut excluded: BTreeMap<String, usize> = BTreeMap::new();
    for r in &recs {
        if let Some(e) = &r.exclusion {
            *excluded.entry(e.clone()).or_default() += 1;
        }
    }
    let included: Vec<&&QuestionRecord> = recs.iter().filter(|r| r.exclusion.is_none()).collect();
    let levels = level_summaries(&included);
    let ok: Vec<&&QuestionRecord> = recs.iter().filter(|r| r.error.is_none()).collect();
    let timed: Vec<&cairn::Timings> = ok
        .iter()
        .filter_map(|r| r.timings.recall.as_ref())
        .collect();
    let stage_means_ms = stage_means(&timed);
    let mean = |f: &dyn Fn(&QuestionRecord) -> f64| {
        if ok.is_empty() {
            0.0
        } else {
            ok.iter().map(|r| f(r)).sum::<f64>() / ok.len() as f64
        }
    };
    RowSummary {
        config: row.name.clone(),
        options: row.options.clone(),
        questions: recs.len(),
        excluded,
        levels,
        latency: RecallLatency {
            engine_total_ms: percentiles(&timed.iter().map(|t| t.total_ms).collect::<Vec<_>>()),
            wall_ms: percentiles(
                &ok.iter()
                    .filter(|r| r.timings.recall.is_some())
                    .map(|r| r.timings.recall_wall_ms)
                    .collect::<Vec<_>>(),
            ),
            stage_means_ms,
        },
        mean_context_tokens: mean(&|r| r.context_tokens as f64),
        mean_hits: mean(&|r| r.hits.len() as f64),
        qa: None,
        messages_twice: recs.iter().map(|r| r.messages_twice).sum(),
        no_relevant_memory: no_relevant(&recs),
    }
}

/// Each level's scores over the included questions, grouped by question type; those with
/// no evidence at a level are counted as unscored there.
fn level_summaries(included: &[&&QuestionRecord]) -> BTreeMap<String, LevelSummary> {
    let mut levels = BTreeMap::new();
    for level in LEVELS {
        fn pick<'r>(r: &'r QuestionRecord, level: &str) -> Option<&'r Scores> {
            match level {
                "session" => r.metrics.session.as_ref(),
                "session_ranking" => r.metrics.session_ranking.as_ref(),
                _ => r.metrics.turn.as_ref(),
            }
        }
        let scored: Vec<(&str, &Scores)> = included
            .iter()
            .filter_map(|r| pick(r, level).map(|s| (r.question_type.as_str(), s)))
            .collect();
        levels.insert(
            level.to_string(),
            LevelSummary {
                unscored: included.len() - scored.len(),
                grouped: aggregate(scored),
            },
        );
    }
    levels
}

/// The mean of each engine stage over the timed recalls (none when there are none).
fn stage_means(timed: &[&cairn::Timings]) -> BTreeMap<String, f64> {
    let mut stage_means_ms = BTreeMap::new();
    if !timed.is_empty() {
        let n = timed.len() as f64;
        let mean_of =
            |f: &dyn Fn(&cairn::Timings) -> f64| timed.iter().map(|t| f(t)).sum::<f64>() / n;
        stage_means_ms.insert("embed".to_string(), mean_of(&|t| t.embed_ms));
        stage_means_ms.insert("lexical".to_string(), mean_of(&|t| t.lexical_ms));
        stage_means_ms.insert("dense".to_string(), mean_of(&|t| t.dense_ms));
        stage_means_ms.insert("rank".to_string(), mean_of(&|t| t.rank_ms));
        stage_means_ms.insert("pack".to_string(), mean_of(&|t| t.pack_ms));
    }
    stage_means_ms
}

/// QA aggregates of one row (first record of each question).
fn qa_row(setup: &QaSetup, row: &str, records: &[QuestionRecord]) -> QaSummary {
    let mut seen = HashSet::new();
    let items: Vec<(&str, Option<&str>, &QaRecord)> = records
        .iter()
        .filter(|r| r.config == row && seen.insert(r.question_id.as_str()))
        .filter_map(|r| {
            r.qa.as_ref()
                .map(|q| (r.question_type.as_str(), r.exclusion.as_deref(), q))
        })
        .collect();
    crate::qa::summarize(setup, &items)
}

/// Ingest per space (first record of each space; spaces whose ingest failed are left out).
fn summarize_ingest(records: &[QuestionRecord]) -> IngestSummary {
    let mut seen = HashSet::new();
    let mut s = IngestSummary::default();
    let mut ms = Vec::new();
    for r in records {
        if r.ingest.sessions == 0 || !seen.insert(r.ingest.space.as_str()) {
            continue;
        }
        let i = &r.ingest;
        s.spaces += 1;
        s.sessions += i.sessions;
        s.messages += i.messages;
        s.units += i.units;
        s.vectors_computed += i.vectors_computed;
        s.vectors_cached += i.vectors_cached;
        ms.push(i.ms);
    }
    s.total_seconds = ms.iter().sum::<f64>() / 1000.0;
    s.turns_per_second = if s.total_seconds > 0.0 {
        s.messages as f64 / s.total_seconds
    } else {
        0.0
    };
    s.ms = percentiles(&ms);
    s
}

pub fn write_files(dir: &Path, s: &Summary) -> anyhow::Result<()> {
    super::write_summary(dir, s, render_summary(s), render_methodology(s))
}

fn short_metric(name: &str) -> String {
    name.replace("recall_any", "any")
        .replace("recall_all", "all")
        .replace("coverage", "cov")
        .replace("evidence_in_context", "in ctx")
}

fn metrics_table(out: &mut String, level: &LevelSummary) {
    let names = metric_names();
    let _ = write!(out, "| group | n |");
    for n in &names {
        let _ = write!(out, " {} |", short_metric(n));
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "|---|---:|{}", "---:|".repeat(names.len()));
    let mut line = |label: &str, m: &Means| {
        let _ = write!(out, "| {label} | {} |", m.n);
        for n in &names {
            let _ = write!(
                out,
                " {} |",
                m.metrics.get(n).map_or("-".into(), |v| f3(*v))
            );
        }
        let _ = writeln!(out);
    };
    line("**overall**", &level.grouped.overall);
    for (g, m) in &level.grouped.by_type {
        line(g, m);
    }
}

fn excluded_words(e: &BTreeMap<String, usize>) -> String {
    if e.is_empty() {
        "none".into()
    } else {
        e.iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

pub fn render_summary(s: &Summary) -> String {
    let m = &s.meta;
    let mut out = String::new();
    let _ = writeln!(out, "# {} — {}\n", m.run_label, m.dataset);
    let _ = writeln!(
        out,
        "- data: `{}` (sha256 `{}`)\n- questions: {} selected of {} in the file, {} done{}\n- \
            Cairn {} (git {}, built {}), embedding model `{}`\n- as_of: {}\n",
        m.data_path,
        m.data_sha256,
        s.questions.selected,
        s.questions.in_file,
        s.questions.done,
        if s.complete {
            ""
        } else {
            " (**incomplete run**)"
        },
        m.cairn_version,
        m.git_sha,
        m.build_time,
        m.embedding_model,
        m.as_of_description,
    );
    side_by_side(&mut out, &s.rows);
    for row in &s.rows {
        config_section(&mut out, row);
    }
    let i = &s.ingest;
    let _ =
        writeln!(
        out,
        "## Ingest\n\n{} spaces, {} sessions, {} messages, {} units; vectors computed {} / from \
            cache {}.\n\n| per space (ms) | n | mean | p50 | p95 | p99 | max \
            |\n|---|---:|---:|---:|---:|---:|---:|\n| ingest_sessions + flush | {} | {} | {} | \
            {} | {} | {} |\n\nIngest throughput: **{:.1} turns/s** ({} messages in {:.1} s).",
        i.spaces, i.sessions, i.messages, i.units, i.vectors_computed, i.vectors_cached,
        i.ms.n, ms(i.ms.mean), ms(i.ms.p50), ms(i.ms.p95), ms(i.ms.p99), ms(i.ms.max),
        i.turns_per_second, i.messages, i.total_seconds
    );
    out
}

/// A config row's section: its metrics at each level, its latency and engine stages, and
/// its QA scores if it has any.
fn config_section(out: &mut String, row: &RowSummary) {
    let _ = writeln!(
        out,
        "## Config `{}` ({})\n\n{} questions recorded; excluded from aggregates: {}.\n",
        row.config,
        options_line(&row.options),
        row.questions,
        excluded_words(&row.excluded)
    );
    for level in LEVELS {
        // Records written before a level existed leave it empty: no table for it.
        let Some(l) = row.levels.get(level).filter(|l| l.grouped.overall.n > 0) else {
            continue;
        };
        let _ = writeln!(out, "### {level} level\n");
        if l.unscored > 0 {
            let _ = writeln!(
                out,
                "{} included questions have no {level}-level evidence and are not scored here.\n",
                l.unscored
            );
        }
        metrics_table(out, l);
        let _ = writeln!(out);
    }
    let lat = &row.latency;
    let _ = writeln!(out, "### latency (ms)\n");
    latency_table(
        out,
        "measure",
        &[
            ("recall, engine `timings.total_ms`", &lat.engine_total_ms),
            ("recall, wall", &lat.wall_ms),
        ],
    );
    let stages = lat
        .stage_means_ms
        .iter()
        .map(|(k, v)| format!("{k} {}", ms(*v)))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        out,
        "\nMean engine stages (ms): {stages}. Mean context tokens: {:.0}; mean hits: {:.1}.\n",
        row.mean_context_tokens, row.mean_hits
    );
    if let Some(q) = &row.qa {
        qa_markdown(out, q);
    }
}

/// The rows side by side: evidence in the context at both levels, context size,
/// messages shown twice, how often each said `no_relevant_memory`, recall latency.
fn side_by_side(out: &mut String, rows: &[RowSummary]) {
    let _ = writeln!(
        out,
        "## Side by side\n\n| row | budget | turn in ctx | session in ctx | turn any@1 | \
            ctx tokens | messages twice | no relevant memory: scored | off-topic | recall p50 \
            ms |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for r in rows {
        let level = |l: &str, m: &str| {
            r.levels
                .get(l)
                .and_then(|x| x.grouped.overall.metrics.get(m).copied())
                .map_or("-".into(), f3)
        };
        let off = if r.no_relevant_memory.off_topic.is_empty() {
            "-".to_string()
        } else {
            r.no_relevant_memory
                .off_topic
                .iter()
                .map(|(k, s)| format!("{k} {} ({})", f3(s.share), s.n))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let p50 = if r.latency.engine_total_ms.n > 0 {
            r.latency.engine_total_ms.p50
        } else {
            r.latency.wall_ms.p50
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.0} | {} | {} | {off} | {} |",
            r.config,
            r.options.token_budget,
            level("turn", "evidence_in_context"),
            level("session", "evidence_in_context"),
            level("turn", "recall_any@1"),
            r.mean_context_tokens,
            r.messages_twice,
            f3(r.no_relevant_memory.scored.share),
            ms(p50),
        );
    }
    let _ = writeln!(
        out,
        "\nPeer rows (`peer-*`) rank single turns and pack them whole in the budget, \
            headers not counted; their latency is the wall time of ranking and packing in the \
            harness. Off-topic: share of another source's questions answered \
            `no_relevant_memory` (n asked).\n"
    );
}

/// The dataset's protocol, the public API it calls, and how its ingest is timed.
fn protocol(dataset: &str) -> (&'static str, &'static str, &'static str) {
    match dataset {
        "longmemeval" => (
            methodology::PROTOCOL_LONGMEMEVAL,
            "`Memory::open_with`, `ingest_sessions`, `flush`, `recall`, `session_units`, `forget_space`",
            "`ingest_sessions`",
        ),
        "friendsqa" => (
            methodology::PROTOCOL_FRIENDSQA,
            "`Memory::open_with`, `ingest_group_messages`, `flush`, `stats`, `recall`, \
                `session_units`, `forget_space`",
            "`ingest_group_messages` day by day",
        ),
        _ => (
            methodology::PROTOCOL_LOCOMO,
            "`Memory::open_with`, `ingest_sessions`, `flush`, `recall`, `session_units`, `forget_space`",
            "`ingest_sessions`",
        ),
    }
}

/// The QA paragraph of a run with `--reader` (empty without).
fn qa_rows(q: Option<&QaSetup>) -> String {
    let Some(q) = q else {
        return String::new();
    };
    let judge_is_reader = if q.judge_is_reader {
        " (**the judge is the reader**)"
    } else {
        ""
    };
    let max_tokens = q.reader_max_tokens.to_string();
    let p = snippet(
        methodology::QA_ROWS,
        &[
            ("reader", &q.reader),
            ("reader_max_tokens", &max_tokens),
            ("judge", &q.judge),
            ("judge_is_reader", judge_is_reader),
            ("judge_style", &q.judge_style),
        ],
    );
    format!("{p}\n\n")
}

pub fn render_methodology(s: &Summary) -> String {
    let m = &s.meta;
    let (proto, api, ingest_call) = protocol(&m.dataset);
    let rows = methodology::bullets(s.rows.iter().map(|row| {
        format!(
            "config `{}`: {} questions recorded; excluded from aggregates: {}; session level \
                scored {}, turn level scored {}",
            row.config,
            row.questions,
            excluded_words(&row.excluded),
            row.levels.get("session").map_or(0, |l| l.grouped.overall.n),
            row.levels.get("turn").map_or(0, |l| l.grouped.overall.n),
        )
    }));
    let incomplete = if s.complete {
        ""
    } else {
        " — **the run is incomplete** (interrupted; resume with --resume)"
    };
    methodology::render(
        methodology::RETRIEVAL,
        m,
        &[
            (
                "per_conversation",
                m.max_questions_per_conv
                    .map_or(String::new(), |n| format!(", at most {n} per conversation")),
            ),
            ("questions_done", s.questions.done.to_string()),
            ("incomplete", incomplete.into()),
            ("load_seconds", format!("{:.1}", m.load_seconds)),
            ("row_lines", rows),
            ("api", api.into()),
            ("qa_rows", qa_rows(m.qa.as_ref())),
            ("protocol", snippet(proto, &[])),
            ("ingest_call", ingest_call.into()),
        ],
    )
}

/// A few lines for the terminal at the end of a run.
pub fn short_report(s: &Summary) -> String {
    let mut out = String::new();
    for row in &s.rows {
        let g = |level: &str, name: &str| {
            row.levels
                .get(level)
                .and_then(|l| l.grouped.overall.metrics.get(name))
                .map_or("-".into(), |v| f3(*v))
        };
        let n = row.levels.get("session").map_or(0, |l| l.grouped.overall.n);
        let _ = writeln!(
            out,
            "{} [{}] n={n}: session any@1 {} any@5 {} all@10 {} ndcg@10 {} mrr {} | session \
                ranking any@5 {} ndcg@10 {} mrr {} | turn any@5 {} | evidence in context {} | \
                recall p50 {} ms p95 {} ms",
            s.meta.run_label,
            row.config,
            g("session", "recall_any@1"),
            g("session", "recall_any@5"),
            g("session", "recall_all@10"),
            g("session", "ndcg@10"),
            g("session", "mrr"),
            g("session_ranking", "recall_any@5"),
            g("session_ranking", "ndcg@10"),
            g("session_ranking", "mrr"),
            g("turn", "recall_any@5"),
            g("turn", "evidence_in_context"),
            ms(row.latency.engine_total_ms.p50),
            ms(row.latency.engine_total_ms.p95),
        );
        if let Some(q) = &row.qa {
            let _ = writeln!(
                out,
                "{} [{}] QA accuracy {} ({}/{}) reader {} judge {}{}; {} + {} tokens",
                s.meta.run_label,
                row.config,
                f3(q.accuracy),
                q.correct,
                q.judged,
                q.setup.reader,
                q.setup.judge,
                if q.setup.judge_is_reader {
                    " (judge is the reader)"
                } else {
                    ""
                },
                q.prompt_tokens,
                q.completion_tokens
            );
        }
    }
    let _ = write!(
        out,
        "ingest: {:.1} turns/s over {} spaces (p50 {} ms)",
        s.ingest.turns_per_second,
        s.ingest.spaces,
        ms(s.ingest.ms.p50)
    );
    out
}

/// The markdown comparison of several runs (each a folder with summary.json).
/// The columns of the comparison table: (level, metric).
const COMPARE_COLUMNS: [(&str, &str); 11] = [
    ("session", "recall_any@1"),
    ("session", "recall_any@5"),
    ("session", "recall_all@5"),
    ("session", "recall_all@10"),
    ("session", "ndcg@10"),
    ("session", "mrr"),
    ("turn", "recall_any@5"),
    ("turn", "recall_all@10"),
    ("turn", "ndcg@10"),
    ("turn", "evidence_in_context"),
    ("session", "evidence_in_context"),
];

/// The benches whose summary is this module's [`Summary`].
const RETRIEVAL_DATASETS: [&str; 3] = ["longmemeval", "locomo", "friendsqa"];

/// The markdown comparison of several runs (each a folder with summary.json); runs of
/// the benches that report other shapes (EverMemBench, LongMemEval-V2, the scale
/// benches) are named below the table.
pub fn compare(dirs: &[impl AsRef<Path>]) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut not_retrieval = Vec::new();
    let _ = write!(out, "| run | dataset | config | n |");
    for (l, m) in COMPARE_COLUMNS {
        let _ = write!(
            out,
            " {} {} |",
            if l == "session" { "S" } else { "T" },
            short_metric(m)
        );
    }
    let _ = writeln!(
        out,
        " recall p50 ms | recall p95 ms | ingest turns/s | vectors from cache | git | complete |"
    );
    let _ = writeln!(
        out,
        "|---|---|---|---:|{}---:|---:|---:|---:|---|---|",
        "---:|".repeat(COMPARE_COLUMNS.len())
    );
    for d in dirs {
        let p = d.as_ref().join("summary.json");
        let text =
            std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
        let raw: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", p.display()))?;
        let dataset = raw["meta"]["dataset"].as_str().unwrap_or_default();
        if !RETRIEVAL_DATASETS.contains(&dataset) {
            // Accuracy, diagnostics or scale figures: their own summary.md holds them.
            not_retrieval.push(d.as_ref().display().to_string());
            continue;
        }
        let s: Summary =
            serde_json::from_value(raw).with_context(|| format!("parsing {}", p.display()))?;
        compare_rows(&mut out, &s);
    }
    if !not_retrieval.is_empty() {
        let _ = writeln!(
            out,
            "\nNot in this table (EverMemBench, LongMemEval-V2 and scale runs report other \
                figures, see their summary.md): {}.",
            not_retrieval.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\nS = session level, T = turn level; n = questions scored at session \
        level; recall latency is the engine's `timings.total_ms`; \"vectors from cache\" tells \
        how warm the embedding cache was during ingest. Definitions: each run's METHODOLOGY.md."
    );
    Ok(out)
}

/// A run's lines of the comparison table, one per config row.
fn compare_rows(out: &mut String, s: &Summary) {
    for row in &s.rows {
        let n = row.levels.get("session").map_or(0, |l| l.grouped.overall.n);
        let _ = write!(
            out,
            "| {} | {} | `{}` ({}) | {n} |",
            s.meta.run_label,
            s.meta.dataset,
            row.config,
            options_line(&row.options)
        );
        for (l, m) in COMPARE_COLUMNS {
            let v = row
                .levels
                .get(l)
                .and_then(|x| x.grouped.overall.metrics.get(m))
                .map_or("-".into(), |v| f3(*v));
            let _ = write!(out, " {v} |");
        }
        let vectors = s.ingest.vectors_cached + s.ingest.vectors_computed;
        let _ = writeln!(
            out,
            " {} | {} | {:.1} | {} | {} | {} |",
            ms(row.latency.engine_total_ms.p50),
            ms(row.latency.engine_total_ms.p95),
            s.ingest.turns_per_second,
            if vectors == 0 {
                "-".to_string()
            } else {
                format!(
                    "{:.0}%",
                    100.0 * s.ingest.vectors_cached as f64 / vectors as f64
                )
            },
            s.meta.git_sha,
            if s.complete { "yes" } else { "no" }
        );
    }
}

#[cfg(test)]
mod tests;
