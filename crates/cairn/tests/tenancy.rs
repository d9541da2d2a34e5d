//! Tenant opacity: what one space observes (answers, counts, timings) is the same whether
//! or not another space holds a given text or asked a given query. The embedding cache
//! was the channel: shared by all spaces, it told a tenant that someone else had stored
//! a text (its ingest counted the vector as cached) or asked a query (its embedding came
//! back at once). The embedder here takes a fixed time per call, so a cache hit is
//! visible as a missing delay.
use cairn::{EngineConfig, IngestReport, Memory, MemoryConfig, Recall, RecallOptions};
use cairn_core::{EmbedError, Embedder};
use std::sync::Arc;
use std::time::Duration;

const EMBED_DELAY: Duration = Duration::from_millis(30);

struct SlowEmbedder;

impl Embedder for SlowEmbedder {
    fn model_id(&self) -> &str {
        "test-slow-16"
    }
    fn dim(&self) -> usize {
        16
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        std::thread::sleep(EMBED_DELAY);
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = [0.1f32; 16];
                for w in t.split_whitespace() {
                    v[w.len() % 16] += 1.0;
                }
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter().map(|x| x / n).collect()
            })
            .collect())
    }
    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
}

fn open(dir: &std::path::Path, shared: bool) -> Memory {
    let config = MemoryConfig {
        engine: EngineConfig {
            share_embedding_cache: shared,
            ..Default::default()
        },
        ..Default::default()
    };
    Memory::open_with_embedder(dir, config, Arc::new(SlowEmbedder)).expect("open")
}

const SECRET: &str = "Bob's bank PIN is 4071 and his locker code is 8821.";
const QUERY: &str = "what is the locker code?";

fn session(text: &str) -> cairn::SessionInput {
    serde_json::from_value(serde_json::json!({
        "id": "s1", "date": "2024-05-01",
        "messages": [{"role": "user", "text": text}, {"role": "assistant", "text": "Noted."}]
    }))
    .expect("session")
}

/// What alice sees when she stores the secret and asks the query, in a memory where bob
/// did or did not do so first.
fn alice_observes(bob_first: bool, shared: bool) -> (IngestReport, Recall) {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = open(dir.path(), shared);
    if bob_first {
        m.ingest_session("bob", session(SECRET))
            .expect("bob ingest");
        m.recall("bob", QUERY, &RecallOptions::default())
            .expect("bob recall");
    }
    let report = m.ingest_session("alice", session(SECRET)).expect("ingest");
    let recall = m
        .recall("alice", QUERY, &RecallOptions::default())
        .expect("recall");
    (report, recall)
}

#[test]
fn another_space_holding_a_text_changes_nothing_a_tenant_observes() {
    let (alone, recall_alone) = alice_observes(false, false);
    let (after_bob, recall_after_bob) = alice_observes(true, false);
    assert_eq!(alone, after_bob, "ingest counts tell about another space");
    assert_eq!(after_bob.vectors_cached, 0);
    let hits = |r: &Recall| -> Vec<(String, String)> {
        r.hits
            .iter()
            .map(|h| (h.unit_id.clone(), h.text.clone()))
            .collect()
    };
    assert_eq!(hits(&recall_alone), hits(&recall_after_bob));
    assert_eq!(recall_alone.context, recall_after_bob.context);
    // The query was embedded for alice both times: no shortcut through bob's cache.
    let floor = EMBED_DELAY.as_secs_f64() * 1000.0 * 0.9;
    for r in [&recall_alone, &recall_after_bob] {
        assert!(
            r.timings.embed_ms >= floor,
            "embed_ms {}",
            r.timings.embed_ms
        );
    }
}

/// The mechanism the test above relies on is real: with the cache shared on purpose (as
/// benchmarks replaying public data configure it), the second space's vectors do come
/// from the first one's entries, and its query embeds at once.
#[test]
fn a_shared_cache_is_visible_and_so_is_only_for_replays() {
    let (after_bob, recall) = alice_observes(true, true);
    assert!(after_bob.vectors_cached > 0, "{after_bob:?}");
    assert_eq!(after_bob.vectors_computed, 0);
    assert!(recall.timings.embed_ms < EMBED_DELAY.as_secs_f64() * 1000.0 * 0.5);
}
