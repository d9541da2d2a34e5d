//! The embedding cache, stored enrichments and API key rows.
use crate::PgStore;
use cairn_core::{
    EmbeddingCache, Enrichment, EnrichmentStore, KeyRecords, KeyRow, SpaceId, StoreError,
};
use std::collections::HashMap;

fn encode(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn decode(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The embedding cache, one table shared by every space and process, keyed by (model id,
/// text hash); vectors as little-endian `f32` bytes.
pub struct PgEmbeddingCache {
    db: PgStore,
}

impl PgEmbeddingCache {
    pub fn new(db: PgStore) -> Self {
        Self { db }
    }
}

impl EmbeddingCache for PgEmbeddingCache {
    fn get(&self, model: &str, keys: &[[u8; 32]]) -> Result<Vec<Option<Vec<f32>>>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let wanted: Vec<Vec<u8>> = keys.iter().map(|k| k.to_vec()).collect();
        let rows: Vec<(Vec<u8>, Vec<u8>)> = self.db.block_on(
            sqlx::query_as(
                "SELECT key, vec FROM embedding_cache WHERE model = $1 AND key = ANY($2)",
            )
            .bind(model)
            .bind(&wanted)
            .fetch_all(self.db.pool()),
        )?;
        let found: HashMap<Vec<u8>, Vec<u8>> = rows.into_iter().collect();
        Ok(wanted
            .iter()
            .map(|k| found.get(k).map(|b| decode(b)))
            .collect())
    }

    fn put(&self, model: &str, items: &[([u8; 32], Vec<f32>)]) -> Result<(), StoreError> {
        let mut last: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
        for (k, v) in items {
            last.insert(k.to_vec(), encode(v));
        }
        if last.is_empty() {
            return Ok(());
        }
        let (keys, vecs): (Vec<Vec<u8>>, Vec<Vec<u8>>) = last.into_iter().unzip();
        self.db.block_on(
            sqlx::query(
                "INSERT INTO embedding_cache(model, key, vec)
                 SELECT $1, * FROM UNNEST($2::bytea[], $3::bytea[])
                 ON CONFLICT (model, key) DO UPDATE SET vec = EXCLUDED.vec",
            )
            .bind(model)
            .bind(keys)
            .bind(vecs)
            .execute(self.db.pool()),
        )?;
        Ok(())
    }

    fn remove(&self, model: &str, keys: &[[u8; 32]]) -> Result<(), StoreError> {
        if keys.is_empty() {
            return Ok(());
        }
        let keys: Vec<Vec<u8>> = keys.iter().map(|k| k.to_vec()).collect();
        self.db.block_on(
            sqlx::query("DELETE FROM embedding_cache WHERE model = $1 AND key = ANY($2)")
                .bind(model)
                .bind(keys)
                .execute(self.db.pool()),
        )?;
        Ok(())
    }
}

/// LLM readings of messages and the per-space enrichment switch. Deleting a session (or
/// its space) deletes its enrichments (a trigger and a cascade).
pub struct PgEnrichmentStore {
    db: PgStore,
}

impl PgEnrichmentStore {
    pub fn new(db: PgStore) -> Self {
        Self { db }
    }
}

impl EnrichmentStore for PgEnrichmentStore {
    fn set_enabled(&self, space: &SpaceId, on: bool) -> Result<(), StoreError> {
        if on {
            let n = self.db.block_on(
                sqlx::query(
                    "INSERT INTO enrich_spaces(space)
                     SELECT space FROM spaces WHERE space = $1 ON CONFLICT DO NOTHING",
                )
                .bind(space.as_str())
                .execute(self.db.pool()),
            )?;
            if n.rows_affected() == 0 {
                let exists: bool = self.db.block_on(
                    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM spaces WHERE space = $1)")
                        .bind(space.as_str())
                        .fetch_one(self.db.pool()),
                )?;
                if !exists {
                    return Err(StoreError::NoSuchSpace(space.to_string()));
                }
            }
        } else {
            self.db.block_on(
                sqlx::query("DELETE FROM enrich_spaces WHERE space = $1")
                    .bind(space.as_str())
                    .execute(self.db.pool()),
            )?;
        }
        Ok(())
    }

    fn enabled_spaces(&self) -> Result<Vec<SpaceId>, StoreError> {
        let names: Vec<String> = self.db.block_on(
            sqlx::query_scalar("SELECT space FROM enrich_spaces ORDER BY space")
                .fetch_all(self.db.pool()),
        )?;
        names.into_iter().map(SpaceId::from_store).collect()
    }

    fn put(&self, e: &Enrichment) -> Result<(), StoreError> {
        let body =
            serde_json::to_string(e).map_err(|e| StoreError::Backend(format!("encode: {e}")))?;
        self.db.block_on(
            sqlx::query(
                "INSERT INTO enrichments(space, session_id, message_id, model, body)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (space, session_id, message_id, model)
                 DO UPDATE SET body = EXCLUDED.body, n = EXCLUDED.n",
            )
            .bind(e.space.as_str())
            .bind(&e.session_id)
            .bind(&e.message_id)
            .bind(&e.model)
            .bind(body)
            .execute(self.db.pool()),
        )?;
        Ok(())
    }

    fn of_session(&self, space: &SpaceId, session: &str) -> Result<Vec<Enrichment>, StoreError> {
        let bodies: Vec<String> = self.db.block_on(
            sqlx::query_scalar(
                "SELECT body FROM enrichments WHERE space = $1 AND session_id = $2 ORDER BY n",
            )
            .bind(space.as_str())
            .bind(session)
            .fetch_all(self.db.pool()),
        )?;
        bodies
            .iter()
            .map(|b| {
                serde_json::from_str(b).map_err(|e| StoreError::Corrupt(format!("enrichment: {e}")))
            })
            .collect()
    }

    fn forget_message(
        &self,
        space: &SpaceId,
        session: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        self.db.block_on(
            sqlx::query(
                "DELETE FROM enrichments WHERE space = $1 AND session_id = $2 AND message_id = $3",
            )
            .bind(space.as_str())
            .bind(session)
            .bind(message)
            .execute(self.db.pool()),
        )?;
        Ok(())
    }
}

/// API key rows (`api_keys`), shared by every process on the database.
pub struct PgKeyRecords {
    db: PgStore,
}

impl PgKeyRecords {
    pub fn new(db: PgStore) -> Self {
        Self { db }
    }
}

type KeyTuple = (
    String,
    Vec<u8>,
    Vec<String>,
    bool,
    Option<String>,
    String,
    Option<String>,
    Option<String>,
);

fn key_row(t: KeyTuple) -> KeyRow {
    KeyRow {
        id: t.0,
        hash: t.1,
        spaces: t.2,
        read_only: t.3,
        label: t.4,
        created_at: t.5,
        revoked_at: t.6,
        partition: t.7,
    }
}

impl KeyRecords for PgKeyRecords {
    fn insert(&self, row: &KeyRow) -> Result<(), StoreError> {
        self.db.block_on(
            sqlx::query(
                "INSERT INTO api_keys(id, hash, spaces, read_only, label, created_at, revoked_at,
                                      partition)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(&row.id)
            .bind(&row.hash)
            .bind(&row.spaces)
            .bind(row.read_only)
            .bind(&row.label)
            .bind(&row.created_at)
            .bind(&row.revoked_at)
            .bind(&row.partition)
            .execute(self.db.pool()),
        )?;
        Ok(())
    }

    fn list(&self) -> Result<Vec<KeyRow>, StoreError> {
        let rows: Vec<KeyTuple> = self.db.block_on(
            sqlx::query_as(
                "SELECT id, hash, spaces, read_only, label, created_at, revoked_at, partition
                   FROM api_keys ORDER BY created_at, id",
            )
            .fetch_all(self.db.pool()),
        )?;
        Ok(rows.into_iter().map(key_row).collect())
    }

    fn revoke(&self, id: &str, at: &str) -> Result<bool, StoreError> {
        let r = self.db.block_on(
            sqlx::query("UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL")
                .bind(id)
                .bind(at)
                .execute(self.db.pool()),
        )?;
        Ok(r.rows_affected() > 0)
    }

    fn live(&self, id: &str) -> Result<Option<KeyRow>, StoreError> {
        let row: Option<KeyTuple> = self.db.block_on(
            sqlx::query_as(
                "SELECT id, hash, spaces, read_only, label, created_at, revoked_at, partition
                   FROM api_keys WHERE id = $1 AND revoked_at IS NULL",
            )
            .bind(id)
            .fetch_optional(self.db.pool()),
        )?;
        Ok(row.map(key_row))
    }
}
