//! Judging a recall: its hits against the question's evidence, the question's scores at
//! each level, and what the context shows twice.
use super::plan::QuestionSpec;
use crate::records::retrieval::{LedgerEntry, LevelScores, RankedHit};
use crate::scoring::exclusion;
use crate::scoring::retrieval::{
    judge_session_ranking, judge_sessions, judge_turns, score, HitRef,
};
use std::collections::{HashMap, HashSet};

/// Why a scored question is left out of the aggregates: its own exclusion, or no evidence
/// at any level.
pub(super) fn exclusion_of(q: &QuestionSpec, metrics: &LevelScores) -> Option<String> {
    q.exclusion.clone().or_else(|| {
        (metrics.session.is_none() && metrics.turn.is_none())
            .then(|| exclusion::NO_EVIDENCE.to_string())
    })
}

/// Messages the context shows in more than one hit's entry (the turns of each hit the
/// context shows, counted once per hit).
pub(super) fn messages_twice(hits: &[RankedHit]) -> usize {
    let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
    for h in hits {
        let Some(s) = h.session_id.as_deref() else {
            continue;
        };
        let shown: HashSet<&str> = h.context_turn_ids().iter().map(String::as_str).collect();
        for t in shown {
            *seen.entry((s, t)).or_default() += 1;
        }
    }
    seen.values().filter(|&&n| n > 1).count()
}

/// The hits of a recall (then its extra hits) judged against the question's evidence, and
/// the question's scores
/// at each level (`None` where it has no evidence at that level); `ledger` gives the units
/// available for NDCG's ideal ranking.
pub(super) fn judged(
    recall: &cairn::Recall,
    q: &QuestionSpec,
    ledger: &[LedgerEntry],
) -> (Vec<RankedHit>, LevelScores) {
    let in_ctx: HashSet<&str> = recall.context_unit_ids.iter().map(String::as_str).collect();
    let hits: Vec<RankedHit> = recall
        .hits
        .iter()
        .chain(&recall.extra_hits)
        .enumerate()
        .map(|(i, h)| RankedHit {
            rank: i + 1,
            unit_id: h.unit_id.clone(),
            kind: h.kind,
            session_id: h.session_id.clone(),
            turn_ids: h.turn_ids.clone(),
            score: h.score,
            in_context: in_ctx.contains(h.unit_id.as_str()),
            context_turn_ids: (!h.parts.is_empty()).then(|| {
                h.parts
                    .iter()
                    .filter(|p| in_ctx.contains(p.unit_id.as_str()))
                    .flat_map(|p| p.turn_ids.iter().cloned())
                    .collect()
            }),
            relevance: h.relevance,
            session_relevant: false,
            turn_relevant: false,
            features: h
                .explain
                .as_ref()
                .map(|e| e.features.clone())
                .filter(|f| !f.is_empty()),
        })
        .collect();
    judge(hits, q, ledger)
}

/// Ranked hits (the memory's or a peer's) judged against the question's evidence.
pub(super) fn judge(
    mut hits: Vec<RankedHit>,
    q: &QuestionSpec,
    ledger: &[LedgerEntry],
) -> (Vec<RankedHit>, LevelScores) {
    let js = judge_sessions(&hits, &q.evidence.sessions);
    let jt = judge_turns(&hits, &q.evidence.turns);
    for ((h, s), t) in hits.iter_mut().zip(&js).zip(&jt) {
        h.session_relevant = s.relevant();
        h.turn_relevant = t.relevant();
    }
    let avail_s: usize = ledger
        .iter()
        .filter(|l| q.evidence.sessions.contains(&l.session_id))
        .map(|l| l.units)
        .sum();
    let avail_t: usize = ledger.iter().map(|l| l.evidence_turn_units).sum();
    let n_sessions = q.evidence.sessions.len();
    let metrics = LevelScores {
        session: (n_sessions > 0).then(|| score(&js, n_sessions, avail_s)),
        turn: (!q.evidence.turns.is_empty()).then(|| score(&jt, q.evidence.turns.len(), avail_t)),
        session_ranking: (n_sessions > 0).then(|| {
            let ranked = judge_session_ranking(&hits, &q.evidence.sessions);
            score(&ranked, n_sessions, n_sessions)
        }),
    };
    (hits, metrics)
}
