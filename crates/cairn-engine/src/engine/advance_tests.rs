//! A write advances what is cached of its space (`advance.rs`): after any sequence of
//! appends, ingests, group messages and forgets (of a message, or of a session's last
//! one), the fact and contribution lists, the fact index, the profiles and the session
//! catalog are cached at the space's new generation (the next request reads nothing
//! again) and equal what a fresh read of the store gives.
use super::cost_tests::engine;
use super::knowledge::{profiles_key, topic_key, TOPICS};
use super::receipt::WriteOptions;
use super::state::Engine;
use crate::facts::FactIndex;
use crate::profile::Profiles;
use cairn_core::{AppendInput, GroupMessage, Scope, SessionInput, SpaceId, Unit};
use proptest::prelude::*;
use serde_json::json;

const STATEMENTS: &[&str] = &[
    "I moved to {} last month.",
    "I work at {} these days.",
    "My favourite food is {}.",
    "Actually, scratch that: I live in {} now.",
];
const VALUES: &[&str] = &["Lisbon", "Oslo", "Kyoto", "Acme", "Globex", "ramen"];

#[derive(Debug, Clone)]
enum Op {
    /// An exchange appended to one of three live sessions.
    Append {
        session: u8,
        statement: u8,
        value: u8,
    },
    /// A new dated session of one exchange.
    Ingest { statement: u8, value: u8 },
    /// A group chat message by a named speaker.
    Group { speaker: u8, value: u8 },
    /// The first message of a live session forgotten (the session with it when it was
    /// the last).
    Forget { session: u8 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3u8, 0..4u8, 0..6u8).prop_map(|(session, statement, value)| Op::Append { session, statement, value }),
        2 => (0..4u8, 0..6u8).prop_map(|(statement, value)| Op::Ingest { statement, value }),
        1 => (0..3u8, 0..6u8).prop_map(|(speaker, value)| Op::Group { speaker, value }),
        1 => (0..3u8).prop_map(|session| Op::Forget { session }),
    ]
}

fn said(statement: u8, value: u8) -> String {
    STATEMENTS[statement as usize].replace("{}", VALUES[value as usize])
}

fn run(e: &Engine, space: &SpaceId, k: usize, op: &Op) {
    let w = WriteOptions::default();
    match *op {
        Op::Append {
            session,
            statement,
            value,
        } => {
            let input: AppendInput = serde_json::from_value(json!({
                "session_id": format!("live{session}"),
                "messages": [
                    {"role": "user", "text": said(statement, value)},
                    {"role": "assistant", "text": "Noted."}]
            }))
            .expect("append");
            e.writes().append(space, input, &w).expect("append");
        }
        Op::Ingest { statement, value } => {
            let s: SessionInput = serde_json::from_value(json!({
                "id": format!("new{k}"), "date": format!("2025-03-{:02} 10:00", 1 + k % 28),
                "messages": [{"role": "user", "text": said(statement, value)}]
            }))
            .expect("session");
            e.writes()
                .ingest_sessions(space, vec![s], &w)
                .expect("ingest");
        }
        Op::Group { speaker, value } => {
            let name = ["Ana", "Rui", "Mei"][speaker as usize];
            let m: GroupMessage = serde_json::from_value(json!({
                "group": "team", "speaker": name,
                "time": format!("2025-04-01T10:{:02}:00Z", k % 60),
                "text": format!("I moved to {} last week.", VALUES[value as usize])
            }))
            .expect("group message");
            e.writes()
                .ingest_group_messages(space, vec![m], &w)
                .expect("group");
        }
        Op::Forget { session } => {
            let id = format!("live{session}");
            let first =
                e.b.records
                    .get_session(space, &id)
                    .expect("read")
                    .and_then(|r| r.session.messages.first().map(|m| m.id.clone()));
            if let Some(m) = first {
                e.forgetting()
                    .forget_message(space, &id, &m)
                    .expect("forget");
            }
        }
    }
}

/// Reads every cache a write advances, so that the next write has entries to advance.
fn warm(e: &Engine, space: &SpaceId) {
    e.knowledge().fact_index(space).expect("fact index");
    e.knowledge().contributions(space).expect("contributions");
    e.catalog(space).expect("catalog");
    let view = e.view(space, &Scope::default()).expect("view");
    e.knowledge().profiles_in(space, &view).expect("profiles");
}

/// What is cached at the space's current generation is there before anything is read,
/// and equals a fresh read.
fn agrees(e: &Engine, space: &SpaceId, what: &str) {
    let generation = e.b.records.generation(space).expect("generation");
    for prefix in TOPICS {
        let fresh = e.b.records.topic_units(space, prefix).expect("topic");
        let cached = e
            .derived
            .get::<Vec<Unit>>(&topic_key(space, prefix), generation)
            .unwrap_or_else(|| panic!("{what}: {prefix} not advanced"));
        assert_eq!(*cached, fresh, "{what}: {prefix} list");
        let served = e
            .knowledge()
            .topic_units_cached(space, prefix)
            .expect("served")
            .1;
        assert_eq!(*served, fresh, "{what}: {prefix} served");
    }
    let index = e
        .knowledge()
        .built_fact_index(space)
        .expect("index")
        .unwrap_or_else(|| panic!("{what}: fact index not advanced"));
    let fresh = e.b.records.topic_units(space, "fact:").expect("facts");
    assert_eq!(index.facts().as_slice(), fresh, "{what}: fact index");
    // The advanced index (a core and a tail of appended facts) answers as one built
    // from the fresh read: every fact's chain, and what each message states.
    let built = FactIndex::new(std::sync::Arc::new(fresh.clone()));
    let ids = |chain: Vec<&Unit>| chain.iter().map(|u| u.id.clone()).collect::<Vec<_>>();
    for f in &fresh {
        assert_eq!(
            ids(index.chain_of(f, |_| true)),
            ids(built.chain_of(f, |_| true)),
            "{what}: the chain of {}",
            f.id
        );
        let (s, m) = (
            f.provenance.session_id.as_deref().unwrap_or_default(),
            &f.provenance.message_ids[0],
        );
        assert_eq!(
            ids(index.stated_in(s, m).collect()),
            ids(built.stated_in(s, m).collect()),
            "{what}: facts of {s}/{m}"
        );
        assert_eq!(index.get(&f.id), Some(f), "{what}: {}", f.id);
        if let Some(person) = crate::facts::detail(f).and_then(|d| d.person.as_deref()) {
            let partition = f.provenance.partition.as_deref();
            assert_eq!(
                ids(index.of_person(partition, person)),
                ids(built.of_person(partition, person)),
                "{what}: facts about {person}"
            );
        }
        // And what the card and profiles ask: whose facts a person's are, and one fact
        // of each of their subjects.
        let Some(d) = crate::facts::detail(f) else {
            continue;
        };
        let (Some(person), Some(category)) = (d.person.as_deref(), d.category) else {
            continue;
        };
        let sorted = |v: Vec<Option<&str>>| {
            let mut v: Vec<Option<String>> = v.into_iter().map(|p| p.map(str::to_string)).collect();
            v.sort();
            v
        };
        assert_eq!(
            sorted(index.partitions_of(person)),
            sorted(built.partitions_of(person)),
            "{what}: partitions of {person}"
        );
        let subjects = |found: Vec<&Unit>| {
            let mut chains: Vec<Vec<String>> = found
                .into_iter()
                .map(|f| ids(built.chain_of(f, |_| true)))
                .collect();
            chains.sort();
            chains.dedup();
            chains
        };
        let partition = f.provenance.partition.as_deref();
        assert_eq!(
            subjects(index.about_in(partition, person, category)),
            subjects(built.about_in(partition, person, category)),
            "{what}: subjects of {person}"
        );
    }
    // The profiles kept by the writes give what sums of a fresh read give.
    let kept = e
        .derived
        .get::<Profiles>(&profiles_key(space), generation)
        .unwrap_or_else(|| panic!("{what}: profiles not advanced"));
    let fresh = Profiles::new(&e.b.records.topic_units(space, "speaker:").expect("read"));
    assert_eq!(kept.speakers(), fresh.speakers(), "{what}: speakers");
    for speaker in fresh.speakers() {
        assert_eq!(
            kept.profiles(&speaker),
            fresh.profiles(&speaker),
            "{what}: the profile of {speaker}"
        );
    }
    let headers = e.b.records.session_headers(space).expect("headers");
    let catalog = e.catalog(space).expect("catalog");
    assert_eq!(
        catalog.headers(),
        headers.iter().collect::<Vec<_>>(),
        "{what}: catalog"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_write_advances_the_cached_state_to_what_a_fresh_read_gives(
        ops in proptest::collection::vec(op(), 1..14)
    ) {
        let dir = tempfile::tempdir().expect("dir");
        let e = engine(dir.path());
        let space = SpaceId::new("live").expect("space");
        run(&e, &space, 0, &Op::Append { session: 0, statement: 0, value: 0 });
        // (Checked first: the ops may forget every fact.)
        let facts = e.knowledge().all_facts(&space).expect("facts");
        prop_assert!(!facts.is_empty(), "the statements made no facts");
        warm(&e, &space);
        for (k, op) in ops.iter().enumerate() {
            run(&e, &space, k + 1, op);
            agrees(&e, &space, &format!("after {op:?} (step {k})"));
            warm(&e, &space);
        }
    }
}
