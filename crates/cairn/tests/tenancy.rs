//! Tenant opacity: what one space observes (answers, counts, timings) is the same whether
//! or not another space holds a given text or asked a given query. The embedding cache
//! was the channel: shared by all spaces, it told a tenant that someone else had stored
//! a text (its ingest counted the vector as cached) or asked a query (its embedding came
//! back at once, which its timings showed). The embedder here counts the texts it is
//! given, so a cache hit is visible as a text not embedded: what a clock would see,
//! without reading one.
use cairn::{EngineConfig, IngestReport, Memory, MemoryConfig, Recall, RecallOptions};
use cairn_core::{EmbedError, Embedder};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Counts every text it embeds.
#[derive(Default)]
struct CountingEmbedder {
    texts: AtomicUsize,
}

impl CountingEmbedder {
    fn embedded(&self) -> usize {
        self.texts.load(Ordering::SeqCst)
    }
}

impl Embedder for CountingEmbedder {
    fn model_id(&self) -> &str {
        "test-counting-16"
    }
    fn dim(&self) -> usize {
        16
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
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

fn open(dir: &std::path::Path, shared: bool, embedder: Arc<CountingEmbedder>) -> Memory {
    let config = MemoryConfig {
        engine: EngineConfig {
            share_embedding_cache: shared,
            ..Default::default()
        },
        ..Default::default()
    };
    Memory::open_with_embedder(dir, config, embedder).expect("open")
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
/// did or did not do so first; with the number of texts embedded for her recall.
fn alice_observes(bob_first: bool, shared: bool) -> (IngestReport, Recall, usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let embedder = Arc::new(CountingEmbedder::default());
    let m = open(dir.path(), shared, embedder.clone());
    if bob_first {
        m.ingest_session("bob", session(SECRET))
            .expect("bob ingest");
        m.recall("bob", QUERY, &RecallOptions::default())
            .expect("bob recall");
    }
    let report = m.ingest_session("alice", session(SECRET)).expect("ingest");
    let before = embedder.embedded();
    let recall = m
        .recall("alice", QUERY, &RecallOptions::default())
        .expect("recall");
    (report, recall, embedder.embedded() - before)
}

#[test]
fn another_space_holding_a_text_changes_nothing_a_tenant_observes() {
    let (alone, recall_alone, _) = alice_observes(false, false);
    let (after_bob, recall_after_bob, query_embedded) = alice_observes(true, false);
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
    // The query was embedded for alice although bob asked it: no shortcut through
    // bob's cache.
    assert_eq!(query_embedded, 1);
}

/// The mechanism the test above relies on is real: with the cache shared on purpose (as
/// benchmarks replaying public data configure it), the second space's vectors do come
/// from the first one's entries, and its query embeds at once.
#[test]
fn a_shared_cache_is_visible_and_so_is_only_for_replays() {
    let (after_bob, _, query_embedded) = alice_observes(true, true);
    assert!(after_bob.vectors_cached > 0, "{after_bob:?}");
    assert_eq!(after_bob.vectors_computed, 0);
    assert_eq!(query_embedded, 0, "bob's query embedding served alice");
}
