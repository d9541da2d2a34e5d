//! The report of `cairn bench evermembench`: accuracy of the option scorer (multiple
//! choice), the open-ended diagnostic, recall latency and ingest, per config row, major
//! and category; its summary.md and METHODOLOGY.md.
use super::methodology;
use super::{f3, latency_table, ms, options_line, qa_markdown};
use crate::qa::{QaRecord, QaSummary};
use crate::records::evermembench::EverRecord;
use crate::run::{ConfigRow, RunMeta};
use cairn::{RecallOptions, UnitKind};
use cairn_load::stats::{percentiles, Percentiles};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EverIngest {
    pub days: usize,
    pub messages: usize,
    pub sessions: usize,
    pub units: usize,
    pub vectors_computed: usize,
    pub vectors_cached: usize,
    /// Per day: one `ingest_group_messages` call.
    pub day_ms: Percentiles,
    /// The final `flush`.
    pub flush_ms: f64,
    /// Every day's ingest plus the flush.
    pub total_seconds: f64,
    pub messages_per_second: f64,
    /// `Memory::speakers` after the ingest.
    pub speakers_known: usize,
}

/// Multiple-choice accuracy of a group of questions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Accuracy {
    pub n: usize,
    pub correct: usize,
    pub accuracy: f64,
    /// Picks decided by a tie (first letter).
    pub ties: usize,
    /// The memory-free baseline (option most similar to the question).
    pub question_only_accuracy: f64,
}

/// The open-ended diagnostic of a group of questions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenSummary {
    pub n: usize,
    /// Mean share of reference-answer content words in the context.
    pub mean_coverage: f64,
    /// Share of questions with every reference-answer content word in the context.
    pub full_coverage: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    pub multiple_choice: Accuracy,
    pub open: OpenSummary,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EverRow {
    pub config: String,
    #[serde(deserialize_with = "crate::run::rows::options_of_run")]
    pub options: RecallOptions,
    pub questions: usize,
    pub errors: usize,
    pub overall: GroupSummary,
    pub by_major: BTreeMap<String, GroupSummary>,
    pub by_category: BTreeMap<String, GroupSummary>,
    /// `recall.timings.total_ms`.
    pub recall_engine_ms: Percentiles,
    pub recall_wall_ms: Percentiles,
    pub mean_context_tokens: f64,
    pub mean_hits: f64,
    /// Hits returned per unit kind (all questions).
    pub hits_by_kind: BTreeMap<String, usize>,
    /// Share of P (profile) questions whose hits include a speaker profile.
    pub profile_hit_rate_p: f64,
    /// The reader's accuracy (runs with `--reader`): multiple choice by exact letter,
    /// open-ended by the judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qa: Option<QaSummary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EverSummary {
    pub meta: RunMeta,
    pub complete: bool,
    pub questions_in_file: usize,
    pub questions_selected: usize,
    pub questions_done: usize,
    /// Accuracy of picking at random among 4 options.
    pub chance_accuracy: f64,
    pub rows: Vec<EverRow>,
    pub ingest: EverIngest,
}

fn group_summary<'r>(recs: impl IntoIterator<Item = &'r EverRecord>) -> GroupSummary {
    let mut g = GroupSummary::default();
    let (mut q_only, mut covs, mut full) = (0usize, Vec::new(), 0usize);
    for r in recs {
        if let Some(c) = &r.choice {
            g.multiple_choice.n += 1;
            g.multiple_choice.correct += usize::from(c.correct);
            g.multiple_choice.ties += usize::from(c.tie);
            q_only += usize::from(c.question_only_correct);
        }
        if let Some(o) = &r.open {
            covs.push(o.coverage);
            full += usize::from(o.found_in_context == o.answer_words);
        }
    }
    let m = &mut g.multiple_choice;
    if m.n > 0 {
        m.accuracy = m.correct as f64 / m.n as f64;
        m.question_only_accuracy = q_only as f64 / m.n as f64;
    }
    g.open.n = covs.len();
    if !covs.is_empty() {
        g.open.mean_coverage = covs.iter().sum::<f64>() / covs.len() as f64;
        g.open.full_coverage = full as f64 / covs.len() as f64;
    }
    g
}

/// One config row's aggregates (errored records count as questions, not in any
/// accuracy).
fn row_summary(meta: &RunMeta, c: &ConfigRow, records: &[EverRecord]) -> EverRow {
    let recs: Vec<&EverRecord> = records.iter().filter(|r| r.config == c.name).collect();
    let ok: Vec<&EverRecord> = recs.iter().copied().filter(|r| r.error.is_none()).collect();
    let mut by_major: BTreeMap<String, Vec<&EverRecord>> = BTreeMap::new();
    let mut by_category: BTreeMap<String, Vec<&EverRecord>> = BTreeMap::new();
    for r in &ok {
        by_major.entry(r.major.clone()).or_default().push(r);
        by_category.entry(r.category.clone()).or_default().push(r);
    }
    let mut hits_by_kind: BTreeMap<String, usize> = BTreeMap::new();
    for h in ok.iter().flat_map(|r| &r.hits) {
        let k = serde_json::to_value(h.kind)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        *hits_by_kind.entry(k).or_default() += 1;
    }
    let p: Vec<&&EverRecord> = ok.iter().filter(|r| r.major == "P").collect();
    let mean = |f: &dyn Fn(&EverRecord) -> f64| {
        if ok.is_empty() {
            0.0
        } else {
            ok.iter().map(|r| f(r)).sum::<f64>() / ok.len() as f64
        }
    };
    let qa = meta.qa.as_ref().map(|setup| {
        let items: Vec<(&str, Option<&str>, &QaRecord)> = recs
            .iter()
            .filter_map(|r| r.qa.as_ref().map(|q| (r.category.as_str(), None, q)))
            .collect();
        crate::qa::summarize(setup, &items)
    });
    EverRow {
        qa,
        config: c.name.clone(),
        options: c.options.clone(),
        questions: recs.len(),
        errors: recs.len() - ok.len(),
        overall: group_summary(ok.iter().copied()),
        by_major: by_major
            .into_iter()
            .map(|(k, v)| (k, group_summary(v)))
            .collect(),
        by_category: by_category
            .into_iter()
            .map(|(k, v)| (k, group_summary(v)))
            .collect(),
        recall_engine_ms: percentiles(
            &ok.iter()
                .filter_map(|r| r.recall_timings.as_ref().map(|t| t.total_ms))
                .collect::<Vec<_>>(),
        ),
        recall_wall_ms: percentiles(&ok.iter().map(|r| r.recall_wall_ms).collect::<Vec<_>>()),
        mean_context_tokens: mean(&|r| r.context_tokens as f64),
        mean_hits: mean(&|r| r.hits.len() as f64),
        hits_by_kind,
        profile_hit_rate_p: if p.is_empty() {
            0.0
        } else {
            p.iter()
                .filter(|r| r.hits.iter().any(|h| h.kind == UnitKind::Profile))
                .count() as f64
                / p.len() as f64
        },
    }
}

/// Aggregates records (errored records count as questions, not in any accuracy).
pub fn summarize(
    meta: &RunMeta,
    records: &[EverRecord],
    ingest: EverIngest,
    complete: bool,
) -> EverSummary {
    let rows = meta
        .configs
        .iter()
        .map(|c| row_summary(meta, c, records))
        .collect();
    let done: HashSet<&str> = records.iter().map(|r| r.question_id.as_str()).collect();
    EverSummary {
        meta: meta.clone(),
        complete,
        questions_in_file: meta.questions_in_file,
        questions_selected: meta.questions_selected,
        questions_done: done.len(),
        chance_accuracy: 0.25,
        rows,
        ingest,
    }
}

fn group_line(out: &mut String, label: &str, g: &GroupSummary) {
    let m = &g.multiple_choice;
    let (acc, q_only) = if m.n > 0 {
        (f3(m.accuracy), f3(m.question_only_accuracy))
    } else {
        ("-".into(), "-".into())
    };
    let (cov, full) = if g.open.n > 0 {
        (f3(g.open.mean_coverage), f3(g.open.full_coverage))
    } else {
        ("-".into(), "-".into())
    };
    let _ = writeln!(
        out,
        "| {label} | {} | {acc} | {} | {q_only} | {} | {cov} | {full} |",
        m.n, m.ties, g.open.n
    );
}

/// `summary.md`.
pub fn render_summary(s: &EverSummary) -> String {
    let m = &s.meta;
    let mut out = String::new();
    let _ = writeln!(out, "# {} — evermembench\n", m.run_label);
    let _ = writeln!(
        out,
        "- dialogue: `{}` (sha256 `{}`)\n- {}\n- questions: {} selected of {} in the file, {} \
            done{}\n- Cairn {} (git {}, built {}), embedding model `{}`\n- {}\n",
        m.data_path,
        m.data_sha256,
        m.dataset_notes.join("\n- "),
        s.questions_selected,
        s.questions_in_file,
        s.questions_done,
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
    let _ = writeln!(
        out,
        "MC = multiple choice, answered by the **option scorer (no LLM)**; \
        chance = {:.2}. \"question only\" = the memory-free baseline (the option most similar \
        to the question). Open = open-ended questions, **not judged**: retrieval-only \
        diagnostic (share of the reference answer's content words found in the context; \
        \"full\" = all of them).\n",
        s.chance_accuracy
    );
    for row in &s.rows {
        row_section(&mut out, row);
    }
    let i = &s.ingest;
    let _ = writeln!(
        out,
        "## Ingest\n\n{} days ({} `ingest_group_messages` calls), {} messages, {} sessions \
            (group-days), {} units, {} speakers known afterwards; vectors computed {} / from \
            cache {}.\n\n| per day (ms) | n | mean | p50 | p95 | p99 | max \
            |\n|---|---:|---:|---:|---:|---:|---:|\n| ingest_group_messages | {} | {} | {} | {} \
            | {} | {} |\n\nFinal flush {} ms. Ingest total **{:.1} s**, **{:.1} messages/s**.",
        i.days,
        i.days,
        i.messages,
        i.sessions,
        i.units,
        i.speakers_known,
        i.vectors_computed,
        i.vectors_cached,
        i.day_ms.n,
        ms(i.day_ms.mean),
        ms(i.day_ms.p50),
        ms(i.day_ms.p95),
        ms(i.day_ms.p99),
        ms(i.day_ms.max),
        ms(i.flush_ms),
        i.total_seconds,
        i.messages_per_second
    );
    out
}

/// A config row's section of summary.md.
fn row_section(out: &mut String, row: &EverRow) {
    let _ = writeln!(
        out,
        "## Config `{}` ({})\n\n{} questions recorded, {} errors.\n",
        row.config,
        options_line(&row.options),
        row.questions,
        row.errors
    );
    let _ = writeln!(
        out,
        "| group | MC n | MC accuracy (option scorer, no LLM) | ties | \
        question only | open n | open: answer words in context | open: full \
        |\n|---|---:|---:|---:|---:|---:|---:|---:|"
    );
    group_line(out, "**overall**", &row.overall);
    for (k, g) in &row.by_major {
        group_line(out, &format!("major {k}"), g);
    }
    for (k, g) in &row.by_category {
        group_line(out, k, g);
    }
    if let Some(q) = &row.qa {
        let _ = writeln!(out);
        qa_markdown(out, q);
    }
    let kinds = row
        .hits_by_kind
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(out);
    latency_table(
        out,
        "recall latency (ms)",
        &[
            ("engine `timings.total_ms`", &row.recall_engine_ms),
            ("wall", &row.recall_wall_ms),
        ],
    );
    let _ = writeln!(
        out,
        "\nMean context tokens {:.0}; mean hits {:.1}; hits by kind: {kinds}; P questions \
            with a speaker-profile hit: {}.\n",
        row.mean_context_tokens,
        row.mean_hits,
        f3(row.profile_hit_rate_p)
    );
}

/// `METHODOLOGY.md`.
pub fn render_methodology(s: &EverSummary) -> String {
    methodology::render_single_pass(
        methodology::EVERMEMBENCH,
        &s.meta,
        s.questions_done,
        s.complete,
    )
}

pub fn write_files(dir: &Path, s: &EverSummary) -> anyhow::Result<()> {
    super::write_summary(dir, s, render_summary(s), render_methodology(s))
}

pub fn short_report(s: &EverSummary) -> String {
    let mut out = String::new();
    for row in &s.rows {
        let o = &row.overall;
        let _ = writeln!(
            out,
            "{} [{}]: MC accuracy (option scorer, no LLM) {} over {} (question-only baseline \
                {}, chance {:.2}) | open: answer words in context {} over {} | recall p50 {} ms \
                p95 {} ms",
            s.meta.run_label,
            row.config,
            f3(o.multiple_choice.accuracy),
            o.multiple_choice.n,
            f3(o.multiple_choice.question_only_accuracy),
            s.chance_accuracy,
            f3(o.open.mean_coverage),
            o.open.n,
            ms(row.recall_engine_ms.p50),
            ms(row.recall_engine_ms.p95),
        );
        if let Some(q) = &row.qa {
            let _ = writeln!(
                out,
                "{} [{}] QA accuracy (reader {}, judge {}{}) {} ({}/{})",
                s.meta.run_label,
                row.config,
                q.setup.reader,
                q.setup.judge,
                if q.setup.judge_is_reader {
                    ", the judge is the reader"
                } else {
                    ""
                },
                f3(q.accuracy),
                q.correct,
                q.judged
            );
        }
    }
    let _ = write!(
        out,
        "ingest: {} days, {} messages in {:.1} s ({:.1} messages/s)",
        s.ingest.days, s.ingest.messages, s.ingest.total_seconds, s.ingest.messages_per_second
    );
    out
}
