//! The LongMemEval protocol: one fresh space per question, its haystack ingested in one
//! `ingest_sessions` call (dated, sorted by date by the loader), then the question
//! recalled once per config row.
use crate::protocol::{as_of_words, space_name, QuestionSpec, Run, RunPlan};
use crate::record::{exclusion, Evidence, IngestInfo};
use crate::{AsOfPolicy, RunArgs};
use anyhow::{bail, Context as _};
use cairn::formats::{
    load_longmemeval, sha256_file, DuplicateResolution, LmeHaystack, LmeQuestion,
};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

pub(crate) fn run(args: &RunArgs) -> anyhow::Result<()> {
    let t = Instant::now();
    let questions = load_longmemeval(&args.data)
        .with_context(|| format!("loading LongMemEval file {}", args.data.display()))?;
    let load_seconds = t.elapsed().as_secs_f64();
    let sha = sha256_file(&args.data)?;
    let selected = select(&questions, &args.questions, args.limit)?;

    // Facts about the selected haystacks, for METHODOLOGY.md.
    let (mut empty_turns, mut empty_sessions, mut dropped, mut renamed) = (0, 0, 0, 0);
    let (mut late_q, mut late_sessions, mut late_evidence) = (0, 0, 0);
    let abstention = selected.iter().filter(|q| q.is_abstention()).count();
    let no_turn_evidence = selected
        .iter()
        .filter(|q| !q.is_abstention() && q.evidence_turns().is_empty())
        .count();
    for q in &selected {
        let h = q
            .sessions()
            .with_context(|| format!("converting the haystack of question {}", q.question_id))?;
        empty_turns += h.skipped_empty_turns;
        empty_sessions += h.skipped_empty_sessions.len();
        for d in &h.duplicates {
            match d.resolution {
                DuplicateResolution::Dropped => dropped += 1,
                DuplicateResolution::Renamed(_) => renamed += 1,
            }
        }
        let qt = q.question_time()?;
        let ev = q.evidence_sessions();
        let late: Vec<_> = h
            .sessions
            .iter()
            .filter(|s| s.occurred_at.is_some_and(|t| t > qt))
            .collect();
        if !late.is_empty() {
            late_q += 1;
            late_sessions += late.len();
            late_evidence += late.iter().filter(|s| ev.contains(&s.id)).count();
        }
    }
    let dataset_notes = vec![
        format!("{} questions in the file; {} selected ({} abstention).", questions.len(), selected.len(), abstention),
        format!("Empty turns skipped by the loader: {empty_turns}; sessions left with no turn: {empty_sessions}."),
        format!("Repeated session ids in a haystack: {dropped} identical copies dropped (earliest date kept), {renamed} different copies renamed `<id>#N`."),
        format!("{late_q} selected questions have haystack sessions dated after the question ({late_sessions} sessions, {late_evidence} of them evidence sessions)."),
        format!("{no_turn_evidence} non-abstention selected questions have no `has_answer` turn: they are scored at session level only."),
    ];
    let limitations = vec![
        if args.llm.reader.is_some() {
            "QA rows: the reader answers from the packed context of each config row (LongMemEval's reading prompt, the question date as the current date, temperature 0); the judge uses the official per-type prompts. Abstention questions count in QA accuracy (judged on whether the answer declines), as LongMemEval scores them.".into()
        } else {
            "Only retrieval is measured: no reader model answers the question (pass --reader URL,MODEL for QA rows).".into()
        },
        "Empty turns are skipped (they cannot be stored); a `has_answer` turn that was empty could never be retrieved and is dropped from the evidence (listed in the question's `evidence.notes`).".into(),
        "Duplicate session ids are resolved by the loader (see the notes above); evidence refers to the resolved ids.".into(),
        "Abstention questions (`_abs`) are recalled and recorded but excluded from the aggregates; so are errored questions.".into(),
        "Each question's space is dropped after its recalls (unless --keep-data), so every recall runs against one haystack; ingest times include the text-index commit (`flush`).".into(),
        "Ingest speed depends on the embedding cache: `vectors_computed` vs `vectors_cached` say how warm it was.".into(),
        "With two config rows the question's query embedding is computed by the first recall and served from the embedding cache to the second; the row that goes first alternates from question to question. On a rerun with a warm cache every query embedding is cached.".into(),
    ];
    let plan = RunPlan {
        dataset: "longmemeval",
        sha256: sha,
        questions_in_file: questions.len(),
        selected: selected.iter().map(|q| q.question_id.clone()).collect(),
        load_seconds,
        max_questions_per_conv: None,
        as_of_description: as_of_words(args.as_of, true),
        dataset_notes,
        limitations,
    };
    let mut run = Run::start(args, plan)?;
    for (position, q) in selected.into_iter().enumerate() {
        if crate::protocol::stopped() {
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
        match result {
            Err(e) => {
                let empty = LmeHaystack {
                    sessions: Vec::new(),
                    skipped_empty_turns: 0,
                    skipped_empty_sessions: Vec::new(),
                    duplicates: Vec::new(),
                };
                let spec = spec(q, args.as_of, &empty);
                let info = IngestInfo {
                    space: space.clone(),
                    ..Default::default()
                };
                for row in &rows {
                    let r = run.error_record(&spec, row, &info, &[], &format!("ingest: {e}"));
                    run.append(&r)?;
                }
            }
            Ok((spec, info)) => {
                let mut units = HashMap::new();
                match run.ledger(&space, &spec.evidence, &mut units) {
                    Err(e) => {
                        for row in &rows {
                            let r =
                                run.error_record(&spec, row, &info, &[], &format!("ledger: {e}"));
                            run.append(&r)?;
                        }
                    }
                    Ok(ledger) => {
                        for row in &rows {
                            let r = run.recall(&spec, row, &info, &ledger);
                            run.append(&r)?;
                        }
                    }
                }
            }
        }
        run.release(&space);
        run.pb.inc(1);
    }
    run.finish()
}

/// `--questions` (in file order) then `--limit`. Unknown ids are an error.
fn select<'a>(
    questions: &'a [LmeQuestion],
    ids: &[String],
    limit: Option<usize>,
) -> anyhow::Result<Vec<&'a LmeQuestion>> {
    let wanted: HashSet<&str> = ids
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if !wanted.is_empty() {
        let known: HashSet<&str> = questions.iter().map(|q| q.question_id.as_str()).collect();
        let unknown: Vec<&str> = wanted
            .iter()
            .filter(|w| !known.contains(*w))
            .copied()
            .collect();
        if !unknown.is_empty() {
            bail!("--questions: no question with id {}", unknown.join(", "));
        }
    }
    Ok(questions
        .iter()
        .filter(|q| wanted.is_empty() || wanted.contains(q.question_id.as_str()))
        .take(limit.unwrap_or(usize::MAX))
        .collect())
}

/// The question's spec for a converted haystack: evidence restricted to what was
/// ingested, and `as_of` by policy.
fn spec(q: &LmeQuestion, policy: AsOfPolicy, h: &LmeHaystack) -> QuestionSpec {
    {
        let ingested: HashMap<&str, HashSet<&str>> = h
            .sessions
            .iter()
            .map(|s| {
                (
                    s.id.as_str(),
                    s.messages.iter().map(|m| m.id.as_str()).collect(),
                )
            })
            .collect();
        let mut notes = Vec::new();
        let mut sessions = Vec::new();
        for s in &q.answer_session_ids {
            if ingested.contains_key(s.as_str()) {
                if !sessions.contains(s) {
                    sessions.push(s.clone());
                }
            } else {
                notes.push(format!(
                    "evidence session {s:?} is not in the ingested haystack"
                ));
            }
        }
        let mut turns = Vec::new();
        for (s, t) in q.evidence_turns() {
            if ingested
                .get(s.as_str())
                .is_some_and(|m| m.contains(t.as_str()))
            {
                turns.push((s, t));
            } else {
                notes.push(format!("evidence turn {s}:{t} was not ingested (empty)"));
            }
        }
        let qt = q.question_time().ok();
        let latest = h.sessions.iter().filter_map(|s| s.occurred_at).max();
        let (as_of, as_of_note) = match (policy, qt) {
            (AsOfPolicy::None, _) | (_, None) => (None, None),
            (AsOfPolicy::Question, Some(t)) => (Some(t), None),
            (AsOfPolicy::QuestionOrLater, Some(t)) => match latest {
                Some(l) if l > t => {
                    let late: BTreeSet<&str> = h
                        .sessions
                        .iter()
                        .filter(|s| s.occurred_at.is_some_and(|d| d > t))
                        .map(|s| s.id.as_str())
                        .collect();
                    let late_ev = sessions
                        .iter()
                        .filter(|s| late.contains(s.as_str()))
                        .count();
                    (
                        Some(l),
                        Some(format!(
                            "raised from the question date {} to the latest haystack session date: {} session(s) ({} evidence) are dated after the question",
                            t.to_rfc3339(),
                            late.len(),
                            late_ev
                        )),
                    )
                }
                _ => (Some(t), None),
            },
        };
        QuestionSpec {
            id: q.question_id.clone(),
            qtype: q.question_type.clone(),
            question: q.question.clone(),
            answer: Some(q.answer.clone()),
            question_date: Some(q.question_date.clone()),
            as_of,
            as_of_note,
            exclusion: q.is_abstention().then(|| exclusion::ABSTENTION.to_string()),
            evidence: Evidence {
                sessions,
                turns,
                notes,
            },
        }
    }
}
