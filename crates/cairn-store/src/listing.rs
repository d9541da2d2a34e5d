//! Reads for listings and checks: session headers without their messages, pages of units
//! filtered and ordered by SQL, receipts, and the rows that fail to decode.
use crate::rows::{from_json, unit_cells, units_of, UnitCells, UNIT_COLUMNS};
use crate::sqlite::be;
use cairn_core::{
    ListingPart, Receipt, SessionHeader, SessionRecord, SpaceId, StoreError, Unit, UnitPage,
    UnitQuery,
};
use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension};

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

/// The conditions of a listing, only those the query sets (so SQLite plans each query
/// for what it asks: a count of kinds reads the kind index alone), with their parameters
/// (an undated unit is seen as of the time it was recorded).
fn listing_where(space: &SpaceId, q: &UnitQuery) -> Result<(String, Vec<Value>), StoreError> {
    let mut sql = String::from("space=?");
    let mut args = vec![Value::Text(space.as_str().to_string())];
    let mut cond = |clause: &str, arg: Value| {
        sql.push_str(" AND ");
        sql.push_str(clause);
        args.push(arg);
    };
    if let Some(kinds) = &q.kinds {
        let kinds: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        cond(
            "kind IN (SELECT value FROM json_each(?))",
            Value::Text(crate::rows::to_json(&kinds)?),
        );
    }
    if let Some(sessions) = &q.sessions {
        cond(
            "session_id IN (SELECT value FROM json_each(?))",
            Value::Text(crate::rows::to_json(sessions)?),
        );
    }
    if let Some(speaker) = &q.speaker {
        cond(
            "EXISTS (SELECT 1 FROM json_each(units.body, '$.provenance.speakers') WHERE value = ?)",
            Value::Text(speaker.clone()),
        );
    }
    if let Some(t) = q.since {
        // Undated units stay, as in a scope (`Scope::in_time`).
        cond(
            "(occurred_us IS NULL OR occurred_us >= ?)",
            Value::Integer(t.timestamp_micros()),
        );
    }
    if let Some(t) = q.until {
        cond("occurred_us <= ?", Value::Integer(t.timestamp_micros()));
    }
    if let Some(t) = q.as_of {
        cond(
            "COALESCE(occurred_us, CAST(unixepoch(json_extract(units.body, '$.recorded_at'),
                 'subsec') * 1000000 AS INTEGER)) <= ?",
            Value::Integer(t.timestamp_micros()),
        );
    }
    Ok((sql, args))
}

/// Beyond i64 (a client's `offset=18446744073709551615`) is past every row, not a
/// negative number SQLite reads as "no offset".
fn sql_count(n: usize) -> Value {
    Value::Integer(i64::try_from(n).unwrap_or(i64::MAX))
}

/// A page in listing order, read part by part in the order of the `units_listed`
/// index (see [`ListingPart`]).
pub(crate) fn list_units(
    conn: &Connection,
    space: &SpaceId,
    q: &UnitQuery,
) -> Result<UnitPage, StoreError> {
    let (cond, args) = listing_where(space, q)?;
    // One snapshot for the count and every part.
    let tx = be(conn.unchecked_transaction())?;
    let count = |extra: &str| -> Result<usize, StoreError> {
        let n: i64 = be(tx.query_row(
            &format!("SELECT COUNT(*) FROM units WHERE {cond}{extra}"),
            params_from_iter(&args),
            |r| r.get(0),
        ))?;
        Ok(n.max(0) as usize)
    };
    let fetch = |part: ListingPart, offset: usize, limit: usize| {
        let (rows, order) = part.sql();
        let mut stmt = be(tx.prepare_cached(&format!(
            "SELECT {UNIT_COLUMNS} FROM units WHERE {cond} AND {rows}
             ORDER BY {order} LIMIT ? OFFSET ?"
        )))?;
        let tail = [sql_count(limit), sql_count(offset)];
        be(stmt
            .query_map(params_from_iter(args.iter().chain(&tail)), |r| {
                unit_cells(r, 0)
            })
            .and_then(|r| r.collect::<Result<Vec<UnitCells>, _>>()))
    };
    let total = count("")?;
    let rows = q.page_by_parts(fetch, |part| count(&format!(" AND {}", part.sql().0)))?;
    drop(tx);
    Ok(UnitPage {
        units: units_of(rows)?,
        total,
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
