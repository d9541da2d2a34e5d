//! What forget guarantees on disk, embedded store (issue 38: a deleted session's text was
//! still in `records.sqlite3-wal`, and in `records.sqlite3` until the next checkpoint):
//! once a forget returns, no file of the data directory holds the forgotten text, while
//! the memory stays open and everything else stays readable.
use cairn::{Memory, MemoryConfig, WriteOptions};
use cairn_testkit::HashEmbedder;
use serde_json::json;
use std::sync::Arc;

fn session(id: &str, text: &str) -> cairn::SessionInput {
    serde_json::from_value(json!({"id": id, "messages": [
        {"role": "user", "text": text}, {"role": "assistant", "text": "Noted."}]}))
    .unwrap()
}

#[test]
fn a_forgotten_text_is_in_no_file_once_the_forget_returns() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open_with_embedder(dir.path(), MemoryConfig::default(), Arc::new(HashEmbedder))
        .unwrap();
    let keep = "zobakilu";
    m.ingest_session("p", session("keep", &format!("My locker code is {keep}.")))
        .unwrap();
    // Every way to forget: a session, a message, a memory, a trajectory, a space.
    let canaries = ["zuvefadi", "zimopera", "zelanoku", "zarutemi", "zodigaso"];
    let [by_session, by_message, by_unit, by_trajectory, by_space] = canaries;
    m.ingest_session("p", session("s1", &format!("My SSN is {by_session}.")))
        .unwrap();
    m.ingest_session("p", session("s2", &format!("My PIN is {by_message}.")))
        .unwrap();
    m.ingest_session("p", session("s3", &format!("My IBAN is {by_unit}.")))
        .unwrap();
    let run = serde_json::from_value(
        json!({"id": "t", "goal": format!("log in as {by_trajectory}"),
        "states": [{"url": "http://a/", "observation": format!("Welcome {by_trajectory}")}]}),
    )
    .unwrap();
    m.trajectories()
        .insert_many_with("p", vec![run], &WriteOptions::default())
        .unwrap();
    m.ingest_session("q", session("s4", &format!("My password is {by_space}.")))
        .unwrap();
    m.flush().unwrap();
    for c in canaries {
        assert!(
            !cairn_testkit::files_holding(dir.path(), c).is_empty(),
            "{c} is on disk before the forget (else the search proves nothing)"
        );
    }
    m.forget_session("p", "s1").unwrap();
    m.forget_message("p", "s2", "0").unwrap();
    m.forget_unit("p", "turn:s3:0").unwrap();
    m.trajectories().forget("p", "t").unwrap();
    m.forget_space("q").unwrap();
    for c in canaries {
        assert_eq!(
            cairn_testkit::files_holding(dir.path(), c),
            Vec::<String>::new(),
            "{c}"
        );
    }
    // What was not forgotten is still there, and the store agrees with itself.
    assert!(!cairn_testkit::files_holding(dir.path(), keep).is_empty());
    let check = m.check(false).unwrap();
    assert!(check.consistent, "{check:?}");
    let hits = m
        .recall("p", "locker code", &cairn::RecallOptions::default())
        .unwrap();
    assert!(hits.context.contains(keep), "{}", hits.context);
}

/// A message forgotten from a long session right after it was appended (its entries
/// not yet committed to the text index): the forget writes and indexes again only the
/// units that held it, and once it returns its text is in no file, while the rest of
/// the session stays searchable.
#[test]
fn a_message_forgotten_from_a_long_session_right_after_its_append_leaves_no_file_holding_it() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open_with_embedder(dir.path(), MemoryConfig::default(), Arc::new(HashEmbedder))
        .unwrap();
    let messages: Vec<_> = (0..120)
        .map(|i| json!({"role": if i % 2 == 0 {"user"} else {"assistant"}, "text": format!("Entry {i} of the garden diary: the tomatoes need water.")}))
        .collect();
    let long: cairn::SessionInput =
        serde_json::from_value(json!({"id": "diary", "messages": messages})).unwrap();
    m.ingest_session("p", long).unwrap();
    m.flush().unwrap();
    let canary = "zuvekorami";
    let input: cairn::AppendInput = serde_json::from_value(json!({
        "session_id": "diary",
        "messages": [
            {"id": "secret", "role": "user", "text": format!("My alarm code is {canary}.")},
            {"role": "assistant", "text": "Noted, I will keep it safe."}]
    }))
    .unwrap();
    m.append("p", input, &WriteOptions::default()).unwrap();
    let report = m.forget_message_with("p", "diary", "secret", true).unwrap();
    assert_eq!(report.forgotten_messages.len(), 2, "{report:?}");
    assert_eq!(
        cairn_testkit::files_holding(dir.path(), canary),
        Vec::<String>::new()
    );
    let check = m.check(false).unwrap();
    assert!(check.consistent, "{check:?}");
    let hits = m
        .recall(
            "p",
            "tomatoes garden diary",
            &cairn::RecallOptions::default(),
        )
        .unwrap();
    assert!(!hits.hits.is_empty());
    assert!(hits.hits.iter().all(|h| !h.text.contains(canary)));
}
