//! The LongMemEval-V2 protocol (web-agent trajectories): per question, a fresh space gets
//! every trajectory of the question's haystack inserted in order
//! (`Memory::insert_trajectories` + `flush`, timed), then the question is recalled once
//! (timed) and the packed context is scored.
//!
//! The reference reads the context with a fixed reader model and scores its answer with
//! the question's `eval_function`. No reader is configured here, so scoring is LLM-free
//! and labelled as such:
//! - phrase-set questions (`norm_phrase_set_match[_ordered]`): **answer phrases in
//!   context**, the reference's normalization and phrase matching applied to the context
//!   instead of an answer (a retrieval diagnostic: a reader could still fail, and could
//!   not succeed when a phrase is missing);
//! - multiple choice (`mc_choice_match`, `mc_choice_set_match`): the options written in
//!   the question are scored against the context by the [option
//!   scorer](crate::evermembench::score_options) (no LLM), exact letter (set) match;
//! - LLM-judged gotchas (`llm_gotchas_checker`): the share of the reference answer's
//!   content words in the context (not judged);
//! - abstention (`*-abs`, `llm_abstention_checker`): what is retrievable: hits, top score,
//!   context tokens (a reader should decline; nothing decides whether it would).
//!
//! With `--evidence FILE` (`{question_id: [trajectory_id, ...]}`, not part of the public
//! data; the fixture has one) the record also says whether a hit, a hit in the context,
//! and a note came from an evidence trajectory.
//!
//! Records (`results.jsonl`) never hold question, option or answer text.

use crate::evermembench::{content_words, open_diagnostic, pick, score_options, OptionScore};
use crate::evermembench::{ChoiceResult, OpenDiagnostic};
use crate::metrics::{percentiles, Percentiles};
use crate::protocol::{
    arm_stop, check_label, open_memory, space_name, stopped, utc_stamp, ConfigRow, RunMeta,
};
use crate::report::{canonical, f3, machine_section, ms};
use anyhow::{bail, Context as _};
use cairn::formats::lme_v2::{
    load_lme_v2_haystacks, load_lme_v2_questions, EvalFunction, EvalKind, LmeV2Question,
};
use cairn::formats::{read_trajectories_jsonl, sha256_file};
use cairn::{Memory, RecallOptions, Timings, TrajectoryInput, UnitKind};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `cairn bench lme-v2` options.
#[derive(Debug, Clone, Args)]
pub struct LmeV2Args {
    /// `questions.jsonl` (`{id, domain, question, image, answer, question_type,
    /// eval_function}` per line).
    #[arg(long, value_name = "FILE")]
    pub questions: PathBuf,
    /// `trajectories.jsonl` (`{id, domain, goal, start_url, outcome, states}` per line).
    #[arg(long, value_name = "FILE")]
    pub trajectories: PathBuf,
    /// Haystacks `{question_id: [trajectory_id, ...]}` [default:
    /// `<questions dir>/haystacks/lme_v2_<tier>.json`].
    #[arg(long, value_name = "FILE")]
    pub haystacks: Option<PathBuf>,
    /// Haystack tier (names the default haystack file).
    #[arg(long, default_value = "small", value_name = "TIER")]
    pub tier: String,
    /// Optional evidence labels `{question_id: [trajectory_id, ...]}` (not in the public
    /// data): adds evidence-trajectory hit rates to the report.
    #[arg(long, value_name = "FILE")]
    pub evidence: Option<PathBuf>,
    /// Pools recalled (`slice`, `event`, `note`), comma separated [default: all three].
    #[arg(long, value_delimiter = ',', value_name = "POOL,...")]
    pub pools: Vec<String>,
    /// Per-pool quota, `POOL=N` (repeatable), e.g. `--quota note=2`.
    #[arg(long, value_name = "POOL=N")]
    pub quota: Vec<String>,
    /// Token budget of the packed context.
    #[arg(long, default_value_t = 2_000, value_name = "N")]
    pub token_budget: usize,
    /// Hits returned per recall.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top_k: usize,
    /// Run at most N questions (after --ids).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Only these question ids, comma separated.
    #[arg(long, value_delimiter = ',', value_name = "ID,...")]
    pub ids: Vec<String>,
    /// Name of the run folder [default: lme-v2-<tier>-<UTC timestamp>].
    #[arg(long, value_name = "L")]
    pub run_label: Option<String>,
    /// Folder of run folders.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub out: PathBuf,
    /// Embedding cache file [default: $CAIRN_HOME/embedding-cache.sqlite3].
    #[arg(long, value_name = "FILE")]
    pub cache: Option<PathBuf>,
    /// Keep the run's data directory (every question's space) instead of deleting it.
    #[arg(long)]
    pub keep_data: bool,
    /// Engine settings (a `cairn.toml`) for experiments; recorded in METHODOLOGY.md.
    #[arg(long, value_name = "FILE")]
    pub memory_config: Option<PathBuf>,
    #[command(flatten)]
    pub inspect: crate::lme_v2_inspect::InspectRowArgs,
}

pub(crate) fn parse_pool(s: &str) -> anyhow::Result<UnitKind> {
    match UnitKind::parse(s.trim()) {
        Some(k @ (UnitKind::Slice | UnitKind::Event | UnitKind::Note)) => Ok(k),
        _ => bail!("unknown pool {s:?} (pools: slice, event, note)"),
    }
}

/// The recall options the flags describe.
pub fn recall_options(args: &LmeV2Args) -> anyhow::Result<RecallOptions> {
    let pools = if args.pools.is_empty() {
        vec![UnitKind::Slice, UnitKind::Event, UnitKind::Note]
    } else {
        args.pools
            .iter()
            .map(|p| parse_pool(p))
            .collect::<anyhow::Result<_>>()?
    };
    let mut quotas = BTreeMap::new();
    for q in &args.quota {
        let (k, n) = q
            .split_once('=')
            .with_context(|| format!("--quota {q:?}: write POOL=N, e.g. note=2"))?;
        let n: usize = n
            .trim()
            .parse()
            .with_context(|| format!("--quota {q:?}: {n:?} is not a number"))?;
        quotas.insert(parse_pool(k)?, n);
    }
    let o = RecallOptions {
        top_k: args.top_k,
        token_budget: args.token_budget,
        format: cairn::Format::Raw,
        kinds: Some(pools),
        quotas: (!quotas.is_empty()).then_some(quotas),
        ..RecallOptions::default()
    };
    o.validate()
        .map_err(|e| anyhow::anyhow!("recall options: {e}"))?;
    Ok(o)
}

// ---------------------------------------------------------------------------------------
// Records

/// One question (a line of `results.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LmeV2Record {
    pub dataset: String,
    pub question_id: String,
    /// As in the file (`procedure`, `procedure-abs`, ...).
    pub question_type: String,
    /// The report group: the type without `-abs`, or `abstention` for every `*-abs`.
    pub group: String,
    /// The `eval_function` name.
    pub eval_function: String,
    pub config: String,
    pub space: String,
    #[serde(default)]
    pub error: Option<String>,
    pub insert: InsertInfo,
    pub hits: Vec<TrajHit>,
    pub context_tokens: usize,
    pub hits_cut: usize,
    pub recall_wall_ms: f64,
    pub recall_timings: Option<Timings>,
    /// Phrase-set questions: answer phrases in the context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phrases: Option<PhraseDiagnostic>,
    /// Multiple choice: the option scorer's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<ChoiceResult>,
    /// LLM-judged (gotchas) questions: reference-answer content words in the context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenDiagnostic>,
    /// Abstention questions: what was retrievable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abstention: Option<AbstentionDiagnostic>,
    /// With `--evidence`: where the evidence trajectories showed up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidenceDiagnostic>,
}

/// The insert of a question's haystack.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InsertInfo {
    pub trajectories: usize,
    pub states: usize,
    /// Haystack ids with no trajectory in the trajectories file (skipped).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    pub units: usize,
    pub vectors_computed: usize,
    pub vectors_cached: usize,
    /// `insert_trajectories` + `flush`, wall time.
    pub ms: f64,
}

/// One returned hit (ids and scores; no text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajHit {
    pub rank: usize,
    pub unit_id: String,
    pub kind: UnitKind,
    pub trajectory_id: Option<String>,
    pub states: Option<[u32; 2]>,
    pub score: f32,
    pub in_context: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhraseDiagnostic {
    /// Normalized phrases of the reference answer.
    pub phrases: usize,
    /// Of those, found in the normalized context (word-bounded).
    pub found: usize,
    /// Every phrase found (in order, for the ordered kind): what the reference would
    /// accept if the context were the answer.
    pub all_found: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbstentionDiagnostic {
    pub hits: usize,
    /// The best hit's score (0 without hits).
    pub top_score: f32,
    /// Content words of the question found in the context, as a share.
    pub question_words_in_context: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidenceDiagnostic {
    pub trajectories: Vec<String>,
    /// Rank of the first hit from an evidence trajectory.
    pub first_rank: Option<usize>,
    /// A hit in the packed context came from an evidence trajectory.
    pub in_context: bool,
    /// A `note` hit came from an evidence trajectory.
    pub note_hit: bool,
}

// ---------------------------------------------------------------------------------------
// Scoring

fn contains_phrase(haystack: &str, phrase: &str) -> Option<usize> {
    // Word-bounded: the phrase is preceded and followed by a space or an end.
    let mut from = 0;
    while let Some(i) = haystack[from..].find(phrase) {
        let start = from + i;
        let end = start + phrase.len();
        let before = start == 0 || haystack.as_bytes()[start - 1] == b' ';
        let after = end == haystack.len() || haystack.as_bytes()[end] == b' ';
        if before && after {
            return Some(end);
        }
        from = start + haystack[start..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// The reference's phrase-set match applied to the context.
pub fn phrase_diagnostic(f: &EvalFunction, answer: &str, context: &str) -> PhraseDiagnostic {
    let ctx = f.normalize(context);
    let phrases = f.answer_phrases(answer);
    let found = phrases
        .iter()
        .filter(|p| contains_phrase(&ctx, p).is_some())
        .count();
    let all_found = if f.kind == EvalKind::NormPhraseSetMatchOrdered {
        let mut at = 0;
        phrases
            .iter()
            .all(|p| match contains_phrase(&ctx[at..], p) {
                Some(end) => {
                    at += end;
                    true
                }
                None => false,
            })
    } else {
        found == phrases.len()
    };
    PhraseDiagnostic {
        phrases: phrases.len(),
        found,
        all_found: all_found && !phrases.is_empty(),
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

fn embed(memory: &Memory, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    memory
        .embedder()
        .embed(texts)
        .map_err(|e| anyhow::anyhow!("embedding: {e}"))
}

/// Multiple choice with the option scorer; a set question picks every option whose total
/// is at least halfway between the worst and the best.
pub(crate) fn choice(
    memory: &Memory,
    q: &LmeV2Question,
    evidence: &[&str],
) -> anyhow::Result<Option<ChoiceResult>> {
    let options = q.options();
    if options.is_empty() {
        bail!("a multiple-choice question without option lines (A. ... / (A) ...)");
    }
    let stem = q.stem();
    let letters: Vec<&String> = options.keys().collect();
    let texts: Vec<&str> = options.values().map(String::as_str).collect();
    let ov = embed(memory, &texts)?;
    let ev = embed(memory, evidence)?;
    let qv = embed(memory, &[stem.as_str()])?;
    let scores = score_options(&stem, &texts, evidence, &ov, &ev);
    let gold: Vec<String> = q.eval_function.answer_letters(&q.answer);
    let q_only: Vec<OptionScore> = ov
        .iter()
        .map(|v| OptionScore {
            dense: cosine(v, &qv[0]),
            total: cosine(v, &qv[0]),
            ..Default::default()
        })
        .collect();
    let (best, tie) = pick(&scores);
    let (q_best, _) = pick(&q_only);
    let (predicted, correct, q_correct) = if q.eval_function.kind == EvalKind::McChoiceSetMatch {
        let set = |s: &[OptionScore]| -> Vec<String> {
            let hi = s.iter().map(|x| x.total).fold(f64::MIN, f64::max);
            let lo = s.iter().map(|x| x.total).fold(f64::MAX, f64::min);
            letters
                .iter()
                .zip(s)
                .filter(|(_, x)| x.total >= (hi + lo) / 2.0)
                .map(|(l, _)| (*l).clone())
                .collect()
        };
        let mut g = gold.clone();
        g.sort();
        let p = set(&scores);
        let qo = set(&q_only);
        (p.join(","), p == g, qo == g)
    } else {
        let p = letters[best].clone();
        let ok = gold.len() == 1 && gold[0] == p;
        (p, ok, gold.len() == 1 && gold[0] == *letters[q_best])
    };
    Ok(Some(ChoiceResult {
        predicted,
        correct,
        tie,
        scores: letters.iter().map(|l| (*l).clone()).zip(scores).collect(),
        question_only_predicted: letters[q_best].clone(),
        question_only_correct: q_correct,
    }))
}

// ---------------------------------------------------------------------------------------
// The run

pub(crate) fn run(args: &LmeV2Args) -> anyhow::Result<()> {
    let options = recall_options(args)?;
    let t = Instant::now();
    let questions = load_lme_v2_questions(&args.questions)
        .with_context(|| format!("loading {}", args.questions.display()))?;
    let haystack_path = args.haystacks.clone().unwrap_or_else(|| {
        args.questions
            .parent()
            .unwrap_or(Path::new("."))
            .join("haystacks")
            .join(format!("lme_v2_{}.json", args.tier))
    });
    let haystacks = load_lme_v2_haystacks(&haystack_path)
        .with_context(|| format!("loading {}", haystack_path.display()))?;
    let evidence = match &args.evidence {
        Some(p) => {
            Some(load_lme_v2_haystacks(p).with_context(|| format!("loading {}", p.display()))?)
        }
        None => None,
    };
    let trajectories: HashMap<String, TrajectoryInput> =
        read_trajectories_jsonl(&args.trajectories)
            .with_context(|| format!("loading {}", args.trajectories.display()))?
            .into_iter()
            .map(|t| (t.id.clone(), t))
            .collect();
    let load_seconds = t.elapsed().as_secs_f64();
    let selected = select(&questions, &args.ids, args.limit)?;
    let no_haystack: Vec<&str> = selected
        .iter()
        .filter(|q| !haystacks.contains_key(&q.id))
        .map(|q| q.id.as_str())
        .collect();
    if !no_haystack.is_empty() {
        bail!(
            "{}: no haystack for question(s) {}",
            haystack_path.display(),
            no_haystack.join(", ")
        );
    }

    let label = match &args.run_label {
        Some(l) => l.clone(),
        None => format!("lme-v2-{}-{}", args.tier, utc_stamp(chrono::Utc::now())),
    };
    check_label(&label)?;
    let dir = args.out.join(&label);
    let results_path = dir.join("results.jsonl");
    if results_path.exists() {
        bail!(
            "{} already holds results: pass another --run-label",
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
    let row = ConfigRow {
        name: "bench".into(),
        options,
    };
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for q in &selected {
        *counts.entry(q.question_type.clone()).or_default() += 1;
    }
    let mut evals: BTreeMap<&str, usize> = BTreeMap::new();
    for q in &selected {
        *evals.entry(q.eval_function.kind.name()).or_default() += 1;
    }
    let mut meta = RunMeta {
        data_path: canonical(&args.questions),
        data_sha256: sha256_file(&args.questions)?,
        configs: vec![row.clone()],
        as_of_policy: "none".into(),
        as_of_description: "as_of = none (trajectories carry no dates; recall as of now)".into(),
        limit: args.limit,
        questions_filter: args.ids.clone(),
        max_questions_per_conv: None,
        questions_in_file: questions.len(),
        questions_selected: selected.len(),
        keep_data: args.keep_data,
        load_seconds,
        dataset_notes: vec![
            format!(
                "Trajectories: `{}` (sha256 `{}`), {} trajectories.",
                canonical(&args.trajectories),
                sha256_file(&args.trajectories)?,
                trajectories.len()
            ),
            format!(
                "Haystacks: `{}` (sha256 `{}`), tier `{}`.",
                canonical(&haystack_path),
                sha256_file(&haystack_path)?,
                args.tier
            ),
            match &args.evidence {
                Some(p) => format!(
                    "Evidence labels: `{}` (sha256 `{}`).",
                    canonical(p),
                    sha256_file(p)?
                ),
                None => "No evidence labels (the public data has none).".into(),
            },
            format!(
                "Selected questions by type: {}.",
                counts
                    .iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!(
                "Selected questions by eval_function: {}.",
                evals
                    .iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ],
        limitations: vec![
            "No reader model: nothing here is the benchmark's accuracy. Phrase-set questions report whether the reference's phrase match would accept the packed context as the answer (answer phrases in context, a retrieval diagnostic); multiple choice is answered by the LLM-free option scorer; LLM-judged gotchas report reference-answer words in context; abstention questions report what was retrievable.".into(),
            "Screenshots and question images are not read (the trajectories keep only their references).".into(),
            "The run does not resume.".into(),
        ],
        qa: None,
        ..RunMeta::new("lme-v2", &dir, &memory, cache.as_deref(), memory_settings)
    };
    std::fs::write(dir.join("run.json"), serde_json::to_string_pretty(&meta)?)?;

    let pb = indicatif::ProgressBar::with_draw_target(
        Some(selected.len() as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    pb.set_prefix(label.clone());
    arm_stop();
    let mut results = std::fs::File::create(&results_path)
        .with_context(|| format!("creating {}", results_path.display()))?;
    let mut records = Vec::new();
    let mut extra = crate::lme_v2_inspect::Rows::new(&args.inspect, &dir)?;
    for q in &selected {
        if stopped() {
            break;
        }
        pb.set_message(q.id.clone());
        let ev = evidence
            .as_ref()
            .map(|e| e.get(&q.id).cloned().unwrap_or_default());
        let r = question(&memory, q, &haystacks[&q.id], &trajectories, &row, ev);
        extra.question(&memory, q, &r, args.token_budget)?;
        if let Some(e) = &r.error {
            pb.println(format!("question {}: {e}", q.id));
        }
        let mut line = serde_json::to_string(&r)?;
        line.push('\n');
        results.write_all(line.as_bytes())?;
        results.flush()?;
        records.push(r);
        pb.inc(1);
    }
    pb.finish_and_clear();
    let interrupted = stopped();
    drop(memory);
    if !args.keep_data && data_dir.exists() {
        std::fs::remove_dir_all(&data_dir)
            .with_context(|| format!("removing {}", data_dir.display()))?;
    }
    meta.finished_at = Some(chrono::Utc::now());
    let s = summarize(&meta, &records, !interrupted, evidence.is_some());
    write_files(&dir, &s)?;
    extra.finish(&dir)?;
    std::fs::write(dir.join("run.json"), serde_json::to_string_pretty(&meta)?)?;
    eprintln!("{}", short_report(&s));
    eprintln!("wrote {}", dir.display());
    if interrupted {
        bail!("interrupted: the summary covers the questions done so far");
    }
    Ok(())
}

fn select<'q>(
    questions: &'q [LmeV2Question],
    ids: &[String],
    limit: Option<usize>,
) -> anyhow::Result<Vec<&'q LmeV2Question>> {
    let wanted: HashSet<&str> = ids
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    let known: HashSet<&str> = questions.iter().map(|q| q.id.as_str()).collect();
    let unknown: Vec<&str> = wanted.difference(&known).copied().collect();
    if !unknown.is_empty() {
        bail!("--ids: no question {}", unknown.join(", "));
    }
    Ok(questions
        .iter()
        .filter(|q| wanted.is_empty() || wanted.contains(q.id.as_str()))
        .take(limit.unwrap_or(usize::MAX))
        .collect())
}

/// The report group of a question.
pub fn group_of(q: &LmeV2Question) -> String {
    if q.is_abstention() {
        "abstention".into()
    } else {
        q.base_type().to_string()
    }
}

fn question(
    memory: &Memory,
    q: &LmeV2Question,
    haystack: &[String],
    trajectories: &HashMap<String, TrajectoryInput>,
    row: &ConfigRow,
    evidence: Option<Vec<String>>,
) -> LmeV2Record {
    let space = space_name("lme2", &q.id);
    let mut rec = LmeV2Record {
        dataset: "lme-v2".into(),
        question_id: q.id.clone(),
        question_type: q.question_type.clone(),
        group: group_of(q),
        eval_function: q.eval_function.kind.name().into(),
        config: row.name.clone(),
        space: space.clone(),
        error: None,
        insert: InsertInfo::default(),
        hits: Vec::new(),
        context_tokens: 0,
        hits_cut: 0,
        recall_wall_ms: 0.0,
        recall_timings: None,
        phrases: None,
        choice: None,
        open: None,
        abstention: None,
        evidence: None,
    };
    if let Err(e) = fill(memory, q, haystack, trajectories, row, evidence, &mut rec) {
        rec.error = Some(format!("{e:#}"));
    }
    rec
}

fn fill(
    memory: &Memory,
    q: &LmeV2Question,
    haystack: &[String],
    trajectories: &HashMap<String, TrajectoryInput>,
    row: &ConfigRow,
    evidence: Option<Vec<String>>,
    rec: &mut LmeV2Record,
) -> anyhow::Result<()> {
    // Insert the haystack, in order.
    let mut batch = Vec::with_capacity(haystack.len());
    for id in haystack {
        match trajectories.get(id) {
            Some(t) => batch.push(t.clone()),
            None => rec.insert.missing.push(id.clone()),
        }
    }
    if batch.is_empty() {
        bail!("none of the haystack's trajectories is in the trajectories file");
    }
    rec.insert.trajectories = batch.len();
    rec.insert.states = batch.iter().map(|t| t.states.len()).sum();
    let t = Instant::now();
    let report = memory.insert_trajectories(&rec.space, batch)?;
    memory.flush()?;
    rec.insert.ms = t.elapsed().as_secs_f64() * 1000.0;
    rec.insert.units = report.units;
    rec.insert.vectors_computed = report.vectors_computed;
    rec.insert.vectors_cached = report.vectors_cached;

    // Recall with the question (its option lines are part of the question as asked).
    let t = Instant::now();
    let recall = memory.recall(&rec.space, &q.question, &row.options)?;
    rec.recall_wall_ms = t.elapsed().as_secs_f64() * 1000.0;
    let in_ctx: HashSet<&str> = recall.context_unit_ids.iter().map(String::as_str).collect();
    rec.hits = recall
        .hits
        .iter()
        .enumerate()
        .map(|(i, h)| TrajHit {
            rank: i + 1,
            unit_id: h.unit_id.clone(),
            kind: h.kind,
            trajectory_id: h.trajectory_id.clone(),
            states: h.states,
            score: h.score,
            in_context: in_ctx.contains(h.unit_id.as_str()),
        })
        .collect();
    rec.context_tokens = recall.context_tokens;
    rec.hits_cut = recall.hits_cut;
    rec.recall_timings = Some(recall.timings.clone());

    if let Some(ids) = evidence.filter(|e| !e.is_empty()) {
        let is_ev = |h: &TrajHit| h.trajectory_id.as_ref().is_some_and(|t| ids.contains(t));
        rec.evidence = Some(EvidenceDiagnostic {
            first_rank: rec.hits.iter().find(|h| is_ev(h)).map(|h| h.rank),
            in_context: rec.hits.iter().any(|h| h.in_context && is_ev(h)),
            note_hit: rec
                .hits
                .iter()
                .any(|h| h.kind == UnitKind::Note && is_ev(h)),
            trajectories: ids,
        });
    }

    let f = &q.eval_function;
    if q.is_abstention() || f.kind == EvalKind::LlmAbstentionChecker {
        let qw: HashSet<String> = content_words(&q.question).into_iter().collect();
        let cw: HashSet<String> = content_words(&recall.context).into_iter().collect();
        rec.abstention = Some(AbstentionDiagnostic {
            hits: recall.hits.len(),
            top_score: recall.hits.first().map_or(0.0, |h| h.score),
            question_words_in_context: if qw.is_empty() {
                0.0
            } else {
                qw.iter().filter(|w| cw.contains(*w)).count() as f64 / qw.len() as f64
            },
        });
    }
    if f.kind.is_phrase_set() {
        rec.phrases = Some(phrase_diagnostic(f, &q.answer, &recall.context));
    } else if f.kind.is_choice() {
        let evidence: Vec<&str> = recall
            .hits
            .iter()
            .filter(|h| in_ctx.contains(h.unit_id.as_str()))
            .map(|h| h.text.as_str())
            .collect();
        rec.choice = choice(memory, q, &evidence)?;
    } else if f.kind == EvalKind::LlmGotchasChecker {
        rec.open = Some(open_diagnostic(&q.question, &q.answer, &recall.context));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Summary

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

fn mean(v: impl IntoIterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.into_iter().collect();
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn share(v: impl IntoIterator<Item = bool>) -> f64 {
    mean(v.into_iter().map(|b| if b { 1.0 } else { 0.0 }))
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

fn options_line(o: &RecallOptions) -> String {
    let pools = o.kinds.as_ref().map_or("all".into(), |k| {
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
    let _ = writeln!(
        out,
        "- questions: `{}` (sha256 `{}`)\n- {}\n- questions: {} selected of {} in the file, {} done{}\n- Cairn {} (git {}, built {}), embedding model `{}`\n- recall: {}\n",
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
    let _ = writeln!(out, "**No reader model: these are not LongMemEval-V2 accuracies.** \"phrases in ctx\" = share of phrase-set questions whose every answer phrase (the reference's normalization and match) is in the packed context — a retrieval diagnostic. \"MC\" = multiple choice answered by the option scorer (no LLM). \"gotcha words\" = LLM-judged gotcha questions, not judged: share of reference-answer content words in the context. Abstention questions: mean top hit score (compare with the answerable groups' \"top score\").\n");
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
    line(&mut out, "**overall**", &s.overall);
    for (k, g) in &s.by_group {
        line(&mut out, k, g);
    }
    let o = &s.overall;
    let kinds = o
        .hits_by_kind
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        out,
        "\nMC question-only baseline (no memory): {} over {}; ties {}. Abstention: {} questions, mean top score {}, question words in context {}. Errors: {}. Hits by pool: {kinds}.\n",
        or_dash(o.choice_n, o.choice_question_only_accuracy),
        o.choice_n,
        o.choice_ties,
        o.abstention_n,
        or_dash(o.abstention_n, o.abstention_mean_top_score),
        or_dash(o.abstention_n, o.abstention_mean_question_words_in_context),
        o.errors
    );
    let _ = writeln!(
        out,
        "| latency (ms) | n | mean | p50 | p95 | p99 | max |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    for (name, p) in [
        (
            "insert haystack (insert_trajectories + flush)",
            &o.insert_ms,
        ),
        ("query, wall", &o.recall_wall_ms),
        ("query, engine `timings.total_ms`", &o.recall_engine_ms),
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
        "\nInserted {} trajectories ({} states) over all questions; vectors computed {} / from cache {}.",
        s.trajectories_inserted, s.states_inserted, s.vectors_computed, s.vectors_cached
    );
    out
}

/// `METHODOLOGY.md`.
pub fn render_methodology(s: &LmeV2Summary) -> String {
    let m = &s.meta;
    let mut out = String::new();
    let _ = writeln!(out, "# Methodology of run `{}`\n", m.run_label);
    let _ = writeln!(out, "Generated by `cairn-bench` from this run; the numbers are in summary.md / summary.json, every question in results.jsonl (ids, hits, scores, timings; no question, option or answer text).\n");
    let _ = writeln!(out, "## Data\n");
    let _ = writeln!(
        out,
        "- dataset: LongMemEval-V2 format (web-agent trajectories)\n- questions file: `{}`\n- sha256: `{}`\n- questions: {} in the file, {} selected (limit: {}, --ids: {}), {} done{}\n- loading took {:.2} s",
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
    let _ = writeln!(out, "\n## System under test\n");
    let _ = writeln!(
        out,
        "- Cairn {}, git {} (obtained at {}), cairn-bench built {}\n- embedding model: `{}` ({} dimensions)\n- embedding cache: {}\n- engine and embedder settings: `{}`\n- the bench uses only the public `cairn` API (`Memory::open_with`, `insert_trajectories`, `flush`, `recall`, `embedder`)",
        m.cairn_version,
        m.git_sha,
        m.git_sha_source,
        m.build_time,
        m.embedding_model,
        m.embedding_dim,
        m.embedding_cache.as_deref().map_or("the data directory's own".into(), |c| format!("`{c}`")),
        serde_json::to_string(&m.memory_settings).unwrap_or_default()
    );
    let _ = writeln!(out, "\n## Recall options (`RecallOptions` as JSON)\n");
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
    let _ = writeln!(out, "- Per question, a fresh space (`lme2-<question id>`): every trajectory of the question's haystack, in haystack order, is inserted with one `insert_trajectories` call, then `flush`; insert time = both (wall). Haystack ids missing from the trajectories file are skipped and listed in the record. Spaces are kept until the end of the run and then deleted with the data directory (unless --keep-data); the embedding cache keeps their vectors (benches run with `purge_cache_on_forget = false`).\n- Then one `recall` with the question text as the query (multiple-choice option lines included, as the question is asked); query latency = wall time of the call, and the engine's `timings.total_ms`.\n- **Phrase-set questions (`norm_phrase_set_match`, `..._ordered`) — answer phrases in context, a retrieval diagnostic.** The reference answer is split at the eval function's separators; the phrases and the packed context are normalized as the reference normalizes an answer (lowercase, `-`/`_` to spaces, `,`/`;` to spaces, punctuation removed, whitespace collapsed, per the options); a question counts when every phrase occurs word-bounded in the context (in order for `_ordered`). This is what the reference would accept if the whole context were the answer: it says the evidence is there, not that a reader would answer.\n- **Multiple choice (`mc_choice_match`, `mc_choice_set_match`) — option scorer, no LLM.** Options are the question's lines `A. ...` / `(A) ...`; each is scored against the hits packed into the context exactly as in the EverMemBench bench (0.5 · lexical + 0.5 · dense, rank-discounted; see its METHODOLOGY); the best option is the pick (a set question picks every option at least halfway between the worst and the best total). The question-only baseline picks the option most similar to the question stem without memory.\n- **LLM-judged gotchas (`llm_gotchas_checker`) — not judged.** Share of the reference answer's content words (not in the question) found in the context.\n- **Abstention (`*-abs`, `llm_abstention_checker`) — what is retrievable.** Hits, the best hit's score, and the share of the question's content words in the context; nothing decides whether a reader would decline.\n- With evidence labels (`--evidence`): per question, whether a hit (any rank), a hit in the context, and a `note` hit came from an evidence trajectory.\n- Groups: the question type without `-abs`; every `*-abs` question is in `abstention`.");
    let _ = writeln!(out, "\n## Known limitations\n");
    for l in &m.limitations {
        let _ = writeln!(out, "- {l}");
    }
    machine_section(&mut out, m);
    out
}

pub fn write_files(dir: &Path, s: &LmeV2Summary) -> anyhow::Result<()> {
    let w = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
    };
    w("summary.json", serde_json::to_string_pretty(s)?)?;
    w("summary.md", render_summary(s))?;
    w("METHODOLOGY.md", render_methodology(s))?;
    Ok(())
}

pub fn short_report(s: &LmeV2Summary) -> String {
    let o = &s.overall;
    format!(
        "{}: {} questions, no reader | answer phrases in context {} over {} | MC (option scorer, no LLM) {} over {} | insert p50 {} ms | query p50 {} ms p95 {} ms",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_match_word_bounded_and_in_order() {
        let f = EvalFunction::parse_spec("norm_phrase_set_match").unwrap();
        let ctx = "[12] alert 'You saved the product.' then Marketing > Cart-Price Rules";
        let d = phrase_diagnostic(&f, "You saved the product; cart price rules", ctx);
        assert_eq!((d.phrases, d.found, d.all_found), (2, 2, true));
        let d = phrase_diagnostic(&f, "save", ctx);
        assert!(!d.all_found, "word-bounded: 'save' is not 'saved'");
        let o = EvalFunction::parse_spec("norm_phrase_set_match_ordered").unwrap();
        let d = phrase_diagnostic(&o, "cart price rules; saved", ctx);
        assert_eq!((d.found, d.all_found), (2, false), "out of order");
        let d = phrase_diagnostic(&o, "saved; cart price rules", ctx);
        assert!(d.all_found);
    }

    #[test]
    fn pools_and_quotas_parse() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            a: LmeV2Args,
        }
        let c = Cli::try_parse_from([
            "x",
            "--questions",
            "q.jsonl",
            "--trajectories",
            "t.jsonl",
            "--pools",
            "note,slice",
            "--quota",
            "note=2",
            "--top-k",
            "5",
        ])
        .unwrap();
        let o = recall_options(&c.a).unwrap();
        assert_eq!(o.kinds, Some(vec![UnitKind::Note, UnitKind::Slice]));
        assert_eq!(o.quotas.unwrap()[&UnitKind::Note], 2);
        assert_eq!((o.top_k, o.token_budget), (5, 2000));
        let bad = Cli::try_parse_from([
            "x",
            "--questions",
            "q",
            "--trajectories",
            "t",
            "--pools",
            "turn",
        ])
        .unwrap();
        assert!(recall_options(&bad.a)
            .unwrap_err()
            .to_string()
            .contains("unknown pool \"turn\""));
    }
}
