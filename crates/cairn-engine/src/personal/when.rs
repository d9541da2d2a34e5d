//! When a stated change happened, from the words that date it ("last month", "two
//! weeks ago", "in March", "since 2019"), resolved against the time of the message.
use cairn_core::Timestamp;
use chrono::{Datelike, Duration, NaiveDate, TimeZone, Utc};
use regex::Regex;
use std::sync::LazyLock;

use crate::calendar::MONTHS;

static AGO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|a few|couple of|few)\s+(day|week|month|year)s?\s+ago\b")
        .expect("static regex")
});
static LAST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(yesterday|last night|this morning|today|tonight|last week|last weekend|last month|last year|this week|this month|this year|earlier this (?:week|month|year)|the other day|last (?:spring|summer|fall|autumn|winter)|this (?:spring|summer|fall|autumn|winter)|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b")
        .expect("static regex")
});
static IN_MONTH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:in|since|back in|during|early|late|mid|last)\s+(january|february|march|april|may|june|july|august|september|october|november|december)(?:\s+(\d{4}))?\b")
        .expect("static regex")
});
static IN_YEAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:in|since|back in)\s+((?:19|20)\d\d)\b").expect("static regex")
});

/// The words of `lower` (a lowercased clause) that date a past change, resolved against
/// `now`; `None` when none does (or the message has no time).
pub fn since(lower: &str, now: Option<Timestamp>) -> Option<Timestamp> {
    let now = now?;
    let today = now.date_naive();
    if let Some(c) = AGO.captures(lower) {
        let n: i64 = match &c[1] {
            "a" | "an" | "one" => 1,
            "a couple of" | "couple of" | "two" => 2,
            "a few" | "few" | "three" => 3,
            w => crate::personal::number(w)?.into(),
        };
        let days = match &c[2] {
            "day" => n,
            "week" => 7 * n,
            "month" => 30 * n,
            _ => 365 * n,
        };
        return day(today.checked_sub_signed(Duration::days(days))?);
    }
    if let Some(c) = LAST.captures(lower) {
        let back = match &c[1] {
            "yesterday" | "last night" => 1,
            "this morning" | "today" | "tonight" => 0,
            "last week" | "last weekend" => 7,
            "the other day" => 3,
            "last month" => 30,
            "last year" => 365,
            "this week" | "earlier this week" => today.weekday().num_days_from_monday() as i64,
            "this month" | "earlier this month" => today.day0() as i64,
            "this year" | "earlier this year" => today.ordinal0() as i64,
            w if w.starts_with("on ") => {
                let target = crate::calendar::WEEKDAYS
                    .iter()
                    .position(|d| w.ends_with(d))? as i64;
                let idx = today.weekday().num_days_from_monday() as i64;
                match (idx - target).rem_euclid(7) {
                    0 => 7,
                    b => b,
                }
            }
            season => return season_start(season, today),
        };
        return day(today.checked_sub_signed(Duration::days(back))?);
    }
    if let Some(c) = IN_MONTH.captures(lower) {
        let month = MONTHS.iter().position(|m| *m == &c[1])? as u32 + 1;
        let year = match c.get(2) {
            Some(y) => y.as_str().parse().ok()?,
            // The most recent such month not after the message.
            None if month <= today.month() => today.year(),
            None => today.year() - 1,
        };
        return day(NaiveDate::from_ymd_opt(year, month, 1)?);
    }
    if let Some(c) = IN_YEAR.captures(lower) {
        let year: i32 = c[1].parse().ok()?;
        return (year <= today.year())
            .then(|| day(NaiveDate::from_ymd_opt(year, 1, 1)?))
            .flatten();
    }
    None
}

/// The start of "this spring" or "last winter" as a message on `today` means it.
fn season_start(phrase: &str, today: NaiveDate) -> Option<Timestamp> {
    let month = match phrase.rsplit(' ').next()? {
        "spring" => 3,
        "summer" => 6,
        "fall" | "autumn" => 9,
        _ => 12,
    };
    let mut year = today.year();
    if month > today.month() || phrase.starts_with("last") {
        year -= 1;
    }
    day(NaiveDate::from_ymd_opt(year, month, 1)?)
}

/// Midnight UTC of `d`, if it can be stored: "last week" said on 0001-01-01 falls in year
/// 0, and such a change is kept undated rather than making its unit unreadable.
fn day(d: NaiveDate) -> Option<Timestamp> {
    Some(Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0)?))
        .filter(|&t| cairn_core::time::in_record_range(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Option<Timestamp> {
        cairn_core::time::parse_timestamp(s).ok()
    }

    #[test]
    fn resolves_against_the_message_time() {
        let now = at("2024-06-15");
        assert_eq!(since("i moved to lisbon last month", now), at("2024-05-16"));
        assert_eq!(since("we adopted her two weeks ago", now), at("2024-06-01"));
        assert_eq!(since("i left in march", now), at("2024-03-01"));
        assert_eq!(since("i quit in september", now), at("2023-09-01"));
        assert_eq!(since("i've been here since 2015", now), at("2015-01-01"));
        assert_eq!(since("this spring", now), at("2024-03-01"));
        assert_eq!(since("i live in porto", now), None);
        assert_eq!(since("last month", None), None);
    }

    #[test]
    fn a_date_before_year_one_is_left_undated() {
        let first = at("0001-01-01");
        assert_eq!(since("i moved to lisbon last week", first), None);
        assert_eq!(since("we adopted her two years ago", first), None);
        assert_eq!(since("last winter", first), None);
        assert_eq!(since("this morning", first), first);
    }
}
