//! The embedded store's saved HNSW graph through the facade: `ann_threshold` puts a small
//! space on the graph, closing saves it in `hnsw/`, and `check --rebuild` replaces it with
//! one built again from the rewritten rows, which answers as before (derived state).
use cairn::{Memory, MemoryConfig, RecallOptions, SessionInput};
use cairn_testkit::embedder::HashEmbedder;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn open(dir: &Path) -> Memory {
    let config = MemoryConfig {
        ann_threshold: Some(20),
        ..Default::default()
    };
    Memory::open_with_embedder(dir, config, Arc::new(HashEmbedder)).expect("open")
}

/// The saved graph files of the data directory (none when `hnsw/` is absent).
fn graph_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir.join("hnsw")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "graph" || x == "keys"))
        .collect();
    files.sort();
    files
}

const TOPICS: [&str; 10] = [
    "blue kite",
    "sourdough starter",
    "cello lessons",
    "vet appointment",
    "garden tomatoes",
    "chess club",
    "broken dishwasher",
    "trip to Kyoto",
    "red bicycle",
    "sister's wedding",
];

fn sessions() -> Vec<SessionInput> {
    (0..10)
        .map(|s| {
            let messages: Vec<serde_json::Value> = (0..4)
                .flat_map(|m| {
                    let topic = TOPICS[(s + m) % TOPICS.len()];
                    [
                        serde_json::json!({"role": "user", "text": format!("session {s} note {m}: the {topic} again")}),
                        serde_json::json!({"role": "assistant", "text": format!("Noted the {topic} ({s}.{m}).")}),
                    ]
                })
                .collect();
            serde_json::from_value(serde_json::json!({
                "id": format!("s{s}"), "date": format!("2024-03-{:02} 10:00", s + 1),
                "messages": messages,
            }))
            .unwrap()
        })
        .collect()
}

fn top_units(m: &Memory, query: &str) -> Vec<String> {
    let opts = RecallOptions {
        top_k: 5,
        ..RecallOptions::default()
    };
    let r = m.recall("u", query, &opts).expect("recall");
    r.hits.into_iter().map(|h| h.unit_id).collect()
}

#[test]
fn check_rebuild_replaces_the_saved_graph_and_recall_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let before = {
        let m = open(dir.path());
        m.ingest_sessions("u", sessions()).unwrap();
        top_units(&m, "when is the vet appointment?")
    };
    let saved = graph_files(dir.path());
    assert_eq!(
        saved.len(),
        2,
        "closing saves the graph and its keys: {saved:?}"
    );
    let read = |files: &[PathBuf]| -> Vec<Vec<u8>> {
        files.iter().map(|f| std::fs::read(f).unwrap()).collect()
    };
    let old = read(&saved);
    let m = open(dir.path());
    m.check(true).unwrap();
    assert_eq!(top_units(&m, "when is the vet appointment?"), before);
    drop(m);
    assert_eq!(
        graph_files(dir.path()),
        saved,
        "the graph built again is saved again"
    );
    // Stamped with the rewritten rows: the old files were not kept.
    assert_ne!(
        read(&saved),
        old,
        "check --rebuild replaced the saved graph"
    );
}
