//! Full and read-only disks (issue 54, finding 6), on a real full disk: a tmpfs of a few
//! MiB mounted for the test (root only; `SKIPPED` otherwise, a failure under
//! `CAIRN_REQUIRE_MOUNT`). The promises (docs/reliability.md, "Full and read-only
//! disks"): a write the disk cannot hold fails with `StoreError::Full` (507 over HTTP)
//! and stores nothing; every write acknowledged is stored and none refused is; reads keep
//! answering; a forget works on the full disk; once space is freed, writes succeed
//! again. A read-only data directory serves reads of what it holds and refuses writes.
use cairn::{AppendInput, Error, Memory, MemoryConfig, RecallOptions, StoreError, WriteOptions};
use cairn_testkit::embedder::HashEmbedder;
use cairn_testkit::switches::mount_missing;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// A tmpfs mounted on a fresh directory, unmounted when dropped (also when the test
/// fails), so no mount outlives the test.
struct Tmpfs {
    dir: PathBuf,
    _base: tempfile::TempDir,
}

impl Tmpfs {
    /// `None` (after saying why) when this process cannot mount.
    fn mount(size: &str) -> Option<Self> {
        let base = tempfile::tempdir().expect("tempdir");
        let dir = base.path().join("disk");
        Self::mount_at(base, dir, size)
    }

    /// Mounted on `dir` (made if missing) inside `base`, which outlives the mount.
    fn mount_at(base: tempfile::TempDir, dir: PathBuf, size: &str) -> Option<Self> {
        std::fs::create_dir_all(&dir).expect("mkdir");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Self { dir, _base: base }),
            Ok(o) => {
                mount_missing(String::from_utf8_lossy(&o.stderr).trim());
                None
            }
            Err(e) => {
                mount_missing(e);
                None
            }
        }
    }

    fn remount(&self, opts: &str) {
        let st = Command::new("mount")
            .args(["-o", &format!("remount,{opts}")])
            .arg(&self.dir)
            .status()
            .expect("mount");
        assert!(st.success(), "remount {opts}");
    }

    /// Bytes free on the file system.
    fn available(&self) -> u64 {
        let out = Command::new("df")
            .args(["-B1", "--output=avail"])
            .arg(&self.dir)
            .output()
            .expect("df");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .and_then(|l| l.trim().parse().ok())
            .expect("df's answer")
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

fn open(dir: &Path) -> Result<Memory, Error> {
    Memory::open_with_embedder(dir, MemoryConfig::default(), Arc::new(HashEmbedder))
}

/// Text of `bytes` bytes that no other session repeats (so every write costs the disk
/// its own room, in the records and in the text index).
fn text(seed: usize, bytes: usize) -> String {
    let mut x = seed as u64 * 2_654_435_761 + 1;
    let mut out = String::with_capacity(bytes + 16);
    while out.len() < bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push_str(&format!("w{:x} ", x % 1_000_000_007));
    }
    out
}

fn append(m: &Memory, session: &str, text: &str) -> Result<(), Error> {
    let input: AppendInput = serde_json::from_value(serde_json::json!({
        "session_id": session,
        "messages": [{"role": "user", "text": text}]
    }))
    .expect("append input");
    m.append("a", input, &WriteOptions::default()).map(|_| ())
}

#[test]
fn a_full_disk_refuses_writes_clearly_keeps_reads_and_forgets_and_recovers() {
    let Some(disk) = Tmpfs::mount("24m") else {
        return;
    };
    let data = disk.dir.join("data");
    let m = open(&data).expect("open");
    append(&m, "s0", "the first memory is about kayaks").expect("first append");
    // Most of the disk taken by something else, so the memory fills the rest quickly.
    let filler = disk.dir.join("filler");
    let room = 3 << 20;
    let fill = disk.available().saturating_sub(room);
    std::fs::write(&filler, vec![1u8; fill as usize]).expect("filler");

    // Appends until one is refused, then again with texts half as long, down to a few
    // bytes: the last room is taken by writes of every size, so some fail in the record
    // store's commit and some after it (the vectors' or the text index's), where a write
    // already stored must not be answered as failed.
    let mut acknowledged = vec!["s0".to_string()];
    let mut refused = Vec::new();
    let mut first_error = None;
    let mut size = 6000;
    let mut i = 1;
    while size >= 8 {
        let id = format!("s{i}");
        match append(&m, &id, &text(i, size)) {
            Ok(()) => acknowledged.push(id),
            Err(e) => {
                assert!(
                    matches!(&e, Error::Store(StoreError::Full(msg)) if msg.contains("full")),
                    "a write the disk cannot hold is StoreError::Full, got {e:?}"
                );
                first_error.get_or_insert(e);
                refused.push(id);
                size /= 2;
            }
        }
        i += 1;
        assert!(i < 5000, "the disk never filled up");
    }
    assert!(first_error.is_some() && acknowledged.len() > 5);
    let refused_id = refused[0].clone();

    // Reads answer from what is committed.
    let r = m
        .recall("a", "kayaks", &RecallOptions::default())
        .expect("recall on a full disk");
    assert!(
        r.hits.iter().any(|h| h.session_id.as_deref() == Some("s0")),
        "recall finds a memory written before the disk filled"
    );
    // Every acknowledged write is stored, none refused is.
    let stats = m.stats("a").expect("stats on a full disk");
    assert_eq!(stats.sessions, acknowledged.len(), "stored = acknowledged");
    for id in &acknowledged {
        assert!(m.session("a", id).expect("read").is_some(), "{id} stored");
    }
    for id in &refused {
        assert!(
            m.session("a", id).expect("read").is_none(),
            "{id} was refused, yet stored"
        );
    }

    // A forget runs on the full disk.
    m.forget_session("a", "s1").expect("forget on a full disk");
    assert!(m.session("a", "s1").expect("read").is_none());

    // The operator frees space: writes succeed again.
    std::fs::remove_file(&filler).expect("free space");
    append(&m, &refused_id, &text(7, 6000)).expect("a write after space was freed");
    let r = m
        .recall("a", "kayaks", &RecallOptions::default())
        .expect("recall");
    assert!(!r.hits.is_empty());
    drop(m);

    // What was acknowledged is what a new process finds.
    let m = open(&data).expect("reopen");
    let stats = m.stats("a").expect("stats");
    assert_eq!(
        stats.sessions,
        acknowledged.len(),
        "-1 forgotten, +1 written"
    );
    let check = m.check(false).expect("check");
    assert!(
        check.consistent,
        "indexes agree with the records: {check:?}"
    );
}

/// A data directory on a read-only mount serves reads of what it holds (recall, the
/// listings, facts, stats) and refuses every write with `StoreError::ReadOnly`; a
/// directory that holds no store yet is refused at open, naming it.
#[test]
fn a_read_only_data_directory_serves_reads_and_refuses_writes() {
    let Some(disk) = Tmpfs::mount("16m") else {
        return;
    };
    let data = disk.dir.join("data");
    let m = open(&data).expect("open");
    append(&m, "s0", "I keep my kayak in the blue shed by the river").expect("append");
    let before = m.stats("a").expect("stats");
    drop(m);
    disk.remount("ro");
    let m = open(&data).expect("a read-only directory opens to read");
    let r = m
        .recall("a", "where is the kayak kept?", &RecallOptions::default())
        .expect("recall");
    assert!(r.context.contains("blue shed"), "{}", r.context);
    assert_eq!(m.stats("a").expect("stats"), before);
    let refused = |e: Error| match e {
        Error::Store(StoreError::ReadOnly(msg)) => {
            assert!(msg.contains("cannot be written"), "{msg}")
        }
        other => panic!("StoreError::ReadOnly, got {other:?}"),
    };
    refused(append(&m, "s1", "a new memory").expect_err("a write is refused"));
    refused(
        m.forget_session("a", "s0")
            .expect_err("a forget is refused"),
    );
    // Still all there, and still readable after the refusals.
    assert_eq!(m.stats("a").expect("stats"), before);
    drop(m);
    let empty = disk.dir.join("empty");
    disk.remount("rw");
    std::fs::create_dir_all(&empty).expect("mkdir");
    disk.remount("ro");
    match open(&empty).err().expect("no store to read") {
        Error::Store(StoreError::ReadOnly(msg)) => {
            assert!(
                msg.contains(&empty.display().to_string()),
                "names the directory: {msg}"
            )
        }
        other => panic!("StoreError::ReadOnly, got {other:?}"),
    }
    disk.remount("rw");
}

/// The text index on a disk of its own that fills while the records' has room: its
/// commits fail (the text index drops what was pending, and its writer is replaced), yet
/// every write the record store commits is acknowledged and stored, and every recall
/// answers; once the disk has room, the index heals from the record store.
#[test]
fn writes_stored_while_the_text_index_cannot_commit_are_acknowledged_and_healed() {
    let base = tempfile::tempdir().expect("tempdir");
    let data = base.path().join("data");
    let Some(text_disk) = Tmpfs::mount_at(base, data.join("text"), "512k") else {
        return;
    };
    let m = open(&data).expect("open");
    let n = 150;
    for i in 0..n {
        append(&m, &format!("s{i}"), &text(i, 4000))
            .unwrap_or_else(|e| panic!("append {i}, stored in the records, answered {e:?}"));
        m.recall("a", &text(i, 40), &RecallOptions::default())
            .unwrap_or_else(|e| panic!("recall after append {i}: {e:?}"));
    }
    assert_eq!(m.stats("a").expect("stats").sessions, n);
    // The text index's disk did fill: it cannot be brought up to the records.
    let full = m.check(false).expect_err("the text index cannot commit");
    assert!(
        matches!(full, Error::Store(StoreError::Full(_))),
        "{full:?}"
    );
    // Room again: the next read heals the index, and it agrees with the records.
    text_disk.remount("size=64m");
    m.recall("a", &text(n - 1, 40), &RecallOptions::default())
        .expect("recall");
    let check = m.check(false).expect("check");
    assert!(
        check.consistent,
        "indexes agree with the records: {check:?}"
    );
}
