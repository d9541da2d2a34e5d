//! The lexical search's match budget (`MATCH_BUDGET`): in a space larger than it, a word
//! held by more units brings no units in by itself, yet still scores the units a rarer
//! word brings in; a space within it is searched whole. Needs `CAIRN_TEST_DATABASE_URL`
//! (`scripts/postgres.sh`); says SKIPPED otherwise.
use cairn_core::{RecordStore, SpaceId, TextIndex, Unit};
use cairn_store_postgres::{migrate, PgRecordStore, PgStore, PgTextIndex, MATCH_BUDGET};

/// A migrated schema of its own, dropped at the end.
struct Schema {
    admin: PgStore,
    name: String,
    store: PgStore,
}

impl Schema {
    fn new() -> Option<Self> {
        let base = cairn_testkit::database_url("postgres text budget")?;
        let admin = PgStore::connect(&base).expect("CAIRN_TEST_DATABASE_URL: cannot connect");
        admin
            .execute_sql("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            .unwrap();
        let name = format!("cairn_text_budget_{}", std::process::id());
        admin
            .execute_sql(&format!(
                "DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"
            ))
            .unwrap();
        let sep = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{sep}options=-c%20search_path%3D{name},public");
        let store = PgStore::connect(&url).unwrap();
        migrate(&store).unwrap();
        Some(Self { admin, name, store })
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        let _ = self
            .admin
            .execute_sql(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name));
    }
}

/// A turn whose key is its text.
fn turn(space: &SpaceId, id: &str, text: &str) -> Unit {
    cairn_testkit::fixtures::unit(space, id, "s", text, text)
}

fn search(index: &PgTextIndex, space: &SpaceId, text: &str) -> Vec<String> {
    let q = cairn_testkit::fixtures::text_query(space, text);
    index.search(&q).unwrap().into_iter().map(|h| h.0).collect()
}

#[test]
fn a_word_held_by_more_units_than_the_budget_scores_but_brings_no_units_in() {
    let Some(schema) = Schema::new() else { return };
    let index = PgTextIndex::new(schema.store.clone());
    let records = PgRecordStore::new(schema.store.clone());
    let (big, small) = (SpaceId::new("big").unwrap(), SpaceId::new("small").unwrap());
    records.create_space(&big).unwrap();
    records.create_space(&small).unwrap();
    let over = MATCH_BUDGET as usize + 20;
    // Every unit holds "harbor"; a few hold "zebra" too, and one "zebra" unit lacks it.
    let mut units: Vec<Unit> = (0..over)
        .map(|i| {
            turn(
                &big,
                &format!("u{i:05}"),
                &format!("harbor lantern{}", i % 7),
            )
        })
        .collect();
    units.push(turn(&big, "z-alone", "zebra lantern3"));
    units.push(turn(&big, "z-harbor", "zebra harbor"));
    index.upsert(&units).unwrap();
    index.commit(1).unwrap();

    assert!(
        search(&index, &big, "harbor").is_empty(),
        "a word held by {over} units must not have every one of them scored"
    );
    // "zebra" brings its two units in; "harbor" still counts in their scores.
    assert_eq!(
        search(&index, &big, "zebra harbor"),
        ["z-harbor", "z-alone"]
    );
    // A pair with a word within the budget ranks first, and single words within the
    // budget fill the rest.
    let hits = search(&index, &big, "zebra lantern3");
    assert_eq!(hits.len(), 10);
    assert_eq!(hits[0], "z-alone");

    // A space within the budget is searched whole, its most common word included, even
    // when the query's words are held by more units than the budget together: 6 units
    // hold both words, 1 only "lantern", the rest only "harbor" (10,006 together).
    let budget = MATCH_BUDGET as usize;
    let mut within: Vec<Unit> = (0..6)
        .map(|i| turn(&small, &format!("both{i}"), "harbor lantern"))
        .collect();
    within.push(turn(&small, "lantern", "lantern"));
    within.extend((within.len()..budget).map(|i| turn(&small, &format!("h{i:05}"), "harbor")));
    index.upsert(&within).unwrap();
    index.commit(2).unwrap();
    let hits = search(&index, &small, "harbor lantern");
    assert_eq!(hits.len(), 10, "{hits:?}");
    // The shortest unit holding the rarer word first (scores are normalized by length).
    assert_eq!(hits[0], "lantern");
    assert!(hits[1..7].iter().all(|h| h.starts_with("both")), "{hits:?}");
    assert!(hits[7..].iter().all(|h| h.starts_with('h')), "{hits:?}");
}
