//! Cost tests of the engine's verbs on the embedded store: the work a request does is
//! counted (see [`crate::work`]), never timed, as its input doubles.
use super::{Engine, EngineBackends, EngineConfig, WriteOptions};
use crate::work::counting::steps_of;
use crate::work::steps::CANDIDATES_CHECKED;
use cairn_core::{InspectRecallOptions, SessionInput, SpaceId, TrajectoryInput};
use cairn_testkit::{HashEmbedder, HASH_MODEL};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

fn engine(dir: &Path) -> Engine {
    let store = cairn_store::EmbeddedStore::open(dir, HASH_MODEL).expect("store");
    let cache = cairn_store::SqliteEmbeddingCache::open(&dir.join("cache.sqlite3")).expect("cache");
    let backends = EngineBackends {
        records: store.records,
        text: store.text,
        vectors: store.vectors,
        embedder: Arc::new(HashEmbedder),
        cache: Arc::new(cache),
        enrich: None,
    };
    Engine::open(backends, EngineConfig::default()).expect("engine")
}

/// Team chats that talk of shoes and coupons, `n` of them.
fn chats(n: usize) -> Vec<SessionInput> {
    (0..n)
        .map(|i| {
            serde_json::from_value(json!({
                "id": format!("chat{i}"), "group": "team", "date": "2024-01-02",
                "messages": [
                    {"speaker": format!("Ana{i}"), "text": format!("The shoes order {i} shipped with a coupon.")},
                    {"speaker": "Rui", "text": "Thanks, noted."}]
            }))
            .expect("session")
        })
        .collect()
}

fn trajectory() -> TrajectoryInput {
    serde_json::from_value(json!({
        "id": "t1", "goal": "Find which coupon applies to shoes", "outcome": true,
        "states": [
            {"url": "https://shop.test/deals", "action": "click deals",
             "observation": "Coupon SHOES10 applies to shoes. Coupon BAGS5 applies to bags."},
            {"url": "https://shop.test/cart", "action": "apply SHOES10",
             "observation": "SHOES10 applied: 10% off shoes."}]
    }))
    .expect("trajectory")
}

/// Candidates checked by one trajectory inspection of a space of `n` chats and one
/// trajectory, and whether it found the trajectory.
fn inspection_work(n: usize) -> (u64, bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine(dir.path());
    let space = SpaceId::new("shop").expect("space");
    let opts = WriteOptions::default();
    e.ingest_sessions(&space, chats(n), &opts).expect("chats");
    e.insert_trajectories(&space, vec![trajectory()], &opts)
        .expect("trajectory");
    let (inspected, checked) = steps_of(CANDIDATES_CHECKED, || {
        e.recall_inspect(
            &space,
            "Which coupon applies to shoes?",
            &InspectRecallOptions::default(),
        )
        .expect("inspect")
    });
    let found = inspected.spans.iter().any(|s| s.trajectory_id == "t1");
    (checked, found)
}

/// A recall that asks for kinds (a trajectory inspection asks for slices, events and
/// notes) reads only units of those kinds: before, its vector search ranked the whole
/// space and checked every unit it found, however many chats the space held.
#[test]
fn a_recall_for_some_kinds_checks_none_of_the_others() {
    let (small, found_small) = inspection_work(150);
    let (large, found_large) = inspection_work(300);
    assert!(found_small && found_large);
    assert_eq!(small, large, "checked {small} at 150 chats, {large} at 300");
    assert!(small <= 10, "checked {small} candidates for one trajectory");
}
