//! The EverMemBench protocol: every group's messages are ingested day by day into ONE
//! space (`Memory::ingest_group_messages`, one call per day, in date order), then every
//! selected question is recalled once per config row.
//!
//! EverMemBench publishes no evidence labels, only answers, and its answers are scored by
//! a reader model (multiple choice) or a judge (open-ended). Cairn has neither, so:
//! - multiple choice is answered by the [option scorer](score_options) (no LLM): each
//!   option is scored against the recalled evidence, the best one is the pick, accuracy is
//!   exact letter match;
//! - open-ended questions get a retrieval-only diagnostic: the share of the reference
//!   answer's content words found in the packed context.
//!
//! Records (`results.jsonl`) never hold the question, options or answer text.

use crate::metrics::{percentiles, Percentiles};
use crate::protocol::{
    arm_stop, check_label, config_name, open_memory, stopped, utc_stamp, ConfigRow, RunMeta,
};
use crate::report::{canonical, f3, machine_section, ms};
use crate::ConfigChoice;
use anyhow::{bail, Context as _};
use cairn::formats::evermembench::{load_evermem_dialogue, load_evermem_qa, EverQuestion};
use cairn::formats::sha256_file;
use cairn::{Memory, RecallOptions, Timestamp, Timings, UnitKind};
use clap::Args;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

/// The one space all days are ingested into.
pub const SPACE: &str = "evermembench";

/// `cairn bench evermembench` options.
#[derive(Debug, Clone, Args)]
pub struct EverMemArgs {
    /// `dialogue_en.json` (`{"dialogues": {day: {group: [{speaker, time, dialogue}]}}}`).
    #[arg(long, value_name = "FILE")]
    pub dialogue: PathBuf,
    /// `qa_<topic>.json` (`{"qars": [{id, Q, A, options}]}`).
    #[arg(long, value_name = "FILE")]
    pub qa: PathBuf,
    /// Config rows: `defaults` (RecallOptions::default()), `bench` (top_k=10,
    /// token_budget=2000, format=raw), or both (one ingest, two recalls per question).
    #[arg(long, value_enum, default_value_t = ConfigChoice::Both)]
    pub config: ConfigChoice,
    /// Run at most N questions (after --questions).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Only these question ids, comma separated.
    #[arg(long, value_delimiter = ',', value_name = "ID,...")]
    pub questions: Vec<String>,
    /// Name of the run folder [default: evermembench-<config>-<UTC timestamp>].
    #[arg(long, value_name = "L")]
    pub run_label: Option<String>,
    /// Folder of run folders.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub out: PathBuf,
    /// Embedding cache file [default: $CAIRN_HOME/embedding-cache.sqlite3].
    #[arg(long, value_name = "FILE")]
    pub cache: Option<PathBuf>,
    /// Keep the run's data directory (the ingested space) instead of deleting it.
    #[arg(long)]
    pub keep_data: bool,
    /// Engine settings (a `cairn.toml`) for experiments; recorded in METHODOLOGY.md.
    #[arg(long, value_name = "FILE")]
    pub memory_config: Option<PathBuf>,
    /// QA rows: reader (multiple choice by its letter) and judge (open-ended questions).
    #[command(flatten)]
    pub llm: crate::qa::LlmArgs,
}

/// The config rows of this bench. `bench` uses a 2,000-token budget: the space is one
/// long multi-group history, and a reader would get a bounded context.
pub fn config_rows(choice: ConfigChoice) -> Vec<ConfigRow> {
    let defaults = ConfigRow {
        name: "defaults".into(),
        options: RecallOptions::default(),
    };
    let bench = ConfigRow {
        name: "bench".into(),
        options: RecallOptions {
            top_k: 10,
            token_budget: 2_000,
            format: cairn::Format::Raw,
            ..RecallOptions::default()
        },
    };
    match choice {
        ConfigChoice::Defaults => vec![defaults],
        ConfigChoice::Bench => vec![bench],
        ConfigChoice::Both => vec![defaults, bench],
    }
}

// ---------------------------------------------------------------------------------------
// Records

/// One question under one config row (a line of `results.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EverRecord {
    pub dataset: String,
    pub question_id: String,
    /// From the id: `F_SH`, `MA_U`, `P_Style`, ...
    pub category: String,
    /// `F`, `MA` or `P`.
    pub major: String,
    pub config: String,
    /// `multiple_choice` or `open`.
    pub kind: String,
    pub as_of: Option<Timestamp>,
    #[serde(default)]
    pub error: Option<String>,
    pub hits: Vec<EverHit>,
    pub context_tokens: usize,
    pub hits_cut: usize,
    pub recall_wall_ms: f64,
    pub recall_timings: Option<Timings>,
    /// Multiple choice: the option scorer's scores and pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<ChoiceResult>,
    /// Open-ended: the retrieval-only diagnostic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenDiagnostic>,
    /// The reader's answer and verdict (runs with `--reader`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qa: Option<crate::qa::QaRecord>,
}

/// One returned hit (ids and scores; no text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EverHit {
    pub rank: usize,
    pub unit_id: String,
    pub kind: UnitKind,
    pub session_id: Option<String>,
    pub score: f32,
    pub in_context: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
}

/// What the option scorer did with one multiple-choice question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChoiceResult {
    /// The picked letter.
    pub predicted: String,
    pub correct: bool,
    /// The best total was shared by several options (the first letter was picked).
    pub tie: bool,
    /// Per letter.
    pub scores: BTreeMap<String, OptionScore>,
    /// The memory-free baseline: the option most similar (dense) to the question alone.
    pub question_only_predicted: String,
    pub question_only_correct: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OptionScore {
    pub lexical: f64,
    pub dense: f64,
    pub total: f64,
}

/// Open-ended: how much of the reference answer the context holds (words, not meaning).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenDiagnostic {
    /// Content words of the reference answer (not in the question).
    pub answer_words: usize,
    /// Of those, found in the packed context.
    pub found_in_context: usize,
    /// found / answer_words (1.0 when the answer has no content word of its own).
    pub coverage: f64,
}

// ---------------------------------------------------------------------------------------
// The option scorer

const STOPWORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by",
    "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that",
    "these", "those", "he", "she", "they", "them", "his", "her", "their", "we", "our", "you",
    "your", "i", "me", "my", "do", "does", "did", "has", "have", "had", "not", "no", "yes", "so",
    "if", "than", "then", "there", "what", "which", "who", "whom", "when", "where", "why", "how",
    "can", "could", "should", "would", "will", "shall", "may", "might", "must", "about", "into",
    "over", "after", "before", "up", "out", "all", "any", "some", "only", "just", "also", "very",
    "too", "such", "per", "since", "because", "s", "t",
];

fn token_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"[a-z0-9]+(?:\.[0-9]+)?").expect("valid regex"))
}

fn digit_comma_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(\d),(\d{3})").expect("valid regex"))
}

/// Lowercased content words: numbers lose thousands separators (`$36,000` → `36000`),
/// stopwords are dropped, a plural `s` is stripped from words longer than 3 letters.
pub fn content_words(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let lower = digit_comma_re().replace_all(&lower, "$1$2");
    let lower = digit_comma_re().replace_all(&lower, "$1$2");
    token_re()
        .find_iter(&lower)
        .map(|m| m.as_str())
        .filter(|w| !STOPWORDS.contains(w))
        .map(|w| {
            if w.len() > 3
                && w.ends_with('s')
                && !w.ends_with("ss")
                && w.bytes().all(|b| b.is_ascii_alphabetic())
            {
                w[..w.len() - 1].to_string()
            } else {
                w.to_string()
            }
        })
        .collect()
}

/// The rank discount of the `rank`-th evidence item (from 1): 1 / log2(rank + 1).
pub fn discount(rank: usize) -> f64 {
    1.0 / ((rank + 1) as f64).log2()
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    // Unit-length vectors: the dot product.
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

/// Scores options against ranked evidence texts (best first). Returns per option
/// `(lexical, dense, total)`:
/// - lexical: the option's content words that are not in the question; each word counts
///   `discount(r)` for the best-ranked evidence item `r` containing it (0 if none); the
///   option's lexical score is the mean over its words (0 for an option with no word of
///   its own);
/// - dense: the maximum over evidence items of `discount(r) * cos(option, item)`;
/// - total: `0.5 * lexical + 0.5 * dense`.
///
/// `option_vecs` and `evidence_vecs` are unit-length embeddings of the option texts and
/// evidence texts. The weights were fixed before the first run; nothing here knows the
/// dataset.
pub fn score_options(
    question: &str,
    options: &[&str],
    evidence: &[&str],
    option_vecs: &[Vec<f32>],
    evidence_vecs: &[Vec<f32>],
) -> Vec<OptionScore> {
    let q_words: HashSet<String> = content_words(question).into_iter().collect();
    let ev_words: Vec<HashSet<String>> = evidence
        .iter()
        .map(|e| content_words(e).into_iter().collect())
        .collect();
    options
        .iter()
        .zip(option_vecs)
        .map(|(o, ov)| {
            let words: Vec<String> = {
                let mut seen = HashSet::new();
                content_words(o)
                    .into_iter()
                    .filter(|w| !q_words.contains(w) && seen.insert(w.clone()))
                    .collect()
            };
            let lexical = if words.is_empty() {
                0.0
            } else {
                words
                    .iter()
                    .map(|w| {
                        ev_words
                            .iter()
                            .position(|ws| ws.contains(w))
                            .map_or(0.0, |i| discount(i + 1))
                    })
                    .sum::<f64>()
                    / words.len() as f64
            };
            let dense = evidence_vecs
                .iter()
                .enumerate()
                .map(|(i, ev)| discount(i + 1) * cosine(ov, ev))
                .fold(0.0_f64, f64::max);
            OptionScore {
                lexical,
                dense,
                total: 0.5 * lexical + 0.5 * dense,
            }
        })
        .collect()
}

/// Index of the best total (the first on ties) and whether it was tied.
pub fn pick(scores: &[OptionScore]) -> (usize, bool) {
    let mut best = 0;
    for (i, s) in scores.iter().enumerate() {
        if s.total > scores[best].total {
            best = i;
        }
    }
    let tied = scores
        .iter()
        .enumerate()
        .any(|(i, s)| i != best && (s.total - scores[best].total).abs() < 1e-12);
    (best, tied)
}

/// The open-ended diagnostic: reference-answer content words (not in the question) found
/// in the context.
pub fn open_diagnostic(question: &str, answer: &str, context: &str) -> OpenDiagnostic {
    let q: HashSet<String> = content_words(question).into_iter().collect();
    let ctx: HashSet<String> = content_words(context).into_iter().collect();
    let words: HashSet<String> = content_words(answer)
        .into_iter()
        .filter(|w| !q.contains(w))
        .collect();
    let found = words.iter().filter(|w| ctx.contains(*w)).count();
    OpenDiagnostic {
        answer_words: words.len(),
        found_in_context: found,
        coverage: if words.is_empty() {
            1.0
        } else {
            found as f64 / words.len() as f64
        },
    }
}

/// Embeds texts, memoized (evidence texts repeat across questions and rows).
struct VecCache<'m> {
    memory: &'m Memory,
    map: HashMap<String, Vec<f32>>,
}

impl VecCache<'_> {
    fn get(&mut self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        let missing: Vec<&str> = {
            let mut seen = HashSet::new();
            texts
                .iter()
                .copied()
                .filter(|t| !self.map.contains_key(*t) && seen.insert(*t))
                .collect()
        };
        if !missing.is_empty() {
            let vecs = self
                .memory
                .embedder()
                .embed(&missing)
                .map_err(|e| anyhow::anyhow!("embedding: {e}"))?;
            for (t, v) in missing.into_iter().zip(vecs) {
                self.map.insert(t.to_string(), v);
            }
        }
        Ok(texts.iter().map(|t| self.map[*t].clone()).collect())
    }
}

// ---------------------------------------------------------------------------------------
// The run

pub(crate) fn run(args: &EverMemArgs) -> anyhow::Result<()> {
    let t = Instant::now();
    let days = load_evermem_dialogue(&args.dialogue)
        .with_context(|| format!("loading {}", args.dialogue.display()))?;
    let questions =
        load_evermem_qa(&args.qa).with_context(|| format!("loading {}", args.qa.display()))?;
    let load_seconds = t.elapsed().as_secs_f64();
    let dialogue_sha = sha256_file(&args.dialogue)?;
    let qa_sha = sha256_file(&args.qa)?;
    let selected = select(&questions, &args.questions, args.limit)?;

    let label = match &args.run_label {
        Some(l) => l.clone(),
        None => format!(
            "evermembench-{}-{}",
            config_name(args.config),
            utc_stamp(chrono::Utc::now())
        ),
    };
    check_label(&label)?;
    let dir = args.out.join(&label);
    let results_path = dir.join("results.jsonl");
    if results_path.exists() {
        bail!(
            "{} already holds results: pass another --run-label (this bench does not resume: its questions share one ingest)",
            dir.display()
        );
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let data_dir = dir.join("data");
    if data_dir.exists() {
        std::fs::remove_dir_all(&data_dir)
            .with_context(|| format!("removing {}", data_dir.display()))?;
    }
    let (memory, cache, memory_settings) = open_memory(
        &data_dir,
        args.cache.as_deref(),
        args.memory_config.as_deref(),
    )?;
    let rows = config_rows(args.config);
    let n_messages: usize = days.iter().map(|d| d.messages.len()).sum();
    let groups: HashSet<&str> = days
        .iter()
        .flat_map(|d| d.messages.iter().map(|m| m.group.as_str()))
        .collect();
    let speakers: HashSet<&str> = days
        .iter()
        .flat_map(|d| d.messages.iter().map(|m| m.speaker.as_str()))
        .collect();
    let last_time = days
        .iter()
        .flat_map(|d| d.messages.iter().map(|m| m.time))
        .max();
    let n_mc = selected.iter().filter(|q| q.options.is_some()).count();
    let qa = crate::qa::Qa::from_args(&args.llm)?;
    let mut meta = RunMeta {
        data_path: canonical(&args.dialogue),
        data_sha256: dialogue_sha,
        configs: rows.clone(),
        as_of_policy: "last-message".into(),
        as_of_description: "as_of = the time of the dialogue's last message (questions carry no date; every message is ingested before any question)".into(),
        limit: args.limit,
        questions_filter: args.questions.clone(),
        max_questions_per_conv: None,
        questions_in_file: questions.len(),
        questions_selected: selected.len(),
        keep_data: args.keep_data,
        load_seconds,
        dataset_notes: vec![
            format!("QA file: `{}` (sha256 `{qa_sha}`).", canonical(&args.qa)),
            format!(
                "Dialogue: {} days, {} groups, {} speakers, {n_messages} messages.",
                days.len(),
                groups.len(),
                speakers.len()
            ),
            format!(
                "Selected questions: {} ({n_mc} multiple choice, {} open-ended).",
                selected.len(),
                selected.len() - n_mc
            ),
        ],
        limitations: vec![
            "No reader model and no judge: multiple-choice accuracy comes from the option scorer (no LLM), which only measures whether the recalled evidence favours the right option's words and meaning; a reader model would be expected to do better on questions that need reasoning (constraints, proactive reminders, styles).".into(),
            "Open-ended questions are not judged: only the share of the reference answer's content words found in the context is reported (a retrieval diagnostic, not accuracy).".into(),
            "EverMemBench publishes no evidence labels, so retrieval metrics (recall@k, NDCG) cannot be computed.".into(),
            "The run does not resume: all questions share one ingest of the whole dialogue.".into(),
        ],
        qa: qa.as_ref().map(|q| q.setup(crate::qa::Style::EverMemOpen)),
        ..RunMeta::new("evermembench", &dir, &memory, cache.as_deref(), memory_settings)
    };
    std::fs::write(dir.join("run.json"), serde_json::to_string_pretty(&meta)?)?;

    // Ingest, day by day.
    let pb = indicatif::ProgressBar::with_draw_target(
        Some((days.len() + selected.len()) as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    pb.set_prefix(label.clone());
    arm_stop();
    let mut ingest = EverIngest {
        days: days.len(),
        messages: n_messages,
        ..Default::default()
    };
    let mut day_ms = Vec::new();
    let t_ingest = Instant::now();
    for day in &days {
        pb.set_message(format!("ingest {}", day.day));
        let t = Instant::now();
        let r = memory
            .ingest_group_messages(SPACE, day.messages.clone())
            .with_context(|| format!("ingesting day {}", day.day))?;
        day_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        ingest.sessions += r.sessions;
        ingest.units += r.units;
        ingest.vectors_computed += r.vectors_computed;
        ingest.vectors_cached += r.vectors_cached;
        pb.inc(1);
    }
    let t_flush = Instant::now();
    memory.flush()?;
    ingest.flush_ms = t_flush.elapsed().as_secs_f64() * 1000.0;
    ingest.total_seconds = t_ingest.elapsed().as_secs_f64();
    ingest.day_ms = percentiles(&day_ms);
    ingest.messages_per_second = if ingest.total_seconds > 0.0 {
        n_messages as f64 / ingest.total_seconds
    } else {
        0.0
    };
    ingest.speakers_known = memory.speakers(SPACE).map(|s| s.len()).unwrap_or(0);

    // Questions.
    let mut results = std::fs::File::create(&results_path)
        .with_context(|| format!("creating {}", results_path.display()))?;
    let mut vecs = VecCache {
        memory: &memory,
        map: HashMap::new(),
    };
    let mut records = Vec::new();
    for (i, q) in selected.iter().enumerate() {
        if stopped() {
            break;
        }
        pb.set_message(q.id.clone());
        let mut order = rows.clone();
        if i % 2 == 1 {
            order.reverse();
        }
        for row in &order {
            let r = recall_one(&memory, &mut vecs, q, row, last_time, qa.as_ref());
            if let Some(e) = &r.error {
                pb.println(format!("question {}: {e}", q.id));
            }
            let mut line = serde_json::to_string(&r)?;
            line.push('\n');
            results.write_all(line.as_bytes())?;
            results.flush()?;
            records.push(r);
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    let interrupted = stopped();
    drop(vecs);
    drop(memory);
    if !args.keep_data && data_dir.exists() {
        std::fs::remove_dir_all(&data_dir)
            .with_context(|| format!("removing {}", data_dir.display()))?;
    }
    meta.finished_at = Some(chrono::Utc::now());
    let complete = !interrupted;
    let s = summarize(&meta, &records, ingest, complete);
    write_files(&dir, &s)?;
    std::fs::write(dir.join("run.json"), serde_json::to_string_pretty(&meta)?)?;
    eprintln!("{}", short_report(&s));
    eprintln!("wrote {}", dir.display());
    if interrupted {
        bail!("interrupted: the summary covers the questions done so far");
    }
    Ok(())
}

fn select<'q>(
    questions: &'q [EverQuestion],
    ids: &[String],
    limit: Option<usize>,
) -> anyhow::Result<Vec<&'q EverQuestion>> {
    let wanted: HashSet<&str> = ids
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    let known: HashSet<&str> = questions.iter().map(|q| q.id.as_str()).collect();
    let unknown: Vec<&str> = wanted.difference(&known).copied().collect();
    if !unknown.is_empty() {
        bail!("--questions: no question {}", unknown.join(", "));
    }
    Ok(questions
        .iter()
        .filter(|q| wanted.is_empty() || wanted.contains(q.id.as_str()))
        .take(limit.unwrap_or(usize::MAX))
        .collect())
}

fn recall_one(
    memory: &Memory,
    vecs: &mut VecCache<'_>,
    q: &EverQuestion,
    row: &ConfigRow,
    as_of: Option<Timestamp>,
    qa: Option<&crate::qa::Qa>,
) -> EverRecord {
    let mut opts = row.options.clone();
    opts.as_of = as_of;
    let mut rec = EverRecord {
        dataset: "evermembench".into(),
        question_id: q.id.clone(),
        category: q.category(),
        major: q.major().to_string(),
        config: row.name.clone(),
        kind: if q.options.is_some() {
            "multiple_choice".into()
        } else {
            "open".into()
        },
        as_of,
        error: None,
        hits: Vec::new(),
        context_tokens: 0,
        hits_cut: 0,
        recall_wall_ms: 0.0,
        recall_timings: None,
        choice: None,
        open: None,
        qa: None,
    };
    let t = Instant::now();
    let recall = match memory.recall(SPACE, &q.question, &opts) {
        Ok(r) => r,
        Err(e) => {
            rec.error = Some(e.to_string());
            return rec;
        }
    };
    rec.recall_wall_ms = t.elapsed().as_secs_f64() * 1000.0;
    let in_ctx: HashSet<&str> = recall.context_unit_ids.iter().map(String::as_str).collect();
    rec.hits = recall
        .hits
        .iter()
        .enumerate()
        .map(|(i, h)| EverHit {
            rank: i + 1,
            unit_id: h.unit_id.clone(),
            kind: h.kind,
            session_id: h.session_id.clone(),
            score: h.score,
            in_context: in_ctx.contains(h.unit_id.as_str()),
            superseded_by: h.superseded_by.clone(),
        })
        .collect();
    rec.context_tokens = recall.context_tokens;
    rec.hits_cut = recall.hits_cut;
    rec.recall_timings = Some(recall.timings.clone());
    rec.qa = qa.map(|qa| match &q.options {
        Some(options) => {
            let opts: Vec<(String, String)> = options
                .iter()
                .map(|(l, t)| (l.clone(), t.clone()))
                .collect();
            qa.run_choice(&recall.context, &q.question, &opts, &q.answer)
        }
        None => qa.run(
            crate::qa::Style::EverMemOpen,
            &recall.context,
            &q.question,
            None,
            &q.answer,
            &q.category(),
            None,
        ),
    });
    match &q.options {
        None => {
            rec.open = Some(open_diagnostic(&q.question, &q.answer, &recall.context));
        }
        Some(options) => {
            // The evidence a reader would see: the hits packed into the context, in rank order.
            let evidence: Vec<&str> = recall
                .hits
                .iter()
                .filter(|h| in_ctx.contains(h.unit_id.as_str()))
                .map(|h| h.text.as_str())
                .collect();
            let letters: Vec<&String> = options.keys().collect();
            let texts: Vec<&str> = options.values().map(String::as_str).collect();
            let scored = vecs.get(&texts).and_then(|ov| {
                let ev = vecs.get(&evidence)?;
                let qv = vecs.get(&[q.question.as_str()])?;
                Ok((ov, ev, qv))
            });
            match scored {
                Err(e) => rec.error = Some(e.to_string()),
                Ok((ov, ev, qv)) => {
                    let scores = score_options(&q.question, &texts, &evidence, &ov, &ev);
                    let (best, tie) = pick(&scores);
                    let q_only: Vec<OptionScore> = ov
                        .iter()
                        .map(|v| OptionScore {
                            dense: cosine(v, &qv[0]),
                            total: cosine(v, &qv[0]),
                            ..Default::default()
                        })
                        .collect();
                    let (q_best, _) = pick(&q_only);
                    let gold = q.answer.trim();
                    rec.choice = Some(ChoiceResult {
                        predicted: letters[best].clone(),
                        correct: letters[best] == gold,
                        tie,
                        scores: letters.iter().map(|l| (*l).clone()).zip(scores).collect(),
                        question_only_predicted: letters[q_best].clone(),
                        question_only_correct: letters[q_best] == gold,
                    });
                }
            }
        }
    }
    rec
}

// ---------------------------------------------------------------------------------------
// Summary

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
    pub qa: Option<crate::qa::QaSummary>,
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
        .map(|c| {
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
                let items: Vec<(&str, Option<&str>, &crate::qa::QaRecord)> = recs
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
                recall_wall_ms: percentiles(
                    &ok.iter().map(|r| r.recall_wall_ms).collect::<Vec<_>>(),
                ),
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
        })
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

fn options_line(o: &RecallOptions) -> String {
    format!(
        "top_k={}, token_budget={}, format={}",
        o.top_k,
        o.token_budget,
        serde_json::to_value(o.format)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    )
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
        "- dialogue: `{}` (sha256 `{}`)\n- {}\n- questions: {} selected of {} in the file, {} done{}\n- Cairn {} (git {}, built {}), embedding model `{}`\n- {}\n",
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
        m.as_of_description,
    );
    let _ = writeln!(out, "MC = multiple choice, answered by the **option scorer (no LLM)**; chance = {:.2}. \"question only\" = the memory-free baseline (the option most similar to the question). Open = open-ended questions, **not judged**: retrieval-only diagnostic (share of the reference answer's content words found in the context; \"full\" = all of them).\n", s.chance_accuracy);
    for row in &s.rows {
        let _ = writeln!(
            out,
            "## Config `{}` ({})\n\n{} questions recorded, {} errors.\n",
            row.config,
            options_line(&row.options),
            row.questions,
            row.errors
        );
        let _ = writeln!(out, "| group | MC n | MC accuracy (option scorer, no LLM) | ties | question only | open n | open: answer words in context | open: full |\n|---|---:|---:|---:|---:|---:|---:|---:|");
        group_line(&mut out, "**overall**", &row.overall);
        for (k, g) in &row.by_major {
            group_line(&mut out, &format!("major {k}"), g);
        }
        for (k, g) in &row.by_category {
            group_line(&mut out, k, g);
        }
        if let Some(q) = &row.qa {
            let _ = writeln!(out);
            crate::summary::qa_markdown(&mut out, q);
        }
        let kinds = row
            .hits_by_kind
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            out,
            "\n| recall latency (ms) | n | mean | p50 | p95 | p99 | max |\n|---|---:|---:|---:|---:|---:|---:|"
        );
        for (name, p) in [
            ("engine `timings.total_ms`", &row.recall_engine_ms),
            ("wall", &row.recall_wall_ms),
        ] {
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
        let _ = writeln!(
            out,
            "\nMean context tokens {:.0}; mean hits {:.1}; hits by kind: {kinds}; P questions with a speaker-profile hit: {}.\n",
            row.mean_context_tokens,
            row.mean_hits,
            f3(row.profile_hit_rate_p)
        );
    }
    let i = &s.ingest;
    let _ = writeln!(
        out,
        "## Ingest\n\n{} days ({} `ingest_group_messages` calls), {} messages, {} sessions (group-days), {} units, {} speakers known afterwards; vectors computed {} / from cache {}.\n\n| per day (ms) | n | mean | p50 | p95 | p99 | max |\n|---|---:|---:|---:|---:|---:|---:|\n| ingest_group_messages | {} | {} | {} | {} | {} | {} |\n\nFinal flush {} ms. Ingest total **{:.1} s**, **{:.1} messages/s**.",
        i.days, i.days, i.messages, i.sessions, i.units, i.speakers_known, i.vectors_computed, i.vectors_cached,
        i.day_ms.n, ms(i.day_ms.mean), ms(i.day_ms.p50), ms(i.day_ms.p95), ms(i.day_ms.p99), ms(i.day_ms.max),
        ms(i.flush_ms), i.total_seconds, i.messages_per_second
    );
    out
}

/// `METHODOLOGY.md`.
pub fn render_methodology(s: &EverSummary) -> String {
    let m = &s.meta;
    let mut out = String::new();
    let _ = writeln!(out, "# Methodology of run `{}`\n", m.run_label);
    let _ = writeln!(out, "Generated by `cairn-bench` from this run; the numbers are in summary.md / summary.json, every question in results.jsonl (ids, hits, scores, timings; no question, option or answer text).\n");
    let _ = writeln!(out, "## Data\n");
    let _ = writeln!(
        out,
        "- dataset: EverMemBench format (multi-party, multi-group chat)\n- dialogue file: `{}`\n- sha256: `{}`\n- questions: {} in the file, {} selected (limit: {}, --questions: {}), {} done{}\n- loading took {:.2} s",
        m.data_path,
        m.data_sha256,
        m.questions_in_file,
        m.questions_selected,
        m.limit.map_or("none".into(), |l| l.to_string()),
        if m.questions_filter.is_empty() { "none".into() } else { m.questions_filter.join(",") },
        s.questions_done,
        if s.complete { "" } else { " — **the run is incomplete** (interrupted)" },
        m.load_seconds,
    );
    for n in &m.dataset_notes {
        let _ = writeln!(out, "- {n}");
    }
    let _ = writeln!(out, "- categories come from the question id (`<MAJOR>_<MINOR>_Top<topic>_<n>`): F = fine-grained recall (SH single-hop, C constraint, U updating), MA = memory awareness (C constraint, U updating, Proact proactive), P = profile understanding (Style, Skill, Role)");
    let _ = writeln!(out, "\n## System under test\n");
    let _ = writeln!(
        out,
        "- Cairn {}, git {} (obtained at {}), cairn-bench built {}\n- embedding model: `{}` ({} dimensions)\n- embedding cache: {}\n- engine and embedder settings: `{}`\n- the bench uses only the public `cairn` API (`Memory::open_with`, `ingest_group_messages`, `flush`, `speakers`, `recall`, `embedder`)",
        m.cairn_version,
        m.git_sha,
        m.git_sha_source,
        m.build_time,
        m.embedding_model,
        m.embedding_dim,
        m.embedding_cache.as_deref().map_or("the data directory's own".into(), |c| format!("`{c}`")),
        serde_json::to_string(&m.memory_settings).unwrap_or_default()
    );
    let _ = writeln!(out, "\n## Config rows (`RecallOptions` as JSON)\n");
    for c in &m.configs {
        let _ = writeln!(
            out,
            "- `{}`: `{}`",
            c.name,
            serde_json::to_string(&c.options).unwrap_or_default()
        );
    }
    let _ = writeln!(out, "\n{}.\n", m.as_of_description);
    let _ = writeln!(out, "## Protocol\n");
    let _ = writeln!(out, "- One space (`{SPACE}`). The dialogue is streamed day by day in date order: one `ingest_group_messages` call per day holding that day's messages of every group (each group's day becomes the session `<group>/<YYYY-MM-DD>`); one `flush` at the end. Ingest time = all calls + flush.\n- Then every selected question is recalled once per config row with the question text as the query; the row order alternates from question to question (the query embedding is computed by the first recall and cached for the second).\n- **Multiple choice — option scorer (no LLM).** The evidence is the hits packed into the context, in rank order (r = 1, 2, ...), each weighted by discount(r) = 1/log2(r+1). Content words: lowercased alphanumeric tokens, thousands separators removed (`$36,000` → `36000`), a small English stopword list removed, a plural `s` stripped. For each option: *lexical* = mean over the option's content words that are not in the question of discount(best-ranked evidence item containing the word) (0 if none; 0 for an option without such words); *dense* = max over evidence items of discount(r) · cos(embedding(option), embedding(item)), with the memory's own embedder (`Memory::embedder`); *total* = 0.5 · lexical + 0.5 · dense. The highest total is the pick (the first letter on ties; ties are counted). Accuracy = exact letter match. The weights and rules were fixed before the first run and contain nothing specific to any dataset.\n- **Question-only baseline**: the option whose embedding is most similar to the question's, without any memory; it shows how much of the option scorer's accuracy the options' wording alone explains.\n- **Open-ended — retrieval diagnostic, not accuracy.** Content words of the reference answer that are not in the question; coverage = share of them in the packed context; full = all of them there. No judge decides whether the context answers the question.\n- Latency: recall per query from `recall.timings.total_ms` and wall time (p50/p95/p99, nearest rank); the option scorer's own embedding calls are not included. Ingest: per-day wall time of `ingest_group_messages`, the final flush, messages per second.");
    let _ = writeln!(out, "\n## Known limitations\n");
    for l in &m.limitations {
        let _ = writeln!(out, "- {l}");
    }
    machine_section(&mut out, m);
    out
}

pub fn write_files(dir: &Path, s: &EverSummary) -> anyhow::Result<()> {
    let w = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
    };
    w("summary.json", serde_json::to_string_pretty(s)?)?;
    w("summary.md", render_summary(s))?;
    w("METHODOLOGY.md", render_methodology(s))?;
    Ok(())
}

/// A few lines for the terminal.
pub fn short_report(s: &EverSummary) -> String {
    let mut out = String::new();
    for row in &s.rows {
        let o = &row.overall;
        let _ = writeln!(
            out,
            "{} [{}]: MC accuracy (option scorer, no LLM) {} over {} (question-only baseline {}, chance {:.2}) | open: answer words in context {} over {} | recall p50 {} ms p95 {} ms",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_words_normalize_numbers_and_plurals() {
        assert_eq!(
            content_words("The DataForge quote: $36,000 per year, emojis and 97.8%!"),
            ["dataforge", "quote", "36000", "year", "emoji", "97.8"]
        );
        assert_eq!(content_words("$1,250,000"), ["1250000"]);
    }

    #[test]
    fn lexical_overlap_ranks_and_ignores_question_words() {
        let unit = vec![1.0_f32, 0.0];
        let q = "Which caterer was chosen for the offsite?";
        let opts = ["Green Fork", "Olive & Thyme caterer"];
        let ev = [
            "we switched caterers to Olive & Thyme",
            "Green Fork was the first idea",
        ];
        let s = score_options(
            q,
            &opts,
            &ev,
            &[unit.clone(), unit.clone()],
            &[unit.clone(), unit],
        );
        // Olive & Thyme: both own words in evidence rank 1 ("caterer" is a question word).
        assert!((s[1].lexical - 1.0).abs() < 1e-9);
        // Green Fork: both words only at rank 2.
        assert!((s[0].lexical - discount(2)).abs() < 1e-9);
        assert_eq!(pick(&s), (1, false));
        // Identical totals are a tie, won by the first option.
        let t = [OptionScore::default(), OptionScore::default()];
        assert_eq!(pick(&t), (0, true));
    }

    #[test]
    fn open_diagnostic_counts_answer_words_in_context() {
        let d = open_diagnostic(
            "When is the offsite?",
            "June 13 at Harbor Loft",
            "moved to June 13",
        );
        assert_eq!((d.answer_words, d.found_in_context), (4, 2));
        assert!((d.coverage - 0.5).abs() < 1e-9);
    }
}
