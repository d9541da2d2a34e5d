//! LoCoMo as the retrieval protocol takes it: questions selected by conversation or id,
//! their dia_id evidence mapped to the sessions holding those turns, categories as
//! question types, and category 5 (adversarial) excluded.
use crate::protocol::retrieval::QuestionSpec;
use crate::records::retrieval::Evidence;
use crate::scoring::exclusion;
use anyhow::bail;
use cairn::formats::locomo::category_name;
use cairn::formats::LocomoSample;
use std::collections::{HashMap, HashSet};

/// The id of the `i`-th question (0-based, file order) of a sample: `<sample_id>:q<i>`.
pub fn question_id(sample_id: &str, i: usize) -> String {
    format!("{sample_id}:q{i}")
}

/// Facts about the selected questions, for METHODOLOGY.md; also the selected ids, in run
/// order.
pub fn notes(
    samples: &[LocomoSample],
    selected: &[(usize, Vec<usize>)],
) -> (Vec<String>, Vec<String>) {
    let n_questions: usize = samples.iter().map(|s| s.qa.len()).sum();
    let mut ids = Vec::new();
    let (mut cat5, mut dangling, mut empty_turns, mut no_evidence) = (0, 0, 0, 0);
    for (si, qis) in selected {
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
    let notes = vec![
        format!(
            "{} conversations and {n_questions} questions in the file; {} questions selected \
                from {} conversation(s); question ids are `<sample_id>:q<index in qa>`.",
            samples.len(),
            ids.len(),
            selected.len()
        ),
        format!(
            "Selected adversarial (category 5) questions: {cat5}; recalled and recorded, \
            excluded from the aggregates."
        ),
        format!(
            "Evidence ids naming no turn of the conversation (dangling): {dangling}; \
            dropped from turn-level evidence (their session still counts at session level when \
            it exists)."
        ),
        format!("Selected questions of categories 1-4 without any evidence id: {no_evidence}."),
        format!(
            "Turns without text or photo caption skipped by the loader (selected \
            conversations): {empty_turns}."
        ),
    ];
    (notes, ids)
}

/// Selected `(sample index, question indices)`: `--questions` names samples (all their
/// questions) or single questions (`<sample_id>:q<i>`); then at most
/// `--max-questions-per-conv` per conversation; then `--limit` questions overall.
pub fn select(
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
            "--questions: no conversation or question {} (use a sample id like conv-26 or a \
                question id like conv-26:q0)",
            unknown.join(", ")
        );
    }
    Ok(out)
}

pub fn spec(
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
        filter: None,
    }
}
