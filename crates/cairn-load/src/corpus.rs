//! The synthetic conversations and questions of `cairn load`: deterministic (the same
//! seed gives the same corpus and queries), so runs on different builds load the same
//! data and ask the same questions.
use serde_json::{json, Value};

const PEOPLE: &[&str] = &[
    "Maya", "Tom", "Priya", "Lucas", "Aiko", "Omar", "Elena", "Kofi", "Sven", "Lena",
];
const THINGS: &[&str] = &[
    "bicycle",
    "guitar",
    "camera",
    "laptop",
    "kayak",
    "telescope",
    "sewing machine",
    "espresso maker",
    "tent",
    "keyboard",
    "drone",
    "bookshelf",
];
/// Cities the corpora talk about (also the reliability drivers').
pub const PLACES: &[&str] = &[
    "Lisbon", "Kyoto", "Denver", "Nairobi", "Oslo", "Hanoi", "Lima", "Tallinn", "Perth",
    "Montreal", "Seville", "Busan",
];
const ADJ: &[&str] = &[
    "red",
    "second-hand",
    "vintage",
    "tiny",
    "waterproof",
    "noisy",
    "borrowed",
    "blue",
];

/// Small deterministic generator (a 64-bit LCG).
#[derive(Debug, Clone)]
pub struct Lcg(pub u64);

impl Lcg {
    pub fn draw(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }

    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.draw() % xs.len()]
    }
}

/// Synthetic sessions of 10 messages (5 exchanges) each, `load-<n>`, enough to hold
/// `n_messages`.
pub fn synthetic_sessions(n_messages: usize, seed: u64) -> Vec<Value> {
    let mut g = Lcg(seed);
    let sessions = n_messages.div_ceil(10);
    (0..sessions)
        .map(|s| {
            let mut messages = Vec::new();
            for i in 0..5 {
                let (p, t, pl, a) = (g.pick(PEOPLE), g.pick(THINGS), g.pick(PLACES), g.pick(ADJ));
                let n = g.draw() % 900 + 100;
                messages.push(json!({"role": "user", "text": format!(
                    "Session {s} note {i}: {p} lent me a {a} {t} when we met in {pl}; it cost about {n} dollars."
                )}));
                messages.push(json!({"role": "assistant", "text": format!(
                    "Got it: the {a} {t} came from {p}, in {pl}, roughly {n} dollars."
                )}));
            }
            json!({
                "id": format!("load-{s}"),
                "date": format!("2024-{:02}-{:02} 10:00", 1 + s % 12, 1 + s % 28),
                "messages": messages,
            })
        })
        .collect()
}

/// `n` questions about the synthetic sessions.
pub fn queries(seed: u64, n: usize) -> Vec<String> {
    let mut g = Lcg(seed);
    (0..n)
        .map(|i| match i % 3 {
            0 => format!("Who lent me the {} {}?", g.pick(ADJ), g.pick(THINGS)),
            1 => format!("What did I get in {}?", g.pick(PLACES)),
            _ => format!(
                "How much was the {} from {}?",
                g.pick(THINGS),
                g.pick(PEOPLE)
            ),
        })
        .collect()
}

/// The text of one appended message (a new note each time).
pub fn note(g: &mut Lcg) -> String {
    let (p, t, pl) = (g.pick(PEOPLE), g.pick(THINGS), g.pick(PLACES));
    let n = g.draw() % 900 + 100;
    format!("Update: {p} now keeps the {t} in {pl}; it is insured for {n} dollars.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_sized() {
        let a = synthetic_sessions(25, 7);
        assert_eq!(a.len(), 3);
        assert_eq!(a, synthetic_sessions(25, 7));
        assert_eq!(a[0]["messages"].as_array().map(Vec::len), Some(10));
        assert_eq!(queries(11, 6), queries(11, 6));
        assert!(queries(11, 3)[1].starts_with("What did I get in "));
    }
}
