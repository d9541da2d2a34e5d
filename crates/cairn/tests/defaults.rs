//! What an agent gets from the stock options (`RecallOptions::default()`), through the
//! public API on the real embedded store and model: a context that shows each message
//! once (a fact's version note riding with the message that states it), says what it
//! cut, holds more than the first hits when they are short, and an honest "no relevant
//! memory" for a question nothing stored bears on.
mod common;
use cairn::{GroupMessage, Memory, RecallOptions};
use common::open;
use std::collections::HashSet;

fn msg(time: &str, speaker: &str, text: &str) -> GroupMessage {
    GroupMessage {
        id: None,
        speaker: speaker.into(),
        group: "Atlas".into(),
        time: cairn::parse_timestamp(time).unwrap(),
        text: text.into(),
        metadata: serde_json::Value::Null,
    }
}

/// A budget stated, revised and finalized over three days, with small talk around it.
fn team(m: &Memory) {
    let days = [
        vec![
            msg("2025-03-03 09:00", "Maya", "Morning all. The budget for Project Atlas is $120,000 for this quarter."),
            msg("2025-03-03 09:02", "Tom", "That's more than last time, we need it for the cloud bill."),
            msg("2025-03-03 09:05", "Priya", "Please send me the breakdown by Friday."),
        ],
        vec![
            msg("2025-03-10 14:00", "Maya", "Update: the Atlas budget has been cut to $100,000 after the finance review."),
            msg("2025-03-10 14:03", "Tom", "Ok, we'll trim the staging cluster."),
        ],
        vec![
            msg("2025-03-17 16:00", "Priya", "Final numbers: the budget for Project Atlas is now $95,000. Please confirm receipt."),
            msg("2025-03-17 16:02", "Maya", "Confirmed. Thanks Priya."),
            msg("2025-03-17 16:05", "Tom", "I booked the Harbor stage for the beta demo on Thursday."),
        ],
    ];
    for day in days {
        m.ingest_group_messages("team", day.to_vec()).unwrap();
    }
}

/// Every hit and extra hit the context shows, with the messages it shows there.
fn shown_messages(r: &cairn::Recall) -> Vec<(String, String)> {
    let in_context: HashSet<&str> = r.context_unit_ids.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    for h in r.hits.iter().chain(&r.extra_hits) {
        let session = h.session_id.clone().unwrap_or_default();
        let turns: Vec<&String> = if h.parts.is_empty() {
            if in_context.contains(h.unit_id.as_str()) {
                h.turn_ids.iter().collect()
            } else {
                Vec::new()
            }
        } else {
            h.parts
                .iter()
                .filter(|p| in_context.contains(p.unit_id.as_str()))
                .flat_map(|p| &p.turn_ids)
                .collect::<HashSet<_>>()
                .into_iter()
                .collect()
        };
        out.extend(turns.into_iter().map(|t| (session.clone(), t.clone())));
    }
    out
}

#[test]
fn the_current_value_is_shown_once_with_its_note() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    team(&m);
    let r = m
        .recall(
            "team",
            "What is the budget for Project Atlas now?",
            &RecallOptions::default(),
        )
        .unwrap();
    assert!(!r.no_relevant_memory);
    assert_eq!(
        r.context.matches("is now $95,000").count(),
        1,
        "{}",
        r.context
    );
    assert!(
        r.context.contains("[current value; earlier: $120,000"),
        "{}",
        r.context
    );
    let shown = shown_messages(&r);
    let distinct: HashSet<_> = shown.iter().collect();
    assert_eq!(distinct.len(), shown.len(), "a message twice: {shown:?}");
    assert!(r.context_tokens <= 600);
}

#[test]
fn a_question_nothing_bears_on_gets_no_hits_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    team(&m);
    // A floor above the stock one: on this three-day chat "Mongolia" comes within 0.21 of
    // a message (the stock floor, 0.2, keeps evidence first: relevance-floor.md).
    let floor = RecallOptions {
        min_relevance: 0.25,
        ..Default::default()
    };
    for q in [
        "What is the capital of Mongolia?",
        "How many moons does Mars have?",
    ] {
        let r = m.recall("team", q, &floor).unwrap();
        assert!(r.no_relevant_memory, "{q}: {:#?}", r.hits);
        assert!(r.hits.is_empty() && r.extra_hits.is_empty() && r.context.is_empty());
        // No floor: the least bad guesses come back, each with its low relevance.
        let all = RecallOptions {
            min_relevance: -1.0,
            ..Default::default()
        };
        let r = m.recall("team", q, &all).unwrap();
        assert!(!r.no_relevant_memory && !r.hits.is_empty());
        assert!(r
            .hits
            .iter()
            .all(|h| h.relevance.unwrap() < floor.min_relevance));
    }
    let r = m
        .recall("team", "Where is the beta demo?", &RecallOptions::default())
        .unwrap();
    assert!(!r.no_relevant_memory);
    assert!(r.hits[0].relevance.unwrap() >= RecallOptions::default().min_relevance);
    assert!(r.context.contains("Harbor stage"), "{}", r.context);
}

#[test]
fn a_budget_too_small_for_the_hits_still_shows_the_best_cut_and_names_the_cuts() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    team(&m);
    let tiny = RecallOptions {
        token_budget: 20,
        ..Default::default()
    };
    let r = m
        .recall("team", "What is the budget for Project Atlas now?", &tiny)
        .unwrap();
    assert!(!r.hits.is_empty());
    assert!(!r.context.is_empty(), "{r:#?}");
    assert!(r.context_tokens <= 20 && r.context_tokens > 0);
    assert_eq!(r.hits_cut, r.hits_cut_ids.len());
    assert!(r.hits_cut >= 1, "{r:#?}");
    let hits: HashSet<&str> = r.hits.iter().map(|h| h.unit_id.as_str()).collect();
    assert!(r.hits_cut_ids.iter().all(|id| hits.contains(id.as_str())));
    assert!(r.context.trim_end().ends_with('…'), "{}", r.context);
}

/// Short places leave room: the context goes on past the first hits, and every place it
/// shows is cited (`extra_hits`), its shown units named in `context_unit_ids`.
#[test]
fn short_hits_leave_room_for_more_places_and_each_is_cited() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    team(&m);
    let one = RecallOptions {
        top_k: 1,
        ..Default::default()
    };
    let r = m
        .recall("team", "What did Maya and Tom say about the budget?", &one)
        .unwrap();
    assert_eq!(r.hits.len(), 1);
    assert!(!r.extra_hits.is_empty(), "{r:#?}");
    let cited: HashSet<&str> = r
        .hits
        .iter()
        .chain(&r.extra_hits)
        .flat_map(|h| {
            std::iter::once(h.unit_id.as_str()).chain(h.parts.iter().map(|p| p.unit_id.as_str()))
        })
        .collect();
    assert!(
        r.context_unit_ids
            .iter()
            .all(|id| cited.contains(id.as_str())),
        "{r:#?}"
    );
    assert!(r.context_tokens <= 600);
}
