use crate::records_schema::{
    space_write_triggers, LATE_INDEXES, MIGRATIONS, SCHEMA, SCHEMA_VERSION, SPACE_WRITES,
    UNIT_REMOVALS,
};
use crate::rows::{
    from_json, require_space, to_json, unit_cells, unit_row, units_of, write_units, UnitCells,
    UNIT_COLUMNS,
};
use crate::sqlite::{be, Shared};
use cairn_core::{
    Receipt, RecordStore, SessionHeader, SessionRecord, SessionWrite, SpaceId, Stale, StoreError,
    TrajectoryRecord, TrajectorySummary, Unit, UnitKind, UnitPage, UnitQuery, RECEIPT_TTL_HOURS,
};
use rusqlite::{params, OptionalExtension, Transaction};
use std::collections::BTreeMap;
use std::path::Path;

/// Sessions and units in SQLite. Bodies are JSON so the record keeps every field of the
/// input exactly (metadata included).
pub struct SqliteRecordStore {
    db: Shared,
    /// The data directory's reserve of disk space (`disk.rs`), beside the database.
    reserve: crate::disk::Reserve,
}

impl SqliteRecordStore {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let db = Shared::open(path)?;
        be(db.lock().execute_batch(SCHEMA))?;
        be(db.lock().execute_batch(crate::trajectories::SCHEMA))?;
        let version = || -> Result<String, StoreError> {
            be(db.lock().query_row(
                "SELECT value FROM meta WHERE key='schema_version'",
                [],
                |r| r.get(0),
            ))
        };
        while let Some(step) = version()?
            .parse::<usize>()
            .ok()
            .and_then(|v| MIGRATIONS.get(v.wrapping_sub(1)))
        {
            let mut conn = db.lock();
            let tx = be(conn.transaction())?;
            be(tx.execute_batch(step))?;
            be(tx.commit())?;
        }
        be(db.lock().execute_batch(LATE_INDEXES))?;
        be(db.lock().execute_batch(SPACE_WRITES))?;
        be(db.lock().execute_batch(&space_write_triggers()))?;
        be(db.lock().execute_batch(UNIT_REMOVALS))?;
        let version = version()?;
        if version != SCHEMA_VERSION {
            return Err(StoreError::Corrupt(format!(
                "{}: schema version {version} is not supported by this Cairn",
                path.display()
            )));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        Ok(Self {
            db,
            reserve: crate::disk::Reserve::new(dir),
        })
    }

    /// The record store in `path` for reading only (a data directory that cannot be
    /// written): no schema is created or migrated, so a store of another schema version
    /// is refused.
    pub fn open_read_only(path: &Path) -> Result<Self, StoreError> {
        let db = Shared::open_read_only(path)?;
        let version: String = be(db.lock().query_row(
            "SELECT value FROM meta WHERE key='schema_version'",
            [],
            |r| r.get(0),
        ))?;
        if version != SCHEMA_VERSION {
            return Err(StoreError::ReadOnly(format!(
                "{}: schema version {version}, and this Cairn reads {SCHEMA_VERSION}; a read-only data directory cannot be migrated, so open it writable once",
                path.display()
            )));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        Ok(Self {
            db,
            reserve: crate::disk::Reserve::new(dir),
        })
    }

    /// The row `sql` selects (parameters: the space, a unit id, then `extra`), read by
    /// `row`, for each of `ids` that has one, in the order asked, in one read
    /// transaction (a recall asks for a few hundred; not one transaction per statement).
    fn unit_rows<T>(
        &self,
        sql: &str,
        space: &SpaceId,
        ids: &[String],
        extra: Option<&str>,
        row: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        let conn = self.db.lock();
        let tx = be(conn.unchecked_transaction())?;
        let rows = {
            let mut stmt = be(tx.prepare_cached(sql))?;
            let mut rows = Vec::with_capacity(ids.len());
            let space = space.as_str();
            for id in ids {
                let mut args: Vec<&dyn rusqlite::ToSql> = vec![&space, id];
                args.extend(extra.as_ref().map(|e| e as &dyn rusqlite::ToSql));
                let row = be(stmt.query_row(args.as_slice(), &row).optional())?;
                rows.extend(row);
            }
            rows
        };
        be(tx.commit())?;
        Ok(rows)
    }

    /// The units `filter` (a `WHERE` clause of this file, parameters bound from
    /// `params`) selects, in write order.
    fn units_where(
        &self,
        filter: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<Unit>, StoreError> {
        let conn = self.db.lock();
        let mut stmt = be(conn.prepare_cached(&format!(
            "SELECT {UNIT_COLUMNS} FROM units {filter} ORDER BY seq"
        )))?;
        let rows: Vec<UnitCells> = be(stmt
            .query_map(params, |r| unit_cells(r, 0))
            .and_then(|r| r.collect()))?;
        units_of(rows)
    }

    /// Bytes of the space's rows: bodies of its sessions, units and trajectories, its
    /// vectors, and the observations its trajectories reference (each counted once).
    fn space_bytes(&self, space: &SpaceId) -> Result<u64, StoreError> {
        // `octet_length` is the size a row's header records: unlike `length` of a text
        // (its characters), it reads no overflow page, so this costs a walk of the rows,
        // not a read of every byte the space holds.
        let n: i64 = be(self.db.lock().query_row(
            "SELECT
               (SELECT COALESCE(SUM(octet_length(body)), 0) FROM sessions WHERE space=?1)
             + (SELECT COALESCE(SUM(octet_length(body) + COALESCE(octet_length(text), 0)
                                    + COALESCE(octet_length(long_key), 0)), 0)
                  FROM units WHERE space=?1)
             + (SELECT COALESCE(SUM(octet_length(body) + octet_length(summary)), 0)
                  FROM trajectories WHERE space=?1)
             + (SELECT COALESCE(SUM(octet_length(vec)), 0) FROM vectors WHERE space=?1)
             + (SELECT COALESCE(SUM(octet_length(o.body)), 0) FROM observations o
                  WHERE o.hash IN (SELECT hash FROM trajectory_observations WHERE space=?1))",
            [space.as_str()],
            |r| r.get(0),
        ))?;
        Ok(n.max(0) as u64)
    }

    /// The ids `sql` selects (`?1` the space, `?2` a JSON list, `?3` the limit), or
    /// `None` when they are more than `max`: one row past it is asked for to tell.
    fn ids_at_most(
        &self,
        sql: &str,
        space: &SpaceId,
        listed: String,
        max: usize,
    ) -> Result<Option<Vec<String>>, StoreError> {
        let conn = self.db.lock();
        let mut stmt = be(conn.prepare_cached(sql))?;
        let limit = i64::try_from(max).unwrap_or(i64::MAX - 1) + 1;
        let ids: Vec<String> = be(stmt
            .query_map(params![space.as_str(), listed, limit], |r| r.get(0))
            .and_then(|r| r.collect()))?;
        Ok((ids.len() <= max).then_some(ids))
    }

    pub(crate) fn connection(&self) -> Shared {
        self.db.clone()
    }
}

/// The smallest string above every string that starts with `prefix` (range scans on the
/// index instead of LIKE, whose escaping rules would make `_` and `%` in names special).
fn prefix_end(prefix: &str) -> String {
    format!("{prefix}\u{10FFFF}")
}

/// Writes one session and replaces its units, inside the caller's transaction.
/// A session's units other than those named (a JSON list) deleted. INDEXED BY: with `id
/// NOT IN` beside them, SQLite's planner took `units_listed` (space only) and read every
/// unit of the space.
const DELETE_ALL_OTHERS: &str = "DELETE FROM units INDEXED BY units_by_session
    WHERE space=?1 AND session_id=?2 AND id NOT IN (SELECT value FROM json_each(?3))";

/// A session's units named (a JSON list) deleted. INDEXED BY, as above: the planner took
/// `units_listed` here too, and an append or a forget of a message that dropped a unit
/// read the whole space (53 ms at a million units).
const DELETE_STALE: &str = "DELETE FROM units INDEXED BY units_by_session
    WHERE space=?1 AND session_id=?2 AND id IN (SELECT value FROM json_each(?3))";

fn put_session(tx: &Transaction<'_>, w: &SessionWrite<'_>) -> Result<u64, StoreError> {
    let record = w.record;
    let space = record.space.as_str();
    let body = to_json(record)?;
    require_space(tx, &record.space)?;
    let ord: i64 = be(tx.query_row(
        "SELECT COALESCE((SELECT ord FROM sessions WHERE space=?1 AND id=?2),
                         (SELECT COALESCE(MAX(ord), -1) + 1 FROM sessions WHERE space=?1))",
        params![space, record.session.id],
        |r| r.get(0),
    ))?;
    be(tx.execute(
        "INSERT OR REPLACE INTO sessions(space, id, ord, recorded_at, body) VALUES (?1,?2,?3,?4,?5)",
        params![space, record.session.id, ord, record.recorded_at.to_rfc3339(), body],
    ))?;
    match w.stale {
        Stale::AllOthers => {
            let written: Vec<&str> = w.units.iter().map(|u| u.id.as_str()).collect();
            be(tx.execute(
                DELETE_ALL_OTHERS,
                params![space, record.session.id, to_json(&written)?],
            ))?;
        }
        Stale::Only(ids) if !ids.is_empty() => {
            be(tx.execute(
                DELETE_STALE,
                params![space, record.session.id, to_json(&ids)?],
            ))?;
        }
        Stale::Only(_) => {}
    }
    write_units(tx, space, w.units)
}

/// Receipt times in one fixed-width shape, so comparing the text compares the times.
pub(crate) fn receipt_time(t: cairn_core::Timestamp) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// Stores a receipt and drops the expired ones of its space.
fn put_receipt(tx: &Transaction<'_>, r: &Receipt) -> Result<(), StoreError> {
    let expired = r.recorded_at - chrono::Duration::hours(RECEIPT_TTL_HOURS);
    be(tx.execute(
        "DELETE FROM receipts WHERE space=?1 AND recorded_at < ?2",
        params![r.space.as_str(), receipt_time(expired)],
    ))?;
    be(tx.execute(
        "INSERT OR REPLACE INTO receipts(space, key, fingerprint, response, recorded_at)
         VALUES (?1,?2,?3,?4,?5)",
        params![
            r.space.as_str(),
            r.key,
            r.fingerprint,
            r.response,
            receipt_time(r.recorded_at)
        ],
    ))?;
    Ok(())
}

impl RecordStore for SqliteRecordStore {
    fn create_space(&self, space: &SpaceId) -> Result<bool, StoreError> {
        let n = be(self.db.lock().execute(
            "INSERT OR IGNORE INTO spaces(name, created_at) VALUES (?1, ?2)",
            params![space.as_str(), chrono::Utc::now().to_rfc3339()],
        ))?;
        Ok(n == 1)
    }

    fn space_exists(&self, space: &SpaceId) -> Result<bool, StoreError> {
        let found: Option<i64> = be(self
            .db
            .lock()
            .query_row(
                "SELECT 1 FROM spaces WHERE name=?1",
                [space.as_str()],
                |r| r.get(0),
            )
            .optional())?;
        Ok(found.is_some())
    }

    fn list_spaces(&self) -> Result<Vec<SpaceId>, StoreError> {
        let conn = self.db.lock();
        let mut stmt = be(conn.prepare("SELECT name FROM spaces ORDER BY name"))?;
        let names: Vec<String> = be(stmt.query_map([], |r| r.get(0)).and_then(|r| r.collect()))?;
        names.into_iter().map(SpaceId::from_store).collect()
    }

    fn drop_space(&self, space: &SpaceId) -> Result<bool, StoreError> {
        let mut conn = self.db.lock();
        let tx = be(conn.transaction())?;
        let n = be(tx.execute("DELETE FROM spaces WHERE name=?1", [space.as_str()]))?;
        crate::trajectories::collect_garbage(&tx)?;
        be(tx.commit())?;
        Ok(n == 1)
    }

    fn put_trajectory(&self, record: &TrajectoryRecord, units: &[Unit]) -> Result<u64, StoreError> {
        let mut conn = self.db.lock();
        let tx = be(conn.transaction())?;
        let last = crate::trajectories::put(&tx, record, units)?;
        be(tx.commit())?;
        Ok(last)
    }

    fn get_trajectory(
        &self,
        space: &SpaceId,
        id: &str,
    ) -> Result<Option<TrajectoryRecord>, StoreError> {
        crate::trajectories::get(&self.db.lock(), space, id)
    }

    fn trajectory_state(
        &self,
        space: &SpaceId,
        id: &str,
        index: usize,
    ) -> Result<Option<(usize, Option<cairn_core::AgentState>)>, StoreError> {
        crate::trajectories::state(&self.db.lock(), space, id, index)
    }

    fn delete_trajectory(&self, space: &SpaceId, id: &str) -> Result<Vec<String>, StoreError> {
        let mut conn = self.db.lock();
        let tx = be(conn.transaction())?;
        let ids = crate::trajectories::delete(&tx, space, id)?;
        be(tx.commit())?;
        Ok(ids)
    }

    fn trajectories(&self, space: &SpaceId) -> Result<Vec<TrajectoryRecord>, StoreError> {
        crate::trajectories::all(&self.db.lock(), space)
    }

    fn trajectory_summaries(&self, space: &SpaceId) -> Result<Vec<TrajectorySummary>, StoreError> {
        crate::trajectories::summaries(&self.db.lock(), space)
    }

    fn get_session(&self, space: &SpaceId, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let body: Option<String> = be(self
            .db
            .lock()
            .query_row(
                "SELECT body FROM sessions WHERE space=?1 AND id=?2",
                params![space.as_str(), id],
                |r| r.get(0),
            )
            .optional())?;
        body.map(|b| from_json(&b, "session")).transpose()
    }

    fn put_sessions(
        &self,
        writes: &[SessionWrite<'_>],
        receipts: &[Receipt],
    ) -> Result<u64, StoreError> {
        let mut conn = self.db.lock();
        let tx = be(conn.transaction())?;
        let mut last = None;
        for w in writes {
            last = Some(put_session(&tx, w)?);
        }
        for r in receipts {
            put_receipt(&tx, r)?;
        }
        let last = match last {
            Some(l) => l,
            None => write_units(&tx, "", &[])?,
        };
        be(tx.commit())?;
        Ok(last)
    }

    fn receipt(&self, space: &SpaceId, key: &str) -> Result<Option<Receipt>, StoreError> {
        crate::listing::receipt(&self.db.lock(), space, key)
    }

    fn session_headers(&self, space: &SpaceId) -> Result<Vec<SessionHeader>, StoreError> {
        crate::listing::session_headers(&self.db.lock(), space)
    }

    fn list_units(&self, space: &SpaceId, query: &UnitQuery) -> Result<UnitPage, StoreError> {
        crate::listing::list_units(&self.db.lock(), space, query)
    }

    fn decode_failures(&self, space: &SpaceId) -> Result<Vec<String>, StoreError> {
        crate::listing::decode_failures(&self.db.lock(), space)
    }

    fn delete_session(&self, space: &SpaceId, id: &str) -> Result<Vec<String>, StoreError> {
        let mut conn = self.db.lock();
        let tx = be(conn.transaction())?;
        let ids: Vec<String> = {
            let mut stmt = be(tx.prepare(
                // Else the planner reads the covering `units_listed` over the whole space.
                "SELECT id FROM units INDEXED BY units_by_session WHERE space=?1 AND session_id=?2",
            ))?;
            let rows = be(stmt.query_map(params![space.as_str(), id], |r| r.get(0)))?;
            be(rows.collect())?
        };
        be(tx.execute(
            "DELETE FROM units WHERE space=?1 AND session_id=?2",
            params![space.as_str(), id],
        ))?;
        let n = be(tx.execute(
            "DELETE FROM sessions WHERE space=?1 AND id=?2",
            params![space.as_str(), id],
        ))?;
        be(tx.commit())?;
        if n == 0 {
            return Err(StoreError::NotFound(format!(
                "session {id:?} in space {space:?}"
            )));
        }
        Ok(ids)
    }

    fn sessions(&self, space: &SpaceId) -> Result<Vec<SessionRecord>, StoreError> {
        let conn = self.db.lock();
        let mut stmt = be(conn.prepare("SELECT body FROM sessions WHERE space=?1 ORDER BY ord"))?;
        let rows: Vec<String> = be(stmt
            .query_map([space.as_str()], |r| r.get(0))
            .and_then(|r| r.collect()))?;
        rows.iter().map(|b| from_json(b, "session")).collect()
    }

    fn units(&self, space: &SpaceId, ids: &[String]) -> Result<Vec<Unit>, StoreError> {
        units_of(self.unit_rows(
            &format!("SELECT {UNIT_COLUMNS} FROM units WHERE space=?1 AND id=?2"),
            space,
            ids,
            None,
            |r| unit_cells(r, 0),
        )?)
    }

    fn units_without_text(
        &self,
        space: &SpaceId,
        ids: &[String],
        kinds: &[UnitKind],
    ) -> Result<Vec<Unit>, StoreError> {
        // The text and long key columns of the kinds asked for are never read (CASE is
        // lazy): their units keep the key's head the body holds. Rows from before the
        // text column hold their text in the body, dropped after decoding.
        let listed: String = kinds.iter().map(|k| format!(",{}", k.as_str())).collect();
        let rows = self.unit_rows(
            "SELECT body, CASE WHEN instr(?3, ',' || kind || ',') > 0 THEN NULL ELSE text END,
                    CASE WHEN instr(?3, ',' || kind || ',') > 0 THEN NULL ELSE long_key END
               FROM units WHERE space=?1 AND id=?2",
            space,
            ids,
            Some(&format!("{listed},")),
            |r| unit_cells(r, 0),
        )?;
        let mut units = units_of(rows)?;
        cairn_core::unit::drop_texts(&mut units, kinds);
        Ok(units)
    }

    fn unit_texts(
        &self,
        space: &SpaceId,
        ids: &[String],
    ) -> Result<std::collections::HashMap<String, String>, StoreError> {
        let texts = self.unit_rows(
            "SELECT id, COALESCE(text, json_extract(body, '$.text'))
               FROM units WHERE space=?1 AND id=?2",
            space,
            ids,
            None,
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(texts.into_iter().collect())
    }

    fn session_units(&self, space: &SpaceId, session: &str) -> Result<Vec<Unit>, StoreError> {
        self.units_where(
            "WHERE space=?1 AND session_id=?2",
            params![space.as_str(), session],
        )
    }

    fn unit_ids_of_sessions(
        &self,
        space: &SpaceId,
        sessions: &[String],
        max: usize,
    ) -> Result<Option<Vec<String>>, StoreError> {
        // One statement for every session: a scope of fifty sessions is one index walk,
        // not fifty statements.
        self.ids_at_most(
            "SELECT id FROM units INDEXED BY units_by_session
              WHERE space=?1 AND session_id IN (SELECT value FROM json_each(?2)) LIMIT ?3",
            space,
            to_json(&sessions)?,
            max,
        )
    }

    fn unit_ids_of_kinds(
        &self,
        space: &SpaceId,
        kinds: &[UnitKind],
        max: usize,
    ) -> Result<Option<Vec<String>>, StoreError> {
        // Rows of derivations before the kind column hold NULL there: they are re-derived
        // on open (the derive version is unknown after that migration), so none is left.
        self.ids_at_most(
            "SELECT id FROM units INDEXED BY units_by_kind
              WHERE space=?1 AND kind IN (SELECT value FROM json_each(?2)) LIMIT ?3",
            space,
            to_json(&kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>())?,
            max,
        )
    }

    fn session_tail(
        &self,
        space: &SpaceId,
        session: &str,
        from: u32,
    ) -> Result<Vec<Unit>, StoreError> {
        self.units_where(
            "INDEXED BY units_by_session WHERE space=?1 AND session_id=?2
               AND (position >= ?3 OR kind = 'fact' OR position IS NULL OR kind IS NULL)",
            params![space.as_str(), session, from],
        )
    }

    fn trajectory_units(&self, space: &SpaceId, trajectory: &str) -> Result<Vec<Unit>, StoreError> {
        self.units_where(
            "WHERE space=?1 AND trajectory_id=?2",
            params![space.as_str(), trajectory],
        )
    }

    fn units_since(&self, seq: u64) -> Result<Vec<(u64, Unit)>, StoreError> {
        let conn = self.db.lock();
        let mut stmt = be(conn.prepare(&format!(
            "SELECT seq, {UNIT_COLUMNS} FROM units WHERE seq > ?1 ORDER BY seq"
        )))?;
        let rows: Vec<(i64, UnitCells)> = be(stmt
            .query_map([seq as i64], |r| Ok((r.get(0)?, unit_cells(r, 1)?)))
            .and_then(|r| r.collect()))?;
        rows.into_iter()
            .map(|(s, cells)| Ok((s as u64, unit_row(cells)?)))
            .collect()
    }

    fn space_units(&self, space: &SpaceId) -> Result<Vec<Unit>, StoreError> {
        let conn = self.db.lock();
        let mut stmt = be(conn.prepare(&format!(
            "SELECT {UNIT_COLUMNS} FROM units WHERE space=?1 ORDER BY seq"
        )))?;
        let rows: Vec<UnitCells> = be(stmt
            .query_map([space.as_str()], |r| unit_cells(r, 0))
            .and_then(|r| r.collect()))?;
        units_of(rows)
    }

    fn topic_units(&self, space: &SpaceId, prefix: &str) -> Result<Vec<Unit>, StoreError> {
        let conn = self.db.lock();
        // Put in write order here, not by `ORDER BY seq`: SQLite sorts the whole rows in
        // a temporary b-tree, which spills past its cache and cost a growing share of a
        // read of every fact (0.64 s against 0.40 s without it at 128,000 facts).
        let mut stmt = be(conn.prepare_cached(&format!(
            "SELECT seq, {UNIT_COLUMNS} FROM units WHERE space=?1 AND topic >= ?2 AND topic < ?3"
        )))?;
        let mut rows: Vec<(i64, UnitCells)> = be(stmt
            .query_map(params![space.as_str(), prefix, prefix_end(prefix)], |r| {
                Ok((r.get(0)?, unit_cells(r, 1)?))
            })
            .and_then(|r| r.collect()))?;
        rows.sort_by_key(|(seq, _)| *seq);
        units_of(rows.into_iter().map(|(_, cells)| cells).collect())
    }

    fn topics(&self, space: &SpaceId, prefix: &str) -> Result<Vec<String>, StoreError> {
        let conn = self.db.lock();
        let mut stmt = be(conn.prepare_cached(
            "SELECT DISTINCT topic FROM units WHERE space=?1 AND topic >= ?2 AND topic < ?3 ORDER BY topic",
        ))?;
        let rows: Vec<String> = be(stmt
            .query_map(params![space.as_str(), prefix, prefix_end(prefix)], |r| {
                r.get(0)
            })
            .and_then(|r| r.collect()))?;
        Ok(rows)
    }

    fn derive_version(&self) -> Result<u32, StoreError> {
        let v: Option<String> = be(self
            .db
            .lock()
            .query_row(
                "SELECT value FROM meta WHERE key='derive_version'",
                [],
                |r| r.get(0),
            )
            .optional())?;
        Ok(v.and_then(|v| v.parse().ok()).unwrap_or(0))
    }

    fn set_derive_version(&self, version: u32) -> Result<(), StoreError> {
        be(self.db.lock().execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('derive_version', ?1)",
            [version.to_string()],
        ))?;
        Ok(())
    }

    fn generation(&self, space: &SpaceId) -> Result<u64, StoreError> {
        let n: Option<i64> = be(self
            .db
            .lock()
            .prepare_cached("SELECT n FROM space_writes WHERE space=?1")
            .and_then(|mut stmt| stmt.query_row([space.as_str()], |r| r.get(0)).optional()))?;
        Ok(n.unwrap_or(0).max(0) as u64)
    }

    fn last_seq(&self) -> Result<u64, StoreError> {
        let last: String =
            be(self
                .db
                .lock()
                .query_row("SELECT value FROM meta WHERE key='last_seq'", [], |r| {
                    r.get(0)
                }))?;
        last.parse()
            .map_err(|_| StoreError::Corrupt(format!("meta.last_seq = {last:?}")))
    }

    fn removals_since(&self, seq: u64) -> Result<Vec<(u64, SpaceId, String)>, StoreError> {
        let conn = self.db.lock();
        let mut stmt = be(conn
            .prepare("SELECT seq, space, unit_id FROM unit_removals WHERE seq > ?1 ORDER BY seq"))?;
        let rows: Vec<(i64, String, String)> = be(stmt
            .query_map([seq as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .and_then(|r| r.collect()))?;
        rows.into_iter()
            .map(|(seq, space, id)| Ok((seq.max(0) as u64, SpaceId::from_store(space)?, id)))
            .collect()
    }

    fn prune_removals(&self, seq: u64) -> Result<(), StoreError> {
        be(self
            .db
            .lock()
            .execute("DELETE FROM unit_removals WHERE seq <= ?1", [seq as i64]))?;
        Ok(())
    }

    fn scrub(&self) -> Result<(), StoreError> {
        self.db.checkpoint()
    }

    fn hold_reserve(&self) -> Result<(), StoreError> {
        self.reserve.hold()
    }

    fn release_reserve(&self) -> Result<(), StoreError> {
        self.reserve.release()
    }

    fn space_bytes(&self, space: &SpaceId) -> Result<u64, StoreError> {
        SqliteRecordStore::space_bytes(self, space)
    }

    fn unit_counts(&self, space: &SpaceId) -> Result<BTreeMap<String, usize>, StoreError> {
        let db = self.db.lock();
        let mut stmt =
            // The index alone answers: no row of the table is read.
            be(db.prepare_cached(
                "SELECT kind, COUNT(*) FROM units INDEXED BY units_by_kind
                  WHERE space=?1 GROUP BY kind",
            ))?;
        let rows = be(stmt.query_map([space.as_str()], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        }))?;
        rows.map(|r| be(r).map(|(k, n)| (k, n.max(0) as usize)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session write's deletes read the session's units, not the space's: their plan
    /// goes through `units_by_session` (without the hint, a store with no statistics
    /// searched `units_listed` by space alone).
    #[test]
    fn a_session_writes_deletes_search_by_session() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteRecordStore::open(&dir.path().join("records.sqlite3")).unwrap();
        let conn = store.db.lock();
        for sql in [DELETE_STALE, DELETE_ALL_OTHERS] {
            let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let plan: Vec<String> = stmt
                .query_map(params!["s", "d", "[]"], |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let units: Vec<&String> = plan.iter().filter(|p| p.contains(" units ")).collect();
            assert!(
                !units.is_empty() && units.iter().all(|p| p.contains("units_by_session")),
                "{sql}: {plan:?}"
            );
        }
    }
}
