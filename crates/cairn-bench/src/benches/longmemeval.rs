//! `cairn bench longmemeval`: one fresh space per question, its haystack ingested in one
//! `ingest_sessions` call (dated, sorted by date by the loader), then the question
//! recalled once per config row; session- and turn-level retrieval metrics.
use crate::args::RunArgs;
use crate::datasets::longmemeval::{notes, select, spec};
use crate::protocol::retrieval::{for_user, Run, RunPlan};
use crate::records::retrieval::IngestInfo;
use crate::run::{space_name, stopped};
use anyhow::Context as _;
use cairn::formats::{load_longmemeval, sha256_file, LmeHaystack, LmeQuestion};
use std::collections::HashMap;
use std::time::Instant;

/// What this protocol does not measure or changes about the data.
fn limitations(with_reader: bool) -> Vec<String> {
    vec![
        if with_reader {
            "QA rows: the reader answers from the packed context of each config row \
                (LongMemEval's reading prompt, the question date as the current date, \
                temperature 0); the judge uses the official per-type prompts. Abstention \
                questions count in QA accuracy (judged on whether the answer declines), as \
                LongMemEval scores them."
                .into()
        } else {
            "Only retrieval is measured: no reader model answers the question (pass --reader \
                URL,MODEL for QA rows)."
                .into()
        },
        "Empty turns are skipped (they cannot be stored); a `has_answer` turn that was empty \
            could never be retrieved and is dropped from the evidence (listed in the question's \
            `evidence.notes`)."
            .into(),
        "Duplicate session ids are resolved by the loader (see the notes above); evidence \
            refers to the resolved ids."
            .into(),
        "Abstention questions (`_abs`) are recalled and recorded but excluded from the \
            aggregates; so are errored questions."
            .into(),
        "Each question's space is dropped after its recalls (unless --keep-data), so every \
            recall runs against one haystack; ingest times include the text-index commit \
            (`flush`)."
            .into(),
        "Ingest speed depends on the embedding cache: `vectors_computed` vs `vectors_cached` \
            say how warm it was."
            .into(),
        "With two config rows the question's query embedding is computed by the first recall \
            and served from the embedding cache to the second; the row that goes first \
            alternates from question to question. On a rerun with a warm cache every query \
            embedding is cached."
            .into(),
    ]
}

/// What `--shared-space` changes about the protocol.
const SHARED: &str = "Shared space (`--shared-space`): every selected question's haystack is \
    ingested into ONE space (`lme-shared`) before any question is asked, one \
    `ingest_sessions` call per question, its sessions tagged `metadata.user_id` = the \
    question id (and their ids put under it: two haystacks may hold the same session); each \
    question then recalls with `filter: {\"user_id\": <question id>}`, so it searches a \
    space of every question's history for its own. Evidence session ids in the records \
    carry the `<question id>/` prefix.";

pub(crate) fn run(args: &RunArgs) -> anyhow::Result<()> {
    let t = Instant::now();
    let questions = load_longmemeval(&args.data)
        .with_context(|| format!("loading LongMemEval file {}", args.data.display()))?;
    let load_seconds = t.elapsed().as_secs_f64();
    let sha = sha256_file(&args.data)?;
    let selected = select(&questions, &args.questions, args.limit)?;
    let plan = RunPlan {
        dataset: "longmemeval",
        sha256: sha,
        questions_in_file: questions.len(),
        selected: selected.iter().map(|q| q.question_id.clone()).collect(),
        load_seconds,
        max_questions_per_conv: None,
        as_of_description: args.as_of.describe(true),
        dataset_notes: notes(questions.len(), &selected)?,
        limitations: with_shared(limitations(args.llm.reader.is_some()), args.shared_space),
    };
    let mut run = Run::start(args, plan)?;
    if args.shared_space {
        return run_shared(run, args, selected);
    }
    for (position, q) in selected.into_iter().enumerate() {
        if stopped() {
            break;
        }
        let rows = run.rows_in_order(&q.question_id, position);
        if rows.is_empty() {
            continue;
        }
        run.pb.set_message(q.question_id.clone());
        let space = space_name("lme", &q.question_id);
        let result = q.sessions().map_err(|e| e.to_string()).and_then(|h| {
            let spec = spec(q, args.as_of, &h);
            run.ingest(&space, h.sessions, false, h.skipped_empty_turns)
                .map(|info| (spec, info))
                .map_err(|e| e.to_string())
        });
        // A question whose haystack could not be ingested is recorded against an empty
        // one (every row an error record).
        let (spec, ingest) = match result {
            Ok((spec, info)) => (spec, Ok(info)),
            Err(e) => (spec(q, args.as_of, &empty()), Err(e)),
        };
        let failed = IngestInfo {
            space: space.clone(),
            ..Default::default()
        };
        run.ask(&spec, &rows, &ingest, &failed, &mut HashMap::new())?;
        if let Ok(info) = &ingest {
            run.ask_off_topic(&space, info)?;
        }
        run.release(&space);
        run.pb.inc(1);
    }
    run.finish()
}

fn empty() -> LmeHaystack {
    LmeHaystack {
        sessions: Vec::new(),
        skipped_empty_turns: 0,
        skipped_empty_sessions: Vec::new(),
        duplicates: Vec::new(),
    }
}

/// The limitations, with what `--shared-space` changes.
fn with_shared(mut l: Vec<String>, shared: bool) -> Vec<String> {
    if shared {
        l.retain(|x| !x.starts_with("Each question's space is dropped"));
        l.push(SHARED.into());
    }
    l
}

/// `--shared-space`: every selected question's haystack into one space (each under its
/// question id as `user_id`), then every question asked with its user's filter. Every
/// haystack is ingested, done questions' too (a resumed run's space is then whole again;
/// sessions already stored are left as they are).
fn run_shared(mut run: Run, args: &RunArgs, selected: Vec<&LmeQuestion>) -> anyhow::Result<()> {
    let space = space_name("lme", "shared");
    if !args.resume {
        run.memory().forget_space(&space)?;
    }
    let mut asked = Vec::with_capacity(selected.len());
    for (position, q) in selected.into_iter().enumerate() {
        if stopped() {
            break;
        }
        run.pb.set_message(format!("{} (ingest)", q.question_id));
        let user = &q.question_id;
        let result = q.sessions().map_err(|e| e.to_string()).and_then(|h| {
            let spec = for_user(user, spec(q, args.as_of, &h));
            run.ingest_user(&space, user, h.sessions, h.skipped_empty_turns)
                .map(|info| (spec, info))
                .map_err(|e| e.to_string())
        });
        let (spec, ingest) = match result {
            Ok((spec, info)) => (spec, Ok(info)),
            Err(e) => (for_user(user, spec(q, args.as_of, &empty())), Err(e)),
        };
        asked.push((run.rows_in_order(user, position), spec, ingest));
    }
    let failed = IngestInfo {
        space: space.clone(),
        shared: true,
        ..Default::default()
    };
    for (rows, spec, ingest) in asked {
        if stopped() {
            break;
        }
        if !rows.is_empty() {
            run.pb.set_message(spec.id.clone());
            run.ask(&spec, &rows, &ingest, &failed, &mut HashMap::new())?;
        }
        run.pb.inc(1);
    }
    run.release(&space);
    run.finish()
}
