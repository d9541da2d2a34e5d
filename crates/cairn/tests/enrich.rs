//! LLM enrichment through the public API, against a scripted OpenAI-compatible stub:
//! ingest never waits for or fails because of the LLM, pending messages are read once the
//! server is back, the facts join version chains, `history` and recall, rebuilds reuse
//! the stored readings, and forgetting removes them.
use cairn::{
    EnrichmentConfig, LlmConfig, Memory, MemoryConfig, RecallOptions, ScopeOptions, SessionInput,
};
use cairn_testkit::llm_stub::{Stub, StubReply};
use cairn_testkit::HashEmbedder;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn llm_stub(down: Arc<AtomicBool>) -> Stub {
    llm_stub_reporting(down, None)
}

/// [`llm_stub`] that sends each message it answers with facts on `read`.
fn llm_stub_reporting(down: Arc<AtomicBool>, read: Option<mpsc::Sender<String>>) -> Stub {
    let read = Mutex::new(read);
    Stub::start(move |r| {
        if down.load(Ordering::SeqCst) {
            return StubReply::Raw(503, json!({"error": "loading model"}));
        }
        let m = r.last_message();
        let facts = if m.contains("cat named Luna") {
            json!({"facts": [{"subject": "user's cat's name", "value": "Luna"}]})
        } else if m.contains("renamed my cat") {
            json!({"facts": [{"subject": "user's cat's name", "value": "Nova"}]})
        } else {
            json!({"facts": []})
        };
        if let Some(read) = read.lock().unwrap().as_ref() {
            if !facts["facts"].as_array().unwrap().is_empty() {
                let _ = read.send(m.to_string());
            }
        }
        // Wrapped in prose: the reader must parse tolerantly.
        StubReply::Chat(format!("Here you go: {facts}"))
    })
}

fn open(dir: &std::path::Path, url: &str, background: bool) -> Memory {
    let config = MemoryConfig {
        llm: Some(LlmConfig {
            base_url: url.into(),
            model: "stub".into(),
            retries: 0,
            timeout_secs: 5,
            ..LlmConfig::default()
        }),
        enrichment: EnrichmentConfig {
            background,
            idle_secs: 1,
            max_backoff_secs: 1,
            batch: 16,
        },
        ..MemoryConfig::default()
    };
    Memory::open_with_embedder(dir, config, Arc::new(HashEmbedder)).unwrap()
}

fn sessions() -> Vec<SessionInput> {
    serde_json::from_value(json!([
        {"id": "s1", "date": "2024-03-01 10:00", "messages": [
            {"role": "user", "text": "I adopted a cat named Luna last week."},
            {"role": "assistant", "text": "Congratulations on adopting a cat named Luna!"}]},
        {"id": "s2", "date": "2024-05-01 10:00", "messages": [
            {"role": "user", "text": "Funny thing: I renamed my cat, she just did not answer to her old name."},
            {"role": "assistant", "text": "Ha, cats do what they like."}]}
    ]))
    .unwrap()
}

fn llm_units(m: &Memory, session: &str) -> Vec<String> {
    m.session_units("me", session)
        .unwrap()
        .into_iter()
        .map(|u| u.id)
        .filter(|id| id.starts_with("fact:llm:"))
        .collect()
}

#[test]
fn enrichment_survives_a_down_server_then_joins_chains_history_and_recall() {
    let down = Arc::new(AtomicBool::new(true));
    let stub = llm_stub(down.clone());
    let dir = tempfile::tempdir().unwrap();
    let m = open(dir.path(), &stub.url, false);
    m.create_space("me").unwrap();
    m.set_enrichment("me", true).unwrap();
    assert_eq!(m.enrichment_spaces().unwrap().len(), 1);

    // The server is down: ingest succeeds all the same, enrichment stays pending.
    let r = m.ingest_sessions("me", sessions()).unwrap();
    assert_eq!(r.sessions, 2);
    let e = m.enrich_now(100).unwrap();
    assert!(e.unavailable.is_some() && e.pending, "{e:?}");
    assert!(llm_units(&m, "s1").is_empty());

    // Back up: the pending messages are read (user messages only), once.
    down.store(false, Ordering::SeqCst);
    let e = m.enrich_now(100).unwrap();
    assert_eq!((e.messages_read, e.facts, e.failed), (2, 2, 0), "{e:?}");
    assert!(!e.pending);
    assert_eq!(llm_units(&m, "s1"), ["fact:llm:s1:0:0"]);
    assert_eq!(m.enrich_now(100).unwrap().messages_read, 0);
    let asked = stub.requests().len();

    // The two readings form one chain: Luna, then Nova.
    let h = m
        .history("me", "cat name", &ScopeOptions::default())
        .unwrap()
        .expect("a chain");
    let values: Vec<&str> = h.versions.iter().map(|v| v.value.as_str()).collect();
    assert_eq!(values, ["Luna", "Nova"]);
    assert_eq!(
        h.versions[0].superseded_by.as_deref(),
        Some("fact:llm:s2:0:0")
    );

    // Recall sees them: the old statement is marked superseded by the new value.
    let rec = m
        .recall(
            "me",
            "what is my cat's name?",
            &RecallOptions {
                top_k: 5,
                ..Default::default()
            },
        )
        .unwrap();
    let old = rec
        .hits
        .iter()
        .find(|h| h.unit_id == "round:s1:0")
        .expect("the Luna round");
    assert_eq!(old.superseded_by.as_deref(), Some("fact:llm:s2:0:0"));
    assert!(
        old.text.contains("[superseded: changed to Nova"),
        "{}",
        old.text
    );
    assert!(rec.context.contains("Nova"), "{}", rec.context);

    // A rebuild re-creates the units from the stored readings, without the LLM.
    m.check(true).unwrap();
    assert_eq!(llm_units(&m, "s2"), ["fact:llm:s2:0:0"]);
    assert_eq!(stub.requests().len(), asked);

    // Forgetting the message forgets what was read from it.
    m.forget_message("me", "s2", "0").unwrap();
    let h = m
        .history("me", "cat name", &ScopeOptions::default())
        .unwrap()
        .unwrap();
    assert_eq!(h.versions.len(), 1);
    assert_eq!(m.enrich_now(100).unwrap().messages_read, 0);
    let u = m.llm_usage().unwrap();
    assert_eq!(u.calls, 2);
}

/// Synchronised on the stub, not on a clock: the stub reports each message it answered,
/// and closing the memory joins the worker, which stores a reading once its answer has
/// come (it checks for a stop only between messages). Nothing calls `enrich_now`, so the
/// readings found after the close were made by the worker.
#[test]
fn the_background_worker_catches_up_when_the_server_comes_back() {
    let down = Arc::new(AtomicBool::new(true));
    let (read, answered) = mpsc::channel();
    let stub = llm_stub_reporting(down.clone(), Some(read));
    let dir = tempfile::tempdir().unwrap();
    {
        let m = open(dir.path(), &stub.url, true);
        m.create_space("me").unwrap();
        m.set_enrichment("me", true).unwrap();
        // The LLM is down and ingest still succeeds: reading facts is not on the write path.
        m.ingest_sessions("me", sessions()).unwrap();
        assert!(llm_units(&m, "s1").is_empty());
        down.store(false, Ordering::SeqCst);
        // Both user messages answered by the stub. The watchdog only turns a worker that
        // never retries into a failure; nothing asserts how soon it does.
        let mut read = std::collections::BTreeSet::new();
        while read.len() < 2 {
            let m = answered
                .recv_timeout(Duration::from_secs(120))
                .expect("the worker never read the pending messages");
            read.insert(m.contains("renamed my cat"));
        }
    }
    // Reopened without an LLM: the facts are there (stored readings, one chain), and the
    // space keeps its switch.
    let m = Memory::open_with_embedder(dir.path(), MemoryConfig::default(), Arc::new(HashEmbedder))
        .unwrap();
    assert_eq!(llm_units(&m, "s1"), ["fact:llm:s1:0:0"]);
    assert_eq!(llm_units(&m, "s2"), ["fact:llm:s2:0:0"]);
    assert_eq!(
        m.history("me", "cat's name", &ScopeOptions::default())
            .unwrap()
            .unwrap()
            .versions
            .len(),
        2
    );
    assert_eq!(m.enrichment_spaces().unwrap().len(), 1);
    assert!(m.enrich_now(1).is_err());
}
