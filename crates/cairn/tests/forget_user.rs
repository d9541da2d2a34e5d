//! Issue 53, embedded store: forgetting an end user (a partition) or an exchange (a
//! message and its reply) leaves no file holding their text, and what the option leaves
//! alone stays. Both backends' reads are checked in `conformance.rs`.
use cairn::{Memory, MemoryConfig, Partition, ScopeOptions};
use cairn_testkit::HashEmbedder;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

fn open(dir: &Path) -> Memory {
    Memory::open_with_embedder(dir, MemoryConfig::default(), Arc::new(HashEmbedder)).unwrap()
}

fn chat(id: &str, metadata: serde_json::Value, lines: &[&str]) -> cairn::SessionInput {
    let messages: Vec<_> = lines
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "text": t}))
        .collect();
    serde_json::from_value(json!({"id": id, "metadata": metadata, "messages": messages})).unwrap()
}

fn partition(v: serde_json::Value) -> Partition {
    Partition::parse(&v).unwrap()
}

#[test]
fn a_forgotten_user_is_in_no_file_and_many_sessions_are_one_forget() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path());
    // u1 in many sessions, some with other partition keys too: all of them are u1's.
    let mut sessions: Vec<_> = (0..12)
        .map(|i| {
            chat(
                &format!("u1-{i}"),
                json!({"user_id": "u1", "agent_id": format!("a{}", i % 3)}),
                &[&format!("My locker code is zuvefadi{i}."), "Noted."],
            )
        })
        .collect();
    sessions.push(chat(
        "u2",
        json!({"user_id": "u2"}),
        &["My locker code is zobakilu.", "Noted."],
    ));
    sessions.push(chat(
        "anon",
        json!({}),
        &["My locker code is zimopera.", "Noted."],
    ));
    m.ingest_sessions("p", sessions).unwrap();
    m.flush().unwrap();
    assert!(
        !cairn_testkit::files_holding(dir.path(), "zuvefadi").is_empty(),
        "on disk before (else the search proves nothing)"
    );
    let r = m
        .forget_partition("p", &partition(json!({"user_id": "u1"})))
        .unwrap();
    assert_eq!((r.sessions, r.messages), (12, 24), "{r:?}");
    assert!(cairn_testkit::files_holding(dir.path(), "zuvefadi").is_empty());
    assert!(!cairn_testkit::files_holding(dir.path(), "zobakilu").is_empty());
    assert!(!cairn_testkit::files_holding(dir.path(), "zimopera").is_empty());
    let left: Vec<String> = m
        .session_headers("p")
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect();
    assert_eq!(left, ["u2", "anon"]);
    // Two keys: only sessions holding both values.
    m.ingest_session(
        "p",
        chat(
            "u3a",
            json!({"user_id": "u3", "agent_id": "a"}),
            &["Hi.", "Hello."],
        ),
    )
    .unwrap();
    m.ingest_session(
        "p",
        chat(
            "u3b",
            json!({"user_id": "u3", "agent_id": "b"}),
            &["Hi.", "Hello."],
        ),
    )
    .unwrap();
    let r = m
        .forget_partition("p", &partition(json!({"user_id": "u3", "agent_id": "a"})))
        .unwrap();
    assert_eq!(r.sessions, 1);
    assert!(m.session("p", "u3b").unwrap().is_some());
    assert!(m.check(false).unwrap().consistent);
}

#[test]
fn a_bad_partition_is_refused_naming_the_field() {
    for bad in [
        json!({}),
        json!({"email": "a@b"}),
        json!({"user_id": null}),
        json!("u1"),
    ] {
        let e = Partition::parse(&bad).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("partition"), "{bad}: {e}");
    }
}

#[test]
fn a_forgotten_exchange_is_in_no_file_and_a_message_alone_keeps_its_reply() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path());
    m.ingest_session(
        "p",
        chat(
            "s",
            json!({}),
            &[
                "I moved to Lisbon.",
                "Congratulations zelanoku!",
                "My PIN is zarutemi.",
                "Got it, zodigaso.",
                "Last words.",
            ],
        ),
    )
    .unwrap();
    m.flush().unwrap();
    // Alone: the reply stays.
    let r = m.forget_message_with("p", "s", "2", false).unwrap();
    assert_eq!(r.forgotten_messages, ["2"]);
    assert!(!cairn_testkit::files_holding(dir.path(), "zodigaso").is_empty());
    assert!(cairn_testkit::files_holding(dir.path(), "zarutemi").is_empty());
    // With the reply.
    let r = m.forget_message_with("p", "s", "0", true).unwrap();
    assert_eq!(r.forgotten_messages, ["0", "1"]);
    assert!(cairn_testkit::files_holding(dir.path(), "zelanoku").is_empty());
    assert!(cairn_testkit::files_holding(dir.path(), "Lisbon").is_empty());
    let e = m.entities("p", None, &ScopeOptions::default()).unwrap();
    assert!(e.iter().all(|e| e.name != "Lisbon"), "{e:?}");
    // The last message has no reply: it goes alone; an unknown one is not found.
    let r = m.forget_message_with("p", "s", "4", true).unwrap();
    assert_eq!(r.forgotten_messages, ["4"]);
    assert!(m.forget_message_with("p", "s", "9", true).is_err());
    assert!(m.check(false).unwrap().consistent);
}
