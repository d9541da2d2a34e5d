//! An append derives only the end of its session (`derive_appended`); the stored units
//! it leaves alone plus the ones it derives must be exactly what deriving the whole
//! session gives. Checked over seeded random chats of both kinds (roles; named
//! speakers), with silences, topic cues and shifts, stated and revised facts, roles and
//! skills, over-long messages, and every kind of split point.
use cairn_core::{Message, Role, SessionInput, SpaceId, Unit, UnitKind};
use cairn_engine::{derive_appended, derive_session_units, APPEND_LOOKBACK};
use std::collections::BTreeMap;

/// A small deterministic generator (no test may depend on the clock or the OS).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64)]
    }
}

const TOPICS: &[&[&str]] = &[
    &["garden", "tomatoes", "soil", "compost", "seeds"],
    &["budget", "invoice", "vendor", "quarter", "forecast"],
    &["hiking", "trail", "mountain", "boots", "summit"],
    &["database", "index", "query", "latency", "schema"],
];

fn text(g: &mut Lcg, topic: usize) -> String {
    let words = TOPICS[topic];
    let mut t = match g.below(12) {
        0 => "btw ".to_string(),
        1 => format!("My gate code is {}. ", 4000 + g.below(999)),
        2 => format!("Actually {} instead. ", 4000 + g.below(999)),
        3 => "I'm the lead engineer on this. ".to_string(),
        4 => "Maya is our finance director, ask her. ".to_string(),
        5 => "I've got 5 years of experience with SQL! ".to_string(),
        6 => format!("The final budget is ${}k. ", 10 + g.below(90)),
        _ => String::new(),
    };
    for _ in 0..2 + g.below(6) {
        t.push_str(g.pick(words));
        t.push(' ');
    }
    if g.below(40) == 0 {
        // Longer than a unit holds of one message.
        t.push_str(&"pasted code line\n".repeat(1200));
    }
    t.push_str(if g.below(3) == 0 { "?" } else { "." });
    t
}

/// A chat of `n` messages: with roles, or of named speakers.
fn chat(g: &mut Lcg, n: usize, roles: bool) -> SessionInput {
    let base = cairn_core::time::parse_timestamp("2025-03-01 09:00").unwrap();
    let timed = g.below(5) != 0;
    let mut at = base;
    let mut topic = 0;
    let speakers = ["Maya", "Tom", "Ana", "Li"];
    let mut messages = Vec::new();
    for i in 0..n {
        if g.below(15) == 0 {
            topic = g.below(TOPICS.len() as u64);
        }
        at += chrono::Duration::minutes(match g.below(12) {
            0 => 45,
            _ => 1 + g.below(4) as i64,
        });
        let (role, speaker) = if roles {
            // Mostly alternating, sometimes two replies or an assistant first.
            let user = match g.below(6) {
                0 => i % 2 == 1,
                _ => i % 2 == 0,
            };
            (Some(if user { Role::User } else { Role::Assistant }), None)
        } else {
            (None, Some(speakers[g.below(3)].to_string()))
        };
        messages.push(Message {
            id: i.to_string(),
            role,
            speaker,
            text: text(g, topic),
            occurred_at: timed.then_some(at),
            metadata: serde_json::Value::Null,
        });
    }
    SessionInput {
        id: "s".into(),
        occurred_at: Some(base),
        group: (!roles).then(|| "team".to_string()),
        messages,
        metadata: serde_json::Value::Null,
    }
}

fn by_id(units: impl IntoIterator<Item = Unit>) -> BTreeMap<String, Unit> {
    let mut out = BTreeMap::new();
    for u in units {
        let id = u.id.clone();
        assert!(
            out.insert(id.clone(), u).is_none(),
            "unit {id} derived twice"
        );
    }
    out
}

/// Appends `session.messages[stored_len..]` to its first `stored_len` messages; returns
/// whether the end alone was derived (else the caller derives the whole session).
fn appended_equals_whole(session: &SessionInput, stored_len: usize) -> bool {
    let space = SpaceId::new("t").unwrap();
    let at = chrono::Utc::now();
    let mut prefix = session.clone();
    prefix.messages.truncate(stored_len);
    let stored = derive_session_units(&space, &prefix, at);
    let from = stored_len.saturating_sub(APPEND_LOOKBACK) as u32;
    // What the store's `session_tail` returns.
    let tail: Vec<Unit> = stored
        .iter()
        .filter(|u| u.provenance.first_position >= from || u.kind == UnitKind::Fact)
        .cloned()
        .collect();
    let Some((derived, window)) = derive_appended(&space, session, at, stored_len, &tail) else {
        return false;
    };
    let mut after = by_id(stored.into_iter().filter(|u| !window.covers(u)));
    for u in derived {
        assert!(
            window.covers(&u),
            "{} is outside the window {window:?}",
            u.id
        );
        assert!(
            after.insert(u.id.clone(), u).is_none(),
            "derived a kept unit"
        );
    }
    let whole = by_id(derive_session_units(&space, session, at));
    for (id, u) in &whole {
        assert_eq!(
            after.get(id),
            Some(u),
            "unit {id} after appending at {stored_len}"
        );
    }
    let extra: Vec<&String> = after.keys().filter(|id| !whole.contains_key(*id)).collect();
    assert!(
        extra.is_empty(),
        "left stale after appending at {stored_len}: {extra:?}"
    );
    true
}

fn split_points(g: &mut Lcg, n: usize) -> Vec<usize> {
    let mut ks = vec![1, n - 1, n / 2];
    ks.extend(
        [39, 40, 41, 63, 64, 65, 80, 81, 128]
            .into_iter()
            .filter(|&k| k < n),
    );
    ks.extend((0..4).map(|_| 1 + g.below(n as u64 - 1)));
    ks
}

#[test]
fn an_append_derives_exactly_the_end_of_the_whole_derivation() {
    let mut g = Lcg(7);
    let (mut cases, mut ends) = (0, 0);
    for round in 0..24 {
        let roles = round % 2 == 0;
        let n = 2 + g.below(if round % 4 < 2 { 300 } else { 100 });
        let s = chat(&mut g, n, roles);
        for k in split_points(&mut g, n) {
            // One message appended, and several at once.
            for end in [k + 1, (k + 1 + g.below(6)).min(n)] {
                let mut s = s.clone();
                s.messages.truncate(end);
                cases += 1;
                let derived_end = appended_equals_whole(&s, k);
                if roles {
                    assert!(derived_end, "a user/assistant append at {k} derived whole");
                }
                ends += usize::from(derived_end);
            }
        }
    }
    // Named speakers fall back to a whole derivation only when no episode boundary is
    // settled within the lookback.
    eprintln!("{ends} of {cases} appends derived only the end");
    assert!(
        ends * 10 >= cases * 9,
        "{ends} of {cases} appends derived only the end"
    );
}

#[test]
fn a_chat_that_gains_roles_is_derived_whole() {
    let mut g = Lcg(11);
    let mut s = chat(&mut g, 30, false);
    s.messages[29].role = Some(Role::User);
    s.messages[29].speaker = None;
    assert!(!appended_equals_whole(&s, 29));
}
