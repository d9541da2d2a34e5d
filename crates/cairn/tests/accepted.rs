//! Accepted means readable: whatever any write entry point of the library accepts (a
//! session, an append, group messages, a trajectory, an import) can be listed, exported,
//! re-imported into a fresh store byte for byte, re-derived by `check --rebuild`, checked
//! consistent and recalled; whatever it refuses changes nothing. Inputs are generated
//! from pools of the shapes that broke or nearly broke the store (years outside
//! 0001-9999, time zones that cross them, weekdays that disagree with their date, NUL
//! and control characters in every string field, metadata that is not an object) and
//! that reach every decoder's limits: metadata and outcomes nested up to and past the
//! JSON parser's 128 levels (issue 38: 125 levels of message metadata made a space
//! unreadable), numbers at the edges of f64, i64 and u64, unusual Unicode, long
//! strings. Every write goes in as JSON text, as it does over HTTP.
use cairn::{Memory, MemoryConfig, RecallOptions, WriteOptions};
use cairn_testkit::HashEmbedder;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::sync::Arc;

fn open(dir: &std::path::Path) -> Memory {
    Memory::open_with_embedder(dir, MemoryConfig::default(), Arc::new(HashEmbedder)).expect("open")
}

const TIMES: &[&str] = &[
    "2024-03-01",
    "2024-03-01 09:30",
    "2023/05/30 (Tue) 23:40",
    "2023/05/30 (Fri) 23:40",
    "1:56 pm on 8 May, 2023",
    "0001-01-01",
    "9999-12-31T23:59:59Z",
    "-0001-01-01",
    "-9999-01-01",
    "9999-12-31T23:59:59-05:00",
    "0000-01-01T00:00:00+05:00",
    "+10000-01-01T00:00:00Z",
    "2024-02-30",
    "yesterday",
];

const TEXTS: &[&str] = &[
    "hello there",
    "\u{feff}\u{200b}zero\u{200d}width\u{2028}separators",
    "\u{10ffff}\u{e000} private use, Ω≈ç√ \u{301}combining",
    "I moved to Lisbon last week.",
    "",
    "   ",
    "\u{1}\u{2}",
    "a\u{0}b",
    "Zoë sagte: «Grüß Gott» 🚀",
    "\u{202e}reversed",
    "line\nbreak\ttab",
];

const NAMES: &[&str] = &[
    "s1",
    "g/2024-01-01",
    "Zoë",
    "../x",
    "/etc",
    "a\u{7}b",
    "a\u{0}b",
    "",
    " ",
];

fn pick(pool: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    proptest::sample::select(pool)
}

fn maybe_time() -> impl Strategy<Value = Option<&'static str>> {
    proptest::option::of(pick(TIMES))
}

/// `depth` levels of arrays and objects around `leaf` (depth 1 is `leaf` itself), built
/// without `json!`, which recurses.
fn nested(depth: usize, leaf: Value) -> Value {
    (1..depth).fold(leaf, |v, i| match i % 2 {
        0 => Value::Array(vec![v]),
        _ => Value::Object([("k".to_string(), v)].into_iter().collect()),
    })
}

/// A JSON value of any shape a client might send as metadata or an outcome: the pool
/// above, nested from shallow to past the parser's limit, edge numbers, long and odd
/// strings.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = proptest::sample::select(vec![
        json!(1),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(f64::MAX),
        json!(-f64::MAX),
        json!(5e-324),
        json!(-0.0),
        json!(1.0e300),
        json!("\u{10ffff}\u{feff}\u{202e}"),
        json!("a\u{0}b"),
        json!(null),
        json!(true),
    ]);
    prop_oneof![
        proptest::sample::select(vec![
            json!({}),
            json!({"user_id": "u1", "n": 3}),
            json!("a string"),
            json!([1, 2]),
            json!({"k": "a\u{0}b"}),
            json!({"a\u{0}": 1}),
            json!({"deep": {"er": [{"k": "\u{0}"}]}}),
            json!(7),
        ]),
        (1usize..140, leaf.clone()).prop_map(|(d, leaf)| nested(d, leaf)),
        (1usize..40, leaf).prop_map(|(d, leaf)| json!({ "m": nested(d, leaf) })),
        (0usize..100_000).prop_map(|n| json!({ "long": "x".repeat(n) })),
        (0usize..20_000).prop_map(|n| json!({ "many": vec![u64::MAX; n] })),
    ]
}

fn metadata() -> impl Strategy<Value = Option<Value>> {
    proptest::option::of(any_json())
}

fn message() -> impl Strategy<Value = Value> {
    (
        proptest::option::of(pick(&["user", "assistant", "system", "wizard"])),
        proptest::option::of(pick(NAMES)),
        pick(TEXTS),
        maybe_time(),
        proptest::option::of(pick(&["m1", "m2", "m1"])),
        metadata(),
    )
        .prop_map(|(role, speaker, text, time, id, meta)| {
            let mut m = json!({ "text": text });
            let o = m.as_object_mut().expect("object");
            role.map(|r| o.insert("role".into(), json!(r)));
            speaker.map(|s| o.insert("speaker".into(), json!(s)));
            time.map(|t| o.insert("occurred_at".into(), json!(t)));
            id.map(|i| o.insert("id".into(), json!(i)));
            meta.map(|v| o.insert("metadata".into(), v));
            m
        })
}

fn session() -> impl Strategy<Value = Value> {
    (
        pick(NAMES),
        maybe_time(),
        proptest::collection::vec(message(), 0..4),
        metadata(),
    )
        .prop_map(|(id, date, messages, meta)| {
            let mut s = json!({ "id": id, "messages": messages });
            let o = s.as_object_mut().expect("object");
            date.map(|d| o.insert("date".into(), json!(d)));
            meta.map(|v| o.insert("metadata".into(), v));
            s
        })
}

fn group_message() -> impl Strategy<Value = Value> {
    (
        pick(NAMES),
        pick(NAMES),
        pick(TIMES),
        pick(TEXTS),
        metadata(),
    )
        .prop_map(|(speaker, group, time, text, meta)| {
            let mut m = json!({"speaker": speaker, "group": group, "time": time, "text": text});
            meta.map(|v| m.as_object_mut().map(|o| o.insert("metadata".into(), v)));
            m
        })
}

fn trajectory() -> impl Strategy<Value = Value> {
    (
        pick(NAMES),
        pick(TEXTS),
        maybe_time(),
        proptest::collection::vec((pick(TEXTS), pick(TEXTS)), 0..3),
        metadata(),
        prop_oneof![Just(json!("success")), any_json()],
    )
        .prop_map(|(id, goal, date, states, meta, outcome)| {
            let states: Vec<Value> = states
                .into_iter()
                .map(|(action, observation)| json!({"url": "http://a/", "action": action, "observation": observation}))
                .collect();
            let mut t = json!({"id": id, "goal": goal, "outcome": outcome, "states": states});
            let o = t.as_object_mut().expect("object");
            date.map(|d| o.insert("occurred_at".into(), json!(d)));
            meta.map(|v| o.insert("metadata".into(), v));
            t
        })
}

/// One write through one entry point; `Err` when the input is refused (it must not
/// parse, or the library must refuse it).
#[derive(Debug, Clone)]
enum Write {
    Session(Value),
    Append(Value),
    Group(Vec<Value>),
    Trajectory(Value),
    /// An export line, possibly with its `recorded_at` replaced.
    Import(Value, Option<&'static str>),
}

fn write() -> impl Strategy<Value = Write> {
    prop_oneof![
        session().prop_map(Write::Session),
        (
            pick(NAMES),
            proptest::collection::vec(message(), 0..3),
            maybe_time(),
            metadata()
        )
            .prop_map(|(id, messages, at, meta)| {
                let mut a = json!({"session_id": id, "messages": messages});
                let o = a.as_object_mut().expect("object");
                at.map(|t| o.insert("occurred_at".into(), json!(t)));
                meta.map(|v| o.insert("metadata".into(), v));
                Write::Append(a)
            }),
        proptest::collection::vec(group_message(), 0..3).prop_map(Write::Group),
        trajectory().prop_map(Write::Trajectory),
        (session(), maybe_time()).prop_map(|(s, at)| Write::Import(s, at)),
    ]
}

/// Through JSON text, as a server reads a body (`from_value` has no depth limit).
fn parse<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, String> {
    serde_json::from_str(&v.to_string()).map_err(|e| e.to_string())
}

fn apply(m: &Memory, space: &str, w: &Write) -> Result<(), String> {
    let opts = WriteOptions::default();
    let r = match w {
        Write::Session(v) => m.ingest_sessions_with(space, vec![parse(v)?], &opts),
        Write::Append(v) => m.append(space, parse(v)?, &opts),
        Write::Group(vs) => {
            let msgs = vs.iter().map(parse).collect::<Result<Vec<_>, _>>()?;
            m.ingest_group_messages_with(space, msgs, &opts)
        }
        Write::Trajectory(v) => m
            .trajectories()
            .insert_many_with(space, vec![parse(v)?], &opts),
        Write::Import(session, at) => {
            let line = json!({
                "space": space,
                "recorded_at": at.unwrap_or("2024-01-01T00:00:00Z"),
                "session": session,
            });
            m.import_with(line.to_string().as_bytes(), None, &opts)
        }
    };
    r.map(|_| ()).map_err(|e| e.to_string())
}

fn export(m: &Memory, space: &str) -> Vec<u8> {
    let mut out = Vec::new();
    if m.space_exists(space).expect("exists") {
        m.export(space, &mut out)
            .expect("an accepted write must stay exportable");
    }
    out
}

/// Everything that must hold of a store after any sequence of writes.
fn readable(m: &Memory, space: &str) {
    let before = export(m, space);
    if before.is_empty() {
        return;
    }
    let check = m.check(false).expect("check");
    assert!(check.unreadable.is_empty(), "{:?}", check.unreadable);
    assert!(check.consistent, "{check:?}");
    m.list_sessions(space, &Default::default(), 0, 100)
        .expect("sessions list");
    m.space_units(space).expect("units list");
    m.stats(space).expect("stats");
    m.recall(space, "hello Lisbon", &RecallOptions::default())
        .expect("recall");
    let filtered = RecallOptions {
        scope: cairn::ScopeOptions {
            filter: Some(json!({"user_id": "u1"})),
            as_of: Some(chrono::Utc::now()),
            ..Default::default()
        },
        ..Default::default()
    };
    m.recall(space, "hello", &filtered)
        .expect("filtered recall");
    // Re-imported into a fresh store, the export reads back byte for byte.
    let fresh = tempfile::tempdir().expect("tempdir");
    let other = open(fresh.path());
    other.import(before.as_slice()).expect("re-import");
    assert_eq!(export(&other, space), before, "export -> import -> export");
    // Re-derived from the record, nothing is lost and everything agrees.
    let rebuilt = m.check(true).expect("rebuild");
    assert!(rebuilt.unreadable.is_empty());
    assert_eq!(export(m, space), before, "rebuild changed the record");
    assert!(m.check(false).expect("check").consistent);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn whatever_is_accepted_stays_readable_and_refused_writes_change_nothing(
        writes in proptest::collection::vec(write(), 1..5)
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let m = open(dir.path());
        for w in &writes {
            let before = export(&m, "p");
            if apply(&m, "p", w).is_err() {
                prop_assert_eq!(export(&m, "p"), before, "a refused write changed the store: {:?}", w);
            }
        }
        readable(&m, "p");
    }
}

/// The findings that started this test, one by one: each date shape is either refused
/// or stored in a form that reads back, on every time field.
#[test]
fn dates_outside_the_rfc3339_years_are_refused_on_every_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = open(dir.path());
    for bad in [
        "-0001-01-01",
        "-9999-01-01",
        "9999-12-31T23:59:59-05:00",
        "0000-01-01T00:00:00+05:00",
    ] {
        let session = json!({"id": "s", "date": bad, "messages": [{"role": "user", "text": "hi"}]});
        assert!(
            serde_json::from_value::<cairn::SessionInput>(session).is_err(),
            "{bad}"
        );
        let message =
            json!({"id": "s", "messages": [{"role": "user", "text": "hi", "occurred_at": bad}]});
        assert!(
            serde_json::from_value::<cairn::SessionInput>(message).is_err(),
            "{bad}"
        );
        let group = json!({"speaker": "a", "group": "g", "time": bad, "text": "hi"});
        assert!(
            serde_json::from_value::<cairn::GroupMessage>(group).is_err(),
            "{bad}"
        );
        let line = json!({"space": "p", "recorded_at": bad, "session": {"id": "s", "messages": [{"role": "user", "text": "hi"}]}});
        assert!(m.import(line.to_string().as_bytes()).is_err(), "{bad}");
    }
    assert!(!m.space_exists("p").expect("exists"));
}
