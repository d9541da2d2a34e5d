//! The synchronous bridge works wherever the engine may call it: plain threads, and inside
//! another tokio runtime (async context included, where `Runtime::block_on` would panic),
//! and a store dropped there shuts its runtime down without panicking. Needs
//! `CAIRN_TEST_DATABASE_URL` (`scripts/postgres.sh`); says SKIPPED otherwise.
use cairn_store_postgres::PgStore;

fn url() -> Option<String> {
    cairn_testkit::database_url("postgres bridge")
}

#[test]
fn queries_from_threads_and_from_inside_a_runtime() {
    let Some(url) = url() else { return };
    let store = PgStore::connect(&url).unwrap();
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let s = store.clone();
            std::thread::spawn(move || {
                for _ in 0..20 {
                    s.execute_sql("SELECT 1").unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    for rt in [
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap(),
    ] {
        let u = url.clone();
        rt.block_on(async move {
            let inner = PgStore::connect(&u).unwrap();
            inner.execute_sql("SELECT 1").unwrap();
            assert!(inner.schema_version().unwrap() >= 0);
            drop(inner);
        });
    }
}

#[test]
fn a_bad_url_is_an_error_not_a_panic() {
    assert!(PgStore::connect("not a url").is_err());
    if url().is_some() {
        let err = PgStore::connect("postgres://nobody@127.0.0.1:1/none").err();
        assert!(err.is_some());
    }
}
