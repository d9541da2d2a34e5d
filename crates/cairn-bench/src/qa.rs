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
use crate::record::exclusion;
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

/// How a dataset's questions are read and judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    LongMemEval,
    LoCoMo,
    FriendsQa,
    EverMemOpen,
}

impl Style {
    pub fn for_dataset(dataset: &str) -> Style {
        match dataset {
            "longmemeval" => Style::LongMemEval,
            "friendsqa" => Style::FriendsQa,
            "evermembench" => Style::EverMemOpen,
            _ => Style::LoCoMo,
        }
    }
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
        let opts: String = options.iter().map(|(l, t)| format!("{l}. {t}\n")).collect();
        let prompt = format!(
            "You are given excerpts of a group chat history and a multiple-choice question about it.\n\nHistory:\n\n{context}\n\nQuestion: {question}\n\nOptions:\n{opts}\nAnswer with the letter of the correct option only."
        );
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

/// The letter an answer picks: the first standalone option letter ("B", "B.", "(B)",
/// "Answer: B").
pub fn picked_letter(answer: &str, letters: &[&str]) -> Option<String> {
    answer
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| letters.contains(w))
        .map(String::from)
}

/// The reader prompt. LongMemEval's is its official reading prompt (history, current
/// date, question); the others ask for a short answer from the context.
pub fn reader_prompt(style: Style, context: &str, question: &str, date: Option<&str>) -> String {
    let date_line = date
        .map(|d| format!("Current Date: {d}\n"))
        .unwrap_or_default();
    match style {
        Style::LongMemEval => format!(
            "I will give you several history chats between you and a user. Please answer the question based on the relevant chat history.\n\n\nHistory Chats:\n\n{context}\n\n{date_line}Question: {question}\nAnswer:"
        ),
        _ => format!(
            "{context}\n\n{date_line}Based on the above context, write an answer in the form of a short phrase for the following question. Answer with exact words from the context whenever possible.\n\nQuestion: {question} Short answer:"
        ),
    }
}

/// The judge prompt of each benchmark.
pub fn judge_prompt(
    style: Style,
    qtype: &str,
    abstention: bool,
    question: &str,
    gold: &str,
    response: &str,
) -> String {
    if style != Style::LongMemEval {
        return format!(
            "Your task is to label an answer to a question as 'CORRECT' or 'WRONG'. You will be given the following data:\n    (1) a question (posed by one user to another user),\n    (2) a 'gold' (ground truth) answer,\n    (3) a generated answer\nwhich you will score as CORRECT/WRONG.\n\nThe point of the question is to ask about something one user should know about the other user based on their prior conversations.\nThe gold answer will usually be a concise and short answer that includes the referenced topic, for example:\nQuestion: Do you remember what I got the last time I went to Hawaii?\nGold answer: A shell necklace\nThe generated answer might be much longer, but you should be generous with your grading - as long as it touches on the same topic as the gold answer, it should be counted as CORRECT.\n\nFor time related questions, the gold answer will be a specific date, month, year, etc. The generated answer might be much longer or use relative time references (like \"last Tuesday\" or \"next month\"), but you should be generous with your grading - as long as it refers to the same date or time period as the gold answer, it should be counted as CORRECT. Even if the format differs (e.g., \"May 7th\" vs \"7 May\"), consider it CORRECT if it's the same date.\n\nNow it's time for the real question:\nQuestion: {question}\nGold answer: {gold}\nGenerated answer: {response}\n\nFirst, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or WRONG.\nDo NOT include both CORRECT and WRONG in your response, or it will break the evaluation script.\n\nJust return the label CORRECT or WRONG in a json format with the key as \"label\"."
        );
    }
    const HEAD: &str = "I will give you a question, a correct answer, and a response from a model. Please answer yes if the response contains the correct answer. Otherwise, answer no. If the response is equivalent to the correct answer or contains all the intermediate steps to get the correct answer, you should also answer yes. If the response only contains a subset of the information required by the answer, answer no.";
    if abstention {
        return format!(
            "I will give you an unanswerable question, an explanation, and a response from a model. Please answer yes if the model correctly identifies the question as unanswerable. The model could say that the information is incomplete, or some other information is given but the asked information is not.\n\nQuestion: {question}\n\nExplanation: {gold}\n\nModel Response: {response}\n\nDoes the model correctly identify the question as unanswerable? Answer yes or no only."
        );
    }
    match qtype {
        "temporal-reasoning" => format!(
            "{HEAD} In addition, do not penalize off-by-one errors for the number of days. If the question asks for the number of days/weeks/months, etc., and the model makes off-by-one errors (e.g., predicting 19 days when the answer is 18), the model's response is still correct. \n\nQuestion: {question}\n\nCorrect Answer: {gold}\n\nModel Response: {response}\n\nIs the model response correct? Answer yes or no only."
        ),
        "knowledge-update" => format!(
            "I will give you a question, a correct answer, and a response from a model. Please answer yes if the response contains the correct answer. Otherwise, answer no. If the response contains some previous information along with an updated answer, the response should be considered as correct as long as the updated answer is the required answer.\n\nQuestion: {question}\n\nCorrect Answer: {gold}\n\nModel Response: {response}\n\nIs the model response correct? Answer yes or no only."
        ),
        "single-session-preference" => format!(
            "I will give you a question, a rubric for desired personalized response, and a response from a model. Please answer yes if the response satisfies the desired response. Otherwise, answer no. The model does not need to reflect all the points in the rubric. The response is correct as long as it recalls and utilizes the user's personal information correctly.\n\nQuestion: {question}\n\nRubric: {gold}\n\nModel Response: {response}\n\nIs the model response correct? Answer yes or no only."
        ),
        _ => format!(
            "{HEAD} \n\nQuestion: {question}\n\nCorrect Answer: {gold}\n\nModel Response: {response}\n\nIs the model response correct? Answer yes or no only."
        ),
    }
}

/// Reads a judge's reply: LongMemEval counts "yes" anywhere in it (as `evaluate_qa.py`
/// does); the CORRECT/WRONG judge's label is taken from its JSON, else from the last
/// label word in the text.
pub fn verdict(style: Style, reply: &str) -> bool {
    if style == Style::LongMemEval {
        return reply.to_lowercase().contains("yes");
    }
    if let Some(label) = cairn_llm::extract_json(reply).and_then(|v| {
        v.get("label")
            .and_then(|l| l.as_str())
            .map(str::to_uppercase)
    }) {
        return label.trim() == "CORRECT";
    }
    let up = reply.to_uppercase();
    match (up.rfind("CORRECT"), up.rfind("WRONG")) {
        (Some(c), Some(w)) => c > w && !up[..c].ends_with("IN"),
        (Some(c), None) => !up[..c].ends_with("IN"),
        _ => false,
    }
}

/// SQuAD-style token F1 (lowercased, punctuation and articles dropped), as LoCoMo scores.
pub fn token_f1(prediction: &str, gold: &str) -> f64 {
    let norm = |s: &str| -> Vec<String> {
        s.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty() && !matches!(*w, "a" | "an" | "the" | "and"))
            .map(String::from)
            .collect()
    };
    let (p, g) = (norm(prediction), norm(gold));
    if p.is_empty() || g.is_empty() {
        return if p == g { 1.0 } else { 0.0 };
    }
    let mut pool = g.clone();
    let mut common = 0usize;
    for w in &p {
        if let Some(i) = pool.iter().position(|x| x == w) {
            pool.swap_remove(i);
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let precision = common as f64 / p.len() as f64;
    let recall = common as f64 / g.len() as f64;
    2.0 * precision * recall / (precision + recall)
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
    fn judge_prompts_follow_each_benchmark() {
        let p = judge_prompt(
            Style::LongMemEval,
            "temporal-reasoning",
            false,
            "Q?",
            "18 days",
            "19 days",
        );
        assert!(p.contains("do not penalize off-by-one errors"));
        assert!(p.ends_with("Is the model response correct? Answer yes or no only."));
        let p = judge_prompt(
            Style::LongMemEval,
            "knowledge-update",
            false,
            "Q?",
            "A",
            "R",
        );
        assert!(p.contains("as long as the updated answer is the required answer"));
        let p = judge_prompt(
            Style::LongMemEval,
            "single-session-preference",
            false,
            "Q?",
            "A",
            "R",
        );
        assert!(p.contains("Rubric: A"));
        let p = judge_prompt(
            Style::LongMemEval,
            "multi-session",
            true,
            "Q?",
            "never said",
            "R",
        );
        assert!(p.contains("correctly identify the question as unanswerable"));
        let p = judge_prompt(Style::LoCoMo, "2-temporal", false, "Q?", "May 7", "7 May");
        assert!(p.contains("Gold answer: May 7") && p.contains("\"label\""));
    }

    #[test]
    fn verdicts_and_letters_parse() {
        assert!(verdict(Style::LongMemEval, "Yes."));
        assert!(!verdict(Style::LongMemEval, "No"));
        assert!(verdict(
            Style::LoCoMo,
            "It matches. {\"label\": \"CORRECT\"}"
        ));
        assert!(!verdict(Style::LoCoMo, "{\"label\": \"WRONG\"}"));
        assert!(!verdict(Style::LoCoMo, "This is INCORRECT"));
        assert!(verdict(Style::LoCoMo, "Same date, so CORRECT"));
        assert_eq!(
            picked_letter("(B) the caterer", &["A", "B", "C", "D"]),
            Some("B".into())
        );
        assert_eq!(
            picked_letter("Answer: C.", &["A", "B", "C", "D"]),
            Some("C".into())
        );
        assert_eq!(picked_letter("none", &["A", "B"]), None);
    }

    #[test]
    fn f1_and_summaries() {
        assert_eq!(token_f1("The shell necklace", "a shell necklace"), 1.0);
        assert!((token_f1("shell", "shell necklace") - 2.0 / 3.0).abs() < 1e-9);
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
