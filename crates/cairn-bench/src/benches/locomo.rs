//! `cairn bench locomo`: one space per conversation (sample), its sessions ingested with
//! their parsed dates in one `ingest_sessions` call, then every selected question
//! recalled once per config row; turn-level (dia_id) and session-level metrics per
//! category.
use crate::args::{AsOfPolicy, LocomoArgs, RunArgs};
use crate::datasets::locomo::{notes, question_id, select, spec};
use crate::protocol::retrieval::{for_user, Run, RunPlan};
use crate::records::retrieval::IngestInfo;
use crate::run::{space_name, stopped};
use anyhow::Context as _;
use cairn::formats::{load_locomo, sha256_file, LocomoSample};
use std::collections::HashMap;
use std::time::Instant;

/// What this protocol does not measure or changes about the data.
fn limitations(with_reader: bool) -> Vec<String> {
    vec![
        if with_reader {
            "QA rows: the reader answers from the packed context of each config row (a short \
                answer in the context's words, temperature 0); the judge is the CORRECT/WRONG \
                judge of Mem0's LoCoMo evaluation, with token F1 beside it; adversarial \
                (category 5) questions are left out of QA accuracy.".into()
        } else {
            "Only retrieval is measured: no reader model answers the question, so QA accuracy \
                is not reported.".into()
        },
        "Photos are not available: a shared photo is represented by its BLIP caption appended \
            to the turn text (`[shares a photo: ...]`).".into(),
        "`observation`, `session_summary` and `event_summary` are model-generated and never ingested.".into(),
        "Category 5 (adversarial), errored and evidence-less questions are excluded from the \
            aggregates and counted.".into(),
        "All questions of a conversation share one ingest; its time is reported once per \
            conversation.".into(),
        "With two config rows the question's query embedding is computed by the first recall \
            and served from the embedding cache to the second; the row that goes first \
            alternates from question to question. On a rerun with a warm cache every query \
            embedding is cached.".into(),
    ]
}

pub(crate) fn run(args: &LocomoArgs) -> anyhow::Result<()> {
    let common = &args.common;
    let t = Instant::now();
    let samples = load_locomo(&common.data)
        .with_context(|| format!("loading LoCoMo file {}", common.data.display()))?;
    let load_seconds = t.elapsed().as_secs_f64();
    let sha = sha256_file(&common.data)?;
    let selected = select(
        &samples,
        &common.questions,
        args.max_questions_per_conv,
        common.limit,
    )?;
    let n_questions: usize = samples.iter().map(|s| s.qa.len()).sum();
    let (dataset_notes, ids) = notes(&samples, &selected);
    let plan = RunPlan {
        dataset: "locomo",
        sha256: sha,
        questions_in_file: n_questions,
        selected: ids,
        load_seconds,
        max_questions_per_conv: args.max_questions_per_conv,
        as_of_description: common.as_of.describe(false),
        dataset_notes,
        limitations: with_shared(
            limitations(common.llm.reader.is_some()),
            common.shared_space,
        ),
    };
    let mut run = Run::start(common, plan)?;
    if common.shared_space {
        return run_shared(run, common, &samples, &selected);
    }
    'samples: for (si, qis) in &selected {
        if stopped() {
            break;
        }
        let s = &samples[*si];
        let pending: Vec<usize> = qis
            .iter()
            .copied()
            .filter(|&qi| !run.pending_rows(&question_id(&s.sample_id, qi)).is_empty())
            .collect();
        if pending.is_empty() {
            continue;
        }
        run.pb.set_message(format!("{} (ingest)", s.sample_id));
        let space = space_name("locomo", &s.sample_id);
        let conv = s.sessions_input().map_err(|e| e.to_string());
        let (turn_session, as_of) = turns_and_as_of(&conv, common.as_of);
        let ingest = conv.and_then(|c| {
            run.ingest(&space, c.sessions, true, c.skipped_empty_turns)
                .map_err(|e| e.to_string())
        });
        let failed = IngestInfo {
            space: space.clone(),
            shared: true,
            ..Default::default()
        };
        let mut units = HashMap::new();
        for qi in pending {
            if stopped() {
                break 'samples;
            }
            let qid = question_id(&s.sample_id, qi);
            run.pb.set_message(qid.clone());
            let spec = spec(s, qi, &turn_session, as_of);
            let rows = run.rows_in_order(&qid, qi);
            run.ask(&spec, &rows, &ingest, &failed, &mut units)?;
            run.pb.inc(1);
        }
        if let Ok(info) = &ingest {
            run.ask_off_topic(&space, info)?;
        }
        run.release(&space);
    }
    run.finish()
}

/// What `--shared-space` changes about the protocol.
const SHARED: &str = "Shared space (`--shared-space`): every selected conversation is ingested \
    into ONE space (`locomo-shared`) before any question is asked, one `ingest_sessions` \
    call per conversation, its sessions tagged `metadata.user_id` = the conversation's sample \
    id (and their ids put under it); each question then recalls with `filter: \
    {\"user_id\": <sample id>}`, so it searches every conversation for its own. Evidence \
    session ids in the records carry the `<sample id>/` prefix.";

/// The limitations, with what `--shared-space` changes.
fn with_shared(mut l: Vec<String>, shared: bool) -> Vec<String> {
    if shared {
        l.push(SHARED.into());
    }
    l
}

/// Which session each message of a conversation is in, and the `as_of` its questions
/// recall with (the conversation's last session date, unless the policy is none).
fn turns_and_as_of(
    conv: &Result<cairn::formats::LocomoConversion, String>,
    policy: AsOfPolicy,
) -> (HashMap<String, String>, Option<cairn::Timestamp>) {
    let (turn_session, last_date) = match conv {
        Ok(c) => (
            c.sessions
                .iter()
                .flat_map(|x| x.messages.iter().map(move |m| (m.id.clone(), x.id.clone())))
                .collect::<HashMap<String, String>>(),
            c.sessions.iter().filter_map(|x| x.occurred_at).max(),
        ),
        Err(_) => (HashMap::new(), None),
    };
    let as_of = match policy {
        AsOfPolicy::None => None,
        _ => last_date,
    };
    (turn_session, as_of)
}

/// `--shared-space`: every selected conversation into one space (each under its sample id
/// as `user_id`), then every question asked with its conversation's filter.
fn run_shared(
    mut run: Run,
    common: &RunArgs,
    samples: &[LocomoSample],
    selected: &[(usize, Vec<usize>)],
) -> anyhow::Result<()> {
    let space = space_name("locomo", "shared");
    if !common.resume {
        run.memory().forget_space(&space)?;
    }
    let mut conversations = Vec::with_capacity(selected.len());
    for (si, qis) in selected {
        if stopped() {
            break;
        }
        let s = &samples[*si];
        run.pb.set_message(format!("{} (ingest)", s.sample_id));
        let conv = s.sessions_input().map_err(|e| e.to_string());
        let (turn_session, as_of) = turns_and_as_of(&conv, common.as_of);
        let ingest = conv.and_then(|c| {
            run.ingest_user(&space, &s.sample_id, c.sessions, c.skipped_empty_turns)
                .map_err(|e| e.to_string())
        });
        conversations.push((s, qis, turn_session, as_of, ingest));
    }
    let failed = IngestInfo {
        space: space.clone(),
        shared: true,
        ..Default::default()
    };
    let mut units = HashMap::new();
    'conversations: for (s, qis, turn_session, as_of, ingest) in conversations {
        for &qi in qis {
            if stopped() {
                break 'conversations;
            }
            let qid = question_id(&s.sample_id, qi);
            let rows = run.rows_in_order(&qid, qi);
            if !rows.is_empty() {
                run.pb.set_message(qid.clone());
                let spec = for_user(&s.sample_id, spec(s, qi, &turn_session, as_of));
                run.ask(&spec, &rows, &ingest, &failed, &mut units)?;
            }
            run.pb.inc(1);
        }
    }
    run.release(&space);
    run.finish()
}
