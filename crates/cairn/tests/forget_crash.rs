//! A committed forget always completes (issue 54, finding 4). The embedded store removes
//! a unit's row in one SQLite transaction and its text-index entry and vector in later
//! commits; a SIGKILL between them used to leave the forgotten unit in the indexes for
//! good (healing only added entries, and the forget could not be retried: its session was
//! gone). Each test here leaves the data directory exactly as such a kill does: the
//! record's removal committed through the store itself, the indexes untouched, the process
//! gone (every handle dropped). Opening the memory again must finish the removal.
#![cfg(feature = "embedded")]
use cairn::{Memory, MemoryConfig, SpaceId, WriteOptions};
use cairn_core::{RecordStore, TextIndex, VectorIndex};
use cairn_store::EmbeddedStore;
use cairn_testkit::HashEmbedder;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

fn open(dir: &Path) -> Memory {
    Memory::open_with_embedder(dir, MemoryConfig::default(), Arc::new(HashEmbedder)).unwrap()
}

fn session(id: &str, text: &str) -> cairn::SessionInput {
    serde_json::from_value(json!({"id": id, "messages": [
        {"role": "user", "text": text}, {"role": "assistant", "text": "Noted."}]}))
    .unwrap()
}

/// The store of a closed data directory, opened as the memory opens it.
fn store(dir: &Path) -> EmbeddedStore {
    let model = EmbeddedStore::vector_model(dir)
        .unwrap()
        .expect("vectors stored");
    EmbeddedStore::open(dir, &model).unwrap()
}

fn space(name: &str) -> SpaceId {
    SpaceId::new(name).unwrap()
}

/// A memory holding `p` (a kept session and one to forget, whose text is `canary`) and a
/// second space `q`, closed.
fn filled(dir: &Path, canary: &str) {
    let m = open(dir);
    m.ingest_session("p", session("keep", "My locker code is 4411."))
        .unwrap();
    m.ingest_session("p", session("s1", &format!("My SSN is {canary}.")))
        .unwrap();
    m.ingest_session("q", session("s9", &format!("The vault word is {canary}.")))
        .unwrap();
    m.flush().unwrap();
    assert!(m.check(false).unwrap().consistent);
}

/// What the indexes hold of `space` against what they should (text, vectors).
fn index_counts(s: &EmbeddedStore, name: &str) -> ((usize, usize), (usize, usize)) {
    let space = space(name);
    let units = s.records.space_units(&space).unwrap();
    let text_expected = units.iter().filter(|u| u.is_searchable()).count();
    let vectors_expected = units.iter().filter(|u| u.embed_text.is_some()).count();
    (
        (s.text.count(&space).unwrap().unwrap(), text_expected),
        (s.vectors.len(&space).unwrap(), vectors_expected),
    )
}

/// What the text index finds of `word` in `name`.
fn found(s: &EmbeddedStore, name: &str, word: &str) -> Vec<(String, f32)> {
    let query = cairn_core::TextQuery {
        space: &space(name),
        text: word,
        kinds: None,
        sessions: None,
        text_weight: 1.0,
        limit: 10,
    };
    s.text.search(&query).unwrap()
}

#[test]
fn a_forget_killed_after_its_record_committed_completes_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let canary = "zuvefadi";
    filled(dir.path(), canary);
    {
        // The forget's first commit, then the kill.
        let s = store(dir.path());
        let removed = s.records.delete_session(&space("p"), "s1").unwrap();
        assert!(!removed.is_empty());
        let ((text, text_expected), (vectors, vectors_expected)) = index_counts(&s, "p");
        assert!(
            text > text_expected && vectors > vectors_expected,
            "the indexes still hold the forgotten units (else this proves nothing): \
             text {text} vs {text_expected}, vectors {vectors} vs {vectors_expected}"
        );
    }
    let m = open(dir.path());
    let check = m.check(false).unwrap();
    assert!(check.consistent, "{check:#?}");
    drop(m);
    let s = store(dir.path());
    let ((text, text_expected), (vectors, vectors_expected)) = index_counts(&s, "p");
    assert_eq!((text, vectors), (text_expected, vectors_expected));
    assert_eq!(found(&s, "p", canary), Vec::new());
    // The other space's copy of the word is untouched.
    assert!(!found(&s, "q", canary).is_empty());
    // Once both indexes applied the removals, their log is pruned.
    assert_eq!(s.records.removals_since(0).unwrap(), Vec::new());
}

#[test]
fn a_space_drop_killed_after_its_record_committed_completes_on_open() {
    let dir = tempfile::tempdir().unwrap();
    filled(dir.path(), "zimopera");
    {
        let s = store(dir.path());
        assert!(s.records.drop_space(&space("q")).unwrap());
        assert!(s.text.count(&space("q")).unwrap().unwrap() > 0);
    }
    let m = open(dir.path());
    let check = m.check(false).unwrap();
    assert!(check.consistent, "{check:#?}");
    drop(m);
    let s = store(dir.path());
    assert_eq!(s.text.count(&space("q")).unwrap(), Some(0));
    assert_eq!(s.vectors.len(&space("q")).unwrap(), 0);
}

/// A trajectory written again removes its units and writes the same ids after: healing
/// must apply the removals before the writes, or the units vanish from the indexes.
#[test]
fn units_removed_and_written_again_stay_indexed_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    filled(dir.path(), "zelanoku");
    {
        let m = open(dir.path());
        let run = serde_json::from_value(json!({"id": "t", "goal": "log in",
            "states": [{"url": "http://a/", "observation": "Welcome back"}]}))
        .unwrap();
        m.trajectories()
            .insert_many_with("p", vec![run], &WriteOptions::default())
            .unwrap();
        m.flush().unwrap();
    }
    {
        let s = store(dir.path());
        let p = space("p");
        let record = s.records.get_trajectory(&p, "t").unwrap().unwrap();
        let units = s.records.trajectory_units(&p, "t").unwrap();
        assert!(!units.is_empty());
        s.records.put_trajectory(&record, &units).unwrap();
        assert!(!s.records.removals_since(0).unwrap().is_empty());
    }
    let m = open(dir.path());
    let check = m.check(false).unwrap();
    assert!(check.consistent, "{check:#?}");
}

/// Whatever leaves the text index out of step with the record beyond what the removal
/// log heals (a crash run left a forgotten session's first turn in the index with its
/// removal already pruned): opening counts each space against the record and mends one
/// that disagrees, an entry of a unit no longer stored removed (its words unsearchable)
/// and a stored unit the index lacks indexed again; `check` says how many it mended. (A
/// count cannot see an orphan and a lost entry in the same space that cancel out.)
#[test]
fn opening_mends_a_text_index_out_of_step_with_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let canary = "zofirakel";
    filled(dir.path(), "zakumeno");
    let lost_id;
    {
        let s = store(dir.path());
        let p = space("p");
        let mut units: Vec<cairn_core::Unit> = s
            .records
            .space_units(&p)
            .unwrap()
            .into_iter()
            .filter(|u| u.is_searchable())
            .collect();
        // An entry of a unit the record never had (no removal logged for it)...
        let mut orphan = units[0].clone();
        orphan.id = "turn:gone:0".into();
        orphan.text = format!("user: {canary}");
        orphan.provenance.session_id = Some("gone".into());
        // ... and two entries the index lost (a count tells them apart from the
        // orphan: one entry less in all).
        let lost: Vec<String> = units.drain(1..3).map(|u| u.id).collect();
        lost_id = lost[0].clone();
        s.text.upsert(&[orphan]).unwrap();
        s.text.remove(&p, &lost).unwrap();
        s.text.commit(s.text.watermark().unwrap()).unwrap();
        assert!(s.records.removals_since(0).unwrap().is_empty());
    }
    let m = open(dir.path());
    let check = m.check(false).unwrap();
    assert!(check.consistent, "{check:#?}");
    assert_eq!(check.text_mended, 3, "{check:#?}");
    drop(m);
    let s = store(dir.path());
    assert_eq!(found(&s, "p", canary), Vec::new());
    let ids = s.text.ids(&space("p")).unwrap().unwrap();
    assert!(ids.contains(&lost_id), "{ids:?}");
    // A store in step is left alone.
    drop(s);
    let check = open(dir.path()).check(false).unwrap();
    assert_eq!(check.text_mended, 0, "{check:#?}");
}
