//! Exactly once per idempotency key when retries land in one group commit: the write
//! lock is held while tries queue up, so that whoever takes it next writes them all in
//! one batch (the case where no receipt of the batch is stored yet).
use super::cost_tests::engine;
use super::error::EngineError;
use super::receipt::WriteOptions;
use super::reports::IngestReport;
use super::state::Engine;
use cairn_core::{AppendInput, SpaceId};
use proptest::prelude::*;
use serde_json::json;
use std::sync::Arc;

fn append(session: &str, text: &str) -> AppendInput {
    serde_json::from_value(json!({
        "session_id": session,
        "messages": [{"speaker": "user", "text": text}]
    }))
    .expect("append")
}

/// Runs every `(key, input)` on its own thread while this thread holds the write lock,
/// and lets go once all of them are queued; the answers, in the order given.
fn raced(
    e: &Arc<Engine>,
    space: &SpaceId,
    tries: Vec<(String, AppendInput)>,
) -> Vec<Result<IngestReport, EngineError>> {
    let n = tries.len();
    let lock = e.lock().expect("lock");
    let handles: Vec<_> = tries
        .into_iter()
        .map(|(key, input)| {
            let (e, space) = (e.clone(), space.clone());
            std::thread::spawn(move || {
                e.writes()
                    .append(&space, input, &WriteOptions::with_key(key))
            })
        })
        .collect();
    // Waits on a condition, not a clock: every try is queued behind the lock.
    while e.appends.len() < n {
        std::thread::yield_now();
    }
    drop(lock);
    handles
        .into_iter()
        .map(|h| h.join().expect("append thread"))
        .collect()
}

fn stored_texts(e: &Engine, space: &SpaceId, session: &str) -> Vec<String> {
    e.b.records
        .get_session(space, session)
        .expect("read")
        .map(|r| r.session.messages.into_iter().map(|m| m.text).collect())
        .unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Identical retries under one key write once and are answered with the first
    /// answer; other inputs under one key are refused; both whether or not the session
    /// was stored before.
    #[test]
    fn retries_in_one_batch_write_once(same in 2usize..7, other in 2usize..5, stored: bool) {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = Arc::new(engine(dir.path()));
        let space = SpaceId::new("retries").expect("space");
        if stored {
            e.writes().append(&space, append("s", "hello"), &WriteOptions::default()).expect("first");
        }
        let mut tries: Vec<(String, AppendInput)> =
            (0..same).map(|_| ("k-same".to_string(), append("s", "I moved to Oslo"))).collect();
        tries.extend((0..other).map(|i| ("k-other".to_string(), append("s", &format!("body {i}")))));
        let answers = raced(&e, &space, tries);

        let (same_answers, other_answers) = answers.split_at(same);
        let ok: Vec<&IngestReport> = same_answers.iter().map(|a| a.as_ref().expect("same input")).collect();
        prop_assert_eq!(ok.iter().filter(|r| !r.replayed).count(), 1);
        for r in &ok {
            prop_assert_eq!(r.messages_added, 1);
        }
        let written = other_answers.iter().filter(|a| a.is_ok()).count();
        let refused = other_answers
            .iter()
            .filter(|a| matches!(a, Err(EngineError::IdempotencyKeyReused(k)) if k == "k-other"))
            .count();
        prop_assert_eq!((written, refused), (1, other - 1));

        let texts = stored_texts(&e, &space, "s");
        prop_assert_eq!(texts.iter().filter(|t| *t == "I moved to Oslo").count(), 1);
        prop_assert_eq!(texts.iter().filter(|t| t.starts_with("body ")).count(), 1);
        prop_assert_eq!(texts.len(), usize::from(stored) + 2);

        // A retry after the batch is a replay of the stored receipt.
        let again = e
            .writes().append(&space, append("s", "I moved to Oslo"), &WriteOptions::with_key("k-same"))
            .expect("retry");
        prop_assert!(again.replayed);
        prop_assert_eq!(stored_texts(&e, &space, "s").len(), usize::from(stored) + 2);
    }
}
