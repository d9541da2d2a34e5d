//! The LongMemEval-V2 protocol (web-agent trajectories): per question, a fresh space gets
//! every trajectory of the question's haystack inserted in order
//! (`Trajectories::insert_many` + `flush`, timed), then the question is recalled once
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
//!   scorer](crate::scoring::options) (no LLM), exact letter (set) match;
//! - LLM-judged gotchas (`llm_gotchas_checker`): the share of the reference answer's
//!   content words in the context (not judged);
//! - abstention (`*-abs`, `llm_abstention_checker`): what is retrievable: hits, top score,
//!   context tokens (a reader should decline; nothing decides whether it would).
//!
//! With `--evidence FILE` (`{question_id: [trajectory_id, ...]}`, not part of the public
//! data; the fixture has one) the record also says whether a hit, a hit in the context,
//! and a note came from an evidence trajectory.
//!
//! With `--inspect-rows` the questions are also answered by recall + inspection and the
//! agent controller, on the same spaces ([`inspect`]).
//!
//! Records (`results.jsonl`) never hold question, option or answer text.

mod choice;
pub mod inspect;

use crate::args::RunFolderArgs;
use crate::datasets::select_by_id;
use crate::records::lme_v2::{
    AbstentionDiagnostic, EvidenceDiagnostic, InsertInfo, LmeV2Record, TrajHit,
};
use crate::records::ResultsFile;
use crate::report::canonical;
use crate::report::lme_v2::{short_report, summarize, write_files};
use crate::run::RunMeta;
use crate::run::{arm_stop, open_memory, progress, space_name, stopped, ConfigRow, RunFolder};
use crate::scoring::options::{content_words, context_evidence, open_diagnostic};
use crate::scoring::phrases::phrase_diagnostic;
use anyhow::{bail, Context as _};
use cairn::formats::lme_v2::{
    load_lme_v2_haystacks, load_lme_v2_questions, EvalKind, LmeV2Question,
};
use cairn::formats::{read_trajectories_jsonl, sha256_file};
use cairn::{Memory, Recall, RecallOptions, TrajectoryInput, UnitKind};
use choice::choice;
use clap::Args;
use indicatif::ProgressBar;
use inspect::{InspectRowArgs, Rows};
use std::collections::{BTreeMap, HashMap, HashSet};
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
    /// Where the run goes and what it reads: shared by every bench.
    #[command(flatten)]
    pub run: RunFolderArgs,
    /// Rows beside plain recall: recall + inspection, the agent controller.
    #[command(flatten)]
    pub inspect: InspectRowArgs,
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
        quotas: (!quotas.is_empty()).then_some(quotas),
        scope: cairn::ScopeOptions {
            kinds: Some(pools),
            ..Default::default()
        },
        ..RecallOptions::default()
    };
    o.validate()
        .map_err(|e| anyhow::anyhow!("recall options: {e}"))?;
    Ok(o)
}

pub(crate) fn run(args: &LmeV2Args) -> anyhow::Result<()> {
    let options = recall_options(args)?;
    let Inputs {
        questions,
        haystack_path,
        haystacks,
        evidence,
        trajectories,
        load_seconds,
    } = load(args)?;
    let selected = select_by_id(&questions, |q| &q.id, &args.ids, args.limit, "--ids")?;
    every_question_has_a_haystack(&selected, &haystacks, &haystack_path)?;

    let folder = fresh_folder(args)?;
    let (memory, cache, memory_settings) = open_memory(
        &folder.data_dir,
        args.run.cache.as_deref(),
        args.run.memory_config.as_deref(),
    )?;
    let row = ConfigRow {
        name: "bench".into(),
        options,
        peer: None,
    };
    let base = RunMeta::new(
        "lme-v2",
        &folder.dir,
        &memory,
        cache.as_deref(),
        memory_settings,
    );
    let mut meta = RunMeta {
        configs: vec![row.clone()],
        load_seconds,
        ..describe(
            args,
            base,
            &questions,
            &selected,
            &haystack_path,
            trajectories.len(),
        )?
    };
    folder.write_meta(&meta)?;

    let mut extra = Rows::new(&args.inspect, &folder.dir)?;
    let pb = progress::bar(selected.len(), &folder.label);
    arm_stop();
    let inputs = (&haystacks, evidence.as_ref(), &trajectories);
    let asked = Asked {
        row: &row,
        folder: &folder,
        token_budget: args.token_budget,
    };
    let records = ask_all(&memory, &selected, inputs, &asked, &mut extra, &pb)?;
    pb.finish_and_clear();
    let interrupted = stopped();
    drop(memory);
    if !args.run.keep_data {
        folder.remove_data()?;
    }
    meta.finished_at = Some(chrono::Utc::now());
    let s = summarize(&meta, &records, !interrupted, evidence.is_some());
    write_files(&folder.dir, &s)?;
    extra.finish(&folder.dir)?;
    folder.write_meta(&meta)?;
    eprintln!("{}", short_report(&s));
    eprintln!("wrote {}", folder.dir.display());
    if interrupted {
        bail!("interrupted: the summary covers the questions done so far");
    }
    Ok(())
}

/// A new run folder, `lme-v2-<tier>-<stamp>` unless `--run-label` names it.
fn fresh_folder(args: &LmeV2Args) -> anyhow::Result<RunFolder> {
    RunFolder::fresh(
        &args.run.out,
        RunFolder::label(
            args.run.run_label.as_ref(),
            &format!("lme-v2-{}", args.tier),
        ),
        "",
    )
}

/// Refuses a selection with a question the haystack file has no haystack for.
fn every_question_has_a_haystack(
    selected: &[&LmeV2Question],
    haystacks: &BTreeMap<String, Vec<String>>,
    haystack_path: &Path,
) -> anyhow::Result<()> {
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
    Ok(())
}

/// A question's haystack, the optional evidence labels and the trajectories.
type Haystacks<'a> = (
    &'a BTreeMap<String, Vec<String>>,
    Option<&'a BTreeMap<String, Vec<String>>>,
    &'a HashMap<String, TrajectoryInput>,
);

/// How each question is asked: the config row, where its record goes, the token budget
/// of the extra rows.
struct Asked<'a> {
    row: &'a ConfigRow,
    folder: &'a RunFolder,
    token_budget: usize,
}

/// Runs every selected question in a fresh space of its own, appending its record as it
/// is done; then the extra rows ([`inspect`]) on the same space.
fn ask_all(
    memory: &Memory,
    selected: &[&LmeV2Question],
    (haystacks, evidence, trajectories): Haystacks<'_>,
    asked: &Asked<'_>,
    extra: &mut Rows,
    pb: &ProgressBar,
) -> anyhow::Result<Vec<LmeV2Record>> {
    let row = asked.row;
    let mut results = ResultsFile::open(&asked.folder.results())?;
    let mut records = Vec::new();
    for q in selected {
        if stopped() {
            break;
        }
        pb.set_message(q.id.clone());
        let ev = evidence.map(|e| e.get(&q.id).cloned().unwrap_or_default());
        let r = question(memory, q, &haystacks[&q.id], trajectories, row, ev);
        if let Some(e) = &r.error {
            pb.println(format!("question {}: {e}", q.id));
        }
        results.append(&r)?;
        extra.question(memory, q, &r, asked.token_budget)?;
        records.push(r);
        pb.inc(1);
    }
    Ok(records)
}

/// The files of a run.
struct Inputs {
    questions: Vec<LmeV2Question>,
    haystack_path: PathBuf,
    haystacks: BTreeMap<String, Vec<String>>,
    evidence: Option<BTreeMap<String, Vec<String>>>,
    trajectories: HashMap<String, TrajectoryInput>,
    load_seconds: f64,
}

/// Reads the questions, the haystacks (the tier's file by default), the optional
/// evidence labels and the trajectories.
fn load(args: &LmeV2Args) -> anyhow::Result<Inputs> {
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
    Ok(Inputs {
        questions,
        haystack_path,
        haystacks,
        evidence,
        trajectories,
        load_seconds,
    })
}

/// The run's record: the files, the selection and what this protocol notes.
fn describe(
    args: &LmeV2Args,
    base: RunMeta,
    questions: &[LmeV2Question],
    selected: &[&LmeV2Question],
    haystack_path: &Path,
    trajectories: usize,
) -> anyhow::Result<RunMeta> {
    Ok(RunMeta {
        data_path: canonical(&args.questions),
        data_sha256: sha256_file(&args.questions)?,
        as_of_policy: "none".into(),
        as_of_description: "as_of = none (trajectories carry no dates; recall as of now)".into(),
        limit: args.limit,
        questions_filter: args.ids.clone(),
        max_questions_per_conv: None,
        questions_in_file: questions.len(),
        questions_selected: selected.len(),
        keep_data: args.run.keep_data,
        dataset_notes: dataset_notes(args, selected, haystack_path, trajectories)?,
        limitations: limitations(),
        qa: None,
        ..base
    })
}

/// The run's notes on its data: the files with their hashes, and the selection by question
/// type and by eval function.
fn dataset_notes(
    args: &LmeV2Args,
    selected: &[&LmeV2Question],
    haystack_path: &Path,
    trajectories: usize,
) -> anyhow::Result<Vec<String>> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for q in selected {
        *counts.entry(q.question_type.clone()).or_default() += 1;
    }
    let mut evals: BTreeMap<&str, usize> = BTreeMap::new();
    for q in selected {
        *evals.entry(q.eval_function.kind.name()).or_default() += 1;
    }
    Ok(vec![
        format!(
            "Trajectories: `{}` (sha256 `{}`), {} trajectories.",
            canonical(&args.trajectories),
            sha256_file(&args.trajectories)?,
            trajectories
        ),
        format!(
            "Haystacks: `{}` (sha256 `{}`), tier `{}`.",
            canonical(haystack_path),
            sha256_file(haystack_path)?,
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
    ])
}

/// What the run does not measure.
fn limitations() -> Vec<String> {
    vec![
        "No reader model: nothing here is the benchmark's accuracy. Phrase-set questions \
            report whether the reference's phrase match would accept the packed context as \
            the answer (answer phrases in context, a retrieval diagnostic); multiple choice \
            is answered by the LLM-free option scorer; LLM-judged gotchas report \
            reference-answer words in context; abstention questions report what was \
            retrievable."
            .into(),
        "Screenshots and question images are not read (the trajectories keep only their \
            references)."
            .into(),
        "The run does not resume.".into(),
    ]
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
    insert_haystack(memory, haystack, trajectories, rec)?;

    // Recall with the question (its option lines are part of the question as asked).
    let t = Instant::now();
    let recall = memory.recall(&rec.space, &q.question, &row.options)?;
    rec.recall_wall_ms = t.elapsed().as_secs_f64() * 1000.0;
    rec.hits = traj_hits(&recall);
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
        rec.choice = choice(memory, q, &context_evidence(&recall))?;
    } else if f.kind == EvalKind::LlmGotchasChecker {
        rec.open = Some(open_diagnostic(&q.question, &q.answer, &recall.context));
    }
    Ok(())
}

/// Inserts the haystack's trajectories, in order, with one `Trajectories::insert_many` call and
/// a flush (timed); ids missing from the trajectories file are listed in the record.
fn insert_haystack(
    memory: &Memory,
    haystack: &[String],
    trajectories: &HashMap<String, TrajectoryInput>,
    rec: &mut LmeV2Record,
) -> anyhow::Result<()> {
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
    let report = memory.trajectories().insert_many(&rec.space, batch)?;
    memory.flush()?;
    rec.insert.ms = t.elapsed().as_secs_f64() * 1000.0;
    rec.insert.units = report.units;
    rec.insert.vectors_computed = report.vectors_computed;
    rec.insert.vectors_cached = report.vectors_cached;
    Ok(())
}

/// The hits of a recall (ids and scores; no text).
fn traj_hits(recall: &Recall) -> Vec<TrajHit> {
    let in_ctx: HashSet<&str> = recall.context_unit_ids.iter().map(String::as_str).collect();
    recall
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
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(o.scope.kinds, Some(vec![UnitKind::Note, UnitKind::Slice]));
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
