//! Trajectories in SQLite. A trajectory's observations (accessibility trees) are large
//! and repeat from state to state and from run to run, so each distinct observation is
//! stored once, gzip-compressed, keyed by its SHA-256; a trajectory row holds the rest of
//! the record (compressed JSON) with references to its observations, and a manifest row
//! (goal, outcome, URLs, step count) that listing never has to decompress.
use crate::rows::{from_json, require_space, to_json, write_units};
use crate::sqlite::be;
use cairn_core::{
    AgentState, SpaceId, StoreError, Timestamp, TrajectoryInput, TrajectoryRecord,
    TrajectorySummary,
};
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use rusqlite::{params, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS trajectories(
    space TEXT NOT NULL REFERENCES spaces(name) ON DELETE CASCADE,
    id TEXT NOT NULL,
    ord INTEGER NOT NULL,
    recorded_at TEXT NOT NULL,
    summary TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY(space, id));
CREATE TABLE IF NOT EXISTS observations(
    hash TEXT PRIMARY KEY,
    body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS trajectory_observations(
    space TEXT NOT NULL,
    trajectory_id TEXT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY(space, trajectory_id, hash));
CREATE INDEX IF NOT EXISTS trajectory_observations_by_hash ON trajectory_observations(hash);
";

/// A trajectory row's body: the input without its observations, and for each state the
/// hash of its observation (if it had one).
#[derive(Serialize, Deserialize)]
struct StoredBody {
    trajectory: TrajectoryInput,
    observations: Vec<Option<String>>,
}

fn gzip(bytes: &[u8]) -> Result<Vec<u8>, StoreError> {
    let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes)
        .and_then(|_| enc.finish())
        .map_err(|e| StoreError::Backend(format!("compress: {e}")))
}

fn gunzip(bytes: &[u8], what: &str) -> Result<String, StoreError> {
    let mut out = String::new();
    GzDecoder::new(bytes)
        .read_to_string(&mut out)
        .map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))?;
    Ok(out)
}

fn hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

pub(crate) fn put(
    tx: &Transaction<'_>,
    record: &TrajectoryRecord,
    units: &[cairn_core::Unit],
) -> Result<u64, StoreError> {
    let space = record.space.as_str();
    let id = &record.trajectory.id;
    require_space(tx, &record.space)?;
    let mut trajectory = record.trajectory.clone();
    let mut refs = Vec::with_capacity(trajectory.states.len());
    be(tx.execute(
        "DELETE FROM trajectory_observations WHERE space=?1 AND trajectory_id=?2",
        params![space, id],
    ))?;
    for s in &mut trajectory.states {
        let Some(obs) = s.observation.take() else {
            refs.push(None);
            continue;
        };
        let h = hash(&obs);
        let known: Option<i64> = be(tx
            .query_row("SELECT 1 FROM observations WHERE hash=?1", [&h], |r| {
                r.get(0)
            })
            .optional())?;
        if known.is_none() {
            be(tx.execute(
                "INSERT INTO observations(hash, body) VALUES (?1, ?2)",
                params![h, gzip(obs.as_bytes())?],
            ))?;
        }
        be(tx.execute(
            "INSERT OR IGNORE INTO trajectory_observations(space, trajectory_id, hash) VALUES (?1,?2,?3)",
            params![space, id, h],
        ))?;
        refs.push(Some(h));
    }
    let body = to_json(&StoredBody {
        trajectory,
        observations: refs,
    })?;
    let summary = to_json(&record.trajectory.summary(record.recorded_at))?;
    let ord: i64 = be(tx.query_row(
        "SELECT COALESCE((SELECT ord FROM trajectories WHERE space=?1 AND id=?2),
                         (SELECT COALESCE(MAX(ord), -1) + 1 FROM trajectories WHERE space=?1))",
        params![space, id],
        |r| r.get(0),
    ))?;
    be(tx.execute(
        "INSERT OR REPLACE INTO trajectories(space, id, ord, recorded_at, summary, body) VALUES (?1,?2,?3,?4,?5,?6)",
        params![space, id, ord, record.recorded_at.to_rfc3339(), summary, gzip(body.as_bytes())?],
    ))?;
    be(tx.execute(
        "DELETE FROM units WHERE space=?1 AND trajectory_id=?2",
        params![space, id],
    ))?;
    write_units(tx, space, units)
}

fn observation(tx: &rusqlite::Connection, h: &str) -> Result<String, StoreError> {
    let body: Option<Vec<u8>> = be(tx
        .query_row("SELECT body FROM observations WHERE hash=?1", [h], |r| {
            r.get(0)
        })
        .optional())?;
    match body {
        Some(b) => gunzip(&b, "observation"),
        None => Err(StoreError::Corrupt(format!("observation {h} is missing"))),
    }
}

fn record_from_row(
    conn: &rusqlite::Connection,
    space: &SpaceId,
    recorded_at: &str,
    body: &[u8],
) -> Result<TrajectoryRecord, StoreError> {
    let stored: StoredBody = from_json(&gunzip(body, "trajectory")?, "trajectory")?;
    let mut trajectory = stored.trajectory;
    for (s, h) in trajectory.states.iter_mut().zip(&stored.observations) {
        if let Some(h) = h {
            s.observation = Some(observation(conn, h)?);
        }
    }
    let recorded_at: Timestamp = chrono::DateTime::parse_from_rfc3339(recorded_at)
        .map_err(|e| StoreError::Corrupt(format!("trajectory recorded_at: {e}")))?
        .with_timezone(&chrono::Utc);
    Ok(TrajectoryRecord {
        space: space.clone(),
        recorded_at,
        trajectory,
    })
}

pub(crate) fn get(
    conn: &rusqlite::Connection,
    space: &SpaceId,
    id: &str,
) -> Result<Option<TrajectoryRecord>, StoreError> {
    let row: Option<(String, Vec<u8>)> = be(conn
        .query_row(
            "SELECT recorded_at, body FROM trajectories WHERE space=?1 AND id=?2",
            params![space.as_str(), id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional())?;
    row.map(|(at, body)| record_from_row(conn, space, &at, &body))
        .transpose()
}

/// One state of a trajectory and the trajectory's state count, reading that state's
/// observation only (see [`cairn_core::RecordStore::trajectory_state`]).
pub(crate) fn state(
    conn: &rusqlite::Connection,
    space: &SpaceId,
    id: &str,
    index: usize,
) -> Result<Option<(usize, Option<AgentState>)>, StoreError> {
    let body: Option<Vec<u8>> = be(conn
        .query_row(
            "SELECT body FROM trajectories WHERE space=?1 AND id=?2",
            params![space.as_str(), id],
            |r| r.get(0),
        )
        .optional())?;
    let Some(body) = body else {
        return Ok(None);
    };
    let stored: StoredBody = from_json(&gunzip(&body, "trajectory")?, "trajectory")?;
    let n = stored.trajectory.states.len();
    let Some(mut state) = stored.trajectory.states.into_iter().nth(index) else {
        return Ok(Some((n, None)));
    };
    if let Some(Some(h)) = stored.observations.get(index) {
        state.observation = Some(observation(conn, h)?);
    }
    Ok(Some((n, Some(state))))
}

pub(crate) fn all(
    conn: &rusqlite::Connection,
    space: &SpaceId,
) -> Result<Vec<TrajectoryRecord>, StoreError> {
    let mut stmt =
        be(conn.prepare("SELECT recorded_at, body FROM trajectories WHERE space=?1 ORDER BY ord"))?;
    let rows: Vec<(String, Vec<u8>)> = be(stmt
        .query_map([space.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(|r| r.collect()))?;
    rows.iter()
        .map(|(at, body)| record_from_row(conn, space, at, body))
        .collect()
}

pub(crate) fn summaries(
    conn: &rusqlite::Connection,
    space: &SpaceId,
) -> Result<Vec<TrajectorySummary>, StoreError> {
    let mut stmt =
        be(conn.prepare("SELECT summary FROM trajectories WHERE space=?1 ORDER BY ord"))?;
    let rows: Vec<String> = be(stmt
        .query_map([space.as_str()], |r| r.get(0))
        .and_then(|r| r.collect()))?;
    rows.iter()
        .map(|s| from_json(s, "trajectory summary"))
        .collect()
}

/// Deletes a trajectory, its units and the observations no other trajectory uses.
pub(crate) fn delete(
    tx: &Transaction<'_>,
    space: &SpaceId,
    id: &str,
) -> Result<Vec<String>, StoreError> {
    let ids: Vec<String> = {
        let mut stmt = be(tx.prepare("SELECT id FROM units WHERE space=?1 AND trajectory_id=?2"))?;
        let rows = be(stmt.query_map(params![space.as_str(), id], |r| r.get(0)))?;
        be(rows.collect())?
    };
    be(tx.execute(
        "DELETE FROM units WHERE space=?1 AND trajectory_id=?2",
        params![space.as_str(), id],
    ))?;
    let n = be(tx.execute(
        "DELETE FROM trajectories WHERE space=?1 AND id=?2",
        params![space.as_str(), id],
    ))?;
    if n == 0 {
        return Err(StoreError::NotFound(format!(
            "trajectory {id:?} in space {space:?}"
        )));
    }
    be(tx.execute(
        "DELETE FROM trajectory_observations WHERE space=?1 AND trajectory_id=?2",
        params![space.as_str(), id],
    ))?;
    collect_garbage(tx)?;
    Ok(ids)
}

/// Drops observations that no trajectory references (after deletes and space drops).
pub(crate) fn collect_garbage(tx: &rusqlite::Connection) -> Result<(), StoreError> {
    be(tx.execute(
        "DELETE FROM trajectory_observations WHERE space NOT IN (SELECT name FROM spaces)",
        [],
    ))?;
    be(tx.execute(
        "DELETE FROM observations WHERE hash NOT IN (SELECT hash FROM trajectory_observations)",
        [],
    ))?;
    Ok(())
}
