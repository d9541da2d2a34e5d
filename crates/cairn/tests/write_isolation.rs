//! One space's write does not hold back another's (issue 38: while a large ingest ran in
//! one space, a one-line append in another waited 14-29 s, a forget 13.7 s). Embedding,
//! most of a write's time, happens before the write lock: here an embedder that stops on
//! one space's text until released shows every other kind of write completing meanwhile.
use cairn::{Memory, MemoryConfig, WriteOptions};
use cairn_core::{EmbedError, Embedder};
use cairn_testkit::HashEmbedder;
use serde_json::json;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// [`HashEmbedder`] that waits at a gate whenever a text holds `STOP`.
#[derive(Default)]
struct Gated {
    open: Mutex<bool>,
    opened: Condvar,
    /// Calls waiting at the gate now.
    waiting: Mutex<usize>,
}

impl Gated {
    fn release(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }

    fn waiting(&self) -> usize {
        *self.waiting.lock().unwrap()
    }
}

impl Embedder for Gated {
    fn model_id(&self) -> &str {
        HashEmbedder.model_id()
    }
    fn dim(&self) -> usize {
        HashEmbedder.dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.iter().any(|t| t.contains("STOP")) {
            *self.waiting.lock().unwrap() += 1;
            let mut open = self.open.lock().unwrap();
            while !*open {
                open = self.opened.wait(open).unwrap();
            }
            *self.waiting.lock().unwrap() -= 1;
        }
        HashEmbedder.embed(texts)
    }
    fn count_tokens(&self, text: &str) -> usize {
        HashEmbedder.count_tokens(text)
    }
}

fn session(id: &str, text: &str) -> cairn::SessionInput {
    serde_json::from_value(json!({"id": id, "messages": [
        {"role": "user", "text": text}, {"role": "assistant", "text": format!("Noted: {text}")}]}))
    .unwrap()
}

/// Runs `slow` (which embeds a `STOP` text) on a thread, waits until it is stopped at
/// the gate, runs `fast` and requires it to finish while `slow` still waits; then lets
/// `slow` finish.
fn while_stopped(
    m: &Arc<Memory>,
    gate: &Arc<Gated>,
    slow: impl FnOnce(&Memory) -> Result<cairn::IngestReport, cairn::Error> + Send + 'static,
    fast: impl FnOnce(&Memory) + Send + 'static,
) -> cairn::IngestReport {
    let (m1, g1) = (m.clone(), gate.clone());
    let slow = std::thread::spawn(move || {
        let r = slow(&m1);
        drop(g1);
        r
    });
    while gate.waiting() == 0 {
        assert!(
            !slow.is_finished(),
            "the slow write never reached the embedder"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let (done, finished) = mpsc::channel();
    let m2 = m.clone();
    std::thread::spawn(move || {
        fast(&m2);
        let _ = done.send(());
    });
    let in_time = finished.recv_timeout(Duration::from_secs(60));
    assert_eq!(gate.waiting(), 1, "the slow write left the gate early");
    gate.release();
    let report = slow.join().unwrap().expect("the slow write");
    assert!(
        in_time.is_ok(),
        "a write in another space waited for the embedding one"
    );
    *gate.open.lock().unwrap() = false;
    report
}

#[test]
fn a_write_embedding_in_one_space_holds_back_no_write_in_another() {
    let dir = tempfile::tempdir().unwrap();
    let gate = Arc::new(Gated::default());
    let m = Arc::new(
        Memory::open_with_embedder(dir.path(), MemoryConfig::default(), gate.clone()).unwrap(),
    );
    m.ingest_session("b", session("kept", "The canary sings at dawn."))
        .unwrap();
    // An ingest in "a" stopped while embedding; an ingest, an append, group messages, a
    // trajectory and a forget in "b" each complete meanwhile.
    let report = while_stopped(
        &m,
        &gate,
        |m| m.ingest_session("a", session("big", "STOP a long pasted document")),
        |m| {
            m.ingest_session("b", session("other", "Lisbon in May."))
                .unwrap();
            let append = serde_json::from_value(json!({"session_id": "other",
                "messages": [{"role": "user", "text": "And Porto in June."}]}))
            .unwrap();
            m.append("b", append, &WriteOptions::default()).unwrap();
            let group = serde_json::from_value(json!({"speaker": "Ana", "group": "g",
                "time": "2024-01-01 10:00", "text": "Standup moved to ten."}))
            .unwrap();
            m.ingest_group_messages("b", vec![group]).unwrap();
            let run = serde_json::from_value(json!({"id": "t", "goal": "book a table",
                "states": [{"url": "http://a/", "action": "click Book"}]}))
            .unwrap();
            m.insert_trajectory("b", run).unwrap();
            m.forget_session("b", "kept").unwrap();
        },
    );
    // The stopped write's vectors were computed for it, as under the lock.
    assert!(
        report.vectors_computed > 0 && report.vectors_cached == 0,
        "{report:?}"
    );
    assert_eq!(m.sessions("a").unwrap().len(), 1);
    // An append stopped while embedding holds back no other space either.
    while_stopped(
        &m,
        &gate,
        |m| {
            let append = serde_json::from_value(json!({"session_id": "big",
                "messages": [{"role": "user", "text": "STOP more of it"}]}))
            .unwrap();
            m.append("a", append, &WriteOptions::default())
        },
        |m| {
            m.ingest_session("b", session("third", "Madrid in July."))
                .unwrap();
        },
    );
    let check = m.check(false).unwrap();
    assert!(check.consistent, "{check:?}");
}
