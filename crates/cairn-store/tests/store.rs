//! The embedded store keeps spaces apart on every query path and keeps what it commits.
use cairn_core::{
    RecordStore, SessionInput, SessionRecord, SpaceId, TextIndex, TextQuery, Unit, VectorIndex,
};
use cairn_store::EmbeddedStore;

/// A turn whose key is its text.
fn unit(space: &SpaceId, id: &str, session: &str, text: &str) -> Unit {
    cairn_testkit::fixtures::unit(space, id, session, text, text)
}

fn record(space: &SpaceId, id: &str, text: &str) -> SessionRecord {
    let session: SessionInput = serde_json::from_value(serde_json::json!({
        "id": id, "messages": [{"role": "user", "text": text}]
    }))
    .unwrap();
    SessionRecord {
        space: space.clone(),
        recorded_at: chrono::Utc::now(),
        session: session.validate().unwrap(),
    }
}

/// A new space holding session "x" with one turn of `text`, stored and text-indexed;
/// returns the turn's sequence number.
fn store_indexed(store: &EmbeddedStore, s: &SpaceId, text: &str) -> u64 {
    store.records.create_space(s).unwrap();
    let u = unit(s, "turn:x:0", "x", text);
    let seq = store
        .records
        .put_session(&record(s, "x", text), std::slice::from_ref(&u))
        .unwrap();
    store.text.upsert(&[u]).unwrap();
    store.text.commit(seq).unwrap();
    seq
}

#[test]
fn every_query_path_stays_in_its_space() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path(), "m").unwrap();
    let a = SpaceId::new("a").unwrap();
    let b = SpaceId::new("b").unwrap();
    for s in [&a, &b] {
        store.records.create_space(s).unwrap();
        let u = unit(s, "turn:s:0", "s", "the same words in both spaces");
        let seq = store
            .records
            .put_session(
                &record(s, "s", "the same words in both spaces"),
                std::slice::from_ref(&u),
            )
            .unwrap();
        store.text.upsert(&[u]).unwrap();
        let v = if s == &a {
            vec![1.0, 0.0]
        } else {
            vec![0.0, 1.0]
        };
        store
            .vectors
            .upsert(s, &[("turn:s:0".into(), v)], seq)
            .unwrap();
    }
    store
        .text
        .commit(store.records.last_seq().unwrap())
        .unwrap();
    for s in [&a, &b] {
        let hits = store
            .text
            .search(&TextQuery {
                space: s,
                text: "same words",
                kinds: None,
                sessions: None,
                text_weight: 0.5,
                limit: 10,
            })
            .unwrap();
        assert_eq!(hits.len(), 1, "text search in {s} sees only its own unit");
        let v = store.vectors.search(s, &[1.0, 0.0], 10).unwrap();
        assert_eq!(v.len(), 1);
        let expected = if s == &a { 1.0 } else { 0.0 };
        assert!(
            (v[0].1 - expected).abs() < 1e-6,
            "vector search crossed spaces"
        );
        assert_eq!(
            store.records.units(s, &["turn:s:0".into()]).unwrap()[0].space,
            *s
        );
    }
    // Dropping a space leaves nothing of it in any index.
    store.records.drop_space(&a).unwrap();
    store.text.drop_space(&a).unwrap();
    store.vectors.drop_space(&a).unwrap();
    store
        .text
        .commit(store.records.last_seq().unwrap())
        .unwrap();
    let q = TextQuery {
        space: &a,
        text: "same words",
        kinds: None,
        sessions: None,
        text_weight: 0.5,
        limit: 10,
    };
    assert!(store.text.search(&q).unwrap().is_empty());
    assert!(store
        .vectors
        .search(&a, &[1.0, 0.0], 10)
        .unwrap()
        .is_empty());
    assert!(store.records.space_units(&a).unwrap().is_empty());
    assert_eq!(store.records.space_units(&b).unwrap().len(), 1);
}

#[test]
fn commits_and_watermarks_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let s = SpaceId::new("s").unwrap();
    {
        let store = EmbeddedStore::open(dir.path(), "m").unwrap();
        let seq = store_indexed(&store, &s, "durable words");
        store
            .vectors
            .upsert(&s, &[("turn:x:0".into(), vec![1.0])], seq)
            .unwrap();
        // Written to the record store but never indexed: a crash at this point.
        let u2 = unit(&s, "turn:y:0", "y", "unindexed words");
        store
            .records
            .put_session(
                &record(&s, "y", "unindexed words"),
                std::slice::from_ref(&u2),
            )
            .unwrap();
        store.text.upsert(&[u2]).unwrap();
    }
    let store = EmbeddedStore::open(dir.path(), "m").unwrap();
    let last = store.records.last_seq().unwrap();
    assert_eq!(last, 2);
    assert_eq!(store.text.watermark().unwrap(), 1);
    assert_eq!(store.vectors.watermark().unwrap(), 1);
    let pending = store.records.units_since(1).unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].1.id, "turn:y:0");
    assert_eq!(store.records.sessions(&s).unwrap().len(), 2);
    // Another model invalidates vectors (they are derived state).
    drop(store);
    let other = EmbeddedStore::open(dir.path(), "other-model").unwrap();
    assert_eq!(other.vectors.watermark().unwrap(), 0);
    assert_eq!(other.vectors.len(&s).unwrap(), 0);
}

#[test]
fn a_text_index_of_an_older_layout_is_emptied_for_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let s = SpaceId::new("s").unwrap();
    let search = |store: &EmbeddedStore| {
        store
            .text
            .search(&TextQuery {
                space: &s,
                text: "durable",
                kinds: None,
                sessions: None,
                text_weight: 1.0,
                limit: 10,
            })
            .unwrap()
    };
    {
        let store = EmbeddedStore::open(dir.path(), "m").unwrap();
        store_indexed(&store, &s, "durable words");
        assert_eq!(search(&store).len(), 1);
    }
    // An index written before layouts were recorded carries no format file.
    std::fs::remove_file(dir.path().join("text").join("cairn-format")).unwrap();
    let store = EmbeddedStore::open(dir.path(), "m").unwrap();
    assert_eq!(
        store.text.watermark().unwrap(),
        0,
        "re-indexed from the records"
    );
    assert!(search(&store).is_empty());
    assert_eq!(
        store.records.units_since(0).unwrap().len(),
        1,
        "records untouched"
    );
    drop(store);
    // The rebuilt index keeps its layout across reopens.
    let store = EmbeddedStore::open(dir.path(), "m").unwrap();
    store
        .text
        .upsert(&[unit(&s, "turn:x:0", "x", "durable words")])
        .unwrap();
    store.text.commit(1).unwrap();
    drop(store);
    let store = EmbeddedStore::open(dir.path(), "m").unwrap();
    assert_eq!(store.text.watermark().unwrap(), 1);
    assert_eq!(search(&store).len(), 1);
}
