//! The PostgreSQL + pgvector storage backend: every storage trait of `cairn-core`
//! ([`RecordStore`](cairn_core::RecordStore), [`TextIndex`](cairn_core::TextIndex),
//! [`VectorIndex`](cairn_core::VectorIndex), [`EmbeddingCache`](cairn_core::EmbeddingCache),
//! [`EnrichmentStore`](cairn_core::EnrichmentStore), [`KeyRecords`](cairn_core::KeyRecords))
//! over one database, so several stateless `cairn serve` processes can share it.
//!
//! - Records (sessions, trajectories with observations stored once per space, gzip'd),
//!   units and the meta row (store-wide unit sequence, watermarks, versions) in plain
//!   tables; every table holding space data leads its key with `space` and every query
//!   filters on it (`migrations/0001_schema.sql`).
//! - Lexical search: PostgreSQL full-text search (`english` configuration: stemming, stop
//!   words), a `tsvector` per unit with the key weighted A and the text weighted B (the
//!   query's `text_weight`), a GIN index; a unit scores the sum over the query's terms
//!   of their inverse document frequency (BM25's, from per-space statistics kept by the
//!   index's own writes) times their `ts_rank` in it, so a rare word counts for more than
//!   a common one, as in the embedded BM25 index.
//! - Dense search: pgvector, cosine distance, an HNSW index on the model's dimension over
//!   each space's distinct vectors (units name their point, so repeated text is one
//!   graph element), iterative index scans (`hnsw.iterative_scan`) so the space filter
//!   never starves the result; the planner scans small spaces exactly.
//!
//! Writes are made safe for several processes by the database: the engine's write lock
//! includes a session-level advisory lock (`RecordStore::lock_writers`), so its
//! read-check-write steps (appends, forgets) are atomic across processes; a unit write takes
//! the next sequence numbers from the `last_seq` meta row inside its transaction (the row
//! lock orders writers, so sequence order is commit order), watermarks only ever move up
//! (`GREATEST`), and nothing is cached in the process, so every read sees the database as
//! it is.
//!
//! Client: sqlx 0.9 (async, no compile-time checked queries, so building needs no
//! database; sqlx 0.8 cannot be used: its optional SQLite driver pins a `libsqlite3-sys`
//! that conflicts with rusqlite's). The storage traits are synchronous, so the store owns
//! a small tokio runtime and drives each query to completion on the calling thread
//! ([`PgStore::block_on`]); it works from plain threads, the server's blocking pool, and
//! even from inside another runtime (it never calls `Runtime::block_on`). Migrations are
//! embedded (`migrations/*.sql`) and run by [`migrate`] (`cairn migrate`); opening a
//! store whose schema is not current fails and says so.
//!
//! This crate owns persistence and the mechanics of search. It must never make ranking
//! decisions (fusion, boosts, packing): those belong to the engine; never keep state in
//! the process that another process could make stale; never query a space's data without
//! filtering on its space (`units_since`, store-wide by the trait's contract, is the one
//! exception).

mod body;
mod listing;
mod misc;
mod record_store;
mod records;
mod text;
mod trajectories;
mod vectors;

pub use misc::{PgEmbeddingCache, PgEnrichmentStore, PgKeyRecords};
pub use record_store::PgRecordStore;
pub use text::{PgTextIndex, MATCH_BUDGET};
pub use vectors::PgVectorIndex;

use cairn_core::StoreError;
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Executor, PgPool};
use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// The schema migrations, in order (embedded in the binary).
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "schema", include_str!("../migrations/0001_schema.sql")),
    (
        2,
        "api keys",
        include_str!("../migrations/0002_api_keys.sql"),
    ),
    (
        3,
        "text statistics",
        include_str!("../migrations/0003_text_statistics.sql"),
    ),
    (
        4,
        "vector points",
        include_str!("../migrations/0004_vector_points.sql"),
    ),
    (
        5,
        "listing and receipts",
        include_str!("../migrations/0005_listing_and_receipts.sql"),
    ),
    (
        6,
        "units by kind",
        include_str!("../migrations/0006_units_by_kind.sql"),
    ),
    (
        7,
        "space writes",
        include_str!("../migrations/0007_space_writes.sql"),
    ),
    (
        8,
        "unit removals",
        include_str!("../migrations/0008_unit_removals.sql"),
    ),
    (
        9,
        "key partition",
        include_str!("../migrations/0009_key_partition.sql"),
    ),
];

/// The schema version this build needs.
pub const SCHEMA_VERSION: i64 = 9;

fn migrator() -> Migrator {
    Migrator::with_migrations(
        MIGRATIONS
            .iter()
            .map(|(v, d, sql)| {
                Migration::new(
                    *v,
                    (*d).into(),
                    MigrationType::Simple,
                    sql.into_sql_str(),
                    false,
                )
            })
            .collect(),
    )
}

use sqlx::SqlSafeStr;

pub(crate) fn pe(e: sqlx::Error) -> StoreError {
    let code = e.as_database_error().and_then(|d| d.code());
    by_sqlstate(code.as_deref(), &e)
}

/// The server's disk full (SQLSTATE class 53 `disk_full`, 53100) or the database read
/// only (25006 `read_only_sql_transaction`, a hot standby or
/// `default_transaction_read_only`) are told apart, as the embedded store's are, so the
/// caller answers a code the operator can act on (507, 503) instead of `internal`.
fn by_sqlstate(code: Option<&str>, e: &dyn std::fmt::Display) -> StoreError {
    match code {
        Some("53100") => StoreError::Full(format!(
            "the database server's disk is full (postgres: {e}); the write was not stored, and reads still answer. Free space on the database server"
        )),
        Some("25006") => StoreError::ReadOnly(format!(
            "the database takes no writes (postgres: {e}); the write was not stored, and reads still answer. Point the server at a primary that accepts writes"
        )),
        _ => StoreError::Backend(format!("postgres: {e}")),
    }
}

#[cfg(test)]
mod error_tests {
    use super::*;

    #[test]
    fn a_full_or_read_only_database_is_told_apart_from_other_failures() {
        assert!(matches!(
            by_sqlstate(Some("53100"), &"x"),
            StoreError::Full(_)
        ));
        assert!(matches!(
            by_sqlstate(Some("25006"), &"x"),
            StoreError::ReadOnly(_)
        ));
        for other in [Some("23505"), Some("53200"), None] {
            assert!(matches!(by_sqlstate(other, &"x"), StoreError::Backend(_)));
        }
    }
}

/// Wakes the thread blocked in [`PgStore::block_on`].
struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// The store's runtime; dropped without waiting (a plain drop would panic when the last
/// store is dropped inside another runtime's async context).
struct Rt(Option<tokio::runtime::Runtime>);

impl Drop for Rt {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// A connection pool and the runtime that drives its I/O. Cheap to clone; every trait
/// implementation of this crate holds one.
#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
    rt: Arc<Rt>,
}

impl PgStore {
    /// Connects (lazily checking the URL). `url` is a libpq-style URL
    /// (`postgres://user:pass@host:port/db`); `options=-c search_path=...` selects a schema.
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("cairn-postgres")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Backend(format!("postgres runtime: {e}")))?;
        let opts = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::Backend(format!("postgres URL: {e}")))?;
        let pool = {
            let _enter = rt.enter();
            PgPoolOptions::new()
                .max_connections(16)
                .acquire_timeout(std::time::Duration::from_secs(10))
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        // Filtered HNSW scans keep going until they found `limit` rows of
                        // the space; candidates are re-sorted by the store.
                        conn.execute(
                            "SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = 200",
                        )
                        .await?;
                        Ok(())
                    })
                })
                .connect_lazy_with(opts.clone())
        };
        let store = Self {
            pool,
            rt: Arc::new(Rt(Some(rt))),
        };
        // One direct connection first: a wrong URL or an unreachable server fails now,
        // instead of after the pool's acquire timeout.
        store.block_on(async {
            use sqlx::Connection;
            sqlx::PgConnection::connect_with(&opts).await?.close().await
        })?;
        Ok(store)
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Enters the store's runtime (for dropping pooled connections outside a query).
    pub(crate) fn enter(&self) -> Option<tokio::runtime::EnterGuard<'_>> {
        self.rt.0.as_ref().map(|rt| rt.enter())
    }

    /// Runs `fut` to completion on this thread, with the store's runtime providing I/O and
    /// timers.
    pub fn block_on<T>(
        &self,
        fut: impl Future<Output = Result<T, sqlx::Error>>,
    ) -> Result<T, StoreError> {
        let _enter = self.enter();
        let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
        let mut cx = Context::from_waker(&waker);
        let mut fut = std::pin::pin!(fut);
        loop {
            match fut.as_mut().poll(&mut cx) {
                Poll::Ready(r) => return r.map_err(pe),
                Poll::Pending => std::thread::park(),
            }
        }
    }

    /// Runs SQL statements as given, without parameters (administration and tests; never
    /// pass outside input).
    pub fn execute_sql(&self, sql: &str) -> Result<(), StoreError> {
        let sql = sql.to_string();
        self.block_on(async {
            self.pool
                .execute(sqlx::raw_sql(sqlx::AssertSqlSafe(sql)))
                .await
                .map(|_| ())
        })
    }

    /// The applied schema version (0: none).
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.block_on(async {
            let exists: bool = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c
                   JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                  WHERE c.relname = '_sqlx_migrations' AND n.nspname = current_schema())",
            )
            .fetch_one(&self.pool)
            .await?;
            if !exists {
                return Ok(0);
            }
            sqlx::query_scalar(
                "SELECT COALESCE(MAX(version), 0) FROM _sqlx_migrations WHERE success",
            )
            .fetch_one(&self.pool)
            .await
        })
    }

    /// Fails unless the schema is exactly the one this build needs.
    pub fn require_current_schema(&self) -> Result<(), StoreError> {
        let v = self.schema_version()?;
        if v == SCHEMA_VERSION {
            return Ok(());
        }
        Err(StoreError::Backend(if v < SCHEMA_VERSION {
            format!("the database schema is at version {v}, this Cairn needs {SCHEMA_VERSION}: run `cairn migrate --store URL` first")
        } else {
            format!("the database schema is at version {v}, newer than this Cairn ({SCHEMA_VERSION}): upgrade Cairn")
        }))
    }
}

/// Applies every pending migration; returns the versions applied now. Safe to run
/// concurrently (sqlx takes an advisory lock) and to repeat.
pub fn migrate(store: &PgStore) -> Result<Vec<i64>, StoreError> {
    let before = store.schema_version()?;
    let m = migrator();
    store
        .block_on(async { m.run(&store.pool).await.map_err(sqlx::Error::from) })
        .map_err(|e| StoreError::Backend(format!("migrate: {e}")))?;
    Ok(MIGRATIONS
        .iter()
        .map(|(v, _, _)| *v)
        .filter(|v| *v > before)
        .collect())
}

/// Every store of one database, as the engine needs them.
pub struct PostgresStore {
    pub db: PgStore,
    pub records: Arc<PgRecordStore>,
    pub text: Arc<PgTextIndex>,
    pub vectors: Arc<PgVectorIndex>,
    pub cache: Arc<PgEmbeddingCache>,
    pub enrich: Arc<PgEnrichmentStore>,
    pub keys: Arc<PgKeyRecords>,
}

impl PostgresStore {
    /// The model id of the vectors the migrated database at `url` holds; `None` when it
    /// holds none yet. Reads only, so a caller can choose its embedder before opening.
    pub fn vector_model(url: &str) -> Result<Option<String>, StoreError> {
        let db = PgStore::connect(url)?;
        db.require_current_schema()?;
        let stored: Option<String> = db.block_on(async {
            sqlx::query_scalar("SELECT txt FROM cairn_meta WHERE key = 'vector_model'")
                .fetch_optional(db.pool())
                .await
        })?;
        Ok(stored.filter(|m| !m.is_empty()))
    }

    /// Opens a migrated database for an embedding model of `dim` dimensions named
    /// `vector_model` (another model's vectors are discarded: they are derived state).
    pub fn open(url: &str, vector_model: &str, dim: usize) -> Result<Self, StoreError> {
        let db = PgStore::connect(url)?;
        db.require_current_schema()?;
        Ok(Self {
            records: Arc::new(PgRecordStore::new(db.clone())),
            text: Arc::new(PgTextIndex::new(db.clone())),
            vectors: Arc::new(PgVectorIndex::open(db.clone(), vector_model, dim)?),
            cache: Arc::new(PgEmbeddingCache::new(db.clone())),
            enrich: Arc::new(PgEnrichmentStore::new(db.clone())),
            keys: Arc::new(PgKeyRecords::new(db.clone())),
            db,
        })
    }
}
