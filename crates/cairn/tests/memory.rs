//! Behaviour of the public library API on the real embedded store and model.
mod common;
use cairn::{Format, RecallOptions};
use common::{open, session};

fn pets() -> cairn::SessionInput {
    session(
        r#"{"id": "pets", "date": "2023-05-01 10:00", "messages": [
        {"role": "user", "text": "I just adopted a grey cat and named her Luna."},
        {"role": "assistant", "text": "Luna is a lovely name for a grey cat! Make sure she has a quiet place to hide."},
        {"role": "user", "text": "She loves the window sill."},
        {"role": "assistant", "text": "Window perches are great for cats."}]}"#,
    )
}

fn travel() -> cairn::SessionInput {
    session(
        r#"{"id": "trip", "date": "2023-06-10 09:00", "metadata": {"source": "test"}, "messages": [
        {"role": "user", "text": "I'm planning a trip to Kyoto in October and want to see the temples."},
        {"role": "assistant", "text": "Kyoto in October is beautiful. Visit Kiyomizu-dera early in the morning."}]}"#,
    )
}

#[test]
fn recall_returns_cited_hits_within_budget() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let r = m.ingest_sessions("alice", vec![pets(), travel()]).unwrap();
    assert_eq!(r.sessions, 2);
    assert_eq!(r.messages_added, 6);
    let opts = RecallOptions {
        top_k: 2,
        token_budget: 60,
        ..Default::default()
    };
    let recall = m.recall("alice", "What is my cat called?", &opts).unwrap();
    let top = &recall.hits[0];
    assert_eq!(top.session_id.as_deref(), Some("pets"));
    assert!(top.turn_ids.contains(&"0".to_string()), "{top:?}");
    assert!(top.occurred_at.is_some());
    assert!(recall.context_tokens <= 60, "{}", recall.context_tokens);
    assert!(m.embedder().count_tokens(&recall.context) <= 60);
    assert!(recall.context.contains("Luna"), "{}", recall.context);

    let raw = RecallOptions {
        top_k: 10,
        token_budget: 10_000,
        format: Format::Raw,
        ..Default::default()
    };
    let recall = m.recall("alice", "temples in Kyoto", &raw).unwrap();
    assert_eq!(recall.hits[0].session_id.as_deref(), Some("trip"));
    assert!(recall.context.starts_with("[2023-05-01") || recall.context.starts_with("[2023-06-10"));
    // Raw context is chronological: the May session comes before the June one.
    if let (Some(a), Some(b)) = (recall.context.find("Luna"), recall.context.find("Kyoto")) {
        assert!(a < b);
    }
}

#[test]
fn spaces_are_isolated() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    m.ingest_session("alice", pets()).unwrap();
    m.ingest_session("bob", travel()).unwrap();
    // No floor: every question finds something, and only in its own space.
    let opts = RecallOptions {
        top_k: 50,
        token_budget: 10_000,
        min_relevance: -1.0,
        ..Default::default()
    };
    for q in ["cat Luna", "Kyoto temples October", "anything at all"] {
        for h in m.recall("alice", q, &opts).unwrap().hits {
            assert_eq!(h.session_id.as_deref(), Some("pets"), "alice saw {h:?}");
        }
        for h in m.recall("bob", q, &opts).unwrap().hits {
            assert_eq!(h.session_id.as_deref(), Some("trip"), "bob saw {h:?}");
        }
    }
    let err = m.recall("carol", "cat", &opts).unwrap_err();
    assert!(err.to_string().contains("carol"), "{err}");
    assert!(m.forget_space("alice").unwrap());
    assert!(m.recall("alice", "cat", &opts).is_err());
    // Both turns of the trip session fold into its one round.
    assert_eq!(m.recall("bob", "cat Luna", &opts).unwrap().hits.len(), 1);
}

#[test]
fn export_is_exactly_what_was_ingested_and_import_restores_recall() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    m.ingest_sessions("alice", vec![pets(), travel()]).unwrap();
    let records = m.sessions("alice").unwrap();
    assert_eq!(records[0].session, pets().validate().unwrap());
    assert_eq!(records[1].session, travel().validate().unwrap());
    let mut buf = Vec::new();
    assert_eq!(m.export("alice", &mut buf).unwrap(), 2);

    let dir2 = tempfile::tempdir().unwrap();
    let m2 = open(dir2.path()).unwrap();
    let r = m2.import(std::io::Cursor::new(&buf)).unwrap();
    assert_eq!(r.sessions, 2);
    assert_eq!(
        m2.sessions("alice").unwrap(),
        records,
        "recorded_at and content survive"
    );
    let opts = RecallOptions {
        top_k: 5,
        token_budget: 500,
        ..Default::default()
    };
    for q in ["cat name", "Kyoto trip"] {
        let a = m.recall("alice", q, &opts).unwrap();
        let b = m2.recall("alice", q, &opts).unwrap();
        let ids = |r: &cairn::Recall| r.hits.iter().map(|h| h.unit_id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&a), ids(&b));
        assert_eq!(a.context, b.context);
    }
}

#[test]
fn bad_input_is_rejected_by_name_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    m.ingest_session("alice", pets()).unwrap();
    let before = m.sessions("alice").unwrap();

    let empty = session(
        r#"{"id": "x", "messages": [{"role": "user", "text": "ok"}, {"role": "user", "text": " "}]}"#,
    );
    let err = m
        .ingest_sessions("alice", vec![travel(), empty])
        .unwrap_err();
    assert!(err.is_input());
    assert!(
        err.to_string()
            .contains("session \"x\" message 1: field `text` is empty"),
        "{err}"
    );
    assert_eq!(
        m.sessions("alice").unwrap(),
        before,
        "a rejected batch writes nothing"
    );

    let mut changed = pets();
    changed.messages[0].text = "I adopted a dog.".into();
    let err = m.ingest_session("alice", changed).unwrap_err();
    assert!(
        matches!(&err, cairn::Error::Conflict(c) if c.field.as_deref() == Some("[0].messages[0]")),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("message 0 differs from the stored one"),
        "{err}"
    );
    assert_eq!(m.sessions("alice").unwrap(), before);

    assert!(m
        .ingest_session("bad space!", pets())
        .unwrap_err()
        .is_input());
    let opts = RecallOptions {
        top_k: 0,
        ..Default::default()
    };
    assert!(m
        .recall("alice", "cat", &opts)
        .unwrap_err()
        .to_string()
        .contains("top_k"));
    assert!(m.recall("alice", "  ", &RecallOptions::default()).is_err());
    assert!(m
        .import(std::io::Cursor::new(b"{not json}\n"))
        .unwrap_err()
        .to_string()
        .contains("line 1"));
}

#[test]
fn appending_to_a_session_extends_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let mut first = pets();
    first.messages.truncate(3);
    m.ingest_session("alice", first).unwrap();
    let r = m.ingest_session("alice", pets()).unwrap();
    assert_eq!(r.messages_added, 1);
    let again = m.ingest_session("alice", pets()).unwrap();
    assert_eq!(again.unchanged, 1);
    let units = m.session_units("alice", "pets").unwrap();
    let round = units.iter().find(|u| u.id == "round:pets:2").unwrap();
    assert_eq!(
        round.provenance.message_ids,
        ["2", "3"],
        "the reply joined its round"
    );
}

#[test]
fn forgetting_removes_from_recall_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    m.ingest_sessions("alice", vec![pets(), travel()]).unwrap();
    let opts = RecallOptions {
        top_k: 20,
        token_budget: 5000,
        ..Default::default()
    };
    assert!(m.forget_session("alice", "pets").unwrap() > 0);
    let r = m.recall("alice", "grey cat Luna window", &opts).unwrap();
    assert!(r
        .hits
        .iter()
        .all(|h| h.session_id.as_deref() != Some("pets")));
    assert!(!r.context.contains("Luna"));
    assert_eq!(m.sessions("alice").unwrap().len(), 1);
    m.forget_message("alice", "trip", "1").unwrap();
    let r = m.recall("alice", "Kiyomizu-dera morning", &opts).unwrap();
    assert!(!r.context.contains("Kiyomizu"), "{}", r.context);
    assert_eq!(m.sessions("alice").unwrap()[0].session.messages.len(), 1);
    assert!(m.forget_session("alice", "nope").unwrap_err().is_input());
}

#[test]
fn as_of_hides_later_units_and_reopen_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    {
        let Some(m) = open(dir.path()) else { return };
        m.ingest_sessions("alice", vec![pets(), travel()]).unwrap();
    }
    let m = open(dir.path()).unwrap();
    let opts = RecallOptions {
        top_k: 10,
        token_budget: 5000,
        scope: cairn::ScopeOptions {
            as_of: Some(cairn::parse_timestamp("2023-05-15").unwrap()),
            ..Default::default()
        },
        ..Default::default()
    };
    let r = m.recall("alice", "Kyoto trip temples", &opts).unwrap();
    assert!(
        r.hits
            .iter()
            .all(|h| h.session_id.as_deref() == Some("pets")),
        "{:?}",
        r.hits
    );
    let r = m
        .recall("alice", "Kyoto trip temples", &RecallOptions::default())
        .unwrap();
    assert_eq!(r.hits[0].session_id.as_deref(), Some("trip"));
    let report = m.check(false).unwrap();
    assert_eq!(report.text_watermark, report.last_seq);
    let rebuilt = m.check(true).unwrap();
    assert_eq!(rebuilt.spaces, 1);
    let r2 = m
        .recall("alice", "Kyoto trip temples", &RecallOptions::default())
        .unwrap();
    assert_eq!(r2.hits[0].unit_id, r.hits[0].unit_id);
}

#[test]
fn forgetting_the_last_message_forgets_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let mut one = travel();
    one.messages.truncate(1);
    m.ingest_session("alice", one).unwrap();
    m.forget_message("alice", "trip", "0").unwrap();
    assert!(m.sessions("alice").unwrap().is_empty());
    assert!(m.session_units("alice", "trip").unwrap().is_empty());
}

/// `backend = "auto"` (the default) never recomputes a data directory's vectors: a
/// directory written with fp32 reopens with fp32, whatever this CPU would pick for a
/// new one.
#[test]
fn the_default_backend_keeps_the_backend_a_directory_was_written_with() {
    let dir = tempfile::tempdir().unwrap();
    let fp32 = cairn::MemoryConfig {
        embed: cairn::EmbedConfig {
            backend: cairn::EmbedBackend::Fp32,
            ..Default::default()
        },
        ..Default::default()
    };
    let m = match cairn::Memory::open_with(dir.path(), fp32) {
        Ok(m) => m,
        Err(cairn::Error::Model(e)) => return cairn_testkit::model_missing(e),
        Err(e) => panic!("open failed: {e}"),
    };
    let fp32_id = m.embedder().model_id().to_string();
    assert!(!fp32_id.ends_with("@int8"), "{fp32_id}");
    m.ingest_sessions("alice", vec![pets()]).unwrap();
    drop(m);

    let m = open(dir.path()).unwrap();
    assert_eq!(m.embedder().model_id(), fp32_id);
    let recall = m
        .recall("alice", "What is my cat called?", &RecallOptions::default())
        .unwrap();
    assert_eq!(recall.hits[0].session_id.as_deref(), Some("pets"));
    drop(m);

    // A new directory gets this CPU's choice.
    let fresh = tempfile::tempdir().unwrap();
    let m = open(fresh.path()).unwrap();
    let want = cairn::EmbedConfig::default().resolved(None);
    let int8 = want.backend == cairn::EmbedBackend::Int8;
    assert_eq!(m.embedder().model_id().ends_with("@int8"), int8);
}

#[test]
fn remember_keeps_a_note_and_turns_as_the_engine_decides() {
    use cairn::{Memo, Message, RememberInput, Role, WriteOptions};
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = open(dir.path()) else { return };
    let when = cairn::parse_timestamp("2024-02-03 10:00").unwrap();
    // A note: one message whose speaker is `note`, in a new session named after it, dated
    // with the input's time.
    let kept = m
        .remember(
            "alice",
            RememberInput {
                memo: Memo::Note("The user is allergic to peanuts.".into()),
                session_id: None,
                occurred_at: Some(when),
                metadata: serde_json::Value::Null,
            },
            &WriteOptions::default(),
        )
        .unwrap();
    assert!(kept.session_id.starts_with("note-"), "{}", kept.session_id);
    assert_eq!(kept.report.messages_added, 1);
    let note = m.session("alice", &kept.session_id).unwrap().unwrap();
    let msg = &note.session.messages[0];
    assert_eq!(msg.speaker.as_deref(), Some(cairn::NOTE_SPEAKER));
    assert_eq!(msg.occurred_at, Some(when));
    assert_eq!(note.session.occurred_at, None, "times go on the messages");
    // Turns appended to a named session: a turn without a time takes the input's, one
    // with its own keeps it; without any time the memory dates it when it records it.
    let turn = |text: &str, at| Message {
        id: String::new(),
        role: Some(Role::User),
        speaker: None,
        text: text.into(),
        occurred_at: at,
        metadata: serde_json::Value::Null,
    };
    let own = cairn::parse_timestamp("2024-01-01").unwrap();
    let kept = m
        .remember(
            "alice",
            RememberInput {
                memo: Memo::Messages(vec![
                    turn("I moved to Porto.", None),
                    turn("Long ago.", Some(own)),
                ]),
                session_id: Some("chat".into()),
                occurred_at: Some(when),
                metadata: serde_json::Value::Null,
            },
            &WriteOptions::default(),
        )
        .unwrap();
    assert_eq!(kept.session_id, "chat");
    let chat = m.session("alice", "chat").unwrap().unwrap();
    let times: Vec<_> = chat
        .session
        .messages
        .iter()
        .map(|m| m.occurred_at)
        .collect();
    assert_eq!(times, [Some(when), Some(own)]);
    let kept = m
        .remember(
            "alice",
            RememberInput {
                memo: Memo::Messages(vec![turn("And then to Braga.", None)]),
                session_id: None,
                occurred_at: None,
                metadata: serde_json::Value::Null,
            },
            &WriteOptions::default(),
        )
        .unwrap();
    assert!(
        kept.session_id.starts_with("conversation-"),
        "{}",
        kept.session_id
    );
    assert_eq!(kept.report.dated_at_recording, 1);
}
