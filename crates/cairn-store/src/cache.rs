use crate::sqlite::{be, Shared};
use cairn_core::{EmbeddingCache, StoreError};
use rusqlite::{params, OptionalExtension};
use std::path::Path;

/// Embedding cache in its own SQLite file, keyed by (model id, text hash).
pub struct SqliteEmbeddingCache {
    db: Shared,
}

impl SqliteEmbeddingCache {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let db = Shared::open(path)?;
        be(db.lock().execute_batch(
            "PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS embeddings(
                model TEXT NOT NULL, key BLOB NOT NULL, vec BLOB NOT NULL,
                PRIMARY KEY(model, key)) WITHOUT ROWID;",
        ))?;
        Ok(Self { db })
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
