//! Timestamps and the date shapes found in conversation logs.
use crate::InputError;
use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};

/// Every time in Cairn is a UTC instant. Sources without a zone are read as UTC, which keeps
/// relative order and day arithmetic exact.
pub type Timestamp = DateTime<Utc>;

/// Parse the date/time shapes that appear in memory sources and benchmark files:
/// RFC 3339 (`2023-05-30T23:40:00Z`), `2023-05-30 23:40[:00]`, `2023-05-30`,
/// LongMemEval's `2023/05/30 (Tue) 23:40`, LoCoMo's `1:56 pm on 8 May, 2023`.
pub fn parse_timestamp(raw: &str) -> Result<Timestamp, InputError> {
    let s = raw.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    // LongMemEval: drop the weekday in parentheses.
    let cleaned: String = match (s.find('('), s.find(')')) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &s[..a], &s[b + 1..]),
        _ => s.to_string(),
    };
    let cleaned = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
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
        if let Ok(t) = NaiveDateTime::parse_from_str(&cleaned, f) {
            return Ok(Utc.from_utc_datetime(&t));
        }
    }
    for f in ["%Y-%m-%d", "%Y/%m/%d", "%d %B, %Y", "%d %B %Y", "%B %d, %Y"] {
        if let Ok(d) = NaiveDate::parse_from_str(&cleaned, f) {
            if let Some(t) = d.and_hms_opt(0, 0, 0) {
                return Ok(Utc.from_utc_datetime(&t));
            }
        }
    }
    Err(InputError::new(
        "date",
        format!("cannot read {raw:?} as a date (expected e.g. 2023-05-30T23:40:00Z, 2023-05-30 23:40, 2023/05/30 (Tue) 23:40)"),
    ))
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
}
