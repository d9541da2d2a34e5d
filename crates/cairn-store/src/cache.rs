use crate::sqlite::{be, Shared};
use cairn_core::{EmbeddingCache, StoreError};
use rusqlite::{params, OptionalExtension};
use std::path::Path;

/// Embedding cache in its own SQLite file, keyed by (model id, text hash).
pub struct SqliteEmbeddingCache {
    db: Shared,
    /// On a directory that cannot be written: read what the cache holds, keep nothing new
    /// (a vector not cached is computed again, as any cache miss is).
    read_only: bool,
}

const TABLE: &str = "CREATE TABLE IF NOT EXISTS embeddings(
    model TEXT NOT NULL, key BLOB NOT NULL, vec BLOB NOT NULL,
    PRIMARY KEY(model, key)) WITHOUT ROWID;";

impl SqliteEmbeddingCache {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let dir = path.parent().unwrap_or(Path::new("."));
        if dir.exists() && crate::disk::is_read_only(dir) {
            let db = match path.exists() {
                true => Shared::open_read_only(path)?,
                false => Shared::in_memory(TABLE)?,
            };
            return Ok(Self {
                db,
                read_only: true,
            });
        }
        let db = Shared::open(path)?;
        be(db
            .lock()
            .execute_batch(&format!("PRAGMA synchronous=NORMAL; {TABLE}")))?;
        Ok(Self {
            db,
            read_only: false,
        })
    }
}

impl EmbeddingCache for SqliteEmbeddingCache {
    fn scrub(&self) -> Result<(), StoreError> {
        self.db.checkpoint()
    }

    fn get(&self, model: &str, keys: &[[u8; 32]]) -> Result<Vec<Option<Vec<f32>>>, StoreError> {
        let conn = self.db.lock();
        let mut stmt =
            be(conn.prepare_cached("SELECT vec FROM embeddings WHERE model=?1 AND key=?2"))?;
        keys.iter()
            .map(|k| {
                let blob: Option<Vec<u8>> = be(stmt
                    .query_row(params![model, &k[..]], |r| r.get(0))
                    .optional())?;
                Ok(blob.map(|b| crate::exact::decode(&b)))
            })
            .collect()
    }

    fn put(&self, model: &str, items: &[([u8; 32], Vec<f32>)]) -> Result<(), StoreError> {
        if self.read_only {
            return Ok(());
        }
        let mut conn = self.db.lock();
        let tx = be(conn.transaction())?;
        {
            let mut stmt = be(tx.prepare_cached(
                "INSERT OR REPLACE INTO embeddings(model, key, vec) VALUES (?1, ?2, ?3)",
            ))?;
            for (k, v) in items {
                be(stmt.execute(params![model, &k[..], crate::exact::encode(v)]))?;
            }
        }
        be(tx.commit())
    }

    fn remove(&self, model: &str, keys: &[[u8; 32]]) -> Result<(), StoreError> {
        let mut conn = self.db.lock();
        let tx = be(conn.transaction())?;
        {
            let mut stmt =
                be(tx.prepare_cached("DELETE FROM embeddings WHERE model=?1 AND key=?2"))?;
            for k in keys {
                be(stmt.execute(params![model, &k[..]]))?;
            }
        }
        be(tx.commit())
    }
}
