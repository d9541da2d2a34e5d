//! Which store a [`Memory`] opens. The two backends are cargo features of this crate,
//! both on by default: `embedded` (SQLite and the index files in the data directory)
//! and `postgres` (PostgreSQL with pgvector). A crate that only serves a memory it is
//! handed builds without them (`cairn-server`: it links no database of its own); the
//! binary that opens the memory turns them on. In a build without a backend, every call
//! that would open it answers an input error naming `store`, so the API is the same in
//! every build.

use crate::memory::{Memory, MemoryConfig};
use crate::Error;
use cairn_core::{Embedder, KeyRecords};
use cairn_embed::BertEmbedder;
use std::path::Path;
use std::sync::Arc;

impl Memory {
    /// Opens (or creates) a data directory with the default model and settings.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, Error> {
        Self::open_with(dir, MemoryConfig::default())
    }

    /// Opens the store the configuration names ([`MemoryConfig::store`]: a PostgreSQL
    /// URL, else the data directory) with the configured embedding model.
    pub fn open_with(dir: impl AsRef<Path>, config: MemoryConfig) -> Result<Self, Error> {
        match config.store.clone() {
            Some(url) => Self::open_postgres(&url, dir, config),
            None => {
                // `backend = "auto"` keeps the backend of the vectors already stored.
                let stored = embedded::vector_model(dir.as_ref())?;
                let embedder = Arc::new(BertEmbedder::load(
                    &config.embed.resolved(stored.as_deref()),
                )?);
                Self::open_with_embedder(dir, config, embedder)
            }
        }
    }

    /// Opens the embedded store in `dir` with an embedder of the caller's choosing (any
    /// [`Embedder`] implementation).
    pub fn open_with_embedder(
        dir: impl AsRef<Path>,
        config: MemoryConfig,
        embedder: Arc<dyn Embedder>,
    ) -> Result<Self, Error> {
        let dir = dir.as_ref().to_path_buf();
        let backends = embedded::open(&dir, &config, embedder)?;
        let keys = Self::embedded_key_records(&dir)?;
        Self::with_backends(dir, config, keys, backends)
    }

    /// Opens a memory whose storage is a PostgreSQL database with pgvector (`url`,
    /// migrated by [`Memory::migrate_postgres`]) with the configured embedding model.
    /// `dir` keeps only what is local to this process (nothing of the memory); several
    /// processes may open one database at once.
    pub fn open_postgres(
        url: &str,
        dir: impl AsRef<Path>,
        config: MemoryConfig,
    ) -> Result<Self, Error> {
        let stored = postgres::vector_model(url)?;
        let embedder = Arc::new(BertEmbedder::load(
            &config.embed.resolved(stored.as_deref()),
        )?);
        Self::open_postgres_with_embedder(url, dir, config, embedder)
    }

    /// [`Memory::open_postgres`] with an embedder of the caller's choosing. The embedding
    /// cache is the database's, shared by every server, unless the configuration names an
    /// `embedding_cache` file: then that node-local file is used instead.
    pub fn open_postgres_with_embedder(
        url: &str,
        dir: impl AsRef<Path>,
        config: MemoryConfig,
        embedder: Arc<dyn Embedder>,
    ) -> Result<Self, Error> {
        let (keys, mut backends) = postgres::open(url, embedder)?;
        if let Some(path) = &config.embedding_cache {
            backends.cache = embedded::cache_file(path)?;
        }
        Self::with_backends(dir.as_ref().to_path_buf(), config, keys, backends)
    }

    /// Applies the pending schema migrations of a PostgreSQL database (creating the
    /// `vector` extension needs a role allowed to); returns the versions applied now.
    pub fn migrate_postgres(url: &str) -> Result<Vec<i64>, Error> {
        postgres::migrate(url)
    }

    /// The API key rows of a PostgreSQL store (for `cairn keys` without opening a
    /// memory).
    pub fn postgres_key_records(url: &str) -> Result<Arc<dyn KeyRecords>, Error> {
        postgres::key_records(url)
    }

    /// The API key rows of an embedded data directory (for `cairn keys` without
    /// opening a memory, which a running server holds).
    pub fn embedded_key_records(dir: &Path) -> Result<Arc<dyn KeyRecords>, Error> {
        embedded::key_records(dir)
    }
}

/// The error of a call to a backend this build was made without.
#[cfg(not(all(feature = "embedded", feature = "postgres")))]
fn not_built(feature: &str) -> Error {
    cairn_core::InputError::new(
        "store",
        format!("this build has no {feature} store (the `cairn` crate's `{feature}` feature)"),
    )
    .into()
}

#[cfg(feature = "embedded")]
mod embedded {
    use crate::{Error, MemoryConfig};
    use cairn_core::{Embedder, EmbeddingCache, KeyRecords};
    use cairn_engine::EngineBackends;
    use cairn_store::{EmbeddedStore, SqliteEmbeddingCache, SqliteKeyRecords};
    use std::path::Path;
    use std::sync::Arc;

    pub(super) fn vector_model(dir: &Path) -> Result<Option<String>, Error> {
        Ok(EmbeddedStore::vector_model(dir)?)
    }

    pub(super) fn open(
        dir: &Path,
        config: &MemoryConfig,
        embedder: Arc<dyn Embedder>,
    ) -> Result<EngineBackends, Error> {
        let threshold = config.ann_threshold.unwrap_or(cairn_store::ANN_THRESHOLD);
        let store = EmbeddedStore::open_with(dir, embedder.model_id(), threshold)?;
        let cache_path = config
            .embedding_cache
            .clone()
            .unwrap_or_else(|| EmbeddedStore::default_cache_path(dir));
        Ok(EngineBackends {
            records: store.records,
            text: store.text,
            vectors: store.vectors,
            embedder,
            cache: cache_file(&cache_path)?,
            enrich: Some(store.enrich),
        })
    }

    pub(super) fn cache_file(path: &Path) -> Result<Arc<dyn EmbeddingCache>, Error> {
        Ok(Arc::new(SqliteEmbeddingCache::open(path)?))
    }

    pub(super) fn key_records(dir: &Path) -> Result<Arc<dyn KeyRecords>, Error> {
        Ok(Arc::new(SqliteKeyRecords::open(dir)?))
    }
}

#[cfg(not(feature = "embedded"))]
mod embedded {
    use super::not_built;
    use crate::{Error, MemoryConfig};
    use cairn_core::{Embedder, EmbeddingCache, KeyRecords};
    use cairn_engine::EngineBackends;
    use std::path::Path;
    use std::sync::Arc;

    pub(super) fn vector_model(_: &Path) -> Result<Option<String>, Error> {
        Err(not_built("embedded"))
    }

    pub(super) fn open(
        _: &Path,
        _: &MemoryConfig,
        _: Arc<dyn Embedder>,
    ) -> Result<EngineBackends, Error> {
        Err(not_built("embedded"))
    }

    pub(super) fn cache_file(_: &Path) -> Result<Arc<dyn EmbeddingCache>, Error> {
        Err(not_built("embedded"))
    }

    pub(super) fn key_records(_: &Path) -> Result<Arc<dyn KeyRecords>, Error> {
        Err(not_built("embedded"))
    }
}

#[cfg(feature = "postgres")]
mod postgres {
    use crate::Error;
    use cairn_core::{Embedder, KeyRecords};
    use cairn_engine::EngineBackends;
    use cairn_store_postgres::{PgKeyRecords, PgStore, PostgresStore};
    use std::sync::Arc;

    pub(super) fn vector_model(url: &str) -> Result<Option<String>, Error> {
        Ok(PostgresStore::vector_model(url)?)
    }

    /// The database's key rows and backends; the embedding cache is the database's.
    pub(super) fn open(
        url: &str,
        embedder: Arc<dyn Embedder>,
    ) -> Result<(Arc<dyn KeyRecords>, EngineBackends), Error> {
        let store = PostgresStore::open(url, embedder.model_id(), embedder.dim())?;
        let backends = EngineBackends {
            records: store.records,
            text: store.text,
            vectors: store.vectors,
            embedder,
            cache: store.cache,
            enrich: Some(store.enrich),
        };
        Ok((store.keys, backends))
    }

    pub(super) fn migrate(url: &str) -> Result<Vec<i64>, Error> {
        let db = PgStore::connect(url)?;
        Ok(cairn_store_postgres::migrate(&db)?)
    }

    pub(super) fn key_records(url: &str) -> Result<Arc<dyn KeyRecords>, Error> {
        let db = PgStore::connect(url)?;
        db.require_current_schema()?;
        Ok(Arc::new(PgKeyRecords::new(db)))
    }
}

#[cfg(not(feature = "postgres"))]
mod postgres {
    use super::not_built;
    use crate::Error;
    use cairn_core::{Embedder, KeyRecords};
    use cairn_engine::EngineBackends;
    use std::sync::Arc;

    pub(super) fn vector_model(_: &str) -> Result<Option<String>, Error> {
        Err(not_built("postgres"))
    }

    pub(super) fn open(
        _: &str,
        _: Arc<dyn Embedder>,
    ) -> Result<(Arc<dyn KeyRecords>, EngineBackends), Error> {
        Err(not_built("postgres"))
    }

    pub(super) fn migrate(_: &str) -> Result<Vec<i64>, Error> {
        Err(not_built("postgres"))
    }

    pub(super) fn key_records(_: &str) -> Result<Arc<dyn KeyRecords>, Error> {
        Err(not_built("postgres"))
    }
}
