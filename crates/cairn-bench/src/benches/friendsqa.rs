//! `cairn bench friendsqa`: every scene streamed as group chat (a day per episode) into
//! one space, then every question recalled against the whole history; utterance- and
//! scene-level metrics per question word.
use crate::args::RunArgs;
use crate::datasets::friendsqa::specs;
use crate::peers;
use crate::protocol::retrieval::{Run, RunPlan};
use crate::records::retrieval::IngestInfo;
use crate::run::{space_name, stopped};
use anyhow::Context as _;
use cairn::formats::{friendsqa_group_days, load_friendsqa, sha256_file, FriendsHistory};
use std::collections::HashMap;
use std::time::Instant;

pub(crate) fn run(args: &RunArgs) -> anyhow::Result<()> {
    let t = Instant::now();
    let scenes = load_friendsqa(&args.data)
        .with_context(|| format!("loading FriendsQA file {}", args.data.display()))?;
    let history = friendsqa_group_days(&scenes)?;
    let load_seconds = t.elapsed().as_secs_f64();
    let sha = sha256_file(&args.data)?;
    let n_questions: usize = scenes.iter().map(|s| s.questions.len()).sum();
    let specs = specs(&scenes, &history, &args.questions, args.limit);
    let messages: usize = history.days.iter().map(|d| d.1.len()).sum();
    let plan = RunPlan {
        dataset: "friendsqa",
        sha256: sha,
        questions_in_file: n_questions,
        selected: specs.iter().map(|s| s.id.clone()).collect(),
        load_seconds,
        max_questions_per_conv: None,
        as_of_description: "as_of = none: every question is recalled against the whole history"
            .into(),
        dataset_notes: vec![
            format!(
                "{} scenes, {} episodes (one day each), {messages} utterances ingested; {} \
                    empty utterances skipped; {n_questions} questions in the file, {} selected.",
                scenes.len(),
                history.episode_days.len(),
                history.skipped_empty_utterances,
                specs.len()
            ),
            "Session level = scene (`<title>/<day>`); turn level = utterance (scene + utterance \
                id). Question types are question words (what, who, where, when, why, how, \
                other)."
                .into(),
        ],
        limitations: vec![
            if args.llm.reader.is_some() {
                "QA rows: the reader answers from the packed context of each config row (a \
                    short answer in the context's words, temperature 0); the judge is the \
                    CORRECT/WRONG judge on the first gold answer span, with token F1 beside it."
                    .into()
            } else {
                "Only retrieval is measured: no reader model answers the question, so QA \
                    accuracy is not reported."
                    .into()
            },
            "The transcript has no times: each episode is given a day and each scene a minute \
                (see the loader docs); questions name no time."
                .into(),
            "All questions share one ingest (the whole split in one space); its time is \
                reported once."
                .into(),
        ],
    };
    let mut run = Run::start(args, plan)?;
    let space = space_name("friendsqa", "all");
    run.pb.set_message("ingest (day by day)");
    run.index_peers(&space, || {
        peers::docs_of_group_messages(history.days.iter().flat_map(|(_, day)| day))
    });
    let ingest = ingest_days(&run, &space, &history).map_err(|e| e.to_string());
    let failed = IngestInfo {
        space: space.clone(),
        shared: true,
        ..Default::default()
    };
    let mut units = HashMap::new();
    for (i, spec) in specs.iter().enumerate() {
        if stopped() {
            break;
        }
        run.pb.set_message(spec.id.clone());
        let rows = run.rows_in_order(&spec.id, i);
        run.ask(spec, &rows, &ingest, &failed, &mut units)?;
        run.pb.inc(1);
    }
    if let Ok(info) = &ingest {
        run.ask_off_topic(&space, info)?;
    }
    run.release(&space);
    run.finish()
}

/// Streams the history into a fresh space a day at a time, as a group chat arrives.
fn ingest_days(
    run: &Run,
    space: &str,
    history: &FriendsHistory,
) -> Result<IngestInfo, cairn::Error> {
    let m = run.memory();
    m.forget_space(space)?;
    let t = Instant::now();
    let mut total = cairn::IngestReport::default();
    for (_, messages) in &history.days {
        total += &m.ingest_group_messages(space, run.ids.group_messages(messages.clone()))?;
    }
    m.flush()?;
    Ok(IngestInfo {
        space: space.into(),
        shared: true,
        sessions: m.stats(space)?.sessions,
        messages: total.messages_added,
        units: total.units,
        vectors_computed: total.vectors_computed,
        vectors_cached: total.vectors_cached,
        ms: t.elapsed().as_secs_f64() * 1000.0,
        skipped_empty_turns: history.skipped_empty_utterances,
    })
}
