//! The EverMemBench protocol: every group's messages are ingested day by day into ONE
//! space (`Memory::ingest_group_messages`, one call per day, in date order), then every
//! selected question is recalled once per config row.
//!
//! EverMemBench publishes no evidence labels, only answers, and its answers are scored by
//! a reader model (multiple choice) or a judge (open-ended). Cairn has neither, so:
//! - multiple choice is answered by the [option scorer](crate::scoring::options) (no LLM): each
//!   option is scored against the recalled evidence, the best one is the pick, accuracy is
//!   exact letter match;
//! - open-ended questions get a retrieval-only diagnostic: the share of the reference
//!   answer's content words found in the packed context.
//!
//! Records (`results.jsonl`) never hold the question, options or answer text.
use crate::args::{ConfigChoice, RunFolderArgs};
use crate::datasets::select_by_id;
use crate::qa::{LlmArgs, Qa, QaRecord, Style};
use crate::records::evermembench::{EverHit, EverRecord};
use crate::records::ResultsFile;
use crate::report::canonical;
use crate::report::evermembench::{short_report, summarize, write_files, EverIngest};
use crate::run::memory::VecCache;
use crate::run::rows::{config_name, config_rows, in_order};
use crate::run::{arm_stop, open_memory, progress, stopped, ConfigRow, RunFolder, RunMeta};
use crate::scoring::options::{
    context_evidence, open_diagnostic, pick, question_only, score_options, ChoiceResult,
};
use anyhow::{bail, Context as _};
use cairn::formats::evermembench::{load_evermem_dialogue, load_evermem_qa, EverDay, EverQuestion};
use cairn::formats::sha256_file;
use cairn::{Memory, Recall, Timestamp};
use cairn_load::stats::percentiles;
use clap::Args;
use indicatif::ProgressBar;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
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
    /// Where the run goes and what it reads: shared by every bench.
    #[command(flatten)]
    pub run: RunFolderArgs,
    /// QA rows: reader (multiple choice by its letter) and judge (open-ended questions).
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// What this protocol does not measure.
const LIMITATIONS: &[&str] = &[
    "No reader model and no judge: multiple-choice accuracy comes from the option scorer (no \
        LLM), which only measures whether the recalled evidence favours the right option's \
        words and meaning; a reader model would be expected to do better on questions that need \
        reasoning (constraints, proactive reminders, styles).",
    "Open-ended questions are not judged: only the share of the reference answer's content \
        words found in the context is reported (a retrieval diagnostic, not accuracy).",
    "EverMemBench publishes no evidence labels, so retrieval metrics (recall@k, NDCG) cannot be computed.",
    "The run does not resume: all questions share one ingest of the whole dialogue.",
];

pub(crate) fn run(args: &EverMemArgs) -> anyhow::Result<()> {
    let t = Instant::now();
    let days = load_evermem_dialogue(&args.dialogue)
        .with_context(|| format!("loading {}", args.dialogue.display()))?;
    let questions =
        load_evermem_qa(&args.qa).with_context(|| format!("loading {}", args.qa.display()))?;
    let load_seconds = t.elapsed().as_secs_f64();
    let selected = select_by_id(
        &questions,
        |q| &q.id,
        &args.questions,
        args.limit,
        "--questions",
    )?;
    let folder = fresh_folder(args)?;
    let (memory, cache, memory_settings) = open_memory(
        &folder.data_dir,
        args.run.cache.as_deref(),
        args.run.memory_config.as_deref(),
    )?;
    // `bench` gets 2,000 tokens: the space is one long multi-group history, and a reader
    // would be given a bounded context.
    let rows = config_rows(args.config, 2_000);
    let qa = Qa::from_args(&args.llm)?;
    let base = RunMeta::new(
        "evermembench",
        &folder.dir,
        &memory,
        cache.as_deref(),
        memory_settings,
    );
    let mut meta = RunMeta {
        configs: rows.clone(),
        load_seconds,
        qa: qa.as_ref().map(|q| q.setup(Style::EverMemOpen)),
        ..describe(args, base, &days, &questions, &selected)?
    };
    folder.write_meta(&meta)?;

    let pb = progress::bar(days.len() + selected.len(), &folder.label);
    arm_stop();
    let ingest = ingest_days(&memory, &days, &pb)?;
    let last_time = days
        .iter()
        .flat_map(|d| d.messages.iter().map(|m| m.time))
        .max();
    let records = ask_all(
        &memory,
        &selected,
        &rows,
        last_time,
        qa.as_ref(),
        &folder,
        &pb,
    )?;
    pb.finish_and_clear();
    let interrupted = stopped();
    drop(memory);
    if !args.run.keep_data {
        folder.remove_data()?;
    }
    meta.finished_at = Some(chrono::Utc::now());
    let s = summarize(&meta, &records, ingest, !interrupted);
    write_files(&folder.dir, &s)?;
    folder.write_meta(&meta)?;
    eprintln!("{}", short_report(&s));
    eprintln!("wrote {}", folder.dir.display());
    if interrupted {
        bail!("interrupted: the summary covers the questions done so far");
    }
    Ok(())
}

/// A new run folder, `evermembench-<config>-<stamp>` unless `--run-label` names it.
fn fresh_folder(args: &EverMemArgs) -> anyhow::Result<RunFolder> {
    let label = RunFolder::label(
        args.run.run_label.as_ref(),
        &format!("evermembench-{}", config_name(args.config)),
    );
    RunFolder::fresh(
        &args.run.out,
        label,
        " (this bench does not resume: its questions share one ingest)",
    )
}

/// The run's record: the data, the selection and what this protocol notes.
fn describe(
    args: &EverMemArgs,
    base: RunMeta,
    days: &[EverDay],
    questions: &[EverQuestion],
    selected: &[&EverQuestion],
) -> anyhow::Result<RunMeta> {
    let n_messages: usize = days.iter().map(|d| d.messages.len()).sum();
    let groups: HashSet<&str> = days
        .iter()
        .flat_map(|d| d.messages.iter().map(|m| m.group.as_str()))
        .collect();
    let speakers: HashSet<&str> = days
        .iter()
        .flat_map(|d| d.messages.iter().map(|m| m.speaker.as_str()))
        .collect();
    let n_mc = selected.iter().filter(|q| q.options.is_some()).count();
    Ok(RunMeta {
        data_path: canonical(&args.dialogue),
        data_sha256: sha256_file(&args.dialogue)?,
        as_of_policy: "last-message".into(),
        as_of_description: "as_of = the time of the dialogue's last message (questions carry no \
            date; every message is ingested before any question)"
            .into(),
        limit: args.limit,
        questions_filter: args.questions.clone(),
        max_questions_per_conv: None,
        questions_in_file: questions.len(),
        questions_selected: selected.len(),
        keep_data: args.run.keep_data,
        dataset_notes: vec![
            format!(
                "QA file: `{}` (sha256 `{}`).",
                canonical(&args.qa),
                sha256_file(&args.qa)?
            ),
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
        limitations: LIMITATIONS.iter().map(|l| l.to_string()).collect(),
        ..base
    })
}

/// Streams the dialogue into [`SPACE`] one day per `ingest_group_messages` call, in date
/// order, then flushes; times each day and the whole.
fn ingest_days(memory: &Memory, days: &[EverDay], pb: &ProgressBar) -> anyhow::Result<EverIngest> {
    let mut ingest = EverIngest {
        days: days.len(),
        messages: days.iter().map(|d| d.messages.len()).sum(),
        ..Default::default()
    };
    let mut day_ms = Vec::new();
    let t_ingest = Instant::now();
    for day in days {
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
        ingest.messages as f64 / ingest.total_seconds
    } else {
        0.0
    };
    ingest.speakers_known = memory
        .speakers(SPACE, &cairn::ScopeOptions::default())
        .map(|s| s.len())
        .unwrap_or(0);
    Ok(ingest)
}

fn recall_one(
    memory: &Memory,
    vecs: &mut VecCache<'_>,
    q: &EverQuestion,
    row: &ConfigRow,
    as_of: Option<Timestamp>,
    qa: Option<&Qa>,
) -> EverRecord {
    let mut opts = row.options.clone();
    opts.scope.as_of = as_of;
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
    rec.hits = ever_hits(&recall);
    rec.context_tokens = recall.context_tokens;
    rec.hits_cut = recall.hits_cut;
    rec.recall_timings = Some(recall.timings.clone());
    rec.qa = qa.map(|qa| read(qa, q, &recall.context));
    match &q.options {
        None => {
            rec.open = Some(open_diagnostic(&q.question, &q.answer, &recall.context));
        }
        Some(options) => match choose(vecs, q, options, &context_evidence(&recall)) {
            Ok(c) => rec.choice = Some(c),
            Err(e) => rec.error = Some(e.to_string()),
        },
    }
    rec
}

/// Multiple choice by the option scorer over the evidence (and the question-only
/// baseline); `vecs` embeds options, evidence and question through the memory.
fn choose(
    vecs: &mut VecCache<'_>,
    q: &EverQuestion,
    options: &BTreeMap<String, String>,
    evidence: &[&str],
) -> anyhow::Result<ChoiceResult> {
    let letters: Vec<&String> = options.keys().collect();
    let texts: Vec<&str> = options.values().map(String::as_str).collect();
    let ov = vecs.get(&texts)?;
    let ev = vecs.get(evidence)?;
    let qv = vecs.get(&[q.question.as_str()])?;
    let scores = score_options(&q.question, &texts, evidence, &ov, &ev);
    let (best, tie) = pick(&scores);
    let (q_best, _) = pick(&question_only(&ov, &qv[0]));
    let gold = q.answer.trim();
    Ok(ChoiceResult {
        predicted: letters[best].clone(),
        correct: letters[best] == gold,
        tie,
        scores: letters.iter().map(|l| (*l).clone()).zip(scores).collect(),
        question_only_predicted: letters[q_best].clone(),
        question_only_correct: letters[q_best] == gold,
    })
}

/// Recalls every selected question once per config row (the row order alternating),
/// scores it and appends its record as it is done.
fn ask_all(
    memory: &Memory,
    selected: &[&EverQuestion],
    rows: &[ConfigRow],
    last_time: Option<Timestamp>,
    qa: Option<&Qa>,
    folder: &RunFolder,
    pb: &ProgressBar,
) -> anyhow::Result<Vec<EverRecord>> {
    let mut results = ResultsFile::open(&folder.results())?;
    let mut vecs = VecCache::new(memory);
    let mut records = Vec::new();
    for (i, q) in selected.iter().enumerate() {
        if stopped() {
            break;
        }
        pb.set_message(q.id.clone());
        for row in &in_order(rows.to_vec(), i) {
            let r = recall_one(memory, &mut vecs, q, row, last_time, qa);
            if let Some(e) = &r.error {
                pb.println(format!("question {}: {e}", q.id));
            }
            results.append(&r)?;
            records.push(r);
        }
        pb.inc(1);
    }
    Ok(records)
}

/// The hits of a recall (ids and scores; no text).
fn ever_hits(recall: &Recall) -> Vec<EverHit> {
    let in_ctx: HashSet<&str> = recall.context_unit_ids.iter().map(String::as_str).collect();
    recall
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
        .collect()
}

/// The QA row of a question: the reader picks a letter (multiple choice) or answers and
/// the judge decides (open-ended).
fn read(qa: &Qa, q: &EverQuestion, context: &str) -> QaRecord {
    match &q.options {
        Some(options) => {
            let opts: Vec<(String, String)> = options
                .iter()
                .map(|(l, t)| (l.clone(), t.clone()))
                .collect();
            qa.run_choice(context, &q.question, &opts, &q.answer)
        }
        None => qa.run(
            Style::EverMemOpen,
            context,
            &q.question,
            None,
            &q.answer,
            &q.category(),
            None,
        ),
    }
}
