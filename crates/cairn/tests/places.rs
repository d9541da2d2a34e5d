//! Two-level results through the public API: a hit is a place (one session's best units
//! as one excerpt), its `parts` cite what it shows, and the context names the parts it
//! shows.
mod common;
use cairn::{Format, Memory, MemoryConfig, RecallOptions};
use common::{open, session};
use std::collections::HashSet;

/// A long conversation about one cat, and two short ones about other things.
fn sessions() -> Vec<cairn::SessionInput> {
    vec![
        session(
            r#"{"id": "cat", "date": "2023-05-01 10:00", "messages": [
            {"role": "user", "text": "I adopted a grey cat from the shelter and named her Luna."},
            {"role": "assistant", "text": "Luna is a lovely name for a cat."},
            {"role": "user", "text": "My cat Luna sleeps on the window sill all afternoon."},
            {"role": "assistant", "text": "Cats love warm window sills."},
            {"role": "user", "text": "The vet said my cat Luna needs a special diet for her kidneys."},
            {"role": "assistant", "text": "A renal diet helps cats with kidney trouble."}]}"#,
        ),
        session(
            r#"{"id": "trip", "date": "2023-06-10 09:00", "messages": [
            {"role": "user", "text": "I'm planning a trip to Kyoto in October to see the temples."},
            {"role": "assistant", "text": "Visit Kiyomizu-dera early in the morning."}]}"#,
        ),
        session(
            r#"{"id": "work", "date": "2023-07-02 18:00", "messages": [
            {"role": "user", "text": "My manager moved the project deadline to Friday."},
            {"role": "assistant", "text": "That leaves little time; plan the remaining tasks today."}]}"#,
        ),
    ]
}

fn raw(top_k: usize, token_budget: usize) -> RecallOptions {
    RecallOptions {
        top_k,
        token_budget,
        format: Format::Raw,
        ..Default::default()
    }
}

const QUESTION: &str = "What do I know about my cat Luna?";

#[test]
fn hits_are_distinct_places_whose_parts_cite_their_excerpt() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    m.ingest_sessions("alice", sessions()).unwrap();
    let recall = m.recall("alice", QUESTION, &raw(3, 10_000)).unwrap();

    let sessions: Vec<_> = recall
        .hits
        .iter()
        .filter_map(|h| h.session_id.clone())
        .collect();
    let distinct: HashSet<_> = sessions.iter().collect();
    assert_eq!(
        distinct.len(),
        sessions.len(),
        "a session twice: {sessions:?}"
    );
    let top = &recall.hits[0];
    assert_eq!(top.session_id.as_deref(), Some("cat"));
    assert!(
        top.parts.len() >= 2,
        "the cat session is one hit of several units: {top:?}"
    );
    assert_eq!(
        top.parts[0].unit_id, top.unit_id,
        "the best unit is listed first"
    );
    // `turn_ids` is every message the parts cover, and the excerpt shows each once.
    let from_parts: HashSet<&String> = top.parts.iter().flat_map(|p| &p.turn_ids).collect();
    let turns: HashSet<&String> = top.turn_ids.iter().collect();
    assert_eq!(from_parts, turns);
    assert_eq!(top.turn_ids.len(), turns.len(), "{:?}", top.turn_ids);
    assert_eq!(top.text.matches("special diet").count(), 1, "{}", top.text);
    // The whole budget: every part of every hit is in the context.
    for p in &top.parts {
        assert!(recall.context_unit_ids.contains(&p.unit_id), "{p:?}");
    }
}

#[test]
fn a_place_that_does_not_fit_shows_its_best_parts_and_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    m.ingest_sessions("alice", sessions()).unwrap();
    let whole = m.recall("alice", QUESTION, &raw(1, 10_000)).unwrap();
    let top = &whole.hits[0];
    assert!(top.parts.len() >= 2, "{top:?}");
    let whole_tokens = whole.context_tokens;

    // Less than the whole place: its best parts, best first, and never over budget. The
    // context also spends what is left on the places after `top_k` (`extra_hits`), so the
    // budget that cuts the place is searched for rather than computed.
    let parts: HashSet<&String> = top.parts.iter().map(|p| &p.unit_id).collect();
    let (budget, cut) = (1..whole_tokens)
        .rev()
        .map(|b| (b, m.recall("alice", QUESTION, &raw(1, b)).unwrap()))
        .find(|(_, r)| {
            let n = r
                .context_unit_ids
                .iter()
                .filter(|u| parts.contains(u))
                .count();
            n >= 1 && n < top.parts.len()
        })
        .expect("a budget that shows part of the place");
    assert!(cut.context_tokens <= budget);
    assert!(cut.hits_cut_ids.contains(&top.unit_id), "{cut:?}");
    let shown: Vec<&String> = cut
        .context_unit_ids
        .iter()
        .filter(|u| parts.contains(u))
        .collect();
    // Whatever else the context shows is cited by an extra hit.
    for u in cut.context_unit_ids.iter().filter(|u| !parts.contains(u)) {
        assert!(
            cut.extra_hits
                .iter()
                .any(|h| &h.unit_id == u || h.parts.iter().any(|p| &p.unit_id == u)),
            "{u} shown but not cited: {cut:?}"
        );
    }
    let best_first: Vec<&String> = top
        .parts
        .iter()
        .take(shown.len())
        .map(|p| &p.unit_id)
        .collect();
    let mut shown_sorted: Vec<&String> = shown.clone();
    shown_sorted.sort();
    let mut expected = best_first.clone();
    expected.sort();
    assert_eq!(shown_sorted, expected, "the best parts, not others");
}

#[test]
fn places_off_gives_one_unit_per_hit() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = MemoryConfig::default();
    config.engine.rank.places = false;
    let m = match Memory::open_with(dir.path(), config) {
        Ok(m) => m,
        Err(cairn::Error::Model(e)) => return cairn_testkit::model_missing(e),
        Err(e) => panic!("open failed: {e}"),
    };
    m.ingest_sessions("alice", sessions()).unwrap();
    let recall = m.recall("alice", QUESTION, &raw(3, 10_000)).unwrap();
    assert!(recall.hits.iter().all(|h| h.parts.is_empty()));
    let cat = recall
        .hits
        .iter()
        .filter(|h| h.session_id.as_deref() == Some("cat"))
        .count();
    assert!(cat >= 2, "unit hits repeat the session: {:?}", recall.hits);
}
