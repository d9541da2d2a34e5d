//! The LoCoMo protocol: one space per conversation (sample), its sessions ingested with
//! their parsed dates in one `ingest_sessions` call, then every selected question recalled
//! once per config row. Evidence is turn level (dia_ids) and rolled up to sessions.
use crate::protocol::{as_of_words, space_name, QuestionSpec, Run, RunPlan};
use crate::record::{exclusion, Evidence, IngestInfo};
use crate::{AsOfPolicy, LocomoArgs};
use anyhow::{bail, Context as _};
use cairn::formats::locomo::category_name;
use cairn::formats::{load_locomo, sha256_file, LocomoSample};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// The id of the `i`-th question (0-based, file order) of a sample: `<sample_id>:q<i>`.
pub fn question_id(sample_id: &str, i: usize) -> String {
    format!("{sample_id}:q{i}")
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

    let mut ids = Vec::new();
    let (mut cat5, mut dangling, mut empty_turns, mut no_evidence) = (0, 0, 0, 0);
    for (si, qis) in &selected {
        let s = &samples[*si];
        let dia = s.dia_ids();
        if let Ok(c) = s.sessions_input() {
            empty_turns += c.skipped_empty_turns;
        }
        for &qi in qis {
            let qa = &s.qa[qi];
            ids.push(question_id(&s.sample_id, qi));
            cat5 += usize::from(qa.is_adversarial());
            dangling += qa
                .evidence
                .iter()
                .filter(|e| !dia.contains(e.as_str()))
                .count();
            no_evidence += usize::from(!qa.is_adversarial() && qa.evidence.is_empty());
        }
    }
    let dataset_notes = vec![
        format!(
            "{} conversations and {n_questions} questions in the file; {} questions selected from {} conversation(s); question ids are `<sample_id>:q<index in qa>`.",
            samples.len(),
            ids.len(),
            selected.len()
        ),
        format!("Selected adversarial (category 5) questions: {cat5}; recalled and recorded, excluded from the aggregates."),
        format!("Evidence ids naming no turn of the conversation (dangling): {dangling}; dropped from turn-level evidence (their session still counts at session level when it exists)."),
        format!("Selected questions of categories 1-4 without any evidence id: {no_evidence}."),
        format!("Turns without text or photo caption skipped by the loader (selected conversations): {empty_turns}."),
    ];
    let limitations = vec![
        "Only retrieval is measured: no reader model answers the question, so QA accuracy is not reported.".into(),
        "Photos are not available: a shared photo is represented by its BLIP caption appended to the turn text (`[shares a photo: ...]`).".into(),
        "`observation`, `session_summary` and `event_summary` are model-generated and never ingested.".into(),
        "Category 5 (adversarial), errored and evidence-less questions are excluded from the aggregates and counted.".into(),
        "All questions of a conversation share one ingest; its time is reported once per conversation.".into(),
        "With two config rows the question's query embedding is computed by the first recall and served from the embedding cache to the second; the row that goes first alternates from question to question. On a rerun with a warm cache every query embedding is cached.".into(),
    ];
    let plan = RunPlan {
        dataset: "locomo",
        sha256: sha,
        questions_in_file: n_questions,
        selected: ids,
        load_seconds,
        max_questions_per_conv: args.max_questions_per_conv,
        as_of_description: as_of_words(common.as_of, false),
        dataset_notes,
        limitations,
    };
    let mut run = Run::start(common, plan)?;
    'samples: for (si, qis) in &selected {
        if crate::protocol::stopped() {
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
        let (turn_session, last_date) = match &conv {
            Ok(c) => (
                c.sessions
                    .iter()
                    .flat_map(|x| x.messages.iter().map(move |m| (m.id.clone(), x.id.clone())))
                    .collect::<HashMap<String, String>>(),
                c.sessions.iter().filter_map(|x| x.occurred_at).max(),
            ),
            Err(_) => (HashMap::new(), None),
        };
        let as_of = match common.as_of {
            AsOfPolicy::None => None,
            _ => last_date,
        };
        let ingest = conv.and_then(|c| {
            run.ingest(&space, c.sessions, true, c.skipped_empty_turns)
                .map_err(|e| e.to_string())
        });
        let mut units = HashMap::new();
        for qi in pending {
            if crate::protocol::stopped() {
                break 'samples;
            }
            let qid = question_id(&s.sample_id, qi);
            run.pb.set_message(qid.clone());
            let spec = spec(s, qi, &turn_session, as_of);
            let rows = run.rows_in_order(&qid, qi);
            match &ingest {
                Err(e) => {
                    let info = IngestInfo {
                        space: space.clone(),
                        shared: true,
                        ..Default::default()
                    };
                    for row in &rows {
                        let r = run.error_record(&spec, row, &info, &[], &format!("ingest: {e}"));
                        run.append(&r)?;
                    }
                }
                Ok(info) => match run.ledger(&space, &spec.evidence, &mut units) {
                    Err(e) => {
                        for row in &rows {
                            let r =
                                run.error_record(&spec, row, info, &[], &format!("ledger: {e}"));
                            run.append(&r)?;
                        }
                    }
                    Ok(ledger) => {
                        for row in &rows {
                            let r = run.recall(&spec, row, info, &ledger);
                            run.append(&r)?;
                        }
                    }
                },
            }
            run.pb.inc(1);
        }
        run.release(&space);
    }
    run.finish()
}

/// Selected `(sample index, question indices)`: `--questions` names samples (all their
/// questions) or single questions (`<sample_id>:q<i>`); then at most
/// `--max-questions-per-conv` per conversation; then `--limit` questions overall.
fn select(
    samples: &[LocomoSample],
    ids: &[String],
    per_conv: Option<usize>,
    limit: Option<usize>,
) -> anyhow::Result<Vec<(usize, Vec<usize>)>> {
    let wanted: HashSet<&str> = ids
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    let mut matched: HashSet<&str> = HashSet::new();
    let mut left = limit.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    for (si, s) in samples.iter().enumerate() {
        let whole = wanted.is_empty() || wanted.contains(s.sample_id.as_str());
        if whole && !wanted.is_empty() {
            matched.insert(s.sample_id.as_str());
        }
        let mut qis = Vec::new();
        for qi in 0..s.qa.len() {
            let id = question_id(&s.sample_id, qi);
            if whole || wanted.contains(id.as_str()) {
                if let Some(w) = wanted.get(id.as_str()) {
                    matched.insert(w);
                }
                qis.push(qi);
            }
        }
        qis.truncate(per_conv.unwrap_or(usize::MAX).min(left));
        left -= qis.len();
        if !qis.is_empty() {
            out.push((si, qis));
        }
    }
    let unknown: Vec<&str> = wanted.difference(&matched).copied().collect();
    if !unknown.is_empty() {
        bail!(
            "--questions: no conversation or question {} (use a sample id like conv-26 or a question id like conv-26:q0)",
            unknown.join(", ")
        );
    }
    Ok(out)
}

fn spec(
    s: &LocomoSample,
    qi: usize,
    turn_session: &HashMap<String, String>,
    as_of: Option<cairn::Timestamp>,
) -> QuestionSpec {
    let qa = &s.qa[qi];
    let ingested_sessions: HashSet<&str> = turn_session.values().map(String::as_str).collect();
    let mut notes = Vec::new();
    let mut turns = Vec::new();
    for e in &qa.evidence {
        match turn_session.get(e) {
            Some(sid) => turns.push((sid.clone(), e.clone())),
            None => notes.push(format!("evidence {e} names no ingested turn")),
        }
    }
    let mut sessions = Vec::new();
    for sid in qa.evidence_sessions() {
        if ingested_sessions.contains(sid.as_str()) {
            sessions.push(sid);
        } else {
            notes.push(format!("evidence session {sid} was not ingested"));
        }
    }
    if qa.evidence_raw.len() != qa.evidence.len() {
        notes.push(format!("raw evidence {:?}", qa.evidence_raw));
    }
    QuestionSpec {
        id: question_id(&s.sample_id, qi),
        qtype: format!("{}-{}", qa.category, category_name(qa.category)),
        question: qa.question.clone(),
        answer: qa.answer.clone().or_else(|| qa.adversarial_answer.clone()),
        question_date: None,
        as_of,
        as_of_note: None,
        exclusion: qa
            .is_adversarial()
            .then(|| exclusion::ADVERSARIAL.to_string()),
        evidence: Evidence {
            sessions,
            turns,
            notes,
        },
    }
}
