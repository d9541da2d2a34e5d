//! Rows' bodies and the units table: records and units are stored as JSON text (the
//! parser's depth limit lifted for what Cairn itself wrote), a unit as its body, text and
//! long-key columns, written with fresh sequence numbers. Shared by sessions
//! (`records.rs`), trajectories and the listings.
use crate::sqlite::be;
use cairn_core::{SpaceId, StoreError, Unit};
use rusqlite::{params, OptionalExtension, Transaction};

/// The columns every read of whole units selects: the body (the unit as JSON, its text
/// empty, its key cut to [`Unit::key_head`]), the text (NULL in rows written before
/// schema version 5, whose body holds it), then the whole key when the body holds only
/// its head (NULL otherwise). See [`unit_row`].
pub(crate) const UNIT_COLUMNS: &str = "body, text, long_key";

pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Backend(format!("encode: {e}")))
}

/// Decodes a stored row. Stored JSON was written by Cairn from validated input, so its
/// depth is bounded by what validation allows; the parser's own limit (128 levels, meant
/// for untrusted input) is lifted so that records accepted before metadata depth was
/// bounded (nested up to the wire parser's limit, plus the record's own levels) stay
/// readable, listable and exportable.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    s: &str,
    what: &str,
) -> Result<T, StoreError> {
    let mut de = serde_json::Deserializer::from_str(s);
    de.disable_recursion_limit();
    <T as serde::Deserialize>::deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

pub(crate) fn require_space(tx: &Transaction<'_>, space: &SpaceId) -> Result<(), StoreError> {
    let exists: Option<i64> = be(tx
        .query_row(
            "SELECT 1 FROM spaces WHERE name=?1",
            [space.as_str()],
            |r| r.get(0),
        )
        .optional())?;
    match exists {
        Some(_) => Ok(()),
        None => Err(StoreError::NoSuchSpace(space.to_string())),
    }
}

fn next_seq(tx: &Transaction<'_>, n: usize) -> Result<u64, StoreError> {
    let last: String = be(
        tx.query_row("SELECT value FROM meta WHERE key='last_seq'", [], |r| {
            r.get(0)
        }),
    )?;
    let last: u64 = last
        .parse()
        .map_err(|_| StoreError::Corrupt(format!("meta.last_seq = {last:?}")))?;
    be(tx.execute(
        "UPDATE meta SET value=?1 WHERE key='last_seq'",
        [(last + n as u64).to_string()],
    ))?;
    Ok(last + 1)
}

/// Writes units with fresh sequence numbers; returns the last one (the previous last when
/// `units` is empty).
pub(crate) fn write_units(
    tx: &Transaction<'_>,
    space: &str,
    units: &[Unit],
) -> Result<u64, StoreError> {
    let first = next_seq(tx, units.len())?;
    let mut stmt = be(tx.prepare_cached(
        "INSERT OR REPLACE INTO units(space, id, session_id, seq, body, topic, trajectory_id,
                                      kind, occurred_us, position, text, long_key)
         VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
    ))?;
    for (i, u) in units.iter().enumerate() {
        let (body, text, long_key) = unit_columns(u)?;
        be(stmt.execute(params![
            space,
            u.id,
            u.provenance.session_id,
            (first + i as u64) as i64,
            body,
            u.topic(),
            u.provenance.trajectory_id,
            u.kind.as_str(),
            u.occurred_at.map(|t| t.timestamp_micros()),
            u.provenance.first_position,
            text,
            long_key
        ]))?;
    }
    Ok(first + units.len() as u64 - 1)
}

/// A unit as its `body`, `text` and `long_key` columns: the body is the unit without its
/// text and with its key's head only; `long_key` is the whole key when that is longer.
fn unit_columns(u: &Unit) -> Result<(String, &str, Option<&str>), StoreError> {
    let head = u.key_head();
    let body = to_json(&Unit {
        text: String::new(),
        key: head.to_string(),
        ..u.clone()
    })?;
    let long_key = (head.len() < u.key.len()).then_some(u.key.as_str());
    Ok((body, &u.text, long_key))
}

/// A unit from its `UNIT_COLUMNS`.
pub(crate) fn unit_row((body, text, long_key): UnitCells) -> Result<Unit, StoreError> {
    let mut u: Unit = from_json(&body, "unit")?;
    if let Some(text) = text {
        u.text = text;
    }
    if let Some(key) = long_key {
        u.key = key;
    }
    Ok(u)
}

/// Reads a row's `UNIT_COLUMNS` (at `first` and the next two columns).
pub(crate) fn unit_cells(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<UnitCells> {
    Ok((r.get(first)?, r.get(first + 1)?, r.get(first + 2)?))
}

/// A row's `UNIT_COLUMNS`, undecoded: body, text, long key.
pub(crate) type UnitCells = (String, Option<String>, Option<String>);

pub(crate) fn units_of(rows: Vec<UnitCells>) -> Result<Vec<Unit>, StoreError> {
    rows.into_iter().map(unit_row).collect()
}
