//! What is true now: a question about the asker's present is answered by the newest of
//! what recall found about it. A person's state changes ("I moved to Lisbon", "actually
//! I gave up coffee", a complaint about the new landlord in Bristol), and however the
//! change was worded, the statement of it is newer than the one it replaces. Ranking
//! alone put the older statement first as often as not: it was usually worded closer to
//! the question, and a pattern had read it into a fact. So among the first [`WINDOW`]
//! places, of those close to the best in meaning (a cosine with the question at least
//! `RankConfig::newest_ratio` of the best one) and about the same thing (as close to
//! the place nearest the question, its anchor, as the question is), the newest goes
//! first and the others keep their order. Rank and time, not phrases: it holds for statements no pattern
//! read. A place that asks rather than states, or whose fact a newer version replaced,
//! is no candidate. A question that names a period or asks in the past tense ("where
//! did I live?") keeps its ranking; one asked `as_of` a time sees only what was said by
//! then, so the newest it sees is the value of that time.
use crate::query::{Focus, QueryAnalysis};
use crate::rank::{RankConfig, Ranked};
use cairn_core::explain::{Op, Step};
use cairn_core::Timestamp;

/// Places looked at for a newer statement: a changed value is often worded unlike the
/// question ("left Acme for Globex" to "where do I work?") and ranks a few places down.
pub const WINDOW: usize = 10;

/// Auxiliaries that put a question in the past ("did", "was", "used to"): it asks for
/// the value of its time, not the current one. Closed-class grammar words, not topics.
const PAST: &[&str] = &[
    "did", "didn't", "didnt", "was", "wasn't", "wasnt", "were", "weren't", "werent", "had",
    "hadn't", "hadnt", "used",
];

/// Whether a question asks about the asker's present: about themself ("where do I
/// live?") or a request for advice (which depends on their present tastes), naming no
/// period and no past-tense auxiliary. A question about someone else ("where does my
/// brother live?", "where does Jess live?") is not one: the newest place close to it in
/// meaning is as often about the asker ("I'm flying out to visit him") as about them.
pub fn asks_present(query: &str, analysis: &QueryAnalysis) -> bool {
    (analysis.focus == Some(Focus::Me) || analysis.request.is_some())
        && analysis.time.is_none()
        && !query
            .split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .any(|w| PAST.contains(&w.to_lowercase().as_str()))
}

/// Whether a place states something rather than asks: its best unit's key (what it is
/// about: the user's side of a round) is not mostly questions. A newer request ("can
/// you recommend a weekend activity?") is close in meaning to the question, and says
/// nothing of what is true. Nor does a place whose fact a newer version replaced (its
/// text carries the note): the fact's chain already knows it is not current.
pub(crate) fn states(r: &Ranked) -> bool {
    let best = r.parts.first().map_or(&r.unit, |p| &p.unit);
    crate::rank::asking_share(&best.key) < 0.5 && !crate::facts::is_marked_superseded(&r.unit.text)
}

/// When a place was said: its newest unit (a place joins units of one conversation).
fn said_at(r: &Ranked) -> Option<Timestamp> {
    std::iter::once(&r.unit)
        .chain(r.parts.iter().map(|p| &p.unit))
        .map(|u| u.occurred_at.unwrap_or(u.recorded_at))
        .max()
}

/// `places` (best first) with the newest of those close to the best in meaning moved
/// first, taking the first's score, for a question about the present (see the module
/// doc). `relevance` is a place's cosine with the question (`None`: no vector to judge
/// by); the ranked score is not the measure, as the boosts a parsed fact gets would let
/// the statement a pattern read outweigh the newer one no pattern read. `same_thing`
/// says whether a place is about what the place closest to the question is about: in a
/// long history many places are as close to a question as half the best, about other
/// things ("plan my commute" to "what speed is my new internet plan?").
pub fn newest_first(
    mut places: Vec<Ranked>,
    present: bool,
    cfg: &RankConfig,
    relevance: impl Fn(&Ranked) -> Option<f32>,
    same_thing: impl Fn(&Ranked) -> bool,
) -> Vec<Ranked> {
    let Some(first) = places.first().map(|r| r.score) else {
        return places;
    };
    if !present || cfg.newest_ratio <= 0.0 {
        return places;
    }
    let window: Vec<(usize, f32)> = places
        .iter()
        .take(WINDOW)
        .enumerate()
        .filter_map(|(i, r)| Some((i, relevance(r)?)))
        .collect();
    let Some(best) = window.iter().map(|&(_, c)| c).reduce(f32::max) else {
        return places;
    };
    if best <= 0.0 {
        return places;
    }
    let close = best * cfg.newest_ratio;
    let newest = window
        .iter()
        .filter(|&&(i, c)| {
            // The first place is measured against, not judged: a later one moves up only
            // when it is newer.
            c >= close && states(&places[i]) && (i == 0 || same_thing(&places[i]))
        })
        .filter_map(|&(i, _)| Some((said_at(&places[i])?, i)))
        // The earliest-ranked of equally new places.
        .max_by_key(|&(t, i)| (t, std::cmp::Reverse(i)))
        .map(|(_, i)| i);
    if let Some(i) = newest.filter(|&i| i > 0) {
        let mut r = places.remove(i);
        r.score = first;
        r.record(Step::NewestPlacement, Op::Set, first, || {
            "the newest statement among the places close to the best in meaning, for a question about the present".into()
        });
        places.insert(0, r);
    }
    places
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::analyze_query;
    use cairn_core::{Provenance, SpaceId, Unit, UnitKind};
    use chrono::{TimeZone, Utc};

    fn place(id: &str, score: f32, day: u32) -> Ranked {
        let at = Utc.with_ymd_and_hms(2025, 1, day, 12, 0, 0).unwrap();
        let unit = Unit {
            id: id.into(),
            space: SpaceId::new("t").unwrap(),
            kind: UnitKind::Turn,
            text: id.into(),
            key: id.into(),
            embed_text: None,
            provenance: Provenance::default(),
            part_of: None,
            occurred_at: Some(at),
            recorded_at: at,
            detail: None,
        };
        Ranked {
            unit,
            score,
            why: None,
            parts: Vec::new(),
            more: Vec::new(),
        }
    }

    /// The tests' places are as close in meaning as their scores say.
    fn cosine(r: &Ranked) -> Option<f32> {
        Some(r.score)
    }

    fn ids(r: &[Ranked]) -> Vec<&str> {
        r.iter().map(|r| r.unit.id.as_str()).collect()
    }

    #[test]
    fn the_newest_close_place_goes_first_for_a_present_question() {
        let cfg = RankConfig::default();
        let places = vec![
            place("old", 1.0, 3),
            place("new", 0.7, 20),
            place("far", 0.2, 28),
        ];
        let out = newest_first(places, true, &cfg, cosine, |_| true);
        // "far" is newer still but not close to the best: relevance first, then time.
        assert_eq!(ids(&out), ["new", "old", "far"]);
        assert_eq!(out[0].score, 1.0);
    }

    #[test]
    fn a_past_or_dated_question_keeps_its_ranking() {
        let now = Utc.with_ymd_and_hms(2025, 6, 1, 0, 0, 0).unwrap();
        for q in [
            "Where did I live before?",
            "What car was I driving?",
            "Where did I work last year?",
            "What did I eat three days ago?",
        ] {
            assert!(!asks_present(q, &analyze_query(q, now)), "{q}");
        }
        for q in [
            "Where do I live?",
            "What's my job title now?",
            "Can you suggest a dinner for tonight?",
        ] {
            assert!(asks_present(q, &analyze_query(q, now)), "{q}");
        }
        // About someone else: the newest close place is as often about the asker.
        for q in ["Where does Jess live?", "Where does my brother live?"] {
            assert!(!asks_present(q, &analyze_query(q, now)), "{q}");
        }
        let cfg = RankConfig::default();
        let places = vec![place("old", 1.0, 3), place("new", 0.7, 20)];
        assert_eq!(
            ids(&newest_first(places, false, &cfg, cosine, |_| true)),
            ["old", "new"]
        );
    }
}
