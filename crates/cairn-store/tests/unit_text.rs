//! A unit's text lives in a column of its own (schema version 5): whole reads give back
//! exactly what was written, `units_without_text` leaves the text of the kinds asked for
//! empty and nothing else, `unit_texts` reads it, and rows of a version 4 directory (text
//! inside the body) read the same after the migration.
use cairn_core::{RecordStore, SessionInput, SessionRecord, SpaceId, Unit, UnitKind};
use cairn_store::EmbeddedStore;
use std::path::Path;

/// The storage tests' turn, of `kind`, with no embedded text.
fn unit(space: &SpaceId, id: &str, kind: UnitKind, text: &str) -> Unit {
    Unit {
        kind,
        embed_text: None,
        ..cairn_testkit::fixtures::unit(space, id, "s", &format!("key of {id}"), text)
    }
}

fn fixture(space: &SpaceId) -> Vec<Unit> {
    let long = "fn main() { println!(\"pasted\"); }\n".repeat(3000);
    vec![
        unit(space, "turn:s:0", UnitKind::Turn, &long),
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

/// What every read path must give back for `units`.
fn check_reads(store: &EmbeddedStore, space: &SpaceId, units: &[Unit]) {
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
        assert_eq!(
            Unit {
                text: u.text.clone(),
                ..l.clone()
            },
            *u,
            "everything but the text is read"
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
    check_reads(&store, &space, &units);
}

#[test]
fn a_version_4_directory_reads_the_same_after_migrating() {
    let dir = tempfile::tempdir().unwrap();
    let space = SpaceId::new("a").unwrap();
    let units = fill(dir.path(), &space);
    // Back to version 4's layout: the text inside the body, no text column.
    let db = rusqlite::Connection::open(dir.path().join("records.sqlite3")).unwrap();
    db.execute_batch(
        "UPDATE units SET body = json_set(body, '$.text', text);
         ALTER TABLE units DROP COLUMN text;
         UPDATE meta SET value = '4' WHERE key = 'schema_version';",
    )
    .unwrap();
    drop(db);

    let store = EmbeddedStore::open(dir.path(), "m").unwrap();
    check_reads(&store, &space, &units);
    drop(store);
    let db = rusqlite::Connection::open(dir.path().join("records.sqlite3")).unwrap();
    let (version, nulls): (String, i64) = db
        .query_row(
            "SELECT (SELECT value FROM meta WHERE key = 'schema_version'),
                    (SELECT COUNT(*) FROM units WHERE text IS NULL)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(version, "5");
    assert_eq!(
        nulls,
        units.len() as i64,
        "old rows are read in place, not rewritten"
    );
}
