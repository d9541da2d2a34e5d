//! A database that takes no writes (a hot standby, `default_transaction_read_only`) is
//! told apart from other failures: a write answers `StoreError::ReadOnly` (the server's
//! 503 `storage_read_only`), and reads still answer. Needs `CAIRN_TEST_DATABASE_URL`
//! (`scripts/postgres.sh`); says SKIPPED otherwise.
use cairn_core::{RecordStore, SpaceId, StoreError};
use cairn_store_postgres::{migrate, PgRecordStore, PgStore};

#[test]
fn a_write_to_a_read_only_database_is_refused_as_read_only_and_reads_answer() {
    let Some(base) = cairn_testkit::database_url("postgres read-only") else {
        return;
    };
    let admin = PgStore::connect(&base).expect("CAIRN_TEST_DATABASE_URL: cannot connect");
    admin
        .execute_sql("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
        .unwrap();
    let name = format!("cairn_read_only_{}", std::process::id());
    admin
        .execute_sql(&format!(
            "DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"
        ))
        .unwrap();
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options=-c%20search_path%3D{name},public");
    let space = SpaceId::new("kept").unwrap();
    {
        let store = PgStore::connect(&url).unwrap();
        migrate(&store).unwrap();
        PgRecordStore::new(store).create_space(&space).unwrap();
    }
    let read_only = PgRecordStore::new(
        PgStore::connect(&format!("{url}%20-c%20default_transaction_read_only%3Don")).unwrap(),
    );
    let e = read_only
        .create_space(&SpaceId::new("new").unwrap())
        .unwrap_err();
    assert!(matches!(e, StoreError::ReadOnly(_)), "{e:?}");
    assert!(read_only.space_exists(&space).unwrap());
    let _ = admin.execute_sql(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"));
}
