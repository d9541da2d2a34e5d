//! Group chats through the public API: day-by-day ingest, episodes, fact versions,
//! speaker profiles and filters, on the real embedded store and model.
mod common;
use cairn::{GroupMessage, RecallOptions, ScopeOptions, UnitKind};
use common::open;

fn msg(group: &str, time: &str, speaker: &str, text: &str) -> GroupMessage {
    GroupMessage {
        id: None,
        speaker: speaker.into(),
        group: group.into(),
        time: cairn::parse_timestamp(time).unwrap(),
        text: text.into(),
        metadata: serde_json::Value::Null,
    }
}

/// Three days of two groups: a budget proposed, revised and finalized; a launch
/// exchange; people with roles, skills and styles; a second group on other things.
fn days() -> Vec<Vec<GroupMessage>> {
    vec![
        vec![
            msg("Atlas", "2025-03-03 09:00", "Maya", "Morning all. The budget for Project Atlas is $120,000 for this quarter."),
            msg("Atlas", "2025-03-03 09:02", "Tom", "lol that's way more than last time 😅 gonna need it for the cloud bill tho"),
            msg("Atlas", "2025-03-03 09:05", "Priya", "I'm the finance director, so please send me the breakdown by Friday. Kindly include vendor quotes."),
            msg("Atlas", "2025-03-03 09:07", "Tom", "yeah sure, will do!! I've got 6 years of experience with AWS cost tuning so it's easy"),
            msg("Atlas", "2025-03-03 11:30", "Lena", "Proposal: we launch the Atlas beta on the Harbor venue stage during the expo."),
            msg("Atlas", "2025-03-03 11:33", "Tom", "Harbor venue stage is tiny, we could do the beta demo in the main hall instead?"),
            msg("Atlas", "2025-03-03 11:36", "Maya", "Main hall costs more. The beta demo stays on the Harbor stage. Decision made."),
            msg("Atlas", "2025-03-03 11:38", "Lena", "Ok, Harbor stage it is for the beta demo. I'll book it today."),
            msg("Beacon", "2025-03-03 10:00", "Omar", "Beacon retro notes are in the wiki. The flaky test in payments is fixed."),
            msg("Beacon", "2025-03-03 10:04", "Lena", "Thanks Omar, what do you think about pairing on the retry logic next week?"),
        ],
        vec![
            msg("Atlas", "2025-03-10 14:00", "Maya", "Update: the Atlas budget has been cut to $100,000 after the finance review."),
            msg("Atlas", "2025-03-10 14:03", "Tom", "ugh ok 😬 we'll trim the staging cluster"),
            msg("Beacon", "2025-03-10 15:00", "Omar", "The Beacon budget is $40,000, unchanged."),
        ],
        vec![
            msg("Atlas", "2025-03-17 16:00", "Priya", "Final numbers: the budget for Project Atlas is now $95,000. Please confirm receipt."),
            msg("Atlas", "2025-03-17 16:02", "Maya", "Confirmed. Thanks Priya."),
        ],
    ]
}

fn ingest(m: &cairn::Memory) {
    for day in days() {
        m.ingest_group_messages("team", day).unwrap();
    }
}

#[test]
fn group_days_become_sessions_and_resending_is_harmless() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    ingest(&m);
    let sessions = m.sessions("team").unwrap();
    let ids: Vec<&str> = sessions.iter().map(|s| s.session.id.as_str()).collect();
    assert!(
        ids.contains(&"Atlas/2025-03-03") && ids.contains(&"Beacon/2025-03-10"),
        "{ids:?}"
    );
    let before = m.stats("team").unwrap();
    let again = m.ingest_group_messages("team", days().remove(0)).unwrap();
    assert_eq!(again.messages_added, 0, "a day sent twice adds nothing");
    assert_eq!(m.stats("team").unwrap().messages, before.messages);
    // A late message of an existing day is appended with the next free id.
    let late = msg("Atlas", "2025-03-17 18:00", "Tom", "Got it, $95k works.");
    let r = m.ingest_group_messages("team", vec![late]).unwrap();
    assert_eq!(r.messages_added, 1);
    let day = m.sessions("team").unwrap();
    let day = day
        .iter()
        .find(|s| s.session.id == "Atlas/2025-03-17")
        .unwrap();
    assert_eq!(day.session.messages.len(), 3);
    assert_eq!(day.session.messages[2].id, "2");
    // Bad input names the message and writes nothing.
    let bad = vec![
        msg("Atlas", "2025-03-18 09:00", "Tom", "fine"),
        msg("Atlas", "2025-03-18 09:01", " ", "x"),
    ];
    let e = m
        .ingest_group_messages("team", bad)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("group message 1") && e.contains("speaker"),
        "{e}"
    );
    assert_eq!(m.stats("team").unwrap().messages, before.messages + 1);
}

#[test]
fn a_decision_revised_twice_has_its_final_value_and_history() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    ingest(&m);
    let h = m
        .history("team", "Atlas budget", &ScopeOptions::default())
        .unwrap()
        .expect("a chain");
    let values: Vec<&str> = h.versions.iter().map(|v| v.value.as_str()).collect();
    assert_eq!(
        values,
        ["$120,000 for this quarter", "$100,000", "$95,000"],
        "{h:#?}"
    );
    assert_eq!(h.current().unwrap().speaker.as_deref(), Some("Priya"));
    assert_eq!(h.versions[0].valid_to, h.versions[1].valid_from);
    assert_eq!(
        h.versions[0].superseded_by.as_deref(),
        Some(h.versions[1].unit_id.as_str())
    );
    assert!(h.current().unwrap().valid_to.is_none());
    // Beacon's budget is another subject.
    let beacon = m
        .history("team", "Beacon budget", &ScopeOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(beacon.versions.len(), 1);

    let opts = RecallOptions {
        top_k: 5,
        token_budget: 800,
        ..Default::default()
    };
    let r = m
        .recall("team", "What is the final budget for Project Atlas?", &opts)
        .unwrap();
    let top = &r.hits[0];
    assert!(top.text.contains("$95,000"), "{:#?}", r.hits);
    assert!(
        top.text.contains("[current value; earlier: $120,000"),
        "{}",
        top.text
    );
    assert!(top.superseded_by.is_none());
    let old: Vec<_> = r
        .hits
        .iter()
        .filter(|h| !h.text.contains("[current value"))
        .filter(|h| h.text.contains("$120,000 for") || h.text.contains("cut to $100,000"))
        .collect();
    assert!(!old.is_empty(), "{:#?}", r.hits);
    for h in old {
        assert!(
            h.superseded_by.is_some(),
            "older versions are marked: {h:?}"
        );
        assert!(
            h.text.contains("[superseded: changed to $95,000"),
            "{}",
            h.text
        );
    }
}

#[test]
fn as_of_between_revisions_sees_the_value_valid_then() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    ingest(&m);
    let mid = cairn::parse_timestamp("2025-03-12").unwrap();
    let h = m
        .history(
            "team",
            "budget for Project Atlas",
            &ScopeOptions::as_of(Some(mid)),
        )
        .unwrap()
        .unwrap();
    assert_eq!(h.current().unwrap().value, "$100,000");
    let opts = RecallOptions {
        top_k: 5,
        token_budget: 800,
        scope: cairn::ScopeOptions {
            as_of: Some(mid),
            ..Default::default()
        },
        ..Default::default()
    };
    let r = m
        .recall("team", "What is the Atlas budget?", &opts)
        .unwrap();
    assert!(
        !r.context.contains("$95,000"),
        "the future is invisible: {}",
        r.context
    );
    let current = r
        .hits
        .iter()
        .find(|h| h.text.contains("$100,000"))
        .expect("the March 10 value");
    assert!(current.text.contains("[current value"), "{current:?}");
    assert!(current.superseded_by.is_none());
}

#[test]
fn questions_about_a_person_get_their_profile() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    ingest(&m);
    let p = m
        .profile("team", "Priya", &ScopeOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(p.roles[0].what, "finance director");
    assert_eq!(p.roles[0].session_id, "Atlas/2025-03-03");
    assert!(
        p.style.traits.iter().any(|t| t == "formal"),
        "{:?}",
        p.style
    );
    let tom = m
        .profile("team", "Tom", &ScopeOptions::default())
        .unwrap()
        .unwrap();
    assert!(
        tom.style.traits.iter().any(|t| t == "casual"),
        "{:?}",
        tom.style
    );
    assert!(
        tom.skills.iter().any(|s| s.what.contains("AWS")),
        "{:?}",
        tom.skills
    );
    assert_eq!(tom.groups, ["Atlas"]);
    assert!(m
        .profile("team", "Nobody", &ScopeOptions::default())
        .unwrap()
        .is_none());

    let opts = RecallOptions {
        top_k: 3,
        token_budget: 600,
        ..Default::default()
    };
    let r = m
        .recall(
            "team",
            "What is Tom's area of expertise and communication style?",
            &opts,
        )
        .unwrap();
    assert_eq!(r.hits[0].kind, UnitKind::Profile);
    assert_eq!(r.hits[0].speakers, ["Tom"]);
    assert!(r.context.contains("Profile of Tom"), "{}", r.context);
    let r = m.recall("team", "When is the beta demo?", &opts).unwrap();
    assert!(r.hits.iter().all(|h| h.kind != UnitKind::Profile));
}

#[test]
fn group_and_speaker_filters_never_leak() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    ingest(&m);
    let only_beacon = RecallOptions {
        top_k: 20,
        token_budget: 4000,
        scope: cairn::ScopeOptions {
            groups: Some(vec!["Beacon".into()]),
            ..Default::default()
        },
        ..Default::default()
    };
    for q in [
        "budget",
        "What did Lena propose?",
        "Harbor stage beta demo",
        "retry logic",
    ] {
        let r = m.recall("team", q, &only_beacon).unwrap();
        for h in &r.hits {
            assert!(
                h.session_id
                    .as_deref()
                    .is_some_and(|s| s.starts_with("Beacon/")),
                "{q}: {h:?}"
            );
        }
        assert!(!r.context.contains("Harbor"), "{q}: {}", r.context);
    }
    let only_omar = RecallOptions {
        top_k: 20,
        token_budget: 4000,
        scope: cairn::ScopeOptions {
            speakers: Some(vec!["Omar".into()]),
            ..Default::default()
        },
        ..Default::default()
    };
    let r = m.recall("team", "budget", &only_omar).unwrap();
    assert!(!r.hits.is_empty());
    assert!(
        r.hits
            .iter()
            .all(|h| h.speakers.contains(&"Omar".to_string())),
        "{:#?}",
        r.hits
    );
    let march10 = RecallOptions {
        top_k: 20,
        token_budget: 4000,
        scope: cairn::ScopeOptions {
            since: Some(cairn::parse_timestamp("2025-03-10").unwrap()),
            as_of: Some(cairn::parse_timestamp("2025-03-11").unwrap()),
            ..Default::default()
        },
        ..Default::default()
    };
    let r = m.recall("team", "budget", &march10).unwrap();
    assert!(!r.hits.is_empty());
    for h in &r.hits {
        let day = h.occurred_at.unwrap().format("%Y-%m-%d").to_string();
        assert_eq!(day, "2025-03-10", "{h:?}");
    }
}

#[test]
fn episodes_keep_a_proposal_debate_decision_exchange_together() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    ingest(&m);
    let units = m.session_units("team", "Atlas/2025-03-03").unwrap();
    let episodes: Vec<_> = units
        .iter()
        .filter(|u| u.kind == UnitKind::Episode)
        .collect();
    assert_eq!(
        episodes.len(),
        2,
        "the morning budget talk and the noon launch talk"
    );
    let launch = episodes
        .iter()
        .find(|e| e.text.contains("Proposal"))
        .unwrap();
    assert_eq!(launch.provenance.message_ids, ["4", "5", "6", "7"]);
    let opts = RecallOptions {
        top_k: 1,
        token_budget: 1000,
        scope: cairn::ScopeOptions {
            kinds: Some(vec![UnitKind::Episode]),
            ..Default::default()
        },
        ..Default::default()
    };
    let r = m
        .recall("team", "Where was the beta demo decided to happen?", &opts)
        .unwrap();
    assert_eq!(r.hits[0].unit_id, launch.id);
    for part in ["Proposal", "main hall", "Decision made"] {
        assert!(r.context.contains(part), "{part}: {}", r.context);
    }
}
