//! Timestamps and the date shapes found in conversation logs.
use crate::InputError;
use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, TimeZone, Utc, Weekday};

/// Every time in Cairn is a UTC instant. Sources without a zone are read as UTC, which keeps
/// relative order and day arithmetic exact.
pub type Timestamp = DateTime<Utc>;

/// Whether `t` can be stored: years outside 0001..=9999 (in UTC) have no RFC 3339 form,
/// which is how every time is stored and exported. A time the engine derives (a date
/// resolved from "last week") must pass this too, or the record it lands in is unreadable.
pub fn in_record_range(t: Timestamp) -> bool {
    (1..=9999).contains(&t.year())
}

fn check_range(t: Timestamp, raw: &str) -> Result<Timestamp, InputError> {
    let year = t.year();
    if in_record_range(t) {
        Ok(t)
    } else {
        Err(InputError::new(
            "time",
            format!("{raw:?} is year {year} in UTC; times must lie in the years 0001 to 9999"),
        ))
    }
}

/// Parse the date/time shapes that appear in memory sources and benchmark files:
/// RFC 3339 (`2023-05-30T23:40:00Z`), `2023-05-30 23:40[:00]`, `2023-05-30`,
/// LongMemEval's `2023/05/30 (Tue) 23:40` (the weekday must match the date), LoCoMo's
/// `1:56 pm on 8 May, 2023`. Every accepted time lies in the years 0001 to 9999 (UTC).
///
/// The error's `problem` is the whole message; its `record` is just `time`, for callers
/// to replace with the field they read.
pub fn parse_timestamp(raw: &str) -> Result<Timestamp, InputError> {
    let t = parse_any(raw)?;
    check_range(t, raw)
}

fn parse_any(raw: &str) -> Result<Timestamp, InputError> {
    let s = raw.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    // LongMemEval: a weekday in parentheses, checked against the date once it is read.
    let (cleaned, weekday) = match (s.find('('), s.find(')')) {
        (Some(a), Some(b)) if a < b => {
            let named = s[a + 1..b].trim();
            let day = named.parse::<Weekday>().map_err(|_| {
                InputError::new("time", format!("{raw:?}: {named:?} is not a weekday"))
            })?;
            (format!("{}{}", &s[..a], &s[b + 1..]), Some(day))
        }
        _ => (s.to_string(), None),
    };
    let cleaned = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    let t = parse_plain(&cleaned).ok_or_else(|| {
        InputError::new(
            "time",
            format!("cannot read {raw:?} as a date (expected e.g. 2023-05-30T23:40:00Z, 2023-05-30 23:40, 2023/05/30 (Tue) 23:40)"),
        )
    })?;
    if let Some(day) = weekday.filter(|d| *d != t.weekday()) {
        return Err(InputError::new(
            "time",
            format!(
                "{raw:?} says {day} but {} is a {}",
                t.format("%Y-%m-%d"),
                t.weekday()
            ),
        ));
    }
    Ok(t)
}

fn parse_plain(cleaned: &str) -> Option<Timestamp> {
    const DATETIME_FORMATS: &[&str] = &[
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y/%m/%d %H:%M:%S",
        "%Y/%m/%d %H:%M",
        "%I:%M %p on %d %B, %Y",
        "%I:%M %p on %d %b, %Y",
        "%I:%M %p on %B %d, %Y",
    ];
    for f in DATETIME_FORMATS {
        if let Ok(t) = NaiveDateTime::parse_from_str(cleaned, f) {
            return Some(Utc.from_utc_datetime(&t));
        }
    }
    for f in ["%Y-%m-%d", "%Y/%m/%d", "%d %B, %Y", "%d %B %Y", "%B %d, %Y"] {
        if let Ok(d) = NaiveDate::parse_from_str(cleaned, f) {
            if let Some(t) = d.and_hms_opt(0, 0, 0) {
                return Some(Utc.from_utc_datetime(&t));
            }
        }
    }
    None
}

/// Serde readers of times from outside (input and exported records): every shape
/// [`parse_timestamp`] reads, and only times it accepts, so what deserializes can always
/// be written and read back.
pub mod serde_time {
    use super::{parse_timestamp, Timestamp};
    use serde::{Deserialize, Deserializer};

    pub fn option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Timestamp>, D::Error> {
        let raw: Option<String> = Option::deserialize(d)?;
        raw.map(|s| parse_timestamp(&s).map_err(|e| serde::de::Error::custom(e.problem)))
            .transpose()
    }

    pub fn required<'de, D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let raw = String::deserialize(d)?;
        parse_timestamp(&raw).map_err(|e| serde::de::Error::custom(e.problem))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_benchmark_and_standard_shapes() {
        let a = parse_timestamp("2023/05/30 (Tue) 23:40").unwrap();
        assert_eq!(a.to_rfc3339(), "2023-05-30T23:40:00+00:00");
        let b = parse_timestamp("1:56 pm on 8 May, 2023").unwrap();
        assert_eq!(b.to_rfc3339(), "2023-05-08T13:56:00+00:00");
        let c = parse_timestamp("2023-05-08").unwrap();
        assert_eq!(c.to_rfc3339(), "2023-05-08T00:00:00+00:00");
        let d = parse_timestamp("2024-01-02T03:04:05+02:00").unwrap();
        assert_eq!(d.to_rfc3339(), "2024-01-02T01:04:05+00:00");
        assert!(parse_timestamp("yesterday-ish").is_err());
        assert!(parse_timestamp("2023-02-30").is_err());
    }

    #[test]
    fn refuses_times_without_an_rfc3339_form() {
        for raw in [
            "-0001-01-01",
            "-9999-01-01",
            "9999-12-31T23:59:59-05:00",
            "0000-01-01T00:00:00+05:00",
            "0000-06-01",
            "+10000-01-01T00:00:00Z",
        ] {
            let e = parse_timestamp(raw).unwrap_err();
            assert!(
                e.problem.contains("0001 to 9999") || e.problem.contains("cannot read"),
                "{raw}: {e}"
            );
        }
        let edge = parse_timestamp("9999-12-31T23:59:59Z").unwrap();
        let back: Timestamp = serde_json::from_str(&serde_json::to_string(&edge).unwrap()).unwrap();
        assert_eq!(back, edge);
        assert_eq!(parse_timestamp("0001-01-01").unwrap().year(), 1);
    }

    #[test]
    fn a_weekday_must_match_its_date() {
        assert!(parse_timestamp("2023/05/30 (Tue) 23:40").is_ok());
        let e = parse_timestamp("2023/05/30 (Fri) 23:40").unwrap_err();
        assert!(e.problem.contains("is a Tue"), "{e}");
        let e = parse_timestamp("2023/05/30 (later) 23:40").unwrap_err();
        assert!(e.problem.contains("not a weekday"), "{e}");
    }
}
