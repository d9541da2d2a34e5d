//! Query analysis: content words and time expressions resolved against the recall time.
use crate::calendar::{MONTHS, WEEKDAYS};
use crate::text::content_words;
use cairn_core::Timestamp;
use chrono::{Datelike, Duration, NaiveDate, TimeZone, Utc};
use regex::Regex;
use std::sync::LazyLock;

/// A half-open time range `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    pub start: Timestamp,
    pub end: Timestamp,
}

impl TimeRange {
    pub fn contains(&self, t: Timestamp) -> bool {
        self.start <= t && t < self.end
    }

    /// Distance in days from the range (0 inside it).
    pub fn days_outside(&self, t: Timestamp) -> f64 {
        if t < self.start {
            (self.start - t).num_seconds() as f64 / 86_400.0
        } else if t >= self.end {
            (t - self.end).num_seconds() as f64 / 86_400.0
        } else {
            0.0
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct QueryAnalysis {
    /// Content words, stop words removed, lightly stemmed.
    pub words: Vec<String>,
    /// The period the question points at, if it names one ("last week", "in May",
    /// "three days ago"), resolved against the recall time.
    pub time: Option<TimeRange>,
    /// When the query asks for advice or a recommendation ("Can you recommend a show
    /// for me to watch tonight?"): what about, without the request's own words ("show
    /// movie watch tonight"). Such a request depends on what the person said of
    /// themselves, not on other requests worded alike.
    pub request: Option<String>,
    /// Whom a question about a person asks about: the asker ("where do I live?") or
    /// someone they name by relation ("where does my sister live?").
    pub focus: Option<Focus>,
}

/// The person a question is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Focus {
    /// The one asking: I, me, my.
    Me,
    /// Someone the asker names by relation ("my sister").
    Relation(String),
}

/// [`QueryAnalysis::focus`]: "my <relation>" names a relation; otherwise a first-person
/// question is about the asker.
pub fn focus(q: &str) -> Option<Focus> {
    let words: Vec<String> = q
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(str::to_lowercase)
        .collect();
    let relation = words
        .windows(2)
        .find(|w| w[0] == "my" && crate::personal::is_relation(&w[1]))
        .map(|w| w[1].clone());
    if let Some(r) = relation {
        return Some(Focus::Relation(r));
    }
    words
        .iter()
        .any(|w| {
            matches!(
                w.as_str(),
                "i" | "me" | "my" | "mine" | "myself" | "i'm" | "i've"
            )
        })
        .then_some(Focus::Me)
}

fn number_word(w: &str) -> Option<i64> {
    const WORDS: [&str; 13] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    match w {
        "a" | "an" => Some(1),
        "a couple of" | "couple of" => Some(2),
        "a few" | "few" => Some(3),
        // A count past any calendar (found by fuzzing: "18446744073709 days ago" overflowed
        // the date arithmetic) is no time expression.
        _ => w
            .parse()
            .ok()
            .filter(|n: &i64| *n <= MAX_COUNT)
            .or_else(|| WORDS.iter().position(|x| *x == w).map(|p| p as i64)),
    }
}

/// The largest count a relative time expression may name ("100000 days ago").
const MAX_COUNT: i64 = 100_000;

fn day_start(d: NaiveDate) -> Timestamp {
    Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default())
}

fn range_days(end_day: NaiveDate, days_back: i64, width_days: i64) -> TimeRange {
    // Saturates at the calendar's ends (an `as_of` near them) instead of panicking.
    let start = end_day
        .checked_sub_signed(Duration::days(days_back))
        .unwrap_or(NaiveDate::MIN);
    let end = start
        .checked_add_signed(Duration::days(width_days))
        .unwrap_or(NaiveDate::MAX);
    TimeRange {
        start: day_start(start),
        end: day_start(end),
    }
}

static AGO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|a few)\s+(day|week|month|year)s?\s+ago\b").expect("static regex")
});

static LAST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(yesterday|today|last night|this week|this month|this year|last week|last weekend|last month|last year|past week|past month|past year|recently|the other day)\b").expect("static regex")
});

static WEEKDAY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\blast (monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b")
        .expect("static regex")
});

static PAST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:past|last) (\d+|two|three|four|five|six|seven|eight|nine|ten|few|couple of) (day|week|month)s\b").expect("static regex")
});

static MONTH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(in|during|on|since|of|early|late|mid)\s+(january|february|march|april|may|june|july|august|september|october|november|december)\b").expect("static regex")
});

/// Resolves the first time expression of `q` against `now`. Widths are generous: a
/// person's "two weeks ago" is rarely exact, and the range only boosts.
pub fn time_range(q: &str, now: Timestamp) -> Option<TimeRange> {
    let q = q.to_lowercase();
    let today = now.date_naive();
    if let Some(c) = AGO.captures(&q) {
        let n = number_word(&c[1])?;
        let (center, slack) = match &c[2] {
            "day" => (n, 1 + n / 3),
            "week" => (7 * n, 4 + 2 * n),
            "month" => (30 * n, 10 + 5 * n),
            _ => (365 * n, 60 + 30 * n),
        };
        return Some(range_days(today, center + slack, 2 * slack + 1));
    }
    if let Some(c) = WEEKDAY.captures(&q) {
        let target = WEEKDAYS.iter().position(|d| *d == &c[1])? as i64;
        let today_idx = today.weekday().num_days_from_monday() as i64;
        // The most recent such day strictly before today, give or take a day.
        let back = (today_idx - target).rem_euclid(7);
        let back = if back == 0 { 7 } else { back };
        return Some(range_days(today, back + 1, 3));
    }
    if let Some(c) = PAST.captures(&q) {
        let n = number_word(&c[1])?;
        let days = match &c[2] {
            "day" => n,
            "week" => 7 * n,
            _ => 31 * n,
        };
        return Some(range_days(today, days + 1, days + 2));
    }
    if let Some(c) = LAST.captures(&q) {
        let r = match &c[1] {
            "today" => range_days(today, 0, 1),
            "yesterday" | "last night" => range_days(today, 1, 2),
            "this week" => range_days(today, 7, 8),
            "last week" | "past week" | "last weekend" | "the other day" => {
                range_days(today, 14, 15)
            }
            "this month" => range_days(today, today.day0() as i64, today.day0() as i64 + 1),
            "last month" | "past month" => range_days(today, 62, 63),
            "recently" => range_days(today, 30, 31),
            "this year" => range_days(today, today.ordinal0() as i64, today.ordinal0() as i64 + 1),
            _ => range_days(today, 400, 401),
        };
        return Some(r);
    }
    if let Some(c) = MONTH.captures(&q) {
        let month = MONTHS.iter().position(|m| *m == &c[2])? as u32 + 1;
        // The most recent such month not after `now`.
        let year = if month <= today.month() {
            today.year()
        } else {
            today.year() - 1
        };
        let start = NaiveDate::from_ymd_opt(year, month, 1)?;
        let end = if month == 12 {
            NaiveDate::from_ymd_opt(year + 1, 1, 1)?
        } else {
            NaiveDate::from_ymd_opt(year, month + 1, 1)?
        };
        return Some(TimeRange {
            start: day_start(start),
            end: day_start(end),
        });
    }
    None
}

pub fn analyze_query(q: &str, now: Timestamp) -> QueryAnalysis {
    QueryAnalysis {
        words: content_words(q),
        time: time_range(q, now),
        request: request_topic(q),
        focus: focus(q),
    }
}

/// A request for advice: asked for ("can you recommend", "any tips?", "do you have
/// suggestions"), or asked what to do ("what should I", "should I"). Not a question
/// about advice given before ("what was the recommended ratio?").
static REQUEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:(?:can|could|would) you (?:please )?(?:recommend|suggest)|(?:recommend|suggest) (?:me )?(?:a|an|some|any|one|something|anything|good)\b|any (?:\w+ ){0,2}(?:recommendations?|suggestions?|tips|advice|ideas|thoughts)|what do you think|(?:do you have|give me|got) (?:any |some )?(?:recommendations?|suggestions?|tips|advice|ideas)|(?:tips|ideas|advice|suggestions) (?:for|on|about)|what should i|should i|what would you (?:recommend|suggest)|help me (?:choose|decide|find|pick|plan)|where should i|how should i)")
        .expect("static regex")
});

/// Words of a request for advice that say it is one, not what it is about.
const REQUEST_WORDS: &[&str] = &[
    "can",
    "could",
    "would",
    "you",
    "please",
    "recommend",
    "recommends",
    "recommended",
    "recommendation",
    "recommendations",
    "suggest",
    "suggests",
    "suggestion",
    "suggestions",
    "any",
    "some",
    "tip",
    "tips",
    "advice",
    "idea",
    "ideas",
    "thoughts",
    "what",
    "should",
    "do",
    "think",
    "help",
    "give",
    "me",
    "i",
    "good",
    "great",
    "anything",
    "something",
    "there",
    "out",
    "know",
    "looking",
    "wondering",
    "want",
    "need",
    "get",
    "find",
    "let",
];

/// What an advice request is about (see [`QueryAnalysis::request`]); `None` when `q`
/// asks for none, or when nothing but the request's words is left.
pub fn request_topic(q: &str) -> Option<String> {
    if !REQUEST.is_match(q) {
        return None;
    }
    let words: Vec<&str> = q
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
        .filter(|w| {
            let l = w.to_lowercase();
            !REQUEST_WORDS.contains(&l.as_str()) && !crate::text::STOP_WORDS.contains(&l.as_str())
        })
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_core::time::parse_timestamp;

    fn now() -> Timestamp {
        parse_timestamp("2023-06-15 12:00").unwrap()
    }

    #[test]
    fn resolves_relative_expressions() {
        // Found by fuzzing: a count past the calendar panicked in date arithmetic.
        assert_eq!(
            time_range("What did I buy 18446744073709 days ago?", now()),
            None
        );
        assert_eq!(time_range("the past 9999999999999 months", now()), None);
        assert!(time_range("100000 years ago", now()).is_some());
        let r = time_range("What did I buy two weeks ago?", now()).unwrap();
        assert!(r.contains(parse_timestamp("2023-06-01").unwrap()));
        assert!(!r.contains(parse_timestamp("2023-04-01").unwrap()));
        let r = time_range("Where did I go in May?", now()).unwrap();
        assert_eq!(r.start, parse_timestamp("2023-05-01").unwrap());
        assert_eq!(r.end, parse_timestamp("2023-06-01").unwrap());
        let r = time_range("the concert in August", now()).unwrap();
        assert_eq!(r.start, parse_timestamp("2022-08-01").unwrap());
        // 2023-06-15 is a Thursday: last Saturday is 2023-06-10.
        let r = time_range("I got it last Saturday", now()).unwrap();
        assert!(r.contains(parse_timestamp("2023-06-10 15:00").unwrap()));
        assert!(!r.contains(parse_timestamp("2023-06-03 15:00").unwrap()));
        let r = time_range("concerts in the past two months", now()).unwrap();
        assert!(r.contains(parse_timestamp("2023-04-20").unwrap()));
        let r = time_range("what did we discuss yesterday", now()).unwrap();
        assert!(r.contains(parse_timestamp("2023-06-14 18:00").unwrap()));
    }

    #[test]
    fn reads_what_a_request_for_advice_is_about() {
        assert_eq!(
            request_topic("Can you recommend a show or movie for me to watch tonight?").as_deref(),
            Some("show movie watch tonight")
        );
        assert_eq!(
            request_topic(
                "I was thinking of trying a new coffee creamer recipe. Any recommendations?"
            )
            .as_deref(),
            Some("thinking trying new coffee creamer recipe")
        );
        assert_eq!(request_topic("Any tips?"), None);
        assert!(
            request_topic("I've got some free time tonight, any documentary recommendations?")
                .is_some()
        );
        assert!(request_topic("Should I buy a NAS now or wait? What do you think?").is_some());
        assert_eq!(
            request_topic("I remember you told me to dilute tea tree oil. Can you remind me what the recommended ratio is?"),
            None,
            "a question about advice given before asks for none"
        );
        assert_eq!(request_topic("Where do I live?"), None);
        assert_eq!(request_topic("How many cats do I have?"), None);
    }

    #[test]
    fn stays_off_without_a_time_reference() {
        assert_eq!(time_range("What is my cat's name?", now()), None);
        assert_eq!(time_range("May I ask about the budget?", now()), None);
    }
}
