//! Scoring of the personal-memory suite: an extracted personal fact against the facts a
//! line states, and a recall's first hit against a question's current value.
use crate::datasets::personal::Expected;
use cairn::{FactDetail, Hit};

/// Words as the suite compares them: lowercased, a crude suffix stripped (-ing, -ed,
/// -es, -s), number words as digits, stop words left out.
pub fn words(text: &str) -> Vec<String> {
    const STOP: &[&str] = &[
        "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "with", "my", "is",
        "are", "was", "i", "me", "us", "it", "by", "from", "as",
    ];
    const NUMBERS: &[&str] = &[
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    text.split(|c: char| !c.is_alphanumeric() && c != ':')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
        .map(|w| match NUMBERS.iter().position(|n| *n == w) {
            Some(n) => n.to_string(),
            None => stem(&w),
        })
        .collect()
}

fn stem(w: &str) -> String {
    for suffix in ["ing", "ed", "es", "s"] {
        if w.len() > suffix.len() + 2 && w.ends_with(suffix) {
            return w[..w.len() - suffix.len()].to_string();
        }
    }
    w.to_string()
}

/// Whether an extracted fact is the expected one: the same category, about the same
/// person (any of the names the suite gives), the same polarity, and every word of the
/// expected value among the words of its subject and value.
pub fn matches(e: &Expected, got: &FactDetail) -> bool {
    let (Some(person), Some(category)) = (&got.person, got.category) else {
        return false;
    };
    let have = words(&format!("{} {}", got.subject, got.value));
    category == e.category
        && e.about.iter().any(|a| a.eq_ignore_ascii_case(person))
        && got.negated == e.negated
        && words(&e.value).iter().all(|w| have.contains(w))
}

/// Whether a recall's first hit states `current`: its text holds the value (words
/// compared as [`words`] makes them), and it is not itself marked superseded.
pub fn first_hit_states(hits: &[Hit], current: &str) -> bool {
    let Some(first) = hits.first() else {
        return false;
    };
    let have = words(&first.text);
    first.superseded_by.is_none() && words(current).iter().all(|w| have.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn::FactCategory;

    fn fact(person: &str, subject: &str, value: &str, negated: bool) -> FactDetail {
        FactDetail {
            subject: subject.into(),
            value: value.into(),
            person: Some(person.into()),
            category: Some(FactCategory::Home),
            negated,
            ..Default::default()
        }
    }

    #[test]
    fn matches_category_person_polarity_and_words() {
        let e = Expected {
            category: FactCategory::Home,
            about: vec!["user".into()],
            value: "Lisbon".into(),
            negated: false,
        };
        assert!(matches(&e, &fact("user", "user's home", "Lisbon", false)));
        assert!(!matches(&e, &fact("user", "user's home", "Lisbon", true)));
        assert!(!matches(
            &e,
            &fact("user's sister", "user's sister's home", "Lisbon", false)
        ));
        assert!(!matches(&e, &fact("user", "user's home", "Porto", false)));
        assert_eq!(words("Three cats, walking"), ["3", "cat", "walk"]);
    }
}
