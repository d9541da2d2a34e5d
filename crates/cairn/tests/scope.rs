//! One space, many users (issue 43): each finding of the issue as a regression test. A
//! scoped request answers as if the space held only what its scope sees, and derived
//! knowledge (chains, profiles, entities) never joins two end users' records.
mod common;
use cairn::{Memory, RecallOptions, ScopeOptions, SessionInput};
use common::{open, session};
use serde_json::{json, Value};

fn said(id: &str, date: &str, user: &str, texts: &[&str]) -> SessionInput {
    let messages: Vec<Value> = texts
        .iter()
        .map(|t| json!({"role": "user", "text": t}))
        .collect();
    session(
        &json!({"id": id, "date": date, "metadata": {"user_id": user}, "messages": messages})
            .to_string(),
    )
}

fn user(u: &str) -> Value {
    json!({ "user_id": u })
}

fn scoped(filter: Value) -> RecallOptions {
    RecallOptions {
        top_k: 10,
        token_budget: 4000,
        explain: true,
        scope: cairn::ScopeOptions {
            filter: Some(filter),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Everything a recall answers, as text: what no scope's answer may hold of another.
fn answer(m: &Memory, space: &str, q: &str, opts: &RecallOptions) -> String {
    serde_json::to_string(&m.recall(space, q, opts).unwrap()).unwrap()
}

fn salaries(m: &Memory) {
    m.ingest_sessions(
        "shared",
        vec![
            said("a1", "2024-03-01", "u1", &["My salary is $50,000."]),
            said(
                "b1",
                "2024-05-01",
                "u2",
                &[
                    "My salary is $185,000.",
                    "I work as a forensic accountant at Deloitte, mostly on money laundering cases.",
                ],
            ),
        ],
    )
    .unwrap();
}

#[test]
fn a_filtered_recall_shows_nothing_of_another_users_values() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    salaries(&m);
    let u1 = answer(&m, "shared", "what is my salary?", &scoped(user("u1")));
    assert!(u1.contains("50,000"), "{u1}");
    for leak in ["185,000", "forensic", "Deloitte", "superseded"] {
        assert!(!u1.contains(leak), "u1's recall holds {leak:?}: {u1}");
    }
    let u2 = answer(&m, "shared", "what is my salary?", &scoped(user("u2")));
    assert!(u2.contains("185,000"), "{u2}");
    for leak in ["50,000", "earlier"] {
        assert!(!u2.contains(leak), "u2's recall holds {leak:?}: {u2}");
    }
    // Unscoped, one user's value still never supersedes another's.
    let all = m
        .recall("shared", "what is my salary?", &RecallOptions::default())
        .unwrap();
    assert!(
        all.hits.iter().all(|h| h.superseded_by.is_none()),
        "{:?}",
        all.hits
    );
    assert!(!all.context.contains("superseded"), "{}", all.context);
    let subjects = m.fact_subjects("shared", &ScopeOptions::default()).unwrap();
    let salary: Vec<_> = subjects.iter().filter(|s| s.subject == "salary").collect();
    assert_eq!(salary.len(), 2, "one chain per user: {subjects:?}");
    assert!(salary.iter().all(|s| s.versions == 1), "{subjects:?}");
}

#[test]
fn profiles_hold_only_what_the_scope_sees() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    salaries(&m);
    let u1 = answer(&m, "shared", "what is my job role?", &scoped(user("u1")));
    for leak in ["forensic", "accountant", "money laundering"] {
        assert!(!u1.contains(leak), "u1's profile holds {leak:?}: {u1}");
    }
    let u2 = ScopeOptions {
        filter: Some(user("u2")),
        ..Default::default()
    };
    let p = m
        .profile("shared", "user", &u2)
        .unwrap()
        .expect("u2's profile");
    assert!(p.summary.contains("forensic accountant"), "{}", p.summary);
    let u1 = ScopeOptions {
        filter: Some(user("u1")),
        ..Default::default()
    };
    let p = m
        .profile("shared", "user", &u1)
        .unwrap()
        .expect("u1's profile");
    assert!(!p.summary.contains("accountant"), "{}", p.summary);
    // Unscoped, "user" is two people: the request must say whose.
    let e = m
        .profile("shared", "user", &ScopeOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("partitions"), "{e}");
}

#[test]
fn a_group_scope_sees_only_its_groups_statements_and_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let group = |id: &str, g: &str, date: &str, lines: &[(&str, &str)]| {
        let messages: Vec<Value> = lines
            .iter()
            .map(|(who, t)| json!({"speaker": who, "text": t}))
            .collect();
        session(&json!({"id": id, "date": date, "group": g, "messages": messages}).to_string())
    };
    m.ingest_sessions(
        "team",
        vec![
            group(
                "atlas-1",
                "Atlas",
                "2024-03-01",
                &[
                    (
                        "Maya",
                        "The budget for Project Atlas is $120,000 for the quarter.",
                    ),
                    ("Maya", "I'm the QA lead on this project."),
                ],
            ),
            group(
                "beacon-1",
                "Beacon",
                "2024-04-01",
                &[
                    (
                        "Omar",
                        "Heads up: the Atlas budget has been cut to $95,000.",
                    ),
                    ("Maya", "I'm the design lead for Beacon."),
                ],
            ),
        ],
    )
    .unwrap();
    let atlas = RecallOptions {
        scope: cairn::ScopeOptions {
            groups: Some(vec!["Atlas".into()]),
            ..scoped(json!({})).scope
        },
        ..scoped(json!({}))
    };
    let r = answer(&m, "team", "What is the Atlas budget?", &atlas);
    assert!(r.contains("120,000"), "{r}");
    assert!(!r.contains("95,000"), "the Atlas scope cites Beacon: {r}");
    let r = answer(&m, "team", "What is Maya's role?", &atlas);
    assert!(
        !r.contains("design lead"),
        "the Atlas scope shows Beacon's role: {r}"
    );
    let groups = ScopeOptions {
        groups: Some(vec!["Atlas".into()]),
        ..Default::default()
    };
    let p = m.profile("team", "Maya", &groups).unwrap().expect("Maya");
    assert!(p.summary.contains("QA lead"), "{}", p.summary);
    assert!(!p.summary.contains("design"), "{}", p.summary);
    let h = m
        .history("team", "Atlas budget", &groups)
        .unwrap()
        .expect("Atlas's chain");
    assert_eq!(h.versions.len(), 1, "{h:?}");
    let all = m
        .history("team", "Atlas budget", &ScopeOptions::default())
        .unwrap()
        .expect("the whole chain");
    assert_eq!(all.versions.len(), 2, "{all:?}");
}

#[test]
fn one_namespaces_value_never_supersedes_anothers() {
    // What the LangGraph adapter writes: an item per session, its namespace in the
    // metadata.
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let item = |id: &str, ns: &[&str], date: &str, text: &str| {
        session(
            &json!({"id": id, "date": date, "metadata": {"namespace": ns},
                    "messages": [{"role": "user", "text": text}]})
            .to_string(),
        )
    };
    m.ingest_sessions(
        "lg",
        vec![
            item(
                "drink",
                &["users", "u1", "prefs"],
                "2024-01-01",
                "likes: Oolong tea\nlevel: 1",
            ),
            item(
                "food",
                &["users", "u2", "prefs"],
                "2024-02-01",
                "likes: spicy ramen\nlevel: 2",
            ),
        ],
    )
    .unwrap();
    let u1 = json!({"namespace": {"contains": "u1"}});
    let r = answer(&m, "lg", "what level?", &scoped(u1.clone()));
    assert!(r.contains("Oolong"), "{r}");
    assert!(!r.contains("superseded"), "{r}");
    assert!(!r.contains("ramen"), "{r}");
    let all = m
        .recall("lg", "what level?", &RecallOptions::default())
        .unwrap();
    assert!(
        all.hits.iter().all(|h| h.superseded_by.is_none()),
        "{all:?}"
    );
    let subjects = m.fact_subjects("lg", &ScopeOptions::default()).unwrap();
    let level: Vec<_> = subjects.iter().filter(|s| s.subject == "level").collect();
    assert_eq!(level.len(), 2, "one chain per namespace: {subjects:?}");
    assert!(level.iter().all(|s| s.versions == 1), "{subjects:?}");
    let e = m
        .history("lg", "level", &ScopeOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("partitions"), "{e}");
    let mine = ScopeOptions {
        filter: Some(u1),
        ..Default::default()
    };
    let h = m
        .history("lg", "level", &mine)
        .unwrap()
        .expect("u1's level");
    assert_eq!(h.versions.len(), 1, "{h:?}");
    assert_eq!(h.versions[0].value, "1");
}

#[test]
fn writes_say_nothing_of_what_another_user_stored() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    salaries(&m);
    let again = said("c1", "2024-06-01", "u3", &["My salary is $185,000."]);
    let r = m.ingest_session("shared", again).unwrap();
    assert_eq!(r.vectors_cached, 0, "{r:?}");
    // The same user's own text is cached for them.
    let mine = said("b2", "2024-06-01", "u2", &["My salary is $185,000."]);
    let r = m.ingest_session("shared", mine).unwrap();
    assert!(r.vectors_cached > 0, "{r:?}");
}

#[test]
fn as_of_hides_later_undated_records_from_facts_and_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    m.ingest_sessions(
        "t",
        vec![
            session(
                r#"{"id": "old", "date": "2019-06-01", "messages": [
                {"role": "user", "text": "My locker code is 1234."}]}"#,
            ),
            // Undated, so seen from when it is recorded: today.
            session(
                r#"{"id": "new", "messages": [
                {"role": "user", "text": "My locker code is 7777."}]}"#,
            ),
            session(
                r#"{"id": "role", "date": "2024-05-01", "messages": [
                {"role": "user", "text": "I'm the QA lead now."}]}"#,
            ),
        ],
    )
    .unwrap();
    let t = |s: &str| Some(cairn::parse_timestamp(s).unwrap());
    let in_2020 = ScopeOptions {
        as_of: t("2020-01-01"),
        ..Default::default()
    };
    let subjects = m.fact_subjects("t", &in_2020).unwrap();
    assert!(
        !serde_json::to_string(&subjects).unwrap().contains("7777"),
        "{subjects:?}"
    );
    let h = m.history("t", "locker code", &in_2020).unwrap().unwrap();
    assert_eq!(h.versions.len(), 1, "{h:?}");
    let opts = RecallOptions {
        scope: cairn::ScopeOptions {
            as_of: t("2020-01-01"),
            ..scoped(json!({})).scope
        },
        ..scoped(json!({}))
    };
    let r = answer(&m, "t", "what is my locker code?", &opts);
    assert!(r.contains("1234") && !r.contains("7777"), "{r}");
    let april = ScopeOptions {
        as_of: t("2024-04-01"),
        ..Default::default()
    };
    let p = m.profile("t", "user", &april).unwrap();
    assert!(
        p.as_ref().is_none_or(|p| !p.summary.contains("QA lead")),
        "{p:?}"
    );
    let p = m.profile("t", "user", &ScopeOptions::default()).unwrap();
    assert!(p.unwrap().summary.contains("QA lead"));
}

#[test]
fn a_filter_does_not_starve_a_small_user() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    m.ingest_session(
        "pets",
        said("luna", "2024-01-01", "u3", &["I adopted a cat named Luna."]),
    )
    .unwrap();
    let animals = ["dog", "parrot", "hamster", "rabbit", "goldfish", "turtle"];
    let crowd: Vec<SessionInput> = (0..600)
        .map(|i| {
            let a = animals[i % animals.len()];
            said(
                &format!("p{i}"),
                "2024-02-01",
                "u4",
                &[&format!(
                    "My {a} number {i} lives with me and loves the garden."
                )],
            )
        })
        .collect();
    m.ingest_sessions("pets", crowd).unwrap();
    let r = m
        .recall("pets", "which animal lives with me?", &scoped(user("u3")))
        .unwrap();
    assert!(
        r.hits
            .iter()
            .any(|h| h.session_id.as_deref() == Some("luna")),
        "{:?}",
        r.explain.map(|e| e.counts)
    );
    let counts = r.explain.unwrap().counts;
    assert!(counts.dense >= 1 && counts.visible >= 1, "{counts:?}");
}

#[test]
fn explain_counts_are_those_of_a_space_holding_only_the_scope() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let lines = |g: &str, n: usize| -> Vec<SessionInput> {
        (0..n)
            .map(|i| {
                session(
                    &json!({"id": format!("{g}-{i}"), "group": g,
                            "date": format!("2024-01-{:02}", i % 28 + 1),
                            "messages": [
                                {"speaker": "Ines", "text": format!("Ines checked the harbor crane {i} today.")},
                                {"speaker": "Rui", "text": "Thanks Ines, noted."}]})
                    .to_string(),
                )
            })
            .collect()
    };
    m.ingest_sessions("big", lines("North", 3)).unwrap();
    m.ingest_sessions("big", lines("South", 60)).unwrap();
    m.ingest_sessions("small", lines("North", 3)).unwrap();
    let opts = RecallOptions {
        scope: cairn::ScopeOptions {
            groups: Some(vec!["North".into()]),
            ..scoped(json!({})).scope
        },
        ..scoped(json!({}))
    };
    let counts = |space: &str| {
        m.recall(space, "What did Ines check?", &opts)
            .unwrap()
            .explain
            .unwrap()
            .counts
    };
    assert_eq!(counts("big"), counts("small"));
}
