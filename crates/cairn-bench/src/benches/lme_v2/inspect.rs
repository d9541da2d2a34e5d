//! Rows of `cairn bench lme-v2` beyond plain recall (`--inspect-rows`): on each
//! question's space, after the base recall,
//! - `inspect`: recall + inspection, no LLM (`Trajectories::recall_inspect`: recall
//!   shortlists trajectories, the states that best hold the question become spans, the
//!   best note leads, rendered within the token budget);
//! - `agent`: the agent controller (`Trajectories::agent`) with `--agent-llm`,
//!   falling back to plain recall when the model fails, times out or runs out of steps.
//!
//! Each row's context is scored like the base row's (answer phrases in context, the
//! option scorer, gotcha words), its query latency is timed, and with
//! `--evidence-states` (hand labels of the states that show each answer; the fixture
//! has them) the report says how often the spans hold an evidence state. The base row
//! ("recall") is reported beside them, its spans being the states its slice and event
//! hits in the context cite.
//!
//! Records go to `inspect.jsonl`; the table is appended to `summary.md`, the protocol to
//! `METHODOLOGY.md`, the aggregates written to `inspect.json`.
use super::choice::choice;
use crate::records::lme_v2::LmeV2Record;
use crate::report::methodology::{snippet, LME_V2_INSPECT};
use crate::report::{canonical, f3, mean, ms, share};
use crate::scoring::options::{open_diagnostic, ChoiceResult, OpenDiagnostic};
use crate::scoring::phrases::{phrase_diagnostic, PhraseDiagnostic};
use anyhow::{bail, Context as _};
use cairn::formats::lme_v2::{EvalKind, LmeV2Question};
use cairn::{
    AgentLlm, AgentMode, AgentOptions, ContextSpan, InspectRecallOptions, LlmConfig, Memory,
    UnitKind,
};
use cairn_load::stats::{percentiles, Percentiles};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Options of the extra rows.
#[derive(Debug, Clone, Default, Args)]
pub struct InspectRowArgs {
    /// Extra rows after plain recall: `inspect` (recall + inspection, no LLM), `agent`
    /// (the controller; needs --agent-llm). Comma separated.
    #[arg(long = "inspect-rows", value_delimiter = ',', value_name = "ROW,...")]
    pub rows: Vec<String>,
    /// The controller's model, `URL,MODEL` (OpenAI-compatible).
    #[arg(long = "agent-llm", value_name = "URL,MODEL")]
    pub agent_llm: Option<String>,
    #[arg(long = "agent-max-steps", default_value_t = 6, value_name = "N")]
    pub agent_max_steps: usize,
    /// Seconds per question for the controller.
    #[arg(long = "agent-time-budget", default_value_t = 60.0, value_name = "S")]
    pub agent_time_budget: f64,
    /// Characters of conversation per model call (a quarter of it per tool result); the
    /// default fits a 4k-token context.
    #[arg(long = "agent-prompt-chars", default_value_t = 8_000, value_name = "N")]
    pub agent_prompt_chars: usize,
    /// Hand-labelled evidence states `{question_id: {trajectory_id: [state, ...]}}`.
    #[arg(long = "evidence-states", value_name = "FILE")]
    pub evidence_states: Option<PathBuf>,
}

type Labels = HashMap<String, BTreeMap<String, Vec<usize>>>;

/// Where the evidence states ended up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpanEvidence {
    pub labelled_states: usize,
    /// Some span holds an evidence state.
    pub any: bool,
    /// For every labelled trajectory, some span holds one of its evidence states.
    pub every_trajectory: bool,
    /// Some span is in an evidence trajectory.
    pub trajectory: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    pub mode: AgentMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_reason: Option<String>,
    pub model_calls: usize,
    pub tools: Vec<String>,
}

/// One row of one question (a line of `inspect.jsonl`; no question or answer text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InspectRowRecord {
    pub question_id: String,
    pub group: String,
    pub row: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub query_ms: f64,
    pub context_tokens: usize,
    pub spans: Vec<ContextSpan>,
    pub span_states: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phrases: Option<PhraseDiagnostic>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<ChoiceResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenDiagnostic>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<SpanEvidence>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentInfo>,
    /// Recall + inspection: its stages (recall, inspection, render), milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages_ms: Option<[f64; 3]>,
}

/// Aggregates of one row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RowSummary {
    pub row: String,
    pub questions: usize,
    pub errors: usize,
    pub phrase_n: usize,
    pub phrases_all_in_context: f64,
    pub choice_n: usize,
    pub choice_accuracy: f64,
    pub open_n: usize,
    pub open_mean_coverage: f64,
    pub evidence_n: usize,
    pub evidence_state_in_spans: f64,
    pub evidence_every_trajectory: f64,
    pub evidence_trajectory_in_spans: f64,
    pub query_ms: Percentiles,
    pub mean_context_tokens: f64,
    pub mean_span_states: f64,
    /// Agent row: mean model calls, and runs that fell back.
    pub mean_model_calls: f64,
    pub fallbacks: usize,
    pub fallback_reasons: BTreeMap<String, usize>,
    /// Recall + inspection: mean milliseconds of recall, inspection and render.
    pub mean_stages_ms: Option<[f64; 3]>,
}

/// The extra rows of a run.
pub struct Rows {
    inspect: bool,
    agent: Option<Arc<AgentLlm>>,
    agent_name: Option<String>,
    opts: AgentOptions,
    labels: Option<Labels>,
    labels_path: Option<PathBuf>,
    out: Option<std::fs::File>,
    pub records: Vec<InspectRowRecord>,
}

impl Rows {
    pub fn new(args: &InspectRowArgs, dir: &Path) -> anyhow::Result<Self> {
        let mut inspect = false;
        let mut agent = false;
        for r in &args.rows {
            match r.trim() {
                "inspect" => inspect = true,
                "agent" => agent = true,
                other => bail!("--inspect-rows: unknown row {other:?} (inspect, agent)"),
            }
        }
        let llm = match (agent, &args.agent_llm) {
            (false, _) => None,
            (true, None) => bail!("--inspect-rows agent needs --agent-llm URL,MODEL"),
            (true, Some(spec)) => {
                let mut cfg = LlmConfig::from_spec(spec)?;
                cfg.timeout_secs = args.agent_time_budget.ceil().max(1.0) as u64;
                cfg.retries = 0;
                Some(Arc::new(AgentLlm::new(cfg)?))
            }
        };
        if !(args.agent_time_budget.is_finite() && args.agent_time_budget > 0.0) {
            bail!("--agent-time-budget must be a positive number of seconds");
        }
        let labels = match &args.evidence_states {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .with_context(|| format!("reading {}", p.display()))?;
                let v: serde_json::Value = serde_json::from_str(&text)
                    .with_context(|| format!("{}: not JSON", p.display()))?;
                let mut out = Labels::new();
                for (k, v) in v.as_object().into_iter().flatten() {
                    if k.starts_with('_') {
                        continue;
                    }
                    let m = serde_json::from_value(v.clone())
                        .with_context(|| format!("{}: question {k}", p.display()))?;
                    out.insert(k.clone(), m);
                }
                Some(out)
            }
            None => None,
        };
        let on = inspect || agent;
        let out = if on {
            let p = dir.join("inspect.jsonl");
            Some(std::fs::File::create(&p).with_context(|| format!("creating {}", p.display()))?)
        } else {
            None
        };
        Ok(Self {
            inspect,
            agent_name: llm
                .as_ref()
                .map(|_| args.agent_llm.clone().unwrap_or_default()),
            agent: llm,
            opts: AgentOptions {
                max_steps: args.agent_max_steps,
                time_budget_ms: (args.agent_time_budget * 1000.0) as u64,
                max_prompt_chars: args.agent_prompt_chars,
                max_result_chars: args.agent_prompt_chars / 4,
                ..AgentOptions::default()
            },
            labels,
            labels_path: args.evidence_states.clone(),
            out,
            records: Vec::new(),
        })
    }

    pub fn active(&self) -> bool {
        self.out.is_some()
    }

    /// The rows of one question, on the space the base row filled.
    pub fn question(
        &mut self,
        memory: &Memory,
        q: &LmeV2Question,
        base: &LmeV2Record,
        token_budget: usize,
    ) -> anyhow::Result<()> {
        if !self.active() {
            return Ok(());
        }
        let labels = self.labels.as_ref().and_then(|l| l.get(&q.id));
        let mut rows = vec![base_row(base, labels)];
        if base.error.is_none() {
            if self.inspect {
                rows.push(self.inspect_row(memory, q, base, token_budget, labels));
            }
            if let Some(llm) = self.agent.clone() {
                rows.push(self.agent_row(memory, q, base, token_budget, labels, llm));
            }
        }
        for r in rows {
            let mut line = serde_json::to_string(&r)?;
            line.push('\n');
            if let Some(f) = &mut self.out {
                f.write_all(line.as_bytes())?;
                f.flush()?;
            }
            self.records.push(r);
        }
        Ok(())
    }

    fn inspect_row(
        &self,
        memory: &Memory,
        q: &LmeV2Question,
        base: &LmeV2Record,
        token_budget: usize,
        labels: Option<&BTreeMap<String, Vec<usize>>>,
    ) -> InspectRowRecord {
        let opts = InspectRecallOptions {
            token_budget,
            ..InspectRecallOptions::default()
        };
        let t = Instant::now();
        let r = memory
            .trajectories()
            .recall_inspect(&base.space, &q.question, &opts);
        let wall = t.elapsed().as_secs_f64() * 1000.0;
        let mut rec = empty(base, "recall+inspect", wall);
        match r {
            Ok(r) => {
                rec.context_tokens = r.context.tokens;
                rec.stages_ms = Some([r.recall_ms, r.inspect_ms, r.render_ms]);
                fill(memory, q, &mut rec, &r.context.context, r.spans, labels);
            }
            Err(e) => rec.error = Some(e.to_string()),
        }
        rec
    }

    fn agent_row(
        &self,
        memory: &Memory,
        q: &LmeV2Question,
        base: &LmeV2Record,
        token_budget: usize,
        labels: Option<&BTreeMap<String, Vec<usize>>>,
        llm: Arc<AgentLlm>,
    ) -> InspectRowRecord {
        let opts = AgentOptions {
            token_budget,
            ..self.opts.clone()
        };
        let t = Instant::now();
        let r = memory
            .trajectories()
            .agent(&base.space, &q.question, &opts, Some(llm));
        let wall = t.elapsed().as_secs_f64() * 1000.0;
        let mut rec = empty(base, "agent", wall);
        match r {
            Ok(r) => {
                rec.context_tokens = r.context_tokens;
                rec.agent = Some(AgentInfo {
                    mode: r.mode,
                    fallback_reason: r.fallback_reason.clone(),
                    model_calls: r.model_calls,
                    tools: r.steps.iter().map(|s| s.tool.clone()).collect(),
                });
                fill(memory, q, &mut rec, &r.context, r.spans, labels);
            }
            Err(e) => rec.error = Some(e.to_string()),
        }
        rec
    }

    /// Writes `inspect.json` and appends the table to `summary.md` and the protocol to
    /// `METHODOLOGY.md`.
    pub fn finish(&self, dir: &Path) -> anyhow::Result<()> {
        if !self.active() {
            return Ok(());
        }
        let mut rows: Vec<String> = Vec::new();
        for r in &self.records {
            if !rows.contains(&r.row) {
                rows.push(r.row.clone());
            }
        }
        let summaries: Vec<RowSummary> = rows
            .iter()
            .map(|row| {
                let recs: Vec<&InspectRowRecord> =
                    self.records.iter().filter(|r| &r.row == row).collect();
                summarize(row, &recs)
            })
            .collect();
        std::fs::write(
            dir.join("inspect.json"),
            serde_json::to_string_pretty(&summaries)?,
        )?;
        let append = |name: &str, text: String| -> anyhow::Result<()> {
            let p = dir.join(name);
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&p)
                .with_context(|| format!("appending to {}", p.display()))?;
            f.write_all(text.as_bytes())?;
            Ok(())
        };
        append(
            "summary.md",
            render_table(&summaries, self.labels.is_some()),
        )?;
        append("METHODOLOGY.md", self.methodology())?;
        eprintln!("{}", short(&summaries));
        Ok(())
    }

    /// The protocol of the rows (`methodology/lme-v2-inspect.md`), appended to
    /// METHODOLOGY.md.
    fn methodology(&self) -> String {
        let evidence = match &self.labels_path {
            Some(p) => format!(
                "- Evidence states: `{}` (hand labels: the states whose page or thought shows \
                the answer). \"state in spans\": some span holds one; \"every traj\": for each \
                labelled trajectory some span holds one of its states; \"traj in spans\": some \
                span is in an evidence trajectory.",
                canonical(p)
            ),
            None => "- No evidence-state labels were given.".into(),
        };
        let values = [
            (
                "agent_model",
                self.agent_name.as_deref().unwrap_or("-").to_string(),
            ),
            ("agent_max_steps", self.opts.max_steps.to_string()),
            ("agent_time_budget_ms", self.opts.time_budget_ms.to_string()),
            ("agent_prompt_chars", self.opts.max_prompt_chars.to_string()),
            ("evidence_states", evidence),
        ];
        let values: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
        format!("\n{}\n", snippet(LME_V2_INSPECT, &values))
    }
}

fn empty(base: &LmeV2Record, row: &str, query_ms: f64) -> InspectRowRecord {
    InspectRowRecord {
        question_id: base.question_id.clone(),
        group: base.group.clone(),
        row: row.into(),
        error: None,
        query_ms,
        context_tokens: 0,
        spans: Vec::new(),
        span_states: 0,
        phrases: None,
        choice: None,
        open: None,
        evidence: None,
        agent: None,
        stages_ms: None,
    }
}

fn span_evidence(
    spans: &[ContextSpan],
    labels: Option<&BTreeMap<String, Vec<usize>>>,
) -> Option<SpanEvidence> {
    let labels = labels.filter(|l| !l.is_empty())?;
    let holds = |t: &str, states: &[usize]| {
        spans.iter().any(|s| {
            s.trajectory_id == t
                && states
                    .iter()
                    .any(|&i| i >= s.start_state && i <= s.end_state)
        })
    };
    Some(SpanEvidence {
        labelled_states: labels.values().map(Vec::len).sum(),
        any: labels.iter().any(|(t, s)| holds(t, s)),
        every_trajectory: labels.iter().all(|(t, s)| holds(t, s)),
        trajectory: spans.iter().any(|s| labels.contains_key(&s.trajectory_id)),
    })
}

/// The base row: its scores as recorded, its spans from its slice and event hits.
fn base_row(base: &LmeV2Record, labels: Option<&BTreeMap<String, Vec<usize>>>) -> InspectRowRecord {
    let mut rec = empty(base, "recall", base.recall_wall_ms);
    rec.error = base.error.clone();
    rec.context_tokens = base.context_tokens;
    rec.spans = base
        .hits
        .iter()
        .filter(|h| h.in_context && matches!(h.kind, UnitKind::Slice | UnitKind::Event))
        .filter_map(|h| Some(ContextSpan::of_states(h.trajectory_id.clone()?, h.states?)))
        .collect();
    rec.span_states = rec
        .spans
        .iter()
        .map(|s| s.end_state - s.start_state + 1)
        .sum();
    rec.phrases = base.phrases.clone();
    rec.choice = base.choice.clone();
    rec.open = base.open.clone();
    rec.evidence = span_evidence(&rec.spans, labels);
    rec
}

fn fill(
    memory: &Memory,
    q: &LmeV2Question,
    rec: &mut InspectRowRecord,
    context: &str,
    spans: Vec<ContextSpan>,
    labels: Option<&BTreeMap<String, Vec<usize>>>,
) {
    rec.span_states = spans.iter().map(|s| s.end_state - s.start_state + 1).sum();
    rec.evidence = span_evidence(&spans, labels);
    rec.spans = spans;
    let f = &q.eval_function;
    if f.kind.is_phrase_set() {
        rec.phrases = Some(phrase_diagnostic(f, &q.answer, context));
    } else if f.kind.is_choice() {
        let sections: Vec<&str> = context
            .split("\n## ")
            .filter(|s| !s.trim().is_empty())
            .collect();
        match choice(memory, q, &sections) {
            Ok(c) => rec.choice = c,
            Err(e) => rec.error = Some(format!("{e:#}")),
        }
    } else if f.kind == EvalKind::LlmGotchasChecker {
        rec.open = Some(open_diagnostic(&q.question, &q.answer, context));
    }
}

pub fn summarize(row: &str, recs: &[&InspectRowRecord]) -> RowSummary {
    let ok: Vec<&&InspectRowRecord> = recs.iter().filter(|r| r.error.is_none()).collect();
    let ph: Vec<&PhraseDiagnostic> = ok.iter().filter_map(|r| r.phrases.as_ref()).collect();
    let ch: Vec<&ChoiceResult> = ok.iter().filter_map(|r| r.choice.as_ref()).collect();
    let op: Vec<&OpenDiagnostic> = ok.iter().filter_map(|r| r.open.as_ref()).collect();
    let ev: Vec<&SpanEvidence> = ok.iter().filter_map(|r| r.evidence.as_ref()).collect();
    let ag: Vec<&AgentInfo> = ok.iter().filter_map(|r| r.agent.as_ref()).collect();
    let mut reasons = BTreeMap::new();
    for a in &ag {
        if let Some(r) = &a.fallback_reason {
            // Reasons name counts and times; grouped with every number written N.
            let mut kind = String::new();
            for c in r.chars().take(120) {
                if c.is_ascii_digit() {
                    if !kind.ends_with('N') {
                        kind.push('N');
                    }
                } else {
                    kind.push(c);
                }
            }
            *reasons.entry(kind).or_default() += 1;
        }
    }
    RowSummary {
        row: row.into(),
        questions: recs.len(),
        errors: recs.len() - ok.len(),
        phrase_n: ph.len(),
        phrases_all_in_context: share(ph.iter().map(|p| p.all_found)),
        choice_n: ch.len(),
        choice_accuracy: share(ch.iter().map(|c| c.correct)),
        open_n: op.len(),
        open_mean_coverage: mean(op.iter().map(|o| o.coverage)),
        evidence_n: ev.len(),
        evidence_state_in_spans: share(ev.iter().map(|e| e.any)),
        evidence_every_trajectory: share(ev.iter().map(|e| e.every_trajectory)),
        evidence_trajectory_in_spans: share(ev.iter().map(|e| e.trajectory)),
        query_ms: percentiles(&ok.iter().map(|r| r.query_ms).collect::<Vec<_>>()),
        mean_context_tokens: mean(ok.iter().map(|r| r.context_tokens as f64)),
        mean_span_states: mean(ok.iter().map(|r| r.span_states as f64)),
        mean_model_calls: mean(ag.iter().map(|a| a.model_calls as f64)),
        fallbacks: ag.iter().filter(|a| a.mode == AgentMode::Fallback).count(),
        fallback_reasons: reasons,
        mean_stages_ms: {
            let st: Vec<[f64; 3]> = ok.iter().filter_map(|r| r.stages_ms).collect();
            (!st.is_empty()).then(|| [0, 1, 2].map(|k| mean(st.iter().map(|s| s[k]))))
        },
    }
}

fn or_dash(n: usize, v: f64) -> String {
    if n == 0 {
        "-".into()
    } else {
        f3(v)
    }
}

pub fn render_table(rows: &[RowSummary], labels: bool) -> String {
    let mut out = String::from("\n## Rows: recall, recall + inspection, agent controller\n\n");
    let _ = writeln!(out, "Same questions and spaces as above; \"state in spans\" = share of labelled questions whose spans hold an evidence state (hand labels), \"every traj\" = ... one of each labelled trajectory's evidence states, \"traj in spans\" = a span in an evidence trajectory. Latency is the wall time of answering one question (the agent row: every model call included).\n");
    let _ = write!(
        out,
        "| row | n | phrases in ctx (n) | MC acc, no LLM (n) | gotcha words (n) |"
    );
    if labels {
        let _ = write!(out, " state in spans | every traj | traj in spans |");
    }
    let _ = writeln!(
        out,
        " span states | query ms p50 | query ms p95 | ctx tokens | model calls | fallbacks |"
    );
    let _ = write!(out, "|---|---:|---:|---:|---:|");
    if labels {
        let _ = write!(out, "---:|---:|---:|");
    }
    let _ = writeln!(out, "---:|---:|---:|---:|---:|---:|");
    for r in rows {
        table_row(&mut out, r, labels);
    }
    for r in rows {
        if let Some([a, b, c]) = r.mean_stages_ms {
            let _ = writeln!(
                out,
                "\nMean stages of `{}` (ms): recall {}, inspection {}, render {}.",
                r.row,
                ms(a),
                ms(b),
                ms(c)
            );
        }
    }
    for r in rows.iter().filter(|r| !r.fallback_reasons.is_empty()) {
        let reasons = r
            .fallback_reasons
            .iter()
            .map(|(k, v)| format!("{k} ({v})"))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(out, "\nFallbacks of `{}`: {reasons}.", r.row);
    }
    out
}

/// A row of the table (the label columns only with `labels`).
fn table_row(out: &mut String, r: &RowSummary, labels: bool) {
    let _ = write!(
        out,
        "| {} | {} | {} ({}) | {} ({}) | {} ({}) |",
        r.row,
        r.questions,
        or_dash(r.phrase_n, r.phrases_all_in_context),
        r.phrase_n,
        or_dash(r.choice_n, r.choice_accuracy),
        r.choice_n,
        or_dash(r.open_n, r.open_mean_coverage),
        r.open_n
    );
    if labels {
        let _ = write!(
            out,
            " {} | {} | {} |",
            or_dash(r.evidence_n, r.evidence_state_in_spans),
            or_dash(r.evidence_n, r.evidence_every_trajectory),
            or_dash(r.evidence_n, r.evidence_trajectory_in_spans)
        );
    }
    let agent = r.row == "agent";
    let _ = writeln!(
        out,
        " {:.1} | {} | {} | {:.0} | {} | {} |",
        r.mean_span_states,
        ms(r.query_ms.p50),
        ms(r.query_ms.p95),
        r.mean_context_tokens,
        if agent {
            format!("{:.1}", r.mean_model_calls)
        } else {
            "-".into()
        },
        if agent {
            r.fallbacks.to_string()
        } else {
            "-".into()
        },
    );
}

fn short(rows: &[RowSummary]) -> String {
    rows.iter()
        .map(|r| {
            format!(
                "{}: state in spans {} | query p50 {} ms p95 {} ms",
                r.row,
                or_dash(r.evidence_n, r.evidence_state_in_spans),
                ms(r.query_ms.p50),
                ms(r.query_ms.p95)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_hold_evidence_when_they_cover_a_labelled_state() {
        let mut l = BTreeMap::new();
        l.insert("a".to_string(), vec![3, 4]);
        l.insert("b".to_string(), vec![9]);
        let s = |t: &str, a, b| ContextSpan {
            trajectory_id: t.into(),
            start_state: a,
            end_state: b,
        };
        let e = span_evidence(&[s("a", 1, 3)], Some(&l)).unwrap();
        assert!(e.any && !e.every_trajectory && e.trajectory);
        let e = span_evidence(&[s("a", 4, 4), s("b", 8, 9)], Some(&l)).unwrap();
        assert!(e.any && e.every_trajectory);
        let e = span_evidence(&[s("b", 0, 8)], Some(&l)).unwrap();
        assert!(!e.any && e.trajectory);
        assert!(span_evidence(&[], None).is_none());
    }
}
