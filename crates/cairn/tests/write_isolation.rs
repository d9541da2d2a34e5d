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
    state: Mutex<GateState>,
    /// Signalled on every change of `state`.
    changed: Condvar,
}

#[derive(Default)]
struct GateState {
    open: bool,
    /// Calls waiting at the gate now.
    waiting: usize,
    /// The slow write of [`while_stopped`] has returned.
    slow_returned: bool,
}

impl Gated {
    fn update(&self, f: impl FnOnce(&mut GateState)) {
        f(&mut self.state.lock().unwrap());
        self.changed.notify_all();
    }

    fn waiting(&self) -> usize {
        self.state.lock().unwrap().waiting
    }

    /// Blocks until a call waits at the gate or the slow write returned without one;
    /// whether a call waits.
    fn until_stopped_or_returned(&self) -> bool {
        let state = self
            .changed
            .wait_while(self.state.lock().unwrap(), |s| {
                s.waiting == 0 && !s.slow_returned
            })
            .unwrap();
        state.waiting > 0
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
            self.update(|s| s.waiting += 1);
            let state = self
                .changed
                .wait_while(self.state.lock().unwrap(), |s| !s.open)
                .unwrap();
            drop(state);
            self.update(|s| s.waiting -= 1);
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
/// `slow` finish. The gate opens only after `fast` has finished, so a `fast` that waited
/// for `slow` would never finish: the watchdog turns that deadlock into a failure, and
/// is the only clock read (nothing asserts how long `fast` takes).
fn while_stopped(
    m: &Arc<Memory>,
    gate: &Arc<Gated>,
    slow: impl FnOnce(&Memory) -> Result<cairn::IngestReport, cairn::Error> + Send + 'static,
    fast: impl FnOnce(&Memory) + Send + 'static,
) -> cairn::IngestReport {
    const WATCHDOG: Duration = Duration::from_secs(120);
    gate.update(|s| *s = GateState::default());
    let (m1, g1) = (m.clone(), gate.clone());
    let slow = std::thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| slow(&m1)));
        g1.update(|s| s.slow_returned = true);
        r.unwrap_or_else(|p| std::panic::resume_unwind(p))
    });
    assert!(
        gate.until_stopped_or_returned(),
        "the slow write never reached the embedder"
    );
    let (done, finished) = mpsc::channel();
    let m2 = m.clone();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fast(&m2)));
        let _ = done.send(r.is_ok());
    });
    let finished = finished.recv_timeout(WATCHDOG);
    assert_eq!(gate.waiting(), 1, "the slow write left the gate early");
    gate.update(|s| s.open = true);
    let report = slow.join().unwrap().expect("the slow write");
    assert!(
        finished.is_ok(),
        "a write in another space waited for the embedding one"
    );
    assert_eq!(finished, Ok(true), "a write in another space failed");
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
            m.trajectories().insert("b", run).unwrap();
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
