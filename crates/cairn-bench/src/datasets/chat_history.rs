//! The generated chat history of `cairn bench scale`: one-to-one sessions of
//! [`ROUNDS`] rounds (a user turn and a reply), deterministic per session index and seed,
//! with needles planted: facts that exactly one turn states, each asked once.
use cairn::{Message, Role, SessionInput};
use serde::{Deserialize, Serialize};

/// Rounds (user turn + reply) per generated session.
pub const ROUNDS: usize = 8;

struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64) -> Self {
        let mut r = Self(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        r.next();
        r
    }
    // splitmix64: cheap, and good enough that nearby streams look unrelated.
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

pub const PEOPLE: &[&str] = &[
    "my sister",
    "my brother",
    "my manager",
    "my landlord",
    "my dentist",
    "our neighbor",
    "my grandmother",
    "my best friend",
    "my cousin",
    "my yoga teacher",
    "my accountant",
    "my roommate",
    "my mentor",
    "my daughter",
    "my son",
    "my partner",
    "my coworker Sam",
    "my old boss",
    "the babysitter",
    "my piano teacher",
    "my uncle",
    "my aunt",
    "my physical therapist",
    "my tax advisor",
];
pub const ATTRIBUTES: &[&str] = &[
    "wifi password",
    "locker combination",
    "license plate",
    "anniversary date",
    "favorite restaurant",
    "shoe size",
    "food allergy",
    "flight number",
    "gate code",
    "phone number",
    "birthday",
    "blood type",
    "shirt size",
    "favorite wine",
    "new address",
    "parking spot",
    "library card number",
    "coffee order",
    "dog's name",
    "car model",
];
const PLACES: &[&str] = &[
    "Lisbon",
    "Denver",
    "Kyoto",
    "the lake house",
    "Barcelona",
    "Montreal",
    "the coast",
    "Chicago",
    "Austin",
    "the mountains",
    "Berlin",
    "Vancouver",
    "Porto",
    "Seoul",
    "the farmers market",
    "the office",
    "downtown",
    "the airport",
    "Edinburgh",
    "Oaxaca",
];
const FOODS: &[&str] = &[
    "ramen",
    "sourdough",
    "tacos al pastor",
    "green curry",
    "banana bread",
    "paella",
    "lentil soup",
    "dumplings",
    "pho",
    "shakshuka",
    "risotto",
    "falafel",
    "pancakes",
    "chili",
    "lasagna",
    "poke bowls",
    "biryani",
    "gazpacho",
    "pierogi",
    "miso salmon",
];
const ACTIVITIES: &[&str] = &[
    "running",
    "climbing",
    "swimming",
    "pottery",
    "chess",
    "guitar",
    "cycling",
    "birdwatching",
    "yoga",
    "woodworking",
    "baking",
    "photography",
    "gardening",
    "tennis",
    "knitting",
    "hiking",
    "salsa dancing",
    "journaling",
    "painting",
    "rowing",
];
const THINGS: &[&str] = &[
    "laptop",
    "standing desk",
    "espresso machine",
    "road bike",
    "winter coat",
    "noise-cancelling headphones",
    "air fryer",
    "camera lens",
    "hiking boots",
    "blender",
    "e-reader",
    "tent",
    "office chair",
    "electric kettle",
    "backpack",
    "monitor",
];
const DAYS: &[&str] = &[
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "next week",
    "this weekend",
    "tomorrow",
    "in two weeks",
    "at the end of the month",
];

/// A user turn: one of several everyday templates, slots filled from the lists.
fn user_turn(r: &mut Rng) -> String {
    let n = 2 + r.below(60);
    let (p, a) = (r.pick(PEOPLE), r.pick(ATTRIBUTES));
    let (pl, f, ac) = (r.pick(PLACES), r.pick(FOODS), r.pick(ACTIVITIES));
    let (th, d) = (r.pick(THINGS), r.pick(DAYS));
    match r.below(16) {
        0 => format!("I'm planning a trip to {pl} {d}, any tips on what to pack?"),
        1 => format!("I tried making {f} last night but it came out bland. What went wrong?"),
        2 => format!("I've been doing {ac} for {n} weeks now and I'm hooked."),
        3 => format!("Can you help me pick a new {th}? My budget is about {n}0 dollars."),
        4 => format!("I keep forgetting {p}'s {a}, remind me to ask again {d}."),
        5 => format!("{p} recommended a place for {f} near {pl}."),
        6 => format!("My {th} broke again, this is the {n}th time this year."),
        7 => format!("I want to get better at {ac}. How should I structure practice?"),
        8 => format!("We're hosting dinner {d}; I'm thinking {f} for {n} people."),
        9 => format!("{p} is moving to {pl} {d} and asked me to help."),
        10 => format!("I need to update the {a} on file for {p}."),
        11 => format!("Is {pl} nice in the spring? I have {n} days off."),
        12 => format!("I signed up for a {ac} class that meets every {d}."),
        13 => format!("Should I return the {th} I bought? It's been {n} days."),
        14 => format!("{p} and I argued about {ac} versus {f} for the weekend plans."),
        _ => format!("Remind me {d} to call {p} about the trip to {pl}."),
    }
}

fn assistant_turn(r: &mut Rng) -> String {
    let (pl, f, ac, th) = (
        r.pick(PLACES),
        r.pick(FOODS),
        r.pick(ACTIVITIES),
        r.pick(THINGS),
    );
    match r.below(8) {
        0 => format!("Good question. For {ac}, consistency matters more than intensity: short sessions several times a week, with one rest day, usually work best."),
        1 => format!("A few ideas: check the reviews, compare warranties, and look at last year's {th} models, which are often much cheaper."),
        2 => format!("For {f}, season more than you think, taste as you go, and let it rest before serving."),
        3 => format!("{pl} is lovely then. Book early, pack layers, and leave a free day for wandering."),
        4 => "I'll keep that in mind. Tell me if you want a reminder or a checklist.".to_string(),
        5 => format!("That sounds like a plan. If it helps, I can draft a schedule around {ac} and your work week."),
        6 => format!("Sorry to hear that. Many people in your spot pick a sturdier {th}; the mid-range ones last longest."),
        _ => format!("Happy to help. People who try {f} in {pl} usually recommend the small places away from the center."),
    }
}

/// A planted fact: a (person, attribute) pair that no other turn states, so exactly one
/// turn answers its question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Needle {
    pub index: usize,
    pub session: String,
    pub message: String,
    pub statement: String,
    pub question: String,
}

/// Needle `k` of `n`: its (person, attribute) pair, statement and question.
fn needle_text(k: usize, seed: u64) -> (String, String) {
    let mut r = Rng::new(seed, 0xA11CE + k as u64);
    let (p, a) = needle_pair(k);
    const WORDS: &[&str] = &[
        "marigold", "falcon", "cobalt", "juniper", "harbor", "saffron", "orchid", "tundra",
        "velvet", "quartz", "maple", "comet",
    ];
    let value = format!("{}-{}", r.pick(WORDS), 100 + r.below(9900));
    (
        format!("Oh, before I forget: {p}'s {a} is {value}, please keep it for me."),
        format!("What is {p}'s {a}?"),
    )
}

/// Queries about the generated topics: timed, not scored (many turns answer them).
pub fn topic_query(k: usize, seed: u64) -> String {
    let mut r = Rng::new(seed, 0xB0B + k as u64);
    match r.below(4) {
        0 => format!(
            "What did I say about {} in {}?",
            r.pick(FOODS),
            r.pick(PLACES)
        ),
        1 => format!("How long have I been doing {}?", r.pick(ACTIVITIES)),
        2 => format!("Which {} did I want to buy?", r.pick(THINGS)),
        _ => format!("When is {} moving?", r.pick(PEOPLE)),
    }
}

/// Whether `text` names both the person and the attribute of a needle, in any
/// phrasing: the filler must not, so exactly one turn is about each needle's pair.
fn is_needle_pair(text: &str, needles: usize) -> bool {
    (0..needles).any(|k| {
        let (p, a) = needle_pair(k);
        text.contains(p) && text.contains(a)
    })
}

/// The (person, attribute) of needle `k`: distinct for every k below 24 x 20.
fn needle_pair(k: usize) -> (&'static str, &'static str) {
    let (q, r) = (k / PEOPLE.len(), k % PEOPLE.len());
    (PEOPLE[r], ATTRIBUTES[(q + r) % ATTRIBUTES.len()])
}

/// Session `i` of the history; `needle` replaces its fourth user turn.
///
/// `distinct` makes the history a space of distinct vectors: every message ends with a
/// code of its own (`#s12m3`: session 12, message 3), so no two texts repeat (the
/// templates alone give a 1M-unit history ~39k distinct texts), and the two sides are
/// named speakers (`Alex`, `Assistant`) instead of roles. With roles, only user turns
/// are embedded and a round is embedded by its user turn's text, so a session holds 8
/// distinct vectors for ~28 units; with named speakers every turn and every round has a
/// text of its own (24 per session), about one distinct vector per unit.
pub fn session(
    i: usize,
    seed: u64,
    needle: Option<&str>,
    needles: usize,
    distinct: bool,
) -> SessionInput {
    let mut r = Rng::new(seed, i as u64);
    let start =
        chrono::DateTime::from_timestamp(1_640_995_200 + i as i64 * 5_400, 0).unwrap_or_default();
    let mut messages = Vec::with_capacity(2 * ROUNDS);
    for round in 0..ROUNDS {
        let mut user = user_turn(&mut r);
        while is_needle_pair(&user, needles) {
            user = user_turn(&mut r);
        }
        if round == 3 {
            if let Some(n) = needle {
                user = n.to_string();
            }
        }
        let mut reply = assistant_turn(&mut r);
        if distinct {
            user = format!("{user} #s{i}m{}", 2 * round);
            reply = format!("{reply} #s{i}m{}", 2 * round + 1);
        }
        let mut user = message(2 * round, Role::User, user);
        let mut reply = message(2 * round + 1, Role::Assistant, reply);
        if distinct {
            for (m, name) in [(&mut user, "Alex"), (&mut reply, "Assistant")] {
                m.role = None;
                m.speaker = Some(name.into());
            }
        }
        messages.push(user);
        messages.push(reply);
    }
    SessionInput {
        id: format!("s{i:07}"),
        occurred_at: Some(start),
        group: None,
        messages,
        metadata: serde_json::Value::Null,
    }
}

fn message(pos: usize, role: Role, text: String) -> Message {
    Message {
        id: pos.to_string(),
        role: Some(role),
        speaker: None,
        text,
        occurred_at: None,
        metadata: serde_json::Value::Null,
    }
}

/// Units one generated session derives into, about: a turn per message, a round per user
/// turn, the session's episode, and (measured) a fact and two profile units. Only plans
/// where needles go: the ingest runs until the size is reached.
pub const UNITS_PER_SESSION: usize = 3 * ROUNDS + 4;

/// Sessions to generate for `size` units, and where the needles go (spread evenly
/// through the history, the last one before its final tenth).
pub fn plan(size: usize, needles: usize, seed: u64) -> (usize, Vec<Needle>) {
    // Twice as many sessions as needles keeps every needle in a session of its own.
    let sessions = size.div_ceil(UNITS_PER_SESSION).max(2 * needles.max(1));
    let span = sessions - sessions / 10;
    let planted = (0..needles)
        .map(|k| {
            let at = (k * span) / needles.max(1);
            let (statement, question) = needle_text(k, seed);
            Needle {
                index: k,
                session: format!("s{at:07}"),
                message: "6".into(),
                statement,
                question,
            }
        })
        .collect();
    (sessions, planted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needles_are_planted_once_and_filler_never_states_their_pair() {
        let (sessions, needles) = plan(10_000, 20, 3);
        assert_eq!(sessions, 358);
        let (_, few) = plan(100, 20, 3);
        let distinct: std::collections::HashSet<_> = few.iter().map(|n| &n.session).collect();
        assert_eq!(distinct.len(), 20, "needles must not share a session");
        let mut seen = std::collections::HashSet::new();
        for n in &needles {
            assert!(
                seen.insert(n.session.clone()),
                "two needles in {}",
                n.session
            );
            let i: usize = n.session[1..].parse().unwrap();
            let s = session(i, 3, Some(&n.statement), 20, false);
            assert_eq!(s.messages[6].text, n.statement);
        }
        for i in 0..sessions {
            let s = session(i, 3, None, 20, false);
            assert!(s.messages.iter().all(|m| !is_needle_pair(&m.text, 20)));
        }
    }

    #[test]
    fn needle_pairs_are_distinct() {
        let n = PEOPLE.len() * ATTRIBUTES.len();
        let pairs: std::collections::HashSet<_> = (0..n).map(needle_pair).collect();
        assert_eq!(pairs.len(), n);
    }

    #[test]
    fn generation_is_deterministic_per_session() {
        assert_eq!(
            session(17, 5, None, 10, false),
            session(17, 5, None, 10, false)
        );
        assert_ne!(
            session(17, 5, None, 10, false).messages,
            session(18, 5, None, 10, false).messages
        );
    }

    #[test]
    fn distinct_history_repeats_no_text_and_keeps_the_needle() {
        let texts = |distinct| {
            (0..200)
                .flat_map(|i| session(i, 5, None, 10, distinct).messages)
                .map(|m| m.text)
                .collect::<Vec<_>>()
        };
        let unique = |t: &[String]| t.iter().collect::<std::collections::HashSet<_>>().len();
        let (plain, distinct) = (texts(false), texts(true));
        assert!(unique(&plain) < plain.len(), "the templates repeat");
        assert_eq!(unique(&distinct), distinct.len());
        let s = session(4, 5, Some("my sister's wifi password is x"), 10, true);
        assert_eq!(s.messages[6].text, "my sister's wifi password is x #s4m6");
        assert_eq!(s.messages[6].speaker.as_deref(), Some("Alex"));
        assert_eq!(s.messages[6].role, None);
        assert!(distinct[0].starts_with(&plain[0]));
    }
}
