//! Reads for listings and checks: session headers without their messages, pages of units
//! filtered and ordered by SQL, receipts, and the rows that fail to decode.
use crate::rows::{from_json, unit_cells, units_of, UnitCells, UNIT_COLUMNS};
use crate::sqlite::be;
use cairn_core::{
    Receipt, SessionHeader, SessionRecord, SpaceId, StoreError, Unit, UnitPage, UnitQuery,
};
use rusqlite::{params, Connection, OptionalExtension};

pub(crate) fn receipt(
    conn: &Connection,
    space: &SpaceId,
    key: &str,
) -> Result<Option<Receipt>, StoreError> {
    let row: Option<(String, String, String)> = be(conn
        .query_row(
            "SELECT fingerprint, response, recorded_at FROM receipts WHERE space=?1 AND key=?2",
            params![space.as_str(), key],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional())?;
    row.map(|(fingerprint, response, at)| {
        Ok(Receipt {
            space: space.clone(),
            key: key.to_string(),
            fingerprint,
            response,
            recorded_at: parse_time(&at, "receipt recorded_at")?,
        })
    })
    .transpose()
}

fn parse_time(s: &str, what: &str) -> Result<cairn_core::Timestamp, StoreError> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&chrono::Utc))
        .map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

/// Headers come out of the stored JSON by SQLite's JSON functions, so no message of the
/// space is copied into Rust.
pub(crate) fn session_headers(
    conn: &Connection,
    space: &SpaceId,
) -> Result<Vec<SessionHeader>, StoreError> {
    let mut stmt = be(conn.prepare_cached(
        "SELECT id, json_object(
                    'id', id,
                    'occurred_at', json_extract(body, '$.session.occurred_at'),
                    'group', json_extract(body, '$.session.group'),
                    'metadata', json_extract(body, '$.session.metadata'),
                    'recorded_at', json_extract(body, '$.recorded_at'),
                    'messages', json_array_length(body, '$.session.messages'))
         FROM sessions WHERE space=?1 ORDER BY ord",
    ))?;
    let rows: Vec<(String, String)> = be(stmt
        .query_map([space.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(|r| r.collect()))?;
    rows.iter()
        .map(|(id, h)| from_json(h, &format!("session {id:?} header")))
        .collect()
}

/// The WHERE clause of a listing; parameters `?1`..`?7` in [`list_params`] order (an
/// undated unit is seen as of the time it was recorded).
const LISTING_WHERE: &str = "space=?1
    AND (?2 IS NULL OR kind IN (SELECT value FROM json_each(?2)))
    AND (?3 IS NULL OR session_id IN (SELECT value FROM json_each(?3)))
    AND (?4 IS NULL OR EXISTS (SELECT 1 FROM json_each(units.body, '$.provenance.speakers')
                               WHERE value = ?4))
    AND (?5 IS NULL OR occurred_us >= ?5)
    AND (?6 IS NULL OR occurred_us <= ?6)
    AND (?7 IS NULL OR COALESCE(occurred_us,
            CAST(unixepoch(json_extract(units.body, '$.recorded_at'), 'subsec') * 1000000
                 AS INTEGER)) <= ?7)";

fn json_list<T: serde::Serialize>(v: &Option<Vec<T>>) -> Result<Option<String>, StoreError> {
    v.as_ref().map(crate::rows::to_json).transpose()
}

pub(crate) fn list_units(
    conn: &Connection,
    space: &SpaceId,
    q: &UnitQuery,
) -> Result<UnitPage, StoreError> {
    let kinds = json_list(&q.kinds)?;
    let sessions = json_list(&q.sessions)?;
    let since = q.since.map(|t| t.timestamp_micros());
    let until = q.until.map(|t| t.timestamp_micros());
    let as_of = q.as_of.map(|t| t.timestamp_micros());
    let total: i64 = be(conn.query_row(
        &format!("SELECT COUNT(*) FROM units WHERE {LISTING_WHERE}"),
        params![
            space.as_str(),
            kinds,
            sessions,
            q.speaker,
            since,
            until,
            as_of
        ],
        |r| r.get(0),
    ))?;
    let mut stmt = be(conn.prepare_cached(&format!(
        "SELECT {UNIT_COLUMNS} FROM units WHERE {LISTING_WHERE}
         ORDER BY occurred_us IS NULL, occurred_us, session_id, position, id
         LIMIT ?8 OFFSET ?9"
    )))?;
    let rows: Vec<UnitCells> = be(stmt
        .query_map(
            params![
                space.as_str(),
                kinds,
                sessions,
                q.speaker,
                since,
                until,
                as_of,
                // Beyond i64 (a client's `offset=18446744073709551615`) is past every
                // row, not a negative number SQLite reads as "no offset".
                i64::try_from(q.limit).unwrap_or(i64::MAX),
                i64::try_from(q.offset).unwrap_or(i64::MAX)
            ],
            |r| unit_cells(r, 0),
        )
        .and_then(|r| r.collect()))?;
    Ok(UnitPage {
        units: units_of(rows)?,
        total: total.max(0) as usize,
    })
}

/// Decodes every stored row of a space the way reads do, naming each one that fails.
pub(crate) fn decode_failures(
    conn: &Connection,
    space: &SpaceId,
) -> Result<Vec<String>, StoreError> {
    let mut failures = Vec::new();
    let rows = |sql: &str| -> Result<Vec<(String, String)>, StoreError> {
        let mut stmt = be(conn.prepare(sql))?;
        be(stmt
            .query_map([space.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|r| r.collect()))
    };
    for (id, body) in rows("SELECT id, body FROM sessions WHERE space=?1 ORDER BY ord")? {
        if let Err(e) = from_json::<SessionRecord>(&body, "session") {
            failures.push(format!("session {id:?}: {e}"));
        }
    }
    for (id, body) in rows("SELECT id, body FROM units WHERE space=?1 ORDER BY seq")? {
        if let Err(e) = from_json::<Unit>(&body, "unit") {
            failures.push(format!("unit {id:?}: {e}"));
        }
    }
    let ids: Vec<String> = {
        let mut stmt = be(conn.prepare("SELECT id FROM trajectories WHERE space=?1 ORDER BY ord"))?;
        be(stmt
            .query_map([space.as_str()], |r| r.get(0))
            .and_then(|r| r.collect()))?
    };
    for id in ids {
        if let Err(e) = crate::trajectories::get(conn, space, &id) {
            failures.push(format!("trajectory {id:?}: {e}"));
        }
    }
    Ok(failures)
}
