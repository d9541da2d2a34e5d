//! The report of `cairn bench lme-v2`: the LLM-free diagnostics per question group
//! (answer phrases in context, option-scorer accuracy, gotcha words, abstention,
//! evidence trajectories), latency, and its summary.md and METHODOLOGY.md.
use super::methodology;
use super::{f3, latency_table, mean, ms, share};
use crate::records::lme_v2::{AbstentionDiagnostic, EvidenceDiagnostic, LmeV2Record};
use crate::run::RunMeta;
use crate::scoring::options::{ChoiceResult, OpenDiagnostic};
use crate::scoring::phrases::PhraseDiagnostic;
use cairn::RecallOptions;
use cairn_load::stats::{percentiles, Percentiles};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Aggregates of one group of questions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    pub questions: usize,
    pub errors: usize,
    /// Phrase-set questions.
    pub phrase_n: usize,
    /// Share whose every answer phrase is in the context.
    pub phrases_all_in_context: f64,
    /// Mean share of answer phrases in the context.
    pub phrases_mean_found: f64,
    /// Multiple choice (option scorer, no LLM).
    pub choice_n: usize,
    pub choice_accuracy: f64,
    pub choice_question_only_accuracy: f64,
    pub choice_ties: usize,
    /// LLM-judged gotchas (not judged): reference-answer content words in the context.
    pub open_n: usize,
    pub open_mean_coverage: f64,
    /// Abstention: what was retrievable.
    pub abstention_n: usize,
    pub abstention_mean_top_score: f64,
    pub abstention_mean_question_words_in_context: f64,
    /// With evidence labels: questions labelled, and the shares of those with an
    /// evidence-trajectory hit, one in the context, and a note from one.
    pub evidence_n: usize,
    pub evidence_hit: f64,
    pub evidence_in_context: f64,
    pub evidence_note_hit: f64,
    /// Mean score of the best hit (all questions of the group).
    pub mean_top_score: f64,
    pub insert_ms: Percentiles,
    pub recall_wall_ms: Percentiles,
    pub recall_engine_ms: Percentiles,
    pub mean_context_tokens: f64,
    pub hits_by_kind: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LmeV2Summary {
    pub meta: RunMeta,
    pub complete: bool,
    pub questions_in_file: usize,
    pub questions_selected: usize,
    pub questions_done: usize,
    pub has_evidence: bool,
    pub overall: GroupSummary,
    /// `static-environment`, `dynamic-environment`, `procedure`, `errors-gotchas`,
    /// `abstention`.
    pub by_group: BTreeMap<String, GroupSummary>,
    /// Inserted trajectories and states over all questions, and vectors.
    pub trajectories_inserted: usize,
    pub states_inserted: usize,
    pub vectors_computed: usize,
    pub vectors_cached: usize,
}

pub fn group_summary(recs: &[&LmeV2Record]) -> GroupSummary {
    let ok: Vec<&&LmeV2Record> = recs.iter().filter(|r| r.error.is_none()).collect();
    let ph: Vec<&PhraseDiagnostic> = ok.iter().filter_map(|r| r.phrases.as_ref()).collect();
    let ch: Vec<&ChoiceResult> = ok.iter().filter_map(|r| r.choice.as_ref()).collect();
    let op: Vec<&OpenDiagnostic> = ok.iter().filter_map(|r| r.open.as_ref()).collect();
    let ab: Vec<&AbstentionDiagnostic> = ok.iter().filter_map(|r| r.abstention.as_ref()).collect();
    let ev: Vec<&EvidenceDiagnostic> = ok.iter().filter_map(|r| r.evidence.as_ref()).collect();
    let mut hits_by_kind = BTreeMap::new();
    for h in ok.iter().flat_map(|r| &r.hits) {
        *hits_by_kind.entry(h.kind.as_str().to_string()).or_default() += 1;
    }
    GroupSummary {
        questions: recs.len(),
        errors: recs.len() - ok.len(),
        phrase_n: ph.len(),
        phrases_all_in_context: share(ph.iter().map(|p| p.all_found)),
        phrases_mean_found: mean(ph.iter().map(|p| p.found as f64 / p.phrases.max(1) as f64)),
        choice_n: ch.len(),
        choice_accuracy: share(ch.iter().map(|c| c.correct)),
        choice_question_only_accuracy: share(ch.iter().map(|c| c.question_only_correct)),
        choice_ties: ch.iter().filter(|c| c.tie).count(),
        open_n: op.len(),
        open_mean_coverage: mean(op.iter().map(|o| o.coverage)),
        abstention_n: ab.len(),
        abstention_mean_top_score: mean(ab.iter().map(|a| f64::from(a.top_score))),
        abstention_mean_question_words_in_context: mean(
            ab.iter().map(|a| a.question_words_in_context),
        ),
        evidence_n: ev.len(),
        evidence_hit: share(ev.iter().map(|e| e.first_rank.is_some())),
        evidence_in_context: share(ev.iter().map(|e| e.in_context)),
        evidence_note_hit: share(ev.iter().map(|e| e.note_hit)),
        mean_top_score: mean(
            ok.iter()
                .map(|r| r.hits.first().map_or(0.0, |h| f64::from(h.score))),
        ),
        insert_ms: percentiles(&ok.iter().map(|r| r.insert.ms).collect::<Vec<_>>()),
        recall_wall_ms: percentiles(&ok.iter().map(|r| r.recall_wall_ms).collect::<Vec<_>>()),
        recall_engine_ms: percentiles(
            &ok.iter()
                .filter_map(|r| r.recall_timings.as_ref().map(|t| t.total_ms))
                .collect::<Vec<_>>(),
        ),
        mean_context_tokens: mean(ok.iter().map(|r| r.context_tokens as f64)),
        hits_by_kind,
    }
}

pub fn summarize(
    meta: &RunMeta,
    records: &[LmeV2Record],
    complete: bool,
    has_evidence: bool,
) -> LmeV2Summary {
    let all: Vec<&LmeV2Record> = records.iter().collect();
    let mut groups: BTreeMap<String, Vec<&LmeV2Record>> = BTreeMap::new();
    for r in records {
        groups.entry(r.group.clone()).or_default().push(r);
    }
    LmeV2Summary {
        meta: meta.clone(),
        complete,
        questions_in_file: meta.questions_in_file,
        questions_selected: meta.questions_selected,
        questions_done: records.len(),
        has_evidence,
        overall: group_summary(&all),
        by_group: groups
            .into_iter()
            .map(|(k, v)| (k, group_summary(&v)))
            .collect(),
        trajectories_inserted: records.iter().map(|r| r.insert.trajectories).sum(),
        states_inserted: records.iter().map(|r| r.insert.states).sum(),
        vectors_computed: records.iter().map(|r| r.insert.vectors_computed).sum(),
        vectors_cached: records.iter().map(|r| r.insert.vectors_cached).sum(),
    }
}

fn or_dash(n: usize, v: f64) -> String {
    if n == 0 {
        "-".into()
    } else {
        f3(v)
    }
}

/// The recall options of the run, pools and quotas included.
fn options_line(o: &RecallOptions) -> String {
    let pools = o.scope.kinds.as_ref().map_or("all".into(), |k| {
        k.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(",")
    });
    let quotas = o.quotas.as_ref().map_or("none".into(), |q| {
        q.iter()
            .map(|(k, n)| format!("{}={n}", k.as_str()))
            .collect::<Vec<_>>()
            .join(",")
    });
    format!(
        "top_k={}, token_budget={}, format=raw, pools={pools}, quotas={quotas}",
        o.top_k, o.token_budget
    )
}

/// `summary.md`.
pub fn render_summary(s: &LmeV2Summary) -> String {
    let m = &s.meta;
    let mut out = String::new();
    let _ = writeln!(out, "# {} — lme-v2\n", m.run_label);
    let _ =
        writeln!(
        out,
        "- questions: `{}` (sha256 `{}`)\n- {}\n- questions: {} selected of {} in the file, {} \
            done{}\n- Cairn {} (git {}, built {}), embedding model `{}`\n- recall: {}\n",
        m.data_path,
        m.data_sha256,
        m.dataset_notes.join("\n- "),
        s.questions_selected,
        s.questions_in_file,
        s.questions_done,
        if s.complete { "" } else { " (**incomplete run**)" },
        m.cairn_version,
        m.git_sha,
        m.build_time,
        m.embedding_model,
        m.configs.first().map_or(String::new(), |c| options_line(&c.options)),
    );
    let _ = writeln!(
        out,
        "**No reader model: these are not LongMemEval-V2 accuracies.** \
        \"phrases in ctx\" = share of phrase-set questions whose every answer phrase (the \
        reference's normalization and match) is in the packed context — a retrieval diagnostic. \
        \"MC\" = multiple choice answered by the option scorer (no LLM). \"gotcha words\" = \
        LLM-judged gotcha questions, not judged: share of reference-answer content words in the \
        context. Abstention questions: mean top hit score (compare with the answerable groups' \
        \"top score\").\n"
    );
    group_table(&mut out, s);
    let o = &s.overall;
    let kinds = o
        .hits_by_kind
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        out,
        "\nMC question-only baseline (no memory): {} over {}; ties {}. Abstention: {} \
            questions, mean top score {}, question words in context {}. Errors: {}. Hits by \
            pool: {kinds}.\n",
        or_dash(o.choice_n, o.choice_question_only_accuracy),
        o.choice_n,
        o.choice_ties,
        o.abstention_n,
        or_dash(o.abstention_n, o.abstention_mean_top_score),
        or_dash(o.abstention_n, o.abstention_mean_question_words_in_context),
        o.errors
    );
    latency_table(
        &mut out,
        "latency (ms)",
        &[
            (
                "insert haystack (insert_trajectories + flush)",
                &o.insert_ms,
            ),
            ("query, wall", &o.recall_wall_ms),
            ("query, engine `timings.total_ms`", &o.recall_engine_ms),
        ],
    );
    let _ = writeln!(
        out,
        "\nInserted {} trajectories ({} states) over all questions; vectors computed {} / from cache {}.",
        s.trajectories_inserted, s.states_inserted, s.vectors_computed, s.vectors_cached
    );
    out
}

/// The table of every group (overall first), evidence columns with `--evidence`.
fn group_table(out: &mut String, s: &LmeV2Summary) {
    let _ = write!(
        out,
        "| group | n | phrases in ctx (n) | MC acc, no LLM (n) | gotcha words (n) | top score |"
    );
    if s.has_evidence {
        let _ = write!(out, " evidence hit | evidence in ctx | evidence note |");
    }
    let _ = writeln!(
        out,
        " insert ms p50 | query ms p50 | query ms p95 | ctx tokens |"
    );
    let _ = write!(out, "|---|---:|---:|---:|---:|---:|");
    if s.has_evidence {
        let _ = write!(out, "---:|---:|---:|");
    }
    let _ = writeln!(out, "---:|---:|---:|---:|");
    let line = |out: &mut String, label: &str, g: &GroupSummary| {
        let _ = write!(
            out,
            "| {label} | {} | {} ({}) | {} ({}) | {} ({}) | {} |",
            g.questions,
            or_dash(g.phrase_n, g.phrases_all_in_context),
            g.phrase_n,
            or_dash(g.choice_n, g.choice_accuracy),
            g.choice_n,
            or_dash(g.open_n, g.open_mean_coverage),
            g.open_n,
            f3(g.mean_top_score),
        );
        if s.has_evidence {
            let _ = write!(
                out,
                " {} | {} | {} |",
                or_dash(g.evidence_n, g.evidence_hit),
                or_dash(g.evidence_n, g.evidence_in_context),
                or_dash(g.evidence_n, g.evidence_note_hit)
            );
        }
        let _ = writeln!(
            out,
            " {} | {} | {} | {:.0} |",
            ms(g.insert_ms.p50),
            ms(g.recall_wall_ms.p50),
            ms(g.recall_wall_ms.p95),
            g.mean_context_tokens
        );
    };
    line(out, "**overall**", &s.overall);
    for (k, g) in &s.by_group {
        line(out, k, g);
    }
}

/// `METHODOLOGY.md`.
pub fn render_methodology(s: &LmeV2Summary) -> String {
    methodology::render_single_pass(methodology::LME_V2, &s.meta, s.questions_done, s.complete)
}

pub fn write_files(dir: &Path, s: &LmeV2Summary) -> anyhow::Result<()> {
    super::write_summary(dir, s, render_summary(s), render_methodology(s))
}

pub fn short_report(s: &LmeV2Summary) -> String {
    let o = &s.overall;
    format!(
        "{}: {} questions, no reader | answer phrases in context {} over {} | MC (option \
            scorer, no LLM) {} over {} | insert p50 {} ms | query p50 {} ms p95 {} ms",
        s.meta.run_label,
        s.questions_done,
        or_dash(o.phrase_n, o.phrases_all_in_context),
        o.phrase_n,
        or_dash(o.choice_n, o.choice_accuracy),
        o.choice_n,
        ms(o.insert_ms.p50),
        ms(o.recall_wall_ms.p50),
        ms(o.recall_wall_ms.p95),
    )
}
