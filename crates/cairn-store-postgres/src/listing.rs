//! Reads for listings and checks: session headers without their messages, pages of units
//! filtered and ordered by SQL, receipts, and the rows that fail to decode. Orders match
//! the embedded store's (columns are `COLLATE "C"`, undated units last, units without a
//! session first among equal times).
use crate::body::{from_json, units_of};
use crate::PgStore;
use cairn_core::{
    ListingPart, Receipt, SessionHeader, SessionRecord, SpaceId, StoreError, Unit, UnitPage,
    UnitQuery, RECEIPT_TTL_HOURS,
};
use sqlx::PgConnection;

/// Receipt times in one fixed-width shape, so comparing the text compares the times.
fn receipt_time(t: cairn_core::Timestamp) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

pub(crate) async fn put_receipt(conn: &mut PgConnection, r: &Receipt) -> Result<(), sqlx::Error> {
    let expired = receipt_time(r.recorded_at - chrono::Duration::hours(RECEIPT_TTL_HOURS));
    sqlx::query("DELETE FROM receipts WHERE space = $1 AND recorded_at < $2")
        .bind(r.space.as_str())
        .bind(expired)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "INSERT INTO receipts(space, key, fingerprint, response, recorded_at)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (space, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
             response = EXCLUDED.response, recorded_at = EXCLUDED.recorded_at",
    )
    .bind(r.space.as_str())
    .bind(&r.key)
    .bind(&r.fingerprint)
    .bind(&r.response)
    .bind(receipt_time(r.recorded_at))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

pub(crate) fn receipt(
    db: &PgStore,
    space: &SpaceId,
    key: &str,
) -> Result<Option<Receipt>, StoreError> {
    let row: Option<(String, String, String)> = db.block_on(
        sqlx::query_as(
            "SELECT fingerprint, response, recorded_at FROM receipts WHERE space = $1 AND key = $2",
        )
        .bind(space.as_str())
        .bind(key)
        .fetch_optional(db.pool()),
    )?;
    row.map(|(fingerprint, response, at)| {
        let recorded_at = chrono::DateTime::parse_from_rfc3339(&at)
            .map_err(|e| StoreError::Corrupt(format!("receipt recorded_at: {e}")))?
            .with_timezone(&chrono::Utc);
        Ok(Receipt {
            space: space.clone(),
            key: key.to_string(),
            fingerprint,
            response,
            recorded_at,
        })
    })
    .transpose()
}

/// `json` (not `jsonb`) keeps the metadata exactly as stored.
pub(crate) fn session_headers(
    db: &PgStore,
    space: &SpaceId,
) -> Result<Vec<SessionHeader>, StoreError> {
    let rows: Vec<(String, String)> = db.block_on(
        sqlx::query_as(
            "SELECT id, json_build_object(
                        'id', id,
                        'occurred_at', b -> 'session' -> 'occurred_at',
                        'group', b -> 'session' -> 'group',
                        'metadata', b -> 'session' -> 'metadata',
                        'recorded_at', b -> 'recorded_at',
                        'messages', json_array_length(b -> 'session' -> 'messages'))::text
             FROM (SELECT id, ord, body::json AS b FROM sessions WHERE space = $1) s
             ORDER BY ord",
        )
        .bind(space.as_str())
        .fetch_all(db.pool()),
    )?;
    rows.iter()
        .map(|(id, h)| from_json(h, &format!("session {id:?} header")))
        .collect()
}

/// The WHERE clause of a listing, as a macro so the queries stay literal strings.
macro_rules! listing_where {
    () => {
        "space = $1
    AND ($2::text[] IS NULL OR kind = ANY($2))
    AND ($3::text[] IS NULL OR session_id = ANY($3))
    AND ($4::text IS NULL OR (body::jsonb -> 'provenance' -> 'speakers') ? $4)
    AND ($5::bigint IS NULL OR occurred_us IS NULL OR occurred_us >= $5)
    AND ($6::bigint IS NULL OR occurred_us <= $6)
    AND ($7::bigint IS NULL OR COALESCE(occurred_us,
            (extract(epoch FROM (body::jsonb ->> 'recorded_at')::timestamptz) * 1000000)::bigint)
         <= $7)"
    };
}

/// A page in listing order, read part by part along the `units_listed` index (see
/// [`ListingPart`]).
pub(crate) fn list_units(
    db: &PgStore,
    space: &SpaceId,
    q: &UnitQuery,
) -> Result<UnitPage, StoreError> {
    let kinds: Option<Vec<String>> = q
        .kinds
        .as_ref()
        .map(|k| k.iter().map(|k| k.as_str().to_string()).collect());
    let since = q.since.map(|t| t.timestamp_micros());
    let until = q.until.map(|t| t.timestamp_micros());
    let as_of = q.as_of.map(|t| t.timestamp_micros());
    // The SQL is the fixed listing condition and a part's fixed clauses; every value is
    // bound, `$1`..`$7` in `listing_where!`'s order by this one macro.
    macro_rules! listing_binds {
        ($query:expr) => {
            $query
                .bind(space.as_str())
                .bind(&kinds)
                .bind(&q.sessions)
                .bind(&q.speaker)
                .bind(since)
                .bind(until)
                .bind(as_of)
        };
    }
    let count = |extra: &str| {
        let sql = format!(
            "SELECT COUNT(*) FROM units WHERE {}{extra}",
            listing_where!()
        );
        let n: i64 = db.block_on(
            listing_binds!(sqlx::query_scalar(sqlx::AssertSqlSafe(sql))).fetch_one(db.pool()),
        )?;
        Ok::<_, StoreError>(n.max(0) as usize)
    };
    let fetch = |part: ListingPart, offset: usize, limit: usize| {
        let (rows, order) = part.sql();
        let sql = format!(
            "SELECT body FROM units WHERE {} AND {rows} ORDER BY {order} LIMIT $8 OFFSET $9",
            listing_where!()
        );
        db.block_on(
            listing_binds!(sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql)))
                // Beyond i64 is past every row, never a negative number.
                .bind(i64::try_from(limit).unwrap_or(i64::MAX))
                .bind(i64::try_from(offset).unwrap_or(i64::MAX))
                .fetch_all(db.pool()),
        )
    };
    let total = count("")?;
    let rows = q.page_by_parts(fetch, |part| count(&format!(" AND {}", part.sql().0)))?;
    Ok(UnitPage {
        units: units_of(rows)?,
        total,
    })
}

/// Sessions and units of a space that fail to decode, one line each.
pub(crate) fn row_failures(db: &PgStore, space: &SpaceId) -> Result<Vec<String>, StoreError> {
    let rows = |sql: &'static str| {
        db.block_on(
            sqlx::query_as::<_, (String, String)>(sql)
                .bind(space.as_str())
                .fetch_all(db.pool()),
        )
    };
    let mut failures = Vec::new();
    for (id, body) in rows("SELECT id, body FROM sessions WHERE space = $1 ORDER BY ord")? {
        if let Err(e) = from_json::<SessionRecord>(&body, "session") {
            failures.push(format!("session {id:?}: {e}"));
        }
    }
    for (id, body) in rows("SELECT id, body FROM units WHERE space = $1 ORDER BY seq")? {
        if let Err(e) = from_json::<Unit>(&body, "unit") {
            failures.push(format!("unit {id:?}: {e}"));
        }
    }
    Ok(failures)
}
