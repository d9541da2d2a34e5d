//! QA rows: with `--reader URL,MODEL` a model answers each question from the recalled
//! context (temperature 0), and a judge (`--judge`, else the reader, which the report
//! then says) scores the answer with the benchmark's own judging style:
//! - LongMemEval: the official per-type judge prompts of `evaluate_qa.py` (temporal
//!   reasoning forgives off-by-one day counts, knowledge update accepts the updated answer
//!   beside older ones, preference questions are judged against the rubric, abstention
//!   questions by whether the response says the question cannot be answered); verdict =
//!   "yes" in the judge's reply.
//! - LoCoMo: the CORRECT/WRONG judge popularized by Mem0's LoCoMo evaluation (generous on
//!   topic and date format); token F1 against the gold answer is recorded beside it.
//! - FriendsQA: the LoCoMo judge against the gold answer span.
//! - EverMemBench: multiple choice by the exact letter the reader picks (no judge);
//!   open-ended questions by the LoCoMo-style judge.
//!
//! The model's answer and the judge's reply are our output and are kept in
//! `results.jsonl`; the dataset's question and gold answer are not (as for retrieval).
use crate::scoring::exclusion;
pub use crate::scoring::qa::Style;
use crate::scoring::qa::{
    choice_prompt, judge_prompt, picked_letter, reader_prompt, token_f1, verdict,
};
use anyhow::Context as _;
use cairn_llm::{ChatMessage, ChatRequest, LlmClient, LlmConfig};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// `--reader` / `--judge` of every bench command.
#[derive(Debug, Clone, Default, Args)]
pub struct LlmArgs {
    /// Adds QA rows: this OpenAI-compatible server and model (`URL,MODEL`, e.g.
    /// `http://127.0.0.1:8088/v1,smollm2`) answers every question from the recalled
    /// context, at temperature 0.
    #[arg(long, value_name = "URL,MODEL")]
    pub reader: Option<String>,
    /// The judge of the reader's answers (`URL,MODEL`) [default: the reader itself, which
    /// the report discloses].
    #[arg(long, value_name = "URL,MODEL", requires = "reader")]
    pub judge: Option<String>,
    /// Environment variable holding the API key for reader and judge.
    #[arg(long, value_name = "VAR")]
    pub llm_key_env: Option<String>,
    /// Longest reader answer, in tokens.
    #[arg(long, value_name = "N", default_value_t = 128)]
    pub reader_max_tokens: u32,
    /// Per-call timeout for reader and judge, seconds (small local models on few cores
    /// need minutes to read a long context).
    #[arg(long, value_name = "S", default_value_t = 600)]
    pub llm_timeout: u64,
}

/// The reader and judge of a run.
pub struct Qa {
    pub reader: Arc<LlmClient>,
    pub judge: Arc<LlmClient>,
    pub judge_is_reader: bool,
    pub max_tokens: u32,
}

/// Who read and judged, for run.json and the reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QaSetup {
    pub reader: String,
    pub judge: String,
    pub judge_is_reader: bool,
    pub reader_max_tokens: u32,
    pub judge_style: String,
}

/// One question's QA outcome (in `results.jsonl`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QaRecord {
    /// The reader's answer (our output).
    pub answer: String,
    /// Judged correct; `None` when not judged (an error).
    pub correct: Option<bool>,
    /// The judge's reply (or, for multiple choice, the letter read from the answer).
    pub judge_reply: String,
    /// Token F1 of the answer against the gold answer (LoCoMo, FriendsQA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub f1: Option<f64>,
    pub reader_prompt_tokens: u64,
    pub reader_completion_tokens: u64,
    pub judge_prompt_tokens: u64,
    pub judge_completion_tokens: u64,
    pub reader_ms: f64,
    pub judge_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// QA aggregates of one config row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QaSummary {
    pub setup: QaSetup,
    /// Questions judged (errors and LoCoMo adversarial questions left out).
    pub judged: usize,
    pub correct: usize,
    pub accuracy: f64,
    /// `type -> (judged, correct, accuracy)`.
    pub by_type: BTreeMap<String, (usize, usize, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_f1: Option<f64>,
    pub errors: usize,
    pub reader_calls: usize,
    pub judge_calls: usize,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub mean_reader_ms: f64,
    pub mean_judge_ms: f64,
}

impl Qa {
    /// Connects reader and judge from the command line (`None` without `--reader`).
    pub fn from_args(a: &LlmArgs) -> anyhow::Result<Option<Qa>> {
        let Some(reader) = &a.reader else {
            return Ok(None);
        };
        let make = |spec: &str| -> anyhow::Result<Arc<LlmClient>> {
            let cfg = LlmConfig {
                api_key_env: a.llm_key_env.clone(),
                max_concurrency: 1,
                timeout_secs: a.llm_timeout.max(1),
                ..LlmConfig::from_spec(spec)?
            };
            Ok(Arc::new(LlmClient::new(cfg)?))
        };
        let reader_client = make(reader).context("--reader")?;
        let (judge, judge_is_reader) = match &a.judge {
            Some(j) if j != reader => (make(j).context("--judge")?, false),
            _ => (reader_client.clone(), true),
        };
        Ok(Some(Qa {
            reader: reader_client,
            judge,
            judge_is_reader,
            max_tokens: a.reader_max_tokens,
        }))
    }

    pub fn setup(&self, style: Style) -> QaSetup {
        QaSetup {
            reader: self.reader.name(),
            judge: self.judge.name(),
            judge_is_reader: self.judge_is_reader,
            reader_max_tokens: self.max_tokens,
            judge_style: match style {
                Style::LongMemEval => "LongMemEval evaluate_qa.py per-type prompts (yes/no)",
                Style::LoCoMo => "LoCoMo CORRECT/WRONG judge (Mem0 style), plus token F1",
                Style::FriendsQa => "LoCoMo CORRECT/WRONG judge on the answer span, plus token F1",
                Style::EverMemOpen => {
                    "multiple choice: exact letter; open-ended: CORRECT/WRONG judge"
                }
            }
            .into(),
        }
    }

    fn ask(
        &self,
        client: &LlmClient,
        prompt: String,
        max_tokens: u32,
    ) -> anyhow::Result<cairn_llm::ChatResponse> {
        Ok(client.chat(&ChatRequest::new(
            vec![ChatMessage::user(prompt)],
            max_tokens,
        ))?)
    }

    /// Reads and judges one question. `qtype`/`exclusion` pick the judge prompt;
    /// `question_date` is shown to the reader as the current date.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        style: Style,
        context: &str,
        question: &str,
        question_date: Option<&str>,
        gold: &str,
        qtype: &str,
        excl: Option<&str>,
    ) -> QaRecord {
        let mut rec = QaRecord::default();
        let prompt = reader_prompt(style, context, question, question_date);
        match self.ask(&self.reader, prompt, self.max_tokens) {
            Ok(r) => {
                rec.answer = r.text.trim().to_string();
                rec.reader_prompt_tokens = r.prompt_tokens;
                rec.reader_completion_tokens = r.completion_tokens;
                rec.reader_ms = r.latency_ms;
            }
            Err(e) => {
                rec.error = Some(format!("reader: {e:#}"));
                return rec;
            }
        }
        if matches!(style, Style::LoCoMo | Style::FriendsQa) {
            rec.f1 = Some(token_f1(&rec.answer, gold));
        }
        let abstention = excl == Some(exclusion::ABSTENTION);
        let prompt = judge_prompt(style, qtype, abstention, question, gold, &rec.answer);
        match self.ask(&self.judge, prompt, 96) {
            Ok(r) => {
                rec.correct = Some(verdict(style, &r.text));
                rec.judge_reply = r.text.trim().chars().take(400).collect();
                rec.judge_prompt_tokens = r.prompt_tokens;
                rec.judge_completion_tokens = r.completion_tokens;
                rec.judge_ms = r.latency_ms;
            }
            Err(e) => rec.error = Some(format!("judge: {e:#}")),
        }
        rec
    }

    /// A multiple-choice question: the reader picks a letter; correct iff it is the gold
    /// letter (no judge).
    pub fn run_choice(
        &self,
        context: &str,
        question: &str,
        options: &[(String, String)],
        gold_letter: &str,
    ) -> QaRecord {
        let mut rec = QaRecord::default();
        let prompt = choice_prompt(context, question, options);
        match self.ask(&self.reader, prompt, 8) {
            Ok(r) => {
                rec.answer = r.text.trim().to_string();
                rec.reader_prompt_tokens = r.prompt_tokens;
                rec.reader_completion_tokens = r.completion_tokens;
                rec.reader_ms = r.latency_ms;
                let letters: Vec<&str> = options.iter().map(|(l, _)| l.as_str()).collect();
                let picked = picked_letter(&rec.answer, &letters);
                rec.judge_reply = picked.clone().unwrap_or_default();
                rec.correct = Some(picked.as_deref() == Some(gold_letter.trim()));
            }
            Err(e) => rec.error = Some(format!("reader: {e:#}")),
        }
        rec
    }
}

/// Aggregates QA outcomes `(question type, exclusion, record)` of one row.
pub fn summarize(setup: &QaSetup, items: &[(&str, Option<&str>, &QaRecord)]) -> QaSummary {
    let mut s = QaSummary {
        setup: setup.clone(),
        ..Default::default()
    };
    let (mut f1_sum, mut f1_n) = (0.0, 0usize);
    let (mut rms, mut jms, mut rn, mut jn) = (0.0, 0.0, 0usize, 0usize);
    for (qtype, excl, r) in items {
        if r.reader_ms > 0.0 || r.reader_completion_tokens > 0 {
            s.reader_calls += 1;
            rms += r.reader_ms;
            rn += 1;
        }
        if r.judge_ms > 0.0 || r.judge_completion_tokens > 0 {
            s.judge_calls += 1;
            jms += r.judge_ms;
            jn += 1;
        }
        s.prompt_tokens += r.reader_prompt_tokens + r.judge_prompt_tokens;
        s.completion_tokens += r.reader_completion_tokens + r.judge_completion_tokens;
        if r.error.is_some() {
            s.errors += 1;
        }
        let Some(ok) = r.correct else { continue };
        let t = s.by_type.entry(qtype.to_string()).or_default();
        t.0 += 1;
        t.1 += ok as usize;
        t.2 = t.1 as f64 / t.0 as f64;
        if *excl == Some(exclusion::ADVERSARIAL) {
            continue;
        }
        s.judged += 1;
        s.correct += ok as usize;
        if let Some(f) = r.f1 {
            f1_sum += f;
            f1_n += 1;
        }
    }
    s.accuracy = if s.judged > 0 {
        s.correct as f64 / s.judged as f64
    } else {
        0.0
    };
    s.mean_f1 = (f1_n > 0).then(|| f1_sum / f1_n as f64);
    s.mean_reader_ms = if rn > 0 { rms / rn as f64 } else { 0.0 };
    s.mean_judge_ms = if jn > 0 { jms / jn as f64 } else { 0.0 };
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_count_judged_and_leave_out_adversarial() {
        let ok = QaRecord {
            correct: Some(true),
            reader_ms: 5.0,
            reader_prompt_tokens: 10,
            ..Default::default()
        };
        let bad = QaRecord {
            correct: Some(false),
            reader_ms: 5.0,
            ..Default::default()
        };
        let s = summarize(
            &QaSetup::default(),
            &[
                ("a", None, &ok),
                ("a", None, &bad),
                ("b", Some(exclusion::ABSTENTION), &ok),
                ("5-adversarial", Some(exclusion::ADVERSARIAL), &bad),
            ],
        );
        assert_eq!((s.judged, s.correct), (3, 2));
        assert_eq!(s.by_type["a"], (2, 1, 0.5));
        assert_eq!(s.by_type["5-adversarial"].0, 1);
        assert_eq!(s.prompt_tokens, 20);
    }
}
