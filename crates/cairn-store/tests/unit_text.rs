//! A unit's text lives in a column of its own (schema version 5), and so does a key longer
//! than its head (version 6): whole reads give back exactly what was written,
//! `units_without_text` leaves the text of the kinds asked for empty and their keys cut to
//! the head, and nothing else, `unit_texts` reads the text, and rows of a version 4
//! directory (text and key inside the body) or a version 5 one (key inside the body) read
//! the same after the migration.
use cairn_core::{
    RecordStore, SessionInput, SessionRecord, SpaceId, Unit, UnitKind, KEY_HEAD_BYTES,
};
use cairn_store::EmbeddedStore;
use std::path::Path;

/// The storage tests' turn, of `kind`, keyed by `key`, with no embedded text.
fn keyed(space: &SpaceId, id: &str, kind: UnitKind, key: &str, text: &str) -> Unit {
    Unit {
        kind,
        embed_text: None,
        ..cairn_testkit::fixtures::unit(space, id, "s", key, text)
    }
}

/// [`keyed`] with a short key.
fn unit(space: &SpaceId, id: &str, kind: UnitKind, text: &str) -> Unit {
    keyed(space, id, kind, &format!("key of {id}"), text)
}

fn fixture(space: &SpaceId) -> Vec<Unit> {
    let long = "fn main() { println!(\"pasted\"); }\n".repeat(3000);
    // Keys longer than their head: a turn's (its text), and a note's (read whole).
    let long_key = format!("Does the key ask? {}", "é".repeat(KEY_HEAD_BYTES));
    vec![
        keyed(space, "turn:s:0", UnitKind::Turn, &long, &long),
        keyed(space, "note:s:1", UnitKind::Note, &long_key, "a note"),
        unit(
            space,
            "round:s:0",
            UnitKind::Round,
            "user: hi\nassistant: a \"quoted\" reply",
        ),
        unit(
            space,
            "note:s:0",
            UnitKind::Note,
            "a note's text, read whole",
        ),
        unit(space, "turn:s:1", UnitKind::Turn, ""),
    ]
}

fn fill(dir: &Path, space: &SpaceId) -> Vec<Unit> {
    let store = EmbeddedStore::open(dir, "m").unwrap();
    store.records.create_space(space).unwrap();
    let session: SessionInput = serde_json::from_value(serde_json::json!({
        "id": "s", "messages": [{"role": "user", "text": "hi"}]
    }))
    .unwrap();
    let record = SessionRecord {
        space: space.clone(),
        recorded_at: chrono::Utc::now(),
        session: session.validate().unwrap(),
    };
    let units = fixture(space);
    store.records.put_session(&record, &units).unwrap();
    units
}

fn ids(units: &[Unit]) -> Vec<String> {
    units.iter().map(|u| u.id.clone()).collect()
}

/// What every read path must give back for `units`; with `heads`, the lean read gives
/// the keys of the kinds it leaves the text out of as their heads (rows written before
/// schema version 6 give them whole).
fn check_reads(store: &EmbeddedStore, space: &SpaceId, units: &[Unit], heads: bool) {
    let mut asked = ids(units);
    asked.push("turn:s:missing".into());
    let whole = store.records.units(space, &asked).unwrap();
    assert_eq!(whole, units);
    assert_eq!(store.records.session_units(space, "s").unwrap(), units);
    assert_eq!(store.records.space_units(space).unwrap(), units);
    let since: Vec<Unit> = store
        .records
        .units_since(0)
        .unwrap()
        .into_iter()
        .map(|(_, u)| u)
        .collect();
    assert_eq!(since, units);

    let kinds = [UnitKind::Turn, UnitKind::Round];
    let lean = store
        .records
        .units_without_text(space, &asked, &kinds)
        .unwrap();
    assert_eq!(lean.len(), units.len());
    for (l, u) in lean.iter().zip(units) {
        let expected = if kinds.contains(&u.kind) {
            String::new()
        } else {
            u.text.clone()
        };
        assert_eq!(l.text, expected, "{}", u.id);
        let key = if heads && kinds.contains(&u.kind) {
            u.key_head()
        } else {
            &u.key
        };
        assert_eq!(l.key, key, "{}", u.id);
        assert_eq!(
            Unit {
                text: u.text.clone(),
                key: u.key.clone(),
                ..l.clone()
            },
            *u,
            "everything but the text and the key is read"
        );
    }

    let texts = store.records.unit_texts(space, &asked).unwrap();
    assert_eq!(texts.len(), units.len(), "the unknown id is left out");
    for u in units {
        assert_eq!(texts[&u.id], u.text, "{}", u.id);
    }
}

#[test]
fn text_is_read_whole_or_left_out_by_kind() {
    let dir = tempfile::tempdir().unwrap();
    let space = SpaceId::new("a").unwrap();
    let units = fill(dir.path(), &space);
    let store = EmbeddedStore::open(dir.path(), "m").unwrap();
    check_reads(&store, &space, &units, true);
    drop(store);
    // What the lean read decodes of a turn whose key is 100 KB of text: a bounded body.
    let db = rusqlite::Connection::open(dir.path().join("records.sqlite3")).unwrap();
    let body: i64 = db
        .query_row(
            "SELECT length(body) FROM units WHERE id = 'turn:s:0'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(body < (2 * KEY_HEAD_BYTES) as i64, "{body} bytes");
}

/// A directory filled as [`fill`] does, then taken back to an older `version`'s layout by
/// `sql`, migrated by opening it, and read; returns the counts of rows whose text and
/// long key columns are NULL after the migration.
fn migrated(sql: &str, version: &str) -> (i64, i64, usize) {
    let dir = tempfile::tempdir().unwrap();
    let space = SpaceId::new("a").unwrap();
    let units = fill(dir.path(), &space);
    let db = rusqlite::Connection::open(dir.path().join("records.sqlite3")).unwrap();
    db.execute_batch(sql).unwrap();
    db.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
        [version],
    )
    .unwrap();
    drop(db);

    let store = EmbeddedStore::open(dir.path(), "m").unwrap();
    check_reads(&store, &space, &units, false);
    drop(store);
    let db = rusqlite::Connection::open(dir.path().join("records.sqlite3")).unwrap();
    let (version, texts, keys): (String, i64, i64) = db
        .query_row(
            "SELECT (SELECT value FROM meta WHERE key = 'schema_version'),
                    (SELECT COUNT(*) FROM units WHERE text IS NULL),
                    (SELECT COUNT(*) FROM units WHERE long_key IS NULL)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(version, "6");
    (texts, keys, units.len())
}

/// Version 5's body: the whole key.
const WHOLE_KEY_IN_BODY: &str =
    "UPDATE units SET body = json_set(body, '$.key', COALESCE(long_key, json_extract(body, '$.key')));
     ALTER TABLE units DROP COLUMN long_key;";

#[test]
fn a_version_4_directory_reads_the_same_after_migrating() {
    // Version 4's layout: the text and the whole key inside the body, no columns for them.
    let sql = format!(
        "{WHOLE_KEY_IN_BODY}
         UPDATE units SET body = json_set(body, '$.text', text);
         ALTER TABLE units DROP COLUMN text;"
    );
    let (texts, keys, n) = migrated(&sql, "4");
    assert_eq!(
        (texts, keys),
        (n as i64, n as i64),
        "old rows are read in place, not rewritten"
    );
}

#[test]
fn a_version_5_directory_reads_the_same_after_migrating() {
    let (texts, keys, n) = migrated(WHOLE_KEY_IN_BODY, "5");
    assert_eq!(
        (texts, keys),
        (0, n as i64),
        "old rows are read in place, not rewritten"
    );
}
