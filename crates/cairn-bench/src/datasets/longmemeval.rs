//! LongMemEval as the retrieval protocol takes it: questions selected by id, each
//! question's haystack converted (dated, sorted by date, empty turns skipped), its
//! evidence restricted to what was ingested, and `as_of` by policy.
use crate::args::AsOfPolicy;
use crate::protocol::retrieval::QuestionSpec;
use crate::records::retrieval::Evidence;
use crate::scoring::exclusion;
use anyhow::Context as _;
use cairn::formats::{DuplicateResolution, LmeHaystack, LmeQuestion};
use std::collections::{BTreeSet, HashMap, HashSet};

/// `--questions` (in file order) then `--limit`. Unknown ids are an error.
pub fn select<'a>(
    questions: &'a [LmeQuestion],
    ids: &[String],
    limit: Option<usize>,
) -> anyhow::Result<Vec<&'a LmeQuestion>> {
    super::select_by_id(questions, |q| &q.question_id, ids, limit, "--questions")
}

/// Facts about the selected haystacks, for METHODOLOGY.md.
pub fn notes(in_file: usize, selected: &[&LmeQuestion]) -> anyhow::Result<Vec<String>> {
    let (mut empty_turns, mut empty_sessions, mut dropped, mut renamed) = (0, 0, 0, 0);
    let (mut late_q, mut late_sessions, mut late_evidence) = (0, 0, 0);
    let abstention = selected.iter().filter(|q| q.is_abstention()).count();
    let no_turn_evidence = selected
        .iter()
        .filter(|q| !q.is_abstention() && q.evidence_turns().is_empty())
        .count();
    for q in selected {
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
    Ok(vec![
        format!(
            "{in_file} questions in the file; {} selected ({} abstention).",
            selected.len(),
            abstention
        ),
        format!(
            "Empty turns skipped by the loader: {empty_turns}; sessions left with no turn: \
            {empty_sessions}."
        ),
        format!(
            "Repeated session ids in a haystack: {dropped} identical copies dropped \
            (earliest date kept), {renamed} different copies renamed `<id>#N`."
        ),
        format!(
            "{late_q} selected questions have haystack sessions dated after the question \
            ({late_sessions} sessions, {late_evidence} of them evidence sessions)."
        ),
        format!(
            "{no_turn_evidence} non-abstention selected questions have no `has_answer` \
            turn: they are scored at session level only."
        ),
    ])
}

/// The question's spec for a converted haystack: evidence restricted to what was
/// ingested, and `as_of` by policy.
pub fn spec(q: &LmeQuestion, policy: AsOfPolicy, h: &LmeHaystack) -> QuestionSpec {
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
    let (as_of, as_of_note) = as_of(policy, q.question_time().ok(), h, &sessions);
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
        filter: None,
    }
}
/// The question's `as_of` under the policy, and a note when the policy raised it past the
/// question's own date (to the latest haystack session, saying how many sessions and
/// evidence sessions are dated after the question).
fn as_of(
    policy: AsOfPolicy,
    qt: Option<cairn::Timestamp>,
    h: &LmeHaystack,
    sessions: &[String],
) -> (Option<cairn::Timestamp>, Option<String>) {
    let latest = h.sessions.iter().filter_map(|s| s.occurred_at).max();
    match (policy, qt) {
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
                        "raised from the question date {} to the latest haystack session \
                                date: {} session(s) ({} evidence) are dated after the question",
                        t.to_rfc3339(),
                        late.len(),
                        late_ev
                    )),
                )
            }
            _ => (Some(t), None),
        },
    }
}
