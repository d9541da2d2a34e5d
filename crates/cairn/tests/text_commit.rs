//! Writes are acknowledged once the record store has them; the text index commits later
//! (at the next recall, in the background, on close). These tests pin the two promises
//! that makes: an acknowledged write survives a crash that left the text index behind
//! (opening heals it from the record), and the background committer brings the index on
//! disk up to date without any recall.
use cairn::{AppendInput, EngineConfig, Memory, MemoryConfig, RecallOptions, WriteOptions};
use cairn_testkit::embedder::HashEmbedder;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn open(dir: &Path, text_commit_ms: u64) -> Memory {
    let config = MemoryConfig {
        engine: EngineConfig {
            text_commit_ms,
            ..Default::default()
        },
        ..Default::default()
    };
    Memory::open_with_embedder(dir, config, Arc::new(HashEmbedder)).expect("open")
}

fn append(m: &Memory, text: &str) {
    let input: AppendInput = serde_json::from_value(serde_json::json!({
        "session_id": "s1",
        "messages": [{"role": "user", "text": text}]
    }))
    .expect("append input");
    m.append("a", input, &WriteOptions::default())
        .expect("append");
}

/// The watermark the text index has committed to disk (its `meta.json` payload).
fn committed_watermark(dir: &Path) -> u64 {
    let meta = std::fs::read_to_string(dir.join("text/meta.json")).unwrap_or_default();
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap_or_default();
    meta["payload"]
        .as_str()
        .and_then(|p| p.parse().ok())
        .unwrap_or(0)
}

/// Copies a data directory file by file while its memory is open and idle: what a
/// crash at this moment would leave on disk (SQLite's WAL included).
fn snapshot(from: &Path, to: &Path) {
    for entry in walk(from) {
        let rel = entry.strip_prefix(from).expect("prefix");
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
        if rel.file_name().is_some_and(|n| n == ".lock" || n == "LOCK") {
            continue;
        }
        match std::fs::copy(&entry, &dest) {
            // A file deleted while we copy (an index's garbage collection) was not needed.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            r => {
                r.expect("copy");
            }
        }
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn an_acknowledged_append_survives_a_crash_before_the_text_index_commits() {
    let live = tempfile::tempdir().expect("tempdir");
    let m = open(live.path(), 0);
    append(&m, "The spare key hangs behind the blue door.");
    // Acknowledged, and not yet in the text index on disk: no recall, no committer.
    assert_eq!(committed_watermark(live.path()), 0);
    let crashed = tempfile::tempdir().expect("tempdir");
    snapshot(live.path(), crashed.path());
    drop(m);

    let reopened = open(crashed.path(), 0);
    let r = reopened
        .recall("a", "where is the spare key?", &RecallOptions::default())
        .expect("recall");
    assert!(
        r.hits.iter().any(|h| h.text.contains("blue door")),
        "the healed index finds the acknowledged message: {:?}",
        r.hits.iter().map(|h| &h.text).collect::<Vec<_>>()
    );
    assert!(committed_watermark(crashed.path()) > 0);
}

#[test]
fn the_background_committer_commits_pending_writes_without_a_recall() {
    // Nothing here commits the index but the committer (no recall, no flush, no close):
    // with it off, the first test shows the watermark staying at 0. The committer runs
    // on its own timer and signals nothing, so the test watches for its commit; the
    // watchdog only turns a committer that never commits into a failure (nothing
    // asserts how soon it commits).
    const WATCHDOG: Duration = Duration::from_secs(120);
    let dir = tempfile::tempdir().expect("tempdir");
    let m = open(dir.path(), 20);
    append(&m, "Dinner with Ana is on Friday at eight.");
    let watching = Instant::now();
    while committed_watermark(dir.path()) == 0 {
        assert!(
            watching.elapsed() < WATCHDOG,
            "the committer never committed the append's text entries"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
