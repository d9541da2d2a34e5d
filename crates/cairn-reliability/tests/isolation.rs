//! Isolation, as a property: random sequences of operations (ingest, group messages,
//! recall, forget a session, forget a space) over several spaces with random session and
//! message keys never return a unit of another space, and a forgotten space leaves nothing
//! in the record store, the text index, the vector index or the embedding cache.
//!
//! Through the library with a deterministic hashing embedder (no model needed), so it runs
//! everywhere. Short form: 12 cases (CI). Long form:
//! `PROPTEST_CASES=2000 cargo test --release -p cairn-reliability --test isolation`.
use cairn::{GroupMessage, Memory, MemoryConfig, RecallOptions, SessionInput, SpaceId};
use cairn_core::{EmbeddingCache, RecordStore, TextIndex, TextQuery, VectorIndex};
use cairn_testkit::HashEmbedder;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const SPACES: &[&str] = &["s0", "s1", "s2", "s3"];
/// Words shared by all spaces (so queries match across spaces if isolation broke).
const WORDS: &[&str] = &[
    "budget", "kettle", "Oslo", "guitar", "passport", "meeting", "Tuesday", "parcel", "doctor",
    "train",
];
/// The model name of the test embedder (stores key vectors and the cache by it).
const MODEL: &str = cairn_testkit::HASH_MODEL;

/// The marker word of a space: every text written to space i carries it.
fn marker(space: usize) -> String {
    format!("owner{}x", ["q", "w", "e", "r"][space])
}

#[derive(Debug, Clone)]
enum Op {
    Ingest {
        space: usize,
        key: u8,
        words: Vec<usize>,
    },
    Group {
        space: usize,
        group: u8,
        words: Vec<usize>,
        minute: u16,
    },
    Recall {
        space: usize,
        words: Vec<usize>,
    },
    Forget {
        space: usize,
        key: u8,
    },
    Drop {
        space: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let space = 0..SPACES.len();
    let words = proptest::collection::vec(0..WORDS.len(), 1..5);
    prop_oneof![
        4 => (space.clone(), 0u8..6, words.clone()).prop_map(|(space, key, words)| Op::Ingest { space, key, words }),
        2 => (space.clone(), 0u8..3, words.clone(), 0u16..3000).prop_map(|(space, group, words, minute)| Op::Group { space, group, words, minute }),
        4 => (space.clone(), words).prop_map(|(space, words)| Op::Recall { space, words }),
        1 => (space.clone(), 0u8..6).prop_map(|(space, key)| Op::Forget { space, key }),
        1 => space.prop_map(|space| Op::Drop { space }),
    ]
}

fn text(space: usize, words: &[usize], salt: usize) -> String {
    let ws: Vec<&str> = words.iter().map(|&w| WORDS[w]).collect();
    format!("Note {salt} by {} about {}.", marker(space), ws.join(" "))
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(12)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_space_sees_another_and_forgetting_a_space_leaves_nothing(ops in proptest::collection::vec(op(), 1..24)) {
        let dir = tempfile::tempdir().unwrap();
        let memory = Memory::open_with_embedder(dir.path(), MemoryConfig::default(), Arc::new(HashEmbedder)).unwrap();
        // Texts written per space since it was last dropped; and every text ever dropped.
        let mut live: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        let mut dropped: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        let mut sessions_of: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for (n, op) in ops.iter().enumerate() {
            match op {
                Op::Ingest { space, key, words } => {
                    let t = text(*space, words, n);
                    let s: SessionInput = serde_json::from_value(serde_json::json!({
                        "id": format!("k{key}-{n}"), "date": "2024-03-01 10:00",
                        "messages": [{"role": "user", "text": t}, {"role": "assistant", "text": format!("Fine, {}.", marker(*space))}]
                    })).unwrap();
                    memory.ingest_session(SPACES[*space], s).unwrap();
                    live.entry(*space).or_default().insert(t);
                    sessions_of.entry(*space).or_default().insert(format!("k{key}-{n}"));
                }
                Op::Group { space, group, words, minute } => {
                    let t = text(*space, words, n);
                    let m: GroupMessage = serde_json::from_value(serde_json::json!({
                        "speaker": "Ann", "group": format!("g{group}"), "text": t,
                        "time": (chrono::DateTime::UNIX_EPOCH + chrono::Duration::days(19800) + chrono::Duration::minutes(*minute as i64)).to_rfc3339(),
                        "id": format!("m{n}"),
                    })).unwrap();
                    let day = m.session_id();
                    memory.ingest_group_messages(SPACES[*space], vec![m]).unwrap();
                    live.entry(*space).or_default().insert(t);
                    sessions_of.entry(*space).or_default().insert(day);
                }
                Op::Recall { space, words } => {
                    let q: Vec<&str> = words.iter().map(|&w| WORDS[w]).collect();
                    let q = format!("{} owner", q.join(" "));
                    let opts = RecallOptions { top_k: 50, token_budget: 4000, ..Default::default() };
                    match memory.recall(SPACES[*space], &q, &opts) {
                        Ok(r) => {
                            for other in (0..SPACES.len()).filter(|o| o != space) {
                                let m = marker(other);
                                prop_assert!(!r.context.contains(&m), "recall in {} shows {}: {}", SPACES[*space], m, r.context);
                                for h in &r.hits {
                                    prop_assert!(!h.text.contains(&m), "hit {} of {} in {}", h.unit_id, SPACES[other], SPACES[*space]);
                                }
                            }
                            let known = sessions_of.get(space).cloned().unwrap_or_default();
                            for h in &r.hits {
                                if let Some(s) = &h.session_id {
                                    prop_assert!(known.contains(s), "hit of unknown session {s} in {}", SPACES[*space]);
                                }
                            }
                        }
                        Err(cairn::Error::Store(cairn::StoreError::NoSuchSpace(_))) => {
                            prop_assert!(live.get(space).is_none_or(|l| l.is_empty()));
                        }
                        Err(e) => panic!("recall: {e}"),
                    }
                }
                Op::Forget { space, key } => {
                    let known = sessions_of.get(space).cloned().unwrap_or_default();
                    if let Some(id) = known.iter().find(|s| s.starts_with(&format!("k{key}-"))) {
                        memory.forget_session(SPACES[*space], id).unwrap();
                        sessions_of.get_mut(space).unwrap().remove(id);
                    }
                }
                Op::Drop { space } => {
                    memory.forget_space(SPACES[*space]).unwrap();
                    if let Some(l) = live.remove(space) {
                        dropped.entry(*space).or_default().extend(l);
                    }
                    sessions_of.remove(space);
                    prop_assert!(!memory.spaces().unwrap().iter().any(|s| s.as_str() == SPACES[*space]));
                }
            }
        }
        let report = memory.check(false).unwrap();
        prop_assert!(report.consistent, "{report:?}");
        drop(memory);

        // Open the files directly: nothing of a dropped space remains anywhere.
        let store = cairn_store::EmbeddedStore::open(dir.path(), MODEL).unwrap();
        let cache = cairn_store::SqliteEmbeddingCache::open(&cairn_store::EmbeddedStore::default_cache_path(dir.path())).unwrap();
        for (space, texts) in &dropped {
            if live.contains_key(space) {
                continue; // written again after the drop
            }
            let id = SpaceId::new(SPACES[*space]).unwrap();
            prop_assert!(store.records.space_units(&id).unwrap().is_empty());
            prop_assert!(store.records.sessions(&id).unwrap().is_empty());
            prop_assert_eq!(store.vectors.len(&id).unwrap(), 0);
            prop_assert_eq!(store.text.count(&id).unwrap(), Some(0));
            let hits = store.text.search(&TextQuery {
                space: &id, text: &format!("{} {}", marker(*space), WORDS.join(" ")),
                kinds: None, sessions: None, text_weight: 1.0, limit: 100,
            }).unwrap();
            prop_assert!(hits.is_empty(), "{hits:?}");
            let keys: Vec<[u8; 32]> = texts.iter().map(|t| cairn_engine::cache_key_in(Some(&id), t)).collect();
            prop_assert!(cache.get(MODEL, &keys).unwrap().iter().all(Option::is_none), "cached vectors of dropped {}", SPACES[*space]);
        }
        // And the text index holds no unit of a space under another space's name.
        for (i, s) in SPACES.iter().enumerate() {
            let id = SpaceId::new(*s).unwrap();
            for other in (0..SPACES.len()).filter(|o| *o != i) {
                let hits = store.text.search(&TextQuery {
                    space: &id, text: &marker(other), kinds: None, sessions: None, text_weight: 1.0, limit: 10,
                }).unwrap();
                prop_assert!(hits.is_empty(), "{} index holds {} units: {hits:?}", s, SPACES[other]);
            }
        }
    }
}
