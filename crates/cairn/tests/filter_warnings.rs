//! A filter that cannot match says so (issue 53): a metadata key no session the request
//! may see carries is a warning beside the answer, never a refusal, and what a request
//! learns of the keys seen is only its own partition's (docs/scope.md).
use cairn::{Memory, MemoryConfig, RecallOptions, ScopeOptions, SessionInput, Warning};
use cairn_testkit::HashEmbedder;
use serde_json::{json, Value};
use std::sync::Arc;

fn open(dir: &std::path::Path) -> Memory {
    Memory::open_with_embedder(dir, MemoryConfig::default(), Arc::new(HashEmbedder)).expect("open")
}

fn said(id: &str, metadata: Value, text: &str) -> SessionInput {
    serde_json::from_value(json!({
        "id": id, "date": "2024-03-01", "metadata": metadata,
        "messages": [{"role": "user", "text": text}]
    }))
    .expect("session")
}

/// Two end users of one space, each with a metadata key of their own.
fn two_users(m: &Memory) {
    m.ingest_sessions(
        "shared",
        vec![
            said(
                "a1",
                json!({"user_id": "u1", "source": "web", "profile": {"tier": "gold"}, "u1_only_key": 1}),
                "My cat is called Luna.",
            ),
            said(
                "b1",
                json!({"user_id": "u2", "source": "app", "u2_canary_key": true}),
                "My dog is called Rex.",
            ),
        ],
    )
    .expect("ingest");
}

/// A read's warnings: a recall's own, or (with a partition, which a pinned key sets on
/// every read; `RecallOptions` has none of its own yet) the facade's for the scope.
fn recall(m: &Memory, filter: Value, partition: Option<Value>) -> Vec<Warning> {
    if partition.is_some() {
        return m
            .filter_warnings("shared", &scope(filter, partition))
            .expect("warnings");
    }
    let opts = RecallOptions {
        scope: cairn::ScopeOptions {
            filter: Some(filter),
            ..Default::default()
        },
        ..Default::default()
    };
    m.recall("shared", "what is my pet called?", &opts)
        .expect("recall")
        .warnings
}

fn scope(filter: Value, partition: Option<Value>) -> ScopeOptions {
    ScopeOptions {
        filter: Some(filter),
        partition,
        ..Default::default()
    }
}

#[test]
fn a_misspelt_key_is_a_warning_naming_the_field_and_the_keys_seen() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path());
    two_users(&m);
    let r = m
        .recall(
            "shared",
            "what is my pet called?",
            &RecallOptions {
                scope: cairn::ScopeOptions {
                    filter: Some(json!({"userid": "u1"})),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .unwrap();
    // The answer is the one the filter gives (nothing), with the warning beside it.
    assert!(r.hits.is_empty(), "{:?}", r.hits);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0];
    assert_eq!(w.code, "unknown_filter_key");
    assert_eq!(w.field, "filter.userid");
    assert_eq!(
        w.message,
        "no session of this space carries metadata key \"userid\" (keys seen: profile, source, u1_only_key, u2_canary_key, user_id)"
    );
    // In JSON, as every surface carries it.
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["warnings"][0]["field"], "filter.userid", "{v}");
}

#[test]
fn keys_carried_and_the_documents_own_fields_are_not_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path());
    two_users(&m);
    for filter in [
        json!({"user_id": "u1"}),
        json!({"metadata.source": {"in": ["web", "app"]}}),
        json!({"session_id": "a1", "group": {"ne": "x"}, "occurred_at": {"gte": "2024-01-01"}}),
        json!({"profile.tier": "gold"}),
        json!({"metadata": {"ne": null}}),
        json!({"user_id": "nobody"}),
    ] {
        assert_eq!(recall(&m, filter.clone(), None), vec![], "{filter}");
    }
    // An answer without a filter says nothing either, and costs nothing.
    let plain = m
        .recall(
            "shared",
            "what is my pet called?",
            &RecallOptions::default(),
        )
        .unwrap();
    assert!(plain.warnings.is_empty());
    assert!(!serde_json::to_string(&plain).unwrap().contains("warnings"));
}

#[test]
fn every_condition_is_checked_where_it_is_written_and_nested_keys_whole() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path());
    two_users(&m);
    let ws = recall(
        &m,
        json!({"or": [
            {"user_id": "u1"},
            {"field": "sorce", "op": "eq", "value": "web"},
            {"not": {"profile.teir": {"in": ["gold"]}}},
        ]}),
        None,
    );
    let got: Vec<(&str, &str)> = ws
        .iter()
        .map(|w| (w.field.as_str(), w.message.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "filter.or[1].field",
                "no session of this space carries metadata key \"sorce\" (keys seen: profile, source, u1_only_key, u2_canary_key, user_id)"
            ),
            (
                "filter.or[2].not.profile.teir",
                "no session of this space carries metadata key \"profile.teir\" (keys seen under \"profile\": tier)"
            ),
        ]
    );
}

/// The canary: a request pinned to one end user learns nothing of another's sessions,
/// not even the names of their metadata keys, and a key only another user carries is
/// warned of as if no one carried it.
#[test]
fn a_partition_scoped_request_learns_no_other_partitions_key_names() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path());
    two_users(&m);
    let u1 = Some(json!({"user_id": "u1"}));
    let ws = recall(&m, json!({"userid": "u1"}), u1.clone());
    assert_eq!(ws.len(), 1, "{ws:?}");
    assert_eq!(
        ws[0].message,
        "no session this request may see carries metadata key \"userid\" (keys seen: profile, source, u1_only_key, user_id)"
    );
    let ws = recall(&m, json!({"u2_canary_key": true}), u1.clone());
    assert_eq!(
        ws.len(),
        1,
        "another user's key is no key of this request: {ws:?}"
    );
    let all = serde_json::to_string(&ws).unwrap();
    assert!(!all.contains("app"), "{all}");
    // The same request for u2 sees its own key, and none of u1's names.
    let u2 = Some(json!({"user_id": "u2"}));
    assert_eq!(
        recall(&m, json!({"u2_canary_key": true}), u2.clone()),
        vec![]
    );
    let ws = recall(&m, json!({"userid": "u2"}), u2);
    let all = serde_json::to_string(&ws).unwrap();
    for leak in ["u1_only_key", "profile"] {
        assert!(!all.contains(leak), "u2 learned {leak:?}: {all}");
    }
    // `sessions` and `groups` narrow the keys seen the same way.
    let only_b1 = ScopeOptions {
        sessions: Some(vec!["b1".into()]),
        ..scope(json!({"u1_only_key": 1}), None)
    };
    let ws = m.filter_warnings("shared", &only_b1).unwrap();
    assert_eq!(ws.len(), 1, "{ws:?}");
    assert!(!ws[0].message.contains("u1_only_key,"), "{}", ws[0].message);
}

#[test]
fn a_key_written_after_a_warning_is_seen_by_the_next_read() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path());
    two_users(&m);
    let filter = json!({"team": "atlas"});
    assert_eq!(recall(&m, filter.clone(), None).len(), 1);
    m.ingest_sessions(
        "shared",
        vec![said(
            "c1",
            json!({"team": "atlas"}),
            "The budget is $100,000.",
        )],
    )
    .unwrap();
    assert_eq!(
        recall(&m, filter.clone(), None),
        vec![],
        "the cache outlived a write"
    );
    // The other reads get the same warnings from the facade.
    let ws = m
        .filter_warnings("shared", &scope(json!({"teem": "atlas"}), None))
        .unwrap();
    assert_eq!(ws.len(), 1);
    assert!(ws[0].message.contains("team"), "{}", ws[0].message);
}

#[test]
fn at_most_twenty_keys_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path());
    let mut metadata = serde_json::Map::new();
    for i in 0..30 {
        metadata.insert(format!("k{i:02}"), json!(i));
    }
    m.ingest_sessions(
        "shared",
        vec![said("a1", Value::Object(metadata), "Many keys.")],
    )
    .unwrap();
    let ws = recall(&m, json!({"zz": 1}), None);
    assert_eq!(ws.len(), 1);
    assert!(
        ws[0].message.ends_with("k18, k19, and 10 more)"),
        "{}",
        ws[0].message
    );
}
