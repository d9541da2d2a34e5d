//! Sessions, trajectories and units. Bodies are JSON text (sessions, units) or gzip'd JSON
//! (trajectories, observations), exactly as the embedded store keeps them, so a record
//! round-trips every field of its input.
use crate::body::{from_json, to_json, units_of};
use crate::record_store::PgRecordStore;
use crate::trajectories::{collect_garbage, TrajectoryRows};
use crate::PgStore;
use cairn_core::{
    Receipt, RecordStore, SessionHeader, SessionRecord, SessionWrite, SpaceId, Stale, StoreError,
    TrajectoryRecord, TrajectorySummary, Unit, UnitKind, UnitPage, UnitQuery,
};
use sqlx::pool::PoolConnection;
use sqlx::{PgConnection, Postgres, Row};
use std::collections::{BTreeMap, HashMap};

/// An error that is not the database's, carried out of a transaction future.
fn other(e: StoreError) -> sqlx::Error {
    sqlx::Error::Protocol(e.to_string())
}

/// The smallest string above every string that starts with `prefix` (columns are
/// `COLLATE "C"`, so this is code point order, as in SQLite).
fn prefix_end(prefix: &str) -> String {
    format!("{prefix}\u{10FFFF}")
}

/// What a store operation found wrong that is not a database error.
enum Outcome<T> {
    Done(T),
    NoSpace,
    Missing,
}

/// Takes the store-wide write lock (the `last_seq` row) until the transaction ends:
/// record writes of every process are serialized, so positions (`ord`) and sequence
/// numbers are computed over everything committed before.
async fn lock_writes(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT num FROM cairn_meta WHERE key = 'last_seq' FOR UPDATE")
        .execute(conn)
        .await?;
    Ok(())
}

async fn space_exists(conn: &mut PgConnection, space: &str) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM spaces WHERE space = $1)")
        .bind(space)
        .fetch_one(conn)
        .await
}

/// Writes units with fresh sequence numbers; returns the last one (the previous last when
/// `units` is empty). The `last_seq` row stays locked until the transaction ends, so
/// concurrent writers (other processes included) get disjoint, commit-ordered ranges.
async fn write_units(
    conn: &mut PgConnection,
    space: &str,
    units: &[Unit],
) -> Result<u64, sqlx::Error> {
    let last: i64 = sqlx::query_scalar(
        "UPDATE cairn_meta SET num = num + $1 WHERE key = 'last_seq' RETURNING num",
    )
    .bind(units.len() as i64)
    .fetch_one(&mut *conn)
    .await?;
    let first = last - units.len() as i64 + 1;
    if units.is_empty() {
        return Ok(last as u64);
    }
    // A unit id repeated in one batch: the last one wins (as INSERT OR REPLACE does).
    let mut position: HashMap<&str, usize> = HashMap::new();
    for (i, u) in units.iter().enumerate() {
        position.insert(u.id.as_str(), i);
    }
    let mut ids = Vec::new();
    let mut kinds = Vec::new();
    let mut sessions = Vec::new();
    let mut trajectories = Vec::new();
    let mut topics = Vec::new();
    let mut seqs = Vec::new();
    let mut bodies = Vec::new();
    let mut occurred = Vec::new();
    let mut positions = Vec::new();
    for (i, u) in units.iter().enumerate() {
        if position[u.id.as_str()] != i {
            continue;
        }
        ids.push(u.id.clone());
        kinds.push(u.kind.as_str().to_string());
        sessions.push(u.provenance.session_id.clone());
        trajectories.push(u.provenance.trajectory_id.clone());
        topics.push(u.topic());
        seqs.push(first + i as i64);
        bodies.push(to_json(u).map_err(other)?);
        occurred.push(u.occurred_at.map(|t| t.timestamp_micros()));
        positions.push(u.provenance.first_position as i64);
    }
    sqlx::query(
        "INSERT INTO units(space, id, kind, session_id, trajectory_id, topic, seq, body,
                           occurred_us, position)
         SELECT $1, * FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                                  $7::bigint[], $8::text[], $9::bigint[], $10::bigint[])
         ON CONFLICT (space, id) DO UPDATE SET kind = EXCLUDED.kind,
             session_id = EXCLUDED.session_id, trajectory_id = EXCLUDED.trajectory_id,
             topic = EXCLUDED.topic, seq = EXCLUDED.seq, body = EXCLUDED.body,
             occurred_us = EXCLUDED.occurred_us, position = EXCLUDED.position",
    )
    .bind(space)
    .bind(ids)
    .bind(kinds)
    .bind(sessions)
    .bind(trajectories)
    .bind(topics)
    .bind(seqs)
    .bind(bodies)
    .bind(occurred)
    .bind(positions)
    .execute(&mut *conn)
    .await?;
    Ok(last as u64)
}

impl PgRecordStore {
    fn bodies(&self, sql: &'static str, space: &SpaceId) -> Result<Vec<String>, StoreError> {
        self.db.block_on(
            sqlx::query_scalar(sql)
                .bind(space.as_str())
                .fetch_all(self.db.pool()),
        )
    }

    fn meta_num(&self, key: &'static str) -> Result<i64, StoreError> {
        self.db.block_on(
            sqlx::query_scalar("SELECT num FROM cairn_meta WHERE key = $1")
                .bind(key)
                .fetch_one(self.db.pool()),
        )
    }
}

/// The session-level advisory lock every engine writer on the database takes
/// ([`RecordStore::lock_writers`]); held on its own pooled connection, so a process that
/// dies releases it with its connection.
struct WritersLock {
    db: PgStore,
    conn: Option<PoolConnection<Postgres>>,
}

const WRITERS_LOCK: &str = "SELECT pg_advisory_lock(hashtext('cairn.writers'))";
const WRITERS_UNLOCK: &str = "SELECT pg_advisory_unlock(hashtext('cairn.writers'))";

impl Drop for WritersLock {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.take() else {
            return;
        };
        let unlocked = self
            .db
            .block_on(async { sqlx::query(WRITERS_UNLOCK).execute(&mut *conn).await });
        if unlocked.is_err() {
            // Closing the session releases its advisory locks.
            conn.close_on_drop();
        }
        let _enter = self.db.enter();
        drop(conn);
    }
}

/// Writes one session and replaces its units inside the caller's transaction (which holds
/// the write lock); `None` when its space does not exist.
async fn put_session(
    conn: &mut PgConnection,
    w: &SessionWrite<'_>,
    body: &str,
) -> Result<Option<u64>, sqlx::Error> {
    let record = w.record;
    let space = record.space.as_str();
    if !space_exists(conn, space).await? {
        return Ok(None);
    }
    sqlx::query(
        "INSERT INTO sessions(space, id, ord, recorded_at, body)
         VALUES ($1, $2, (SELECT COALESCE(MAX(ord), -1) + 1 FROM sessions WHERE space = $1), $3, $4)
         ON CONFLICT (space, id) DO UPDATE SET recorded_at = EXCLUDED.recorded_at,
             body = EXCLUDED.body",
    )
    .bind(space)
    .bind(&record.session.id)
    .bind(record.recorded_at.to_rfc3339())
    .bind(body)
    .execute(&mut *conn)
    .await?;
    let (query, ids) = match w.stale {
        Stale::AllOthers => (
            "DELETE FROM units WHERE space = $1 AND session_id = $2 AND NOT (id = ANY($3))",
            w.units.iter().map(|u| u.id.clone()).collect::<Vec<_>>(),
        ),
        Stale::Only(ids) => (
            "DELETE FROM units WHERE space = $1 AND session_id = $2 AND id = ANY($3)",
            ids.to_vec(),
        ),
    };
    if matches!(w.stale, Stale::AllOthers) || !ids.is_empty() {
        sqlx::query(query)
            .bind(space)
            .bind(&record.session.id)
            .bind(&ids)
            .execute(&mut *conn)
            .await?;
    }
    Ok(Some(write_units(conn, space, w.units).await?))
}

impl RecordStore for PgRecordStore {
    fn lock_writers(&self) -> Result<Option<Box<dyn Send>>, StoreError> {
        let conn = self.db.block_on(async {
            let mut conn = self.db.pool().acquire().await?;
            sqlx::query(WRITERS_LOCK).execute(&mut *conn).await?;
            Ok(conn)
        })?;
        Ok(Some(Box::new(WritersLock {
            db: self.db.clone(),
            conn: Some(conn),
        })))
    }

    fn create_space(&self, space: &SpaceId) -> Result<bool, StoreError> {
        let r = self.db.block_on(
            sqlx::query("INSERT INTO spaces(space) VALUES ($1) ON CONFLICT DO NOTHING")
                .bind(space.as_str())
                .execute(self.db.pool()),
        )?;
        Ok(r.rows_affected() == 1)
    }

    fn space_exists(&self, space: &SpaceId) -> Result<bool, StoreError> {
        self.db.block_on(async {
            let mut conn = self.db.pool().acquire().await?;
            space_exists(&mut conn, space.as_str()).await
        })
    }

    fn list_spaces(&self) -> Result<Vec<SpaceId>, StoreError> {
        let names: Vec<String> = self.db.block_on(
            sqlx::query_scalar("SELECT space FROM spaces ORDER BY space").fetch_all(self.db.pool()),
        )?;
        names.into_iter().map(SpaceId::from_store).collect()
    }

    fn drop_space(&self, space: &SpaceId) -> Result<bool, StoreError> {
        // Every table of space data references `spaces` with ON DELETE CASCADE.
        let n = self.db.block_on(async {
            let mut tx = self.db.pool().begin().await?;
            let n = sqlx::query("DELETE FROM spaces WHERE space = $1")
                .bind(space.as_str())
                .execute(&mut *tx)
                .await?
                .rows_affected();
            tx.commit().await?;
            Ok(n)
        })?;
        Ok(n == 1)
    }

    fn get_session(&self, space: &SpaceId, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let body: Option<String> = self.db.block_on(
            sqlx::query_scalar("SELECT body FROM sessions WHERE space = $1 AND id = $2")
                .bind(space.as_str())
                .bind(id)
                .fetch_optional(self.db.pool()),
        )?;
        body.map(|b| from_json(&b, "session")).transpose()
    }

    fn put_sessions(
        &self,
        writes: &[SessionWrite<'_>],
        receipts: &[Receipt],
    ) -> Result<u64, StoreError> {
        let bodies = writes
            .iter()
            .map(|w| to_json(w.record))
            .collect::<Result<Vec<_>, _>>()?;
        let out = self.db.block_on(async {
            let mut tx = self.db.pool().begin().await?;
            lock_writes(&mut tx).await?;
            let mut last = None;
            for (w, body) in writes.iter().zip(&bodies) {
                match put_session(&mut tx, w, body).await? {
                    Some(l) => last = Some(l),
                    None => return Ok(Err(w.record.space.to_string())),
                }
            }
            for r in receipts {
                crate::listing::put_receipt(&mut tx, r).await?;
            }
            let last = match last {
                Some(l) => l,
                None => write_units(&mut tx, "", &[]).await?,
            };
            tx.commit().await?;
            Ok(Ok(last))
        })?;
        out.map_err(StoreError::NoSuchSpace)
    }

    fn receipt(&self, space: &SpaceId, key: &str) -> Result<Option<Receipt>, StoreError> {
        crate::listing::receipt(&self.db, space, key)
    }

    fn session_headers(&self, space: &SpaceId) -> Result<Vec<SessionHeader>, StoreError> {
        crate::listing::session_headers(&self.db, space)
    }

    fn list_units(&self, space: &SpaceId, query: &UnitQuery) -> Result<UnitPage, StoreError> {
        crate::listing::list_units(&self.db, space, query)
    }

    fn decode_failures(&self, space: &SpaceId) -> Result<Vec<String>, StoreError> {
        let mut failures = crate::listing::row_failures(&self.db, space)?;
        let ids: Vec<String> = self.bodies(
            "SELECT id FROM trajectories WHERE space = $1 ORDER BY ord",
            space,
        )?;
        for id in ids {
            if let Err(e) = self.get_trajectory(space, &id) {
                failures.push(format!("trajectory {id:?}: {e}"));
            }
        }
        Ok(failures)
    }

    fn delete_session(&self, space: &SpaceId, id: &str) -> Result<Vec<String>, StoreError> {
        let out = self.db.block_on(async {
            let mut tx = self.db.pool().begin().await?;
            let ids: Vec<String> = sqlx::query_scalar(
                "DELETE FROM units WHERE space = $1 AND session_id = $2 RETURNING id",
            )
            .bind(space.as_str())
            .bind(id)
            .fetch_all(&mut *tx)
            .await?;
            let n = sqlx::query("DELETE FROM sessions WHERE space = $1 AND id = $2")
                .bind(space.as_str())
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            tx.commit().await?;
            Ok(if n == 0 {
                Outcome::Missing
            } else {
                Outcome::Done(ids)
            })
        })?;
        match out {
            Outcome::Done(ids) => Ok(ids),
            _ => Err(StoreError::NotFound(format!(
                "session {id:?} in space {space:?}"
            ))),
        }
    }

    fn put_trajectory(&self, record: &TrajectoryRecord, units: &[Unit]) -> Result<u64, StoreError> {
        let space = record.space.as_str();
        let id = &record.trajectory.id;
        let rows = TrajectoryRows::of(record)?;
        let out = self.db.block_on(async {
            let mut tx = self.db.pool().begin().await?;
            lock_writes(&mut tx).await?;
            if !space_exists(&mut tx, space).await? {
                return Ok(Outcome::NoSpace);
            }
            rows.write(&mut tx, space, id, record.recorded_at).await?;
            collect_garbage(&mut tx, space).await?;
            sqlx::query("DELETE FROM units WHERE space = $1 AND trajectory_id = $2")
                .bind(space)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            let last = write_units(&mut tx, space, units).await?;
            tx.commit().await?;
            Ok(Outcome::Done(last))
        })?;
        match out {
            Outcome::Done(last) => Ok(last),
            _ => Err(StoreError::NoSuchSpace(space.to_string())),
        }
    }

    fn get_trajectory(
        &self,
        space: &SpaceId,
        id: &str,
    ) -> Result<Option<TrajectoryRecord>, StoreError> {
        let rows: Vec<(String, Vec<u8>)> = self.db.block_on(
            sqlx::query_as(
                "SELECT recorded_at, body FROM trajectories WHERE space = $1 AND id = $2",
            )
            .bind(space.as_str())
            .bind(id)
            .fetch_all(self.db.pool()),
        )?;
        Ok(self.records_of_rows(space, rows)?.pop())
    }

    fn trajectory_state(
        &self,
        space: &SpaceId,
        id: &str,
        index: usize,
    ) -> Result<Option<(usize, Option<cairn_core::AgentState>)>, StoreError> {
        self.state_of(space, id, index)
    }

    fn delete_trajectory(&self, space: &SpaceId, id: &str) -> Result<Vec<String>, StoreError> {
        let out = self.db.block_on(async {
            let mut tx = self.db.pool().begin().await?;
            let ids: Vec<String> = sqlx::query_scalar(
                "DELETE FROM units WHERE space = $1 AND trajectory_id = $2 RETURNING id",
            )
            .bind(space.as_str())
            .bind(id)
            .fetch_all(&mut *tx)
            .await?;
            let n = sqlx::query("DELETE FROM trajectories WHERE space = $1 AND id = $2")
                .bind(space.as_str())
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if n == 0 {
                return Ok(Outcome::Missing);
            }
            sqlx::query(
                "DELETE FROM trajectory_observations WHERE space = $1 AND trajectory_id = $2",
            )
            .bind(space.as_str())
            .bind(id)
            .execute(&mut *tx)
            .await?;
            collect_garbage(&mut tx, space.as_str()).await?;
            tx.commit().await?;
            Ok(Outcome::Done(ids))
        })?;
        match out {
            Outcome::Done(ids) => Ok(ids),
            _ => Err(StoreError::NotFound(format!(
                "trajectory {id:?} in space {space:?}"
            ))),
        }
    }

    fn trajectories(&self, space: &SpaceId) -> Result<Vec<TrajectoryRecord>, StoreError> {
        let rows: Vec<(String, Vec<u8>)> = self.db.block_on(
            sqlx::query_as(
                "SELECT recorded_at, body FROM trajectories WHERE space = $1 ORDER BY ord",
            )
            .bind(space.as_str())
            .fetch_all(self.db.pool()),
        )?;
        self.records_of_rows(space, rows)
    }

    fn trajectory_summaries(&self, space: &SpaceId) -> Result<Vec<TrajectorySummary>, StoreError> {
        self.bodies(
            "SELECT summary FROM trajectories WHERE space = $1 ORDER BY ord",
            space,
        )?
        .iter()
        .map(|s| from_json(s, "trajectory summary"))
        .collect()
    }

    fn sessions(&self, space: &SpaceId) -> Result<Vec<SessionRecord>, StoreError> {
        self.bodies(
            "SELECT body FROM sessions WHERE space = $1 ORDER BY ord",
            space,
        )?
        .iter()
        .map(|b| from_json(b, "session"))
        .collect()
    }

    fn units(&self, space: &SpaceId, ids: &[String]) -> Result<Vec<Unit>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<(String, String)> = self.db.block_on(
            sqlx::query_as("SELECT id, body FROM units WHERE space = $1 AND id = ANY($2)")
                .bind(space.as_str())
                .bind(ids)
                .fetch_all(self.db.pool()),
        )?;
        let by_id: HashMap<String, String> = rows.into_iter().collect();
        ids.iter()
            .filter_map(|id| by_id.get(id))
            .map(|b| from_json(b, "unit"))
            .collect()
    }

    fn session_units(&self, space: &SpaceId, session: &str) -> Result<Vec<Unit>, StoreError> {
        let rows: Vec<String> = self.db.block_on(
            sqlx::query_scalar(
                "SELECT body FROM units WHERE space = $1 AND session_id = $2 ORDER BY seq",
            )
            .bind(space.as_str())
            .bind(session)
            .fetch_all(self.db.pool()),
        )?;
        units_of(rows)
    }

    fn unit_ids_of_sessions(
        &self,
        space: &SpaceId,
        sessions: &[String],
        max: usize,
    ) -> Result<Option<Vec<String>>, StoreError> {
        let sessions: Vec<&str> = sessions.iter().map(String::as_str).collect();
        self.ids_at_most(
            "SELECT id FROM units WHERE space = $1 AND session_id = ANY($2) LIMIT $3",
            space,
            &sessions,
            max,
        )
    }

    fn unit_ids_of_kinds(
        &self,
        space: &SpaceId,
        kinds: &[UnitKind],
        max: usize,
    ) -> Result<Option<Vec<String>>, StoreError> {
        let kinds: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        self.ids_at_most(
            "SELECT id FROM units WHERE space = $1 AND kind = ANY($2) LIMIT $3",
            space,
            &kinds,
            max,
        )
    }

    fn session_tail(
        &self,
        space: &SpaceId,
        session: &str,
        from: u32,
    ) -> Result<Vec<Unit>, StoreError> {
        let rows: Vec<String> = self.db.block_on(
            sqlx::query_scalar(
                "SELECT body FROM units WHERE space = $1 AND session_id = $2
                   AND (position >= $3 OR kind = 'fact' OR position IS NULL OR kind IS NULL)
                 ORDER BY seq",
            )
            .bind(space.as_str())
            .bind(session)
            .bind(i64::from(from))
            .fetch_all(self.db.pool()),
        )?;
        units_of(rows)
    }

    fn trajectory_units(&self, space: &SpaceId, trajectory: &str) -> Result<Vec<Unit>, StoreError> {
        let rows: Vec<String> = self.db.block_on(
            sqlx::query_scalar(
                "SELECT body FROM units WHERE space = $1 AND trajectory_id = $2 ORDER BY seq",
            )
            .bind(space.as_str())
            .bind(trajectory)
            .fetch_all(self.db.pool()),
        )?;
        units_of(rows)
    }

    fn units_since(&self, seq: u64) -> Result<Vec<(u64, Unit)>, StoreError> {
        // Store-wide by contract (watermarks are store-wide): this is the one query that
        // spans spaces.
        let rows = self.db.block_on(
            sqlx::query("SELECT seq, body FROM units WHERE seq > $1 ORDER BY seq")
                .bind(seq as i64)
                .fetch_all(self.db.pool()),
        )?;
        rows.into_iter()
            .map(|r| {
                let s: i64 = r.get(0);
                let b: String = r.get(1);
                Ok((s as u64, from_json(&b, "unit")?))
            })
            .collect()
    }

    fn space_units(&self, space: &SpaceId) -> Result<Vec<Unit>, StoreError> {
        units_of(self.bodies(
            "SELECT body FROM units WHERE space = $1 ORDER BY seq",
            space,
        )?)
    }

    fn topic_units(&self, space: &SpaceId, prefix: &str) -> Result<Vec<Unit>, StoreError> {
        let rows: Vec<String> = self.db.block_on(
            sqlx::query_scalar(
                "SELECT body FROM units WHERE space = $1 AND topic >= $2 AND topic < $3 ORDER BY seq",
            )
            .bind(space.as_str())
            .bind(prefix)
            .bind(prefix_end(prefix))
            .fetch_all(self.db.pool()),
        )?;
        units_of(rows)
    }

    fn topics(&self, space: &SpaceId, prefix: &str) -> Result<Vec<String>, StoreError> {
        self.db.block_on(
            sqlx::query_scalar(
                "SELECT DISTINCT topic FROM units WHERE space = $1 AND topic >= $2 AND topic < $3 ORDER BY topic",
            )
            .bind(space.as_str())
            .bind(prefix)
            .bind(prefix_end(prefix))
            .fetch_all(self.db.pool()),
        )
    }

    fn disk_bytes(&self) -> Result<Option<u64>, StoreError> {
        let n: i64 = self.db.block_on(
            sqlx::query_scalar("SELECT pg_database_size(current_database())")
                .fetch_one(self.db.pool()),
        )?;
        Ok(Some(n.max(0) as u64))
    }

    fn removals_since(&self, seq: u64) -> Result<Vec<(u64, SpaceId, String)>, StoreError> {
        let rows: Vec<(i64, String, String)> = self.db.block_on(
            sqlx::query_as(
                "SELECT seq, space, unit_id FROM unit_removals WHERE seq > $1 ORDER BY seq",
            )
            .bind(seq as i64)
            .fetch_all(self.db.pool()),
        )?;
        rows.into_iter()
            .map(|(seq, space, id)| Ok((seq.max(0) as u64, SpaceId::from_store(space)?, id)))
            .collect()
    }

    fn prune_removals(&self, seq: u64) -> Result<(), StoreError> {
        self.db.block_on(
            sqlx::query("DELETE FROM unit_removals WHERE seq <= $1")
                .bind(seq as i64)
                .execute(self.db.pool()),
        )?;
        Ok(())
    }

    fn last_seq(&self) -> Result<u64, StoreError> {
        Ok(self.meta_num("last_seq")? as u64)
    }

    fn generation(&self, space: &SpaceId) -> Result<u64, StoreError> {
        let n: Option<i64> = self.db.block_on(
            sqlx::query_scalar("SELECT n FROM space_writes WHERE space = $1")
                .bind(space.as_str())
                .fetch_optional(self.db.pool()),
        )?;
        Ok(n.unwrap_or(0).max(0) as u64)
    }

    fn derive_version(&self) -> Result<u32, StoreError> {
        Ok(u32::try_from(self.meta_num("derive_version")?).unwrap_or(0))
    }

    fn set_derive_version(&self, version: u32) -> Result<(), StoreError> {
        self.db.block_on(
            sqlx::query("UPDATE cairn_meta SET num = $1 WHERE key = 'derive_version'")
                .bind(version as i64)
                .execute(self.db.pool()),
        )?;
        Ok(())
    }

    fn space_bytes(&self, space: &SpaceId) -> Result<u64, StoreError> {
        // The space's rows as PostgreSQL stores them (TOAST-compressed where it
        // compresses), text index and vector rows included.
        let bytes: i64 = self.db.block_on(
            sqlx::query_scalar(
                "SELECT (
                   (SELECT COALESCE(SUM(pg_column_size(t.*)), 0) FROM sessions t WHERE space = $1)
                 + (SELECT COALESCE(SUM(pg_column_size(t.*)), 0) FROM units t WHERE space = $1)
                 + (SELECT COALESCE(SUM(pg_column_size(t.*)), 0) FROM trajectories t WHERE space = $1)
                 + (SELECT COALESCE(SUM(pg_column_size(t.*)), 0) FROM observations t WHERE space = $1)
                 + (SELECT COALESCE(SUM(pg_column_size(t.*)), 0) FROM text_entries t WHERE space = $1)
                 + (SELECT COALESCE(SUM(pg_column_size(t.*)), 0) FROM vectors t WHERE space = $1)
                 + (SELECT COALESCE(SUM(pg_column_size(t.*)), 0) FROM vector_points t WHERE space = $1)
                 )::bigint",
            )
            .bind(space.as_str())
            .fetch_one(self.db.pool()),
        )?;
        Ok(bytes.max(0) as u64)
    }

    fn unit_counts(&self, space: &SpaceId) -> Result<BTreeMap<String, usize>, StoreError> {
        let kinds: Vec<(String, i64)> = self.db.block_on(
            sqlx::query_as("SELECT kind, COUNT(*) FROM units WHERE space = $1 GROUP BY kind")
                .bind(space.as_str())
                .fetch_all(self.db.pool()),
        )?;
        Ok(kinds
            .into_iter()
            .map(|(kind, n)| (kind, n.max(0) as usize))
            .collect())
    }
}

impl PgRecordStore {
    /// The ids `sql` selects (`$1` the space, `$2` a list, `$3` the limit), or `None`
    /// when they are more than `max`: one row past it is asked for to tell.
    fn ids_at_most(
        &self,
        sql: &'static str,
        space: &SpaceId,
        listed: &[&str],
        max: usize,
    ) -> Result<Option<Vec<String>>, StoreError> {
        let ids: Vec<String> = self.db.block_on(
            sqlx::query_scalar(sql)
                .bind(space.as_str())
                .bind(listed)
                .bind((max as i64).saturating_add(1))
                .fetch_all(self.db.pool()),
        )?;
        Ok((ids.len() <= max).then_some(ids))
    }
}
