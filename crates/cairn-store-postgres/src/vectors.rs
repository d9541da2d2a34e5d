//! Unit vectors in pgvector, searched by cosine distance through an HNSW index over the
//! distinct vectors of each space.
use crate::PgStore;
use cairn_core::{SpaceId, StoreError, VectorIndex};
use sqlx::AssertSqlSafe;

/// pgvector's text form of a vector (`[x,y,...]`; `f32`'s shortest round-trip digits).
pub(crate) fn vector_text(v: &[f32]) -> String {
    let mut s = String::with_capacity(v.len() * 12 + 2);
    s.push('[');
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&x.to_string());
    }
    s.push(']');
    s
}

/// Vectors of one embedding model (its dimension fixed when the store opens). Each
/// distinct vector of a space is one row of `vector_points` (keyed by the MD5 of its
/// text form) and each unit names its point in `vectors`, so repeated text is one
/// element of the HNSW graph (a graph of many identical elements traps its search).
/// Searches order points by `vec::vector(dim) <=> query`, the expression the HNSW index
/// is built on (the planner scans small spaces exactly), then expand them to units;
/// similarity is `1 - cosine distance`.
pub struct PgVectorIndex {
    db: PgStore,
    dim: usize,
}

impl PgVectorIndex {
    /// Vectors of another model than `model` are deleted (derived state, recomputed from
    /// units by the engine), and the HNSW index for `dim` is created if missing.
    pub fn open(db: PgStore, model: &str, dim: usize) -> Result<Self, StoreError> {
        if dim == 0 || dim > 2000 {
            return Err(StoreError::Backend(format!(
                "pgvector's HNSW index takes 1 to 2000 dimensions, the model has {dim}"
            )));
        }
        let index = format!(
            "CREATE INDEX IF NOT EXISTS vector_points_hnsw_{dim} ON vector_points
             USING hnsw ((vec::vector({dim})) vector_cosine_ops)"
        );
        db.block_on(async {
            let mut tx = db.pool().begin().await?;
            // One opener at a time decides about the model and the index.
            sqlx::query("SELECT pg_advisory_xact_lock(hashtext('cairn.vectors.open'))")
                .execute(&mut *tx)
                .await?;
            let stored: String =
                sqlx::query_scalar("SELECT txt FROM cairn_meta WHERE key = 'vector_model'")
                    .fetch_one(&mut *tx)
                    .await?;
            if stored != model {
                if !stored.is_empty() {
                    tracing::warn!(old = %stored, new = %model, "embedding model changed: vectors will be rebuilt");
                }
                sqlx::query("DELETE FROM vectors").execute(&mut *tx).await?;
                sqlx::query("DELETE FROM vector_points")
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("UPDATE cairn_meta SET num = 0 WHERE key = 'vector_watermark'")
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("UPDATE cairn_meta SET txt = $1 WHERE key = 'vector_model'")
                    .bind(model)
                    .execute(&mut *tx)
                    .await?;
                // Indexes of other dimensions would reject the new vectors.
                let others: Vec<String> = sqlx::query_scalar(
                    "SELECT indexname::text FROM pg_indexes
                      WHERE schemaname = current_schema() AND tablename = 'vector_points'
                        AND indexname LIKE 'vector\\_points\\_hnsw\\_%'",
                )
                .fetch_all(&mut *tx)
                .await?;
                for name in others {
                    if name != format!("vector_points_hnsw_{dim}") {
                        sqlx::query(AssertSqlSafe(format!("DROP INDEX \"{name}\"")))
                            .execute(&mut *tx)
                            .await?;
                    }
                }
            }
            sqlx::query(AssertSqlSafe(index)).execute(&mut *tx).await?;
            tx.commit().await
        })?;
        Ok(Self { db, dim })
    }

    pub fn dim(&self) -> usize {
        self.dim
    }
}

impl VectorIndex for PgVectorIndex {
    fn upsert(
        &self,
        space: &SpaceId,
        items: &[(String, Vec<f32>)],
        watermark: u64,
    ) -> Result<(), StoreError> {
        if let Some((id, v)) = items.iter().find(|(_, v)| v.len() != self.dim) {
            return Err(StoreError::Backend(format!(
                "vector of unit {id:?} has {} dimensions, the index holds {}",
                v.len(),
                self.dim
            )));
        }
        let mut last: std::collections::HashMap<&str, &Vec<f32>> = Default::default();
        for (id, v) in items {
            last.insert(id.as_str(), v);
        }
        let (ids, vecs): (Vec<String>, Vec<String>) = last
            .into_iter()
            .map(|(id, v)| (id.to_string(), vector_text(v)))
            .unzip();
        self.db.block_on(async {
            let mut tx = self.db.pool().begin().await?;
            if !ids.is_empty() {
                let replaced: Vec<Vec<u8>> = sqlx::query_scalar(
                    "SELECT point FROM vectors WHERE space = $1 AND unit_id = ANY($2)",
                )
                .bind(space.as_str())
                .bind(&ids)
                .fetch_all(&mut *tx)
                .await?;
                sqlx::query(UPSERT)
                    .bind(space.as_str())
                    .bind(&ids)
                    .bind(&vecs)
                    .execute(&mut *tx)
                    .await?;
                drop_orphans(&mut tx, space, &replaced).await?;
            }
            sqlx::query(
                "UPDATE cairn_meta SET num = GREATEST(num, $1) WHERE key = 'vector_watermark'",
            )
            .bind(watermark as i64)
            .execute(&mut *tx)
            .await?;
            tx.commit().await
        })
    }

    fn remove(&self, space: &SpaceId, unit_ids: &[String]) -> Result<(), StoreError> {
        if unit_ids.is_empty() {
            return Ok(());
        }
        self.db.block_on(async {
            let mut tx = self.db.pool().begin().await?;
            let gone: Vec<Vec<u8>> = sqlx::query_scalar(
                "DELETE FROM vectors WHERE space = $1 AND unit_id = ANY($2) RETURNING point",
            )
            .bind(space.as_str())
            .bind(unit_ids)
            .fetch_all(&mut *tx)
            .await?;
            drop_orphans(&mut tx, space, &gone).await?;
            tx.commit().await
        })
    }

    fn drop_space(&self, space: &SpaceId) -> Result<(), StoreError> {
        self.db.block_on(
            sqlx::query(
                "WITH units AS (DELETE FROM vectors WHERE space = $1)
                 DELETE FROM vector_points WHERE space = $1",
            )
            .bind(space.as_str())
            .execute(self.db.pool()),
        )?;
        Ok(())
    }

    fn watermark(&self) -> Result<u64, StoreError> {
        let n: i64 = self.db.block_on(
            sqlx::query_scalar("SELECT num FROM cairn_meta WHERE key = 'vector_watermark'")
                .fetch_one(self.db.pool()),
        )?;
        Ok(n as u64)
    }

    fn search(
        &self,
        space: &SpaceId,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(String, f32)>, StoreError> {
        if query.len() != self.dim || limit == 0 {
            return Ok(Vec::new());
        }
        let dim = self.dim;
        // Every point names at least one unit, so `limit` points give `limit` units; a
        // point repeated by thousands of units gives at most `limit` of them (id order).
        let sql = format!(
            "WITH near AS MATERIALIZED (
                 SELECT point, vec::vector({dim}) <=> $2::vector({dim}) AS d
                   FROM vector_points WHERE space = $1
                  ORDER BY vec::vector({dim}) <=> $2::vector({dim})
                  LIMIT $3)
             SELECT v.unit_id, (1 - near.d)::float4
               FROM near, LATERAL (
                    SELECT unit_id FROM vectors
                     WHERE space = $1 AND point = near.point
                     ORDER BY unit_id LIMIT $3) AS v
              ORDER BY near.d, v.unit_id
              LIMIT $3"
        );
        let mut hits: Vec<(String, f32)> = self.db.block_on(
            sqlx::query_as(AssertSqlSafe(sql))
                .bind(space.as_str())
                .bind(vector_text(query))
                .bind(limit as i64)
                .fetch_all(self.db.pool()),
        )?;
        // Iterative index scans may return neighbours slightly out of order.
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok(hits)
    }

    fn similarities(
        &self,
        space: &SpaceId,
        query: &[f32],
        unit_ids: &[String],
    ) -> Result<Vec<(String, f32)>, StoreError> {
        if query.len() != self.dim || unit_ids.is_empty() {
            return Ok(Vec::new());
        }
        let dim = self.dim;
        let sql = format!(
            "SELECT v.unit_id, (1 - (p.vec::vector({dim}) <=> $2::vector({dim})))::float4
               FROM vectors v JOIN vector_points p ON p.space = v.space AND p.point = v.point
              WHERE v.space = $1 AND v.unit_id = ANY($3)"
        );
        self.db.block_on(
            sqlx::query_as(AssertSqlSafe(sql))
                .bind(space.as_str())
                .bind(vector_text(query))
                .bind(unit_ids)
                .fetch_all(self.db.pool()),
        )
    }

    fn len(&self, space: &SpaceId) -> Result<usize, StoreError> {
        let n: i64 = self.db.block_on(
            sqlx::query_scalar("SELECT COUNT(*) FROM vectors WHERE space = $1")
                .bind(space.as_str())
                .fetch_one(self.db.pool()),
        )?;
        Ok(n as usize)
    }
}

/// Writes units' vectors ($2 ids, $3 vectors in text form) of a space ($1): each distinct
/// vector becomes a point if new, each unit names its point.
const UPSERT: &str = "WITH x AS (
         SELECT id, v::vector AS vec FROM UNNEST($2::text[], $3::text[]) AS x(id, v)),
     p AS (
         SELECT id, vec, decode(md5(vec::text), 'hex') AS point FROM x),
     points AS (
         INSERT INTO vector_points(space, point, vec)
         SELECT DISTINCT ON (point) $1, point, vec FROM p ORDER BY point
         ON CONFLICT (space, point) DO NOTHING)
     INSERT INTO vectors(space, unit_id, point) SELECT $1, id, point FROM p
     ON CONFLICT (space, unit_id) DO UPDATE SET point = EXCLUDED.point";

/// Deletes the points among `points` that no unit of the space names any more.
async fn drop_orphans(
    tx: &mut sqlx::PgConnection,
    space: &SpaceId,
    points: &[Vec<u8>],
) -> Result<(), sqlx::Error> {
    if points.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "DELETE FROM vector_points p WHERE p.space = $1 AND p.point = ANY($2)
            AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.space = $1 AND v.point = p.point)",
    )
    .bind(space.as_str())
    .bind(points)
    .execute(tx)
    .await?;
    Ok(())
}
