//! The FriendsQA protocol: every scene of the file streamed through the group-chat path
//! into one space (one day per episode, a group conversation per scene, a day at a time),
//! then every question recalled against the whole history. Evidence is utterance level
//! (scene + utterance id: the turn level of the report) and rolled up to scenes (the
//! session level). Questions are grouped by their question word.
use crate::protocol::{space_name, QuestionSpec, Run, RunPlan};
use crate::record::{Evidence, IngestInfo};
use crate::RunArgs;
use anyhow::Context as _;
use cairn::formats::{friendsqa_group_days, load_friendsqa, sha256_file, FriendsHistory};
use std::collections::HashMap;
use std::time::Instant;

/// The question word a question is grouped by: the first of what, who, where, when,
/// why, how (which, whose and whom count as what and who), else `other`.
pub fn question_word(question: &str) -> &'static str {
    for w in question
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
    {
        match w.as_str() {
            "what" | "which" => return "what",
            "who" | "whom" | "whose" => return "who",
            "where" => return "where",
            "when" => return "when",
            "why" => return "why",
            "how" => return "how",
            _ => {}
        }
    }
    "other"
}

pub(crate) fn run(args: &RunArgs) -> anyhow::Result<()> {
    let t = Instant::now();
    let scenes = load_friendsqa(&args.data)
        .with_context(|| format!("loading FriendsQA file {}", args.data.display()))?;
    let history = friendsqa_group_days(&scenes)?;
    let load_seconds = t.elapsed().as_secs_f64();
    let sha = sha256_file(&args.data)?;
    let n_questions: usize = scenes.iter().map(|s| s.questions.len()).sum();
    let wanted: Vec<&str> = args.questions.iter().map(|s| s.trim()).collect();
    let mut specs: Vec<QuestionSpec> = Vec::new();
    for scene in &scenes {
        let Some(session) = history.session_of(scene) else {
            continue;
        };
        for q in &scene.questions {
            if !wanted.is_empty() && !wanted.contains(&q.id.as_str()) {
                continue;
            }
            specs.push(QuestionSpec {
                id: q.id.clone(),
                qtype: question_word(&q.question).to_string(),
                question: q.question.clone(),
                answer: q.answers.first().map(|a| a.answer_text.clone()),
                question_date: None,
                as_of: None,
                as_of_note: None,
                exclusion: None,
                evidence: Evidence {
                    sessions: vec![session.clone()],
                    turns: q
                        .evidence_utterances()
                        .into_iter()
                        .map(|u| (session.clone(), u))
                        .collect(),
                    notes: Vec::new(),
                },
            });
        }
    }
    specs.truncate(args.limit.unwrap_or(usize::MAX));
    let messages: usize = history.days.iter().map(|d| d.1.len()).sum();
    let plan = RunPlan {
        dataset: "friendsqa",
        sha256: sha,
        questions_in_file: n_questions,
        selected: specs.iter().map(|s| s.id.clone()).collect(),
        load_seconds,
        max_questions_per_conv: None,
        as_of_description: "as_of = none: every question is recalled against the whole history".into(),
        dataset_notes: vec![
            format!(
                "{} scenes, {} episodes (one day each), {messages} utterances ingested; {} empty utterances skipped; {n_questions} questions in the file, {} selected.",
                scenes.len(),
                history.episode_days.len(),
                history.skipped_empty_utterances,
                specs.len()
            ),
            "Session level = scene (`<title>/<day>`); turn level = utterance (scene + utterance id). Question types are question words (what, who, where, when, why, how, other).".into(),
        ],
        limitations: vec![
            "Only retrieval is measured: no reader model answers the question, so QA accuracy is not reported.".into(),
            "The transcript has no times: each episode is given a day and each scene a minute (see the loader docs); questions name no time.".into(),
            "All questions share one ingest (the whole split in one space); its time is reported once.".into(),
        ],
    };
    let mut run = Run::start(args, plan)?;
    let space = space_name("friendsqa", "all");
    run.pb.set_message("ingest (day by day)");
    let ingest = ingest_days(&run, &space, &history).map_err(|e| e.to_string());
    let mut units = HashMap::new();
    for (i, spec) in specs.iter().enumerate() {
        if crate::protocol::stopped() {
            break;
        }
        run.pb.set_message(spec.id.clone());
        let rows = run.rows_in_order(&spec.id, i);
        let records = match &ingest {
            Err(e) => rows
                .iter()
                .map(|row| {
                    let info = IngestInfo {
                        space: space.clone(),
                        shared: true,
                        ..Default::default()
                    };
                    run.error_record(spec, row, &info, &[], &format!("ingest: {e}"))
                })
                .collect(),
            Ok(info) => match run.ledger(&space, &spec.evidence, &mut units) {
                Err(e) => rows
                    .iter()
                    .map(|row| run.error_record(spec, row, info, &[], &format!("ledger: {e}")))
                    .collect(),
                Ok(ledger) => rows
                    .iter()
                    .map(|row| run.recall(spec, row, info, &ledger))
                    .collect::<Vec<_>>(),
            },
        };
        for r in &records {
            run.append(r)?;
        }
        run.pb.inc(1);
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
        total += &m.ingest_group_messages(space, messages.clone())?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_group_by_their_first_question_word() {
        assert_eq!(question_word("Who is Monica dating ?"), "who");
        assert_eq!(question_word("Whose apartment is it?"), "who");
        assert_eq!(question_word("In which cafe do they meet?"), "what");
        assert_eq!(question_word("Ross goes where after work?"), "where");
        assert_eq!(question_word("Name the cat."), "other");
    }
}
