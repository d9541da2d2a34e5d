//! What a user says of themself, through the public API: facts about their speaker,
//! versioned per person, and every message stored with a time.
mod common;
use cairn::{AppendInput, Message, RecallOptions, ScopeOptions, WriteOptions};
use common::{open, session};

fn said(id: &str, date: &str, text: &str) -> cairn::SessionInput {
    session(&format!(
        r#"{{"id": "{id}", "date": "{date}", "messages": [
        {{"role": "user", "text": "{text}"}},
        {{"role": "assistant", "text": "Thanks for telling me."}}]}}"#
    ))
}

/// Each `(id, date, text)` as a session of its own in `space`.
fn tell(m: &cairn::Memory, space: &str, sessions: &[(&str, &str, &str)]) {
    for &(id, date, text) in sessions {
        m.ingest_session(space, said(id, date, text)).unwrap();
    }
}

/// The statements of a history's versions, oldest first.
fn statements(h: &cairn::FactHistory) -> Vec<&str> {
    h.versions.iter().map(|v| v.statement.as_str()).collect()
}

#[test]
fn a_users_move_supersedes_their_old_home_and_a_sisters_home_stays_hers() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let s = "alice";
    m.ingest_session(
        s,
        said(
            "jan",
            "2024-01-10",
            "I live in Porto with my partner Ana, and I work as a nurse.",
        ),
    )
    .unwrap();
    m.ingest_session(
        s,
        said(
            "feb",
            "2024-02-12",
            "My sister lives in Rome and she works as a lawyer.",
        ),
    )
    .unwrap();
    m.ingest_session(
        s,
        said(
            "jun",
            "2024-06-20",
            "I moved to Lisbon last month, and I switched jobs, I am a paramedic now.",
        ),
    )
    .unwrap();

    let subjects = m.fact_subjects(s, &ScopeOptions::default()).unwrap();
    let home = subjects
        .iter()
        .find(|f| f.person.as_deref() == Some("user") && f.subject.ends_with("home"))
        .unwrap_or_else(|| panic!("no home of the user in {subjects:#?}"));
    assert_eq!(home.versions, 2, "{home:?}");
    assert!(home.current_value.contains("Lisbon"), "{home:?}");
    let sister = subjects
        .iter()
        .find(|f| f.person.as_deref() == Some("user's sister") && f.subject.ends_with("home"))
        .unwrap_or_else(|| panic!("no home of the sister in {subjects:#?}"));
    assert!(sister.current_value.contains("Rome"), "{sister:?}");

    let h = m
        .history(s, &home.subject, &ScopeOptions::default())
        .unwrap()
        .unwrap();
    let values: Vec<&str> = h.versions.iter().map(|v| v.value.as_str()).collect();
    assert!(
        values[0].contains("Porto") && values[1].contains("Lisbon"),
        "{values:?}"
    );
    assert!(h.versions[0].superseded_by.is_some());
    let july = cairn::parse_timestamp("2024-03-01").unwrap();
    let then = m
        .history(
            s,
            &home.subject,
            &ScopeOptions {
                as_of: Some(july),
                ..ScopeOptions::default()
            },
        )
        .unwrap()
        .unwrap();
    assert!(
        then.current().unwrap().value.contains("Porto"),
        "as_of: {then:?}"
    );

    let r = m
        .recall(s, "Where do I live?", &RecallOptions::default())
        .unwrap();
    let first = &r.hits[0];
    assert!(first.text.contains("Lisbon"), "{:#?}", r.hits);
    assert!(first.superseded_by.is_none());
    // What January said (Porto) is marked old wherever it is a hit.
    for hit in r
        .hits
        .iter()
        .filter(|h| h.session_id.as_deref() == Some("jan"))
    {
        assert!(hit.superseded_by.is_some(), "Porto marked old: {hit:?}");
    }
}

#[test]
fn a_hypothetical_is_no_fact() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    m.ingest_session(
        "bob",
        said(
            "s",
            "2024-03-01",
            "If I moved to Paris, would I need to learn French first?",
        ),
    )
    .unwrap();
    let subjects = m.fact_subjects("bob", &ScopeOptions::default()).unwrap();
    assert!(
        subjects.iter().all(|f| !f.current_value.contains("Paris")),
        "{subjects:#?}"
    );
}

#[test]
fn every_message_is_stored_with_a_time_and_the_report_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let undated = || {
        session(
            r#"{"id": "u", "messages": [
            {"role": "user", "text": "I adopted a dog named Rex."},
            {"role": "assistant", "text": "Congratulations!"}]}"#,
        )
    };
    let r = m.ingest_session("c", undated()).unwrap();
    assert_eq!(r.dated_at_recording, 2);
    let stored = m.session("c", "u").unwrap().unwrap();
    assert!(stored
        .session
        .messages
        .iter()
        .all(|m| m.occurred_at.is_some()));
    let times: Vec<_> = stored
        .session
        .messages
        .iter()
        .map(|m| m.occurred_at)
        .collect();

    // Sent again without times: the same messages, unchanged, their times kept.
    let again = m.ingest_session("c", undated()).unwrap();
    assert_eq!((again.unchanged, again.dated_at_recording), (1, 0));
    let kept = m.session("c", "u").unwrap().unwrap();
    let kept: Vec<_> = kept
        .session
        .messages
        .iter()
        .map(|m| m.occurred_at)
        .collect();
    assert_eq!(kept, times);

    // An append without a time dates what it adds.
    let added = m
        .append(
            "c",
            AppendInput {
                session_id: "u".into(),
                messages: vec![Message {
                    id: String::new(),
                    role: Some(cairn::Role::User),
                    speaker: None,
                    text: "Rex is a beagle.".into(),
                    occurred_at: None,
                    metadata: serde_json::Value::Null,
                }],
                occurred_at: None,
                group: None,
                metadata: serde_json::Value::Null,
            },
            &WriteOptions::default(),
        )
        .unwrap();
    assert_eq!((added.messages_added, added.dated_at_recording), (1, 1));
    let after = m.session("c", "u").unwrap().unwrap();
    assert!(after
        .session
        .messages
        .iter()
        .all(|m| m.occurred_at.is_some()));
}

/// The profile of a user who talks with an assistant holds what they said of themself
/// (current values only, each citing its message, preferences with their polarity, a
/// stated job among the roles), and no reply time: an assistant's pace says nothing of
/// a person. `as_of` sees the profile as it was.
#[test]
fn a_users_profile_holds_their_current_facts_and_preferences_with_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let s = "alice";
    tell(
        &m,
        s,
        &[
            (
                "jan",
                "2024-01-10",
                "I live in Porto with my partner Ana, and I work as a nurse.",
            ),
            ("feb", "2024-02-12", "My sister lives in Rome."),
            (
                "mar",
                "2024-03-02",
                "I love spicy Thai food but I really dislike olives.",
            ),
            (
                "jun",
                "2024-06-20",
                "I moved to Lisbon last month, and I switched jobs, I am a paramedic now.",
            ),
        ],
    );
    let p = m
        .profile(s, "user", &ScopeOptions::default())
        .unwrap()
        .expect("a profile of the user");
    let fact = |attribute: &str| {
        p.facts
            .iter()
            .find(|f| f.attribute == attribute)
            .unwrap_or_else(|| panic!("no {attribute:?} in {:#?}", p.facts))
    };
    let home = fact("home");
    assert!(home.value.contains("Lisbon"), "{home:?}");
    assert_eq!((home.session_id.as_str(), home.earlier), ("jun", 1));
    assert!(
        !p.facts.iter().any(|f| f.value.contains("Porto")),
        "only current values: {:#?}",
        p.facts
    );
    assert!(
        !p.facts.iter().any(|f| f.value.contains("Rome")),
        "the sister's home is hers: {:#?}",
        p.facts
    );
    let olives = p
        .facts
        .iter()
        .find(|f| f.value.contains("olives"))
        .unwrap_or_else(|| panic!("no olives in {:#?}", p.facts));
    assert!(olives.negated && olives.session_id == "mar", "{olives:?}");
    let thai = p.facts.iter().find(|f| f.value.contains("Thai"));
    assert!(thai.is_some_and(|f| !f.negated), "{:#?}", p.facts);
    assert!(
        p.roles.iter().any(|r| r.what.contains("paramedic")),
        "{:?}",
        p.roles
    );
    assert!(
        p.summary.contains("Lisbon") && p.summary.contains("dislikes olives"),
        "{}",
        p.summary
    );
    assert_eq!(p.style.avg_reply_seconds, None, "{:?}", p.style);
    assert!(!p.summary.contains("replies after"), "{}", p.summary);

    let before = m
        .profile(
            s,
            "user",
            &ScopeOptions {
                as_of: Some(cairn::parse_timestamp("2024-04-01").unwrap()),
                ..ScopeOptions::default()
            },
        )
        .unwrap()
        .expect("a profile as of April");
    let home = before.facts.iter().find(|f| f.attribute == "home");
    assert!(
        home.is_some_and(|f| f.value.contains("Porto") && f.earlier == 0),
        "{:#?}",
        before.facts
    );
    assert!(!before.summary.contains("paramedic"), "{}", before.summary);
}

/// Issue 51: a message that starts one job and ends another leaves the new one current,
/// whichever the sentence says first.
#[test]
fn a_new_job_stated_beside_the_old_one_left_is_the_current_one() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let s = "carol";
    m.ingest_session(
        s,
        said("jan", "2025-01-10", "I work at Acme as a designer."),
    )
    .unwrap();
    m.ingest_session(
        s,
        said(
            "mar",
            "2025-03-03",
            "I started at Globex today, I left Acme on Friday.",
        ),
    )
    .unwrap();
    let subjects = m.fact_subjects(s, &ScopeOptions::default()).unwrap();
    let work: Vec<_> = subjects
        .iter()
        .filter(|f| f.person.as_deref() == Some("user") && f.versions > 1)
        .collect();
    assert!(
        !work.is_empty(),
        "a chain of the user's workplace: {subjects:#?}"
    );
    for w in work {
        assert!(
            w.current_value.contains("Globex") && !w.negated,
            "Globex is current: {w:?}"
        );
        // Two versions: "left Acme" is part of the statement of Globex.
        assert_eq!(w.versions, 2, "{w:?}");
    }
    let h = m
        .history(s, "workplace", &ScopeOptions::default())
        .unwrap()
        .expect("the user's workplace");
    assert_eq!(statements(&h), ["Acme", "Globex"], "{h:#?}");
    // The message that states Globex and denies Acme is one statement: its note says
    // Globex is current with Acme before it, and nothing in it is superseded.
    let r = m
        .recall(s, "Who is my employer?", &RecallOptions::default())
        .unwrap();
    let stated = r
        .hits
        .iter()
        .find(|h| h.text.contains("Globex"))
        .expect("a hit states Globex");
    assert!(
        stated
            .text
            .contains("[current value; earlier: Acme (2025-01-10)]")
            && !stated.text.contains("superseded")
            && !stated.text.contains("no longer Acme"),
        "{}",
        stated.text
    );
}

/// Issue 51: a request for advice places the asker's liking first as it holds now: a
/// liking a newer statement denied goes first as the denial, never unmarked.
#[test]
fn a_request_places_the_current_version_of_a_liking() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let s = "erin";
    tell(
        &m,
        s,
        &[
            ("a", "2025-03-03", "I love jazz, it's my favourite music."),
            (
                "b",
                "2025-05-06",
                "My partner Alex cooked dinner for my birthday.",
            ),
            ("c", "2025-06-01", "Honestly I don't like jazz anymore."),
        ],
    );
    let r = m
        .recall(
            s,
            "Suggest a concert for me this weekend.",
            &RecallOptions::default(),
        )
        .unwrap();
    let first = &r.hits[0];
    assert!(
        first.text.contains("don't like jazz")
            || first.text.lines().any(|l| l.starts_with("[superseded")),
        "the first hit is the current liking, or says it was replaced: {}",
        first.text
    );
    assert!(
        r.hits
            .iter()
            .filter(|h| h.text.contains("I love jazz"))
            .all(|h| h.text.contains("[superseded")),
        "{:#?}",
        r.hits
    );
    // The history is found by one word of the attribute, and reads as facts.
    let h = m
        .history(s, "jazz", &ScopeOptions::default())
        .unwrap()
        .expect("a history of the user's taste in jazz");
    assert_eq!(statements(&h), ["jazz", "dislikes jazz"], "{h:#?}");
}

/// Issue 51: the asker's fact placed first for a request is one close to it in meaning
/// (as close as half the best statement found), not merely the nearest of their facts.
#[test]
fn a_request_does_not_place_a_far_fact_first() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let s = "fran";
    tell(
        &m,
        s,
        &[
            ("a", "2025-03-03", "I have a dog named Rex, he is a beagle."),
            (
                "b",
                "2025-04-01",
                "The battery of my phone barely lasts until lunch since the last update.",
            ),
        ],
    );
    let r = m
        .recall(
            s,
            "Any tips to make my phone's battery last longer?",
            &RecallOptions::default(),
        )
        .unwrap();
    assert!(
        r.hits[0].text.contains("battery"),
        "the statement about the battery, not the dog: {:#?}",
        r.hits
    );
}

/// Issue 51: a question about the present is answered by the newest statement about
/// the same thing, however it was worded (no pattern reads "these days I'm based in"),
/// and one in the past tense keeps its ranking.
#[test]
fn the_newest_statement_answers_a_present_question_and_a_past_one_keeps_its_rank() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let s = "dave";
    tell(
        &m,
        s,
        &[
            (
                "jan",
                "2025-01-05",
                "I live in Porto, in a small flat near the river.",
            ),
            ("feb", "2025-02-11", "My sister is visiting next week."),
            (
                "may",
                "2025-05-20",
                "These days I'm based in Lisbon, in a flat near the river.",
            ),
        ],
    );
    let first = |q: &str| {
        let r = m.recall(s, q, &RecallOptions::default()).unwrap();
        let hit = r.hits.first().expect("a hit").clone();
        hit.session_id.clone().unwrap_or_default()
    };
    assert_eq!(first("Where do I live?"), "may");
    assert_eq!(first("Where did I live?"), "jan");
    // As of March the newer statement was not said yet: the newest seen is January's.
    let march = RecallOptions {
        scope: cairn::ScopeOptions {
            as_of: Some(cairn::parse_timestamp("2025-03-01").unwrap()),
            ..Default::default()
        },
        ..RecallOptions::default()
    };
    let r = m.recall(s, "Where do I live?", &march).unwrap();
    assert_eq!(r.hits[0].session_id.as_deref(), Some("jan"));
}

/// A canary: another end user's newer statement in the same space is not the newest
/// statement a partition's recall sees.
#[test]
fn the_newest_statement_is_the_partitions_own() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let s = "shared";
    let of = |user: &str, id: &str, date: &str, text: &str| {
        session(&format!(
            r#"{{"id": "{id}", "date": "{date}", "metadata": {{"user_id": "{user}"}}, "messages": [
            {{"role": "user", "text": "{text}"}},
            {{"role": "assistant", "text": "Thanks for telling me."}}]}}"#
        ))
    };
    m.ingest_session(
        s,
        of(
            "u1",
            "u1-jan",
            "2025-01-05",
            "I live in Porto, in a small flat near the river.",
        ),
    )
    .unwrap();
    m.ingest_session(
        s,
        of(
            "u2",
            "u2-may",
            "2025-05-20",
            "These days I'm based in Lisbon, in a flat near the river.",
        ),
    )
    .unwrap();
    let opts = RecallOptions {
        scope: cairn::ScopeOptions {
            partition: Some(serde_json::json!({"user_id": "u1"})),
            ..Default::default()
        },
        ..RecallOptions::default()
    };
    let r = m.recall(s, "Where do I live?", &opts).unwrap();
    let sessions: Vec<_> = r.hits.iter().map(|h| h.session_id.clone()).collect();
    assert_eq!(
        sessions.first().cloned().flatten().as_deref(),
        Some("u1-jan")
    );
    assert!(!r.context.contains("Lisbon"), "{}", r.context);
}

/// Issue 51: a note an agent saves about "the user", in the third person, is the user's
/// statement: it supersedes what the user said, in the same chain.
#[test]
fn a_third_person_note_about_the_user_is_the_users_fact() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let s = "erin";
    m.ingest_session(s, said("jan", "2025-01-10", "I live in Porto."))
        .unwrap();
    let note = |text: &str, date: &str| cairn::RememberInput {
        memo: cairn::Memo::Note(text.into()),
        session_id: None,
        occurred_at: Some(cairn::parse_timestamp(date).unwrap()),
        metadata: serde_json::Value::Null,
    };
    for (text, date) in [
        ("The user moved to Oslo in March.", "2025-03-20"),
        ("Note: the user is allergic to peanuts.", "2025-03-21"),
    ] {
        m.remember(s, note(text, date), &WriteOptions::default())
            .unwrap();
    }
    let subjects = m.fact_subjects(s, &ScopeOptions::default()).unwrap();
    let mine = |word: &str| {
        subjects
            .iter()
            .find(|f| f.person.as_deref() == Some("user") && f.current_value.contains(word))
            .unwrap_or_else(|| panic!("no fact of the user's naming {word}: {subjects:#?}"))
    };
    assert_eq!(mine("Oslo").versions, 2, "Oslo supersedes Porto");
    mine("peanuts");
}

/// Issue 51: listings and histories say a denied value as such ("dislikes jazz"), not
/// as the value ("jazz").
#[test]
fn a_denied_value_reads_as_denied_in_listings_and_histories() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let s = "fay";
    m.ingest_session(s, said("jan", "2025-01-10", "I love jazz."))
        .unwrap();
    m.ingest_session(
        s,
        said("mar", "2025-03-25", "Honestly I don't like jazz anymore."),
    )
    .unwrap();
    let subjects = m.fact_subjects(s, &ScopeOptions::default()).unwrap();
    let jazz = subjects
        .iter()
        .find(|f| f.current_value.contains("jazz"))
        .unwrap_or_else(|| panic!("no jazz in {subjects:#?}"));
    assert!(jazz.negated, "{jazz:?}");
    assert_eq!(jazz.statement, "dislikes jazz", "{jazz:?}");
    let h = m
        .history(s, &jazz.subject, &ScopeOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(statements(&h), ["jazz", "dislikes jazz"], "{h:#?}");
}

/// Issue 51: a question about the asker, in the words of neither their statement nor
/// anything near it, is answered from their conversations: the relevance floor refuses
/// a question about nothing they said (general knowledge), not one about them.
#[test]
fn a_paraphrased_question_about_the_user_is_not_refused_by_the_floor() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let s = "gail";
    m.ingest_session(
        s,
        said(
            "a",
            "2025-02-11",
            "Stand-up ran long again - the joys of being the most junior developer at Monzo.",
        ),
    )
    .unwrap();
    let opts = RecallOptions::default();
    let about_me = m.recall(s, "Which company pays my salary?", &opts).unwrap();
    assert!(
        !about_me.no_relevant_memory && about_me.context.contains("Monzo"),
        "{about_me:#?}"
    );
    let general = m
        .recall(s, "What is the capital of Mongolia?", &opts)
        .unwrap();
    assert!(general.no_relevant_memory, "{general:#?}");
}
