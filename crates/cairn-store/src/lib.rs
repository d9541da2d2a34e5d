//! The embedded storage backend: one data directory holding everything of a Cairn
//! instance.
//!
//! - `records.sqlite3` (SQLite, WAL, synchronous=FULL): the verbatim sessions and
//!   trajectories (ground state; observations deduplicated and compressed), the derived
//!   units, and unit vectors.
//! - `hnsw/`: the saved HNSW graphs of spaces above `ANN_THRESHOLD` vectors (derived
//!   state, stamped with the vector rows they reflect; see `graph_file.rs`).
//! - `text/` (tantivy): the BM25 index over units, one index for all spaces; every indexed
//!   word carries its space as a prefix, so a query reaches only its space's units and
//!   BM25 statistics are per space.
//! - `keys.sqlite3`: API key rows (SQLite; hashes only, never a token).
//! - `disk-reserve`: room kept for forgets on a full disk (`disk.rs`).
//! - the embedding cache, a SQLite file that may live elsewhere so several data
//!   directories (e.g. benchmark runs) share it.
//!
//! This crate owns persistence and the mechanics of search (BM25 scoring, vector
//! similarity). It must never make ranking decisions (fusion, boosts, packing): those
//! belong to the engine.

mod ann;
mod cache;
mod disk;
mod enrich;
mod exact;
mod graph_file;
mod graph_store;
mod keys;
mod listing;
mod records;
mod records_schema;
mod rows;
mod sqlite;
mod text;
mod text_merge;
mod text_pending;
mod text_query;
mod text_reach;
mod text_readonly;
mod trajectories;
mod vectors;

pub use ann::{AnnBuilder, AnnVectorIndex};
pub use cache::SqliteEmbeddingCache;
pub use disk::{RESERVE_BYTES, RESERVE_FILE};
pub use enrich::SqliteEnrichmentStore;
pub use exact::{ExactBuilder, ExactVectorIndex};
pub use keys::{SqliteKeyRecords, KEYS_FILE};
pub use records::SqliteRecordStore;
pub use text::TantivyTextIndex;
pub use vectors::{GraphEvents, SpaceVectors, SqliteVectorIndex, ANN_THRESHOLD};

use cairn_core::StoreError;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The three stores of one embedded data directory.
pub struct EmbeddedStore {
    pub records: Arc<SqliteRecordStore>,
    pub text: Arc<TantivyTextIndex>,
    pub vectors: Arc<SqliteVectorIndex>,
    /// LLM readings of messages and the per-space enrichment switch.
    pub enrich: Arc<SqliteEnrichmentStore>,
}

impl EmbeddedStore {
    /// Opens (creating if needed) the data directory. `vector_model` names the embedding
    /// model whose vectors the directory holds; a different model invalidates them.
    pub fn open(dir: &Path, vector_model: &str) -> Result<Self, StoreError> {
        Self::open_with(dir, vector_model, ANN_THRESHOLD)
    }

    /// [`EmbeddedStore::open`] with spaces above `ann_threshold` vectors searched through
    /// HNSW (tests use small thresholds to exercise the graph without a million rows).
    pub fn open_with(
        dir: &Path,
        vector_model: &str,
        ann_threshold: usize,
    ) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        if let Err(e) = disk::check_writable(dir) {
            return match e {
                StoreError::ReadOnly(why) => {
                    Self::open_read_only(dir, vector_model, ann_threshold, &why)
                }
                e => Err(e),
            };
        }
        let records = Arc::new(SqliteRecordStore::open(&dir.join("records.sqlite3"))?);
        let vectors = Arc::new(
            SqliteVectorIndex::new(records.connection(), vector_model, Some(dir.join("hnsw")))?
                .with_ann_threshold(ann_threshold),
        );
        let text = Arc::new(TantivyTextIndex::open(&dir.join("text"))?);
        let enrich = Arc::new(SqliteEnrichmentStore::new(records.connection())?);
        Ok(Self {
            records,
            text,
            vectors,
            enrich,
        })
    }

    /// A data directory that cannot be written (`why`), opened to read what it holds:
    /// every write answers `StoreError::ReadOnly`. What opening would change (a schema
    /// migration, another model's vectors, a text index of an older layout) is refused
    /// instead, naming it.
    fn open_read_only(
        dir: &Path,
        vector_model: &str,
        ann_threshold: usize,
        why: &str,
    ) -> Result<Self, StoreError> {
        let path = dir.join("records.sqlite3");
        if !path.exists() {
            return Err(StoreError::ReadOnly(why.to_string()));
        }
        tracing::warn!(dir = %dir.display(), "the data directory cannot be written: serving reads of what it holds, refusing writes");
        let records = Arc::new(SqliteRecordStore::open_read_only(&path)?);
        let vectors = Arc::new(
            SqliteVectorIndex::open_read_only(
                records.connection(),
                vector_model,
                Some(dir.join("hnsw")),
            )?
            .with_ann_threshold(ann_threshold),
        );
        let text = Arc::new(TantivyTextIndex::open_read_only(&dir.join("text"))?);
        let enrich = Arc::new(SqliteEnrichmentStore::read_only(records.connection()));
        Ok(Self {
            records,
            text,
            vectors,
            enrich,
        })
    }

    /// The model id of the vectors the data directory in `dir` holds; `None` when it
    /// holds none yet (no directory, a new one, or vectors never written). Read without
    /// creating or changing anything, so a caller can choose its embedder before opening.
    pub fn vector_model(dir: &Path) -> Result<Option<String>, StoreError> {
        let path = dir.join("records.sqlite3");
        if !path.exists() {
            return Ok(None);
        }
        // Immutable when no write-ahead log is left, so a directory that cannot be
        // written (no `-shm` can be made) is read too.
        let conn = sqlite::connect_read_only(&path)?;
        let stored = conn.query_row(
            "SELECT value FROM meta WHERE key = 'vector_model'",
            [],
            |r| r.get::<_, String>(0),
        );
        match stored {
            Ok(model) if !model.is_empty() => Ok(Some(model)),
            Ok(_) | Err(rusqlite::Error::QueryReturnedNoRows) => Ok(None),
            // A directory from before the vector table existed has no `meta` table yet.
            Err(rusqlite::Error::SqliteFailure(_, Some(msg))) if msg.contains("no such table") => {
                Ok(None)
            }
            Err(e) => Err(StoreError::Backend(format!("{}: {e}", path.display()))),
        }
    }

    /// Where the embedding cache of a data directory lives by default.
    pub fn default_cache_path(dir: &Path) -> PathBuf {
        dir.join("embedding-cache.sqlite3")
    }
}

pub(crate) fn io_err(path: &Path, e: std::io::Error) -> StoreError {
    disk::io_error(path, e)
}
