//! Speaker profiles without a model: style from counted markers, roles and skills from
//! patterns ("I'm the QA lead", "Priya is our go-to person for pricing"), topics from the
//! words a speaker uses more than the rest of the space.
//!
//! Each session yields one [`SpeakerStats`] per speaker (a `profile` unit); a profile is
//! the sum of a speaker's contributions, so it follows every ingest and deletion.
use crate::text::STOP_WORDS;
use cairn_core::{
    Evidence, FactCategory, Message, ProfileFact, Provenance, SessionInput, SpaceId,
    SpeakerProfile, SpeakerStats, Timestamp, Unit, UnitDetail, UnitKind,
};
use regex::Regex;

mod sums;
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;
pub use sums::Profiles;

/// Content words kept per contribution (a speaker's, in a session or a block of one).
const TERMS_PER_SESSION: usize = 40;
/// Messages per profile contribution: a session longer than this contributes once per
/// block, so an append re-reads one block, not the whole session.
pub const PROFILE_BLOCK: usize = 64;
/// Replies slower than this are a new conversation, not a response time.
const MAX_REPLY_SECONDS: f64 = 6.0 * 3600.0;

const ROLE_NOUNS: &str = r"(?:manager|lead|leader|engineer|designer|developer|director|analyst|scientist|architect|owner|officer|head|coordinator|specialist|consultant|intern|researcher|administrator|admin|marketer|writer|editor|recruiter|accountant|counsel|lawyer|vp|cto|ceo|cfo|coo|pm|strategist|planner|producer|founder|partner|supervisor|representative|rep|assistant|advisor|tester)";

static SELF_ROLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(?:I'm|I am|I work as|as|my role is|my title is|my job is)\s+(?:the|a|an|our|your|team's)\s+(?P<role>(?:[\w-]+\s+){{0,3}}{ROLE_NOUNS})\b"
    ))
    .expect("valid regex")
});
static OTHER_ROLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"\b(?P<name>[A-Z][a-z]+)(?:,|\s+is|\s+-|\s+\()\s*(?i:our|the|a|an|your)\s+(?P<role>(?i:(?:[\w-]+\s+){{0,3}}{ROLE_NOUNS}))\b"
    ))
    .expect("valid regex")
});
static SELF_SKILL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bI(?:'ve| have)?\s*(?:got\s+|had\s+)?(?:\d+\+?\s+years\s+of\s+)?(?:experience|worked|been working|spent years)\s+(?:in|with|on|doing)\s+(?P<skill>[^.,;!?\n]{2,40})|\bI(?:'m| am)\s+(?:really\s+|pretty\s+|very\s+)?(?:good|great|experienced|skilled|an expert|expert|proficient|fluent|certified)\s+(?:at|in|with)\s+(?P<skill2>[^.,;!?\n]{2,40})|\bI\s+speciali[sz]e\s+in\s+(?P<skill3>[^.,;!?\n]{2,40})|\bmy\s+(?:background|expertise|specialty|speciality|strength)\s+is\s+(?:in\s+)?(?P<skill4>[^.,;!?\n]{2,40})")
        .expect("valid regex")
});
static OTHER_SKILL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?P<name>[A-Z][a-z]+)(?:\s+is|'s)\s+(?i:our|the|an?)\s+(?i:expert|go-to(?: person)?|specialist|guru|wizard|pro)\s+(?i:on|for|in|at|with)\s+(?P<skill>[^.,;!?\n]{2,40})|(?i:ask)\s+(?P<name2>[A-Z][a-z]+)\s+(?i:about|for help with|re:?)\s+(?P<skill2>[^.,;!?\n]{2,40})")
        .expect("valid regex")
});

const INFORMAL: &[&str] = &[
    "lol", "haha", "hahaha", "gonna", "wanna", "gotta", "yeah", "yep", "yup", "nope", "hey", "btw",
    "omg", "thx", "kinda", "sorta", "ya", "u", "cool", "awesome", "dude", "lmao", "ok", "okay",
    "tbh", "imo", "pls", "plz",
];
const FORMAL: &[&str] = &[
    "please",
    "kindly",
    "regards",
    "sincerely",
    "appreciate",
    "therefore",
    "furthermore",
    "however",
    "accordingly",
    "dear",
    "shall",
    "hereby",
    "respectfully",
    "grateful",
];
const DIRECTIVE: &[&str] = &[
    "make sure",
    "need you to",
    "you need to",
    "must",
    "have to",
    "asap",
    "by eod",
    "by tomorrow",
    "don't forget",
    "do not",
    "ensure",
    "i want",
    "i expect",
    "deadline",
    "no later than",
    "get it done",
    "action item",
];
const COMMANDS: &[&str] = &[
    "send", "update", "review", "check", "fix", "finish", "prepare", "schedule", "submit", "share",
    "book", "call", "email", "draft", "get", "make", "set", "confirm", "remember", "stop", "start",
    "add", "remove", "move", "write", "ping", "file", "follow",
];
const COLLABORATIVE: &[&str] = &[
    "let's",
    "lets ",
    "we could",
    "we can",
    "what do you think",
    "how about",
    "shall we",
    "thoughts",
    "any ideas",
    "happy to help",
    "maybe we",
    "what if we",
    "together",
    "open to",
    "does that work",
    "would you mind",
    "i wonder",
    "could we",
    "feel free",
];

fn has_emoji(text: &str) -> bool {
    text.chars()
        .any(|c| matches!(c as u32, 0x1F300..=0x1FAFF | 0x2600..=0x27BF | 0x1F000..=0x1F2FF))
        || [":)", ":-)", ":D", ";)", ":(", ":P", "<3"]
            .iter()
            .any(|e| text.contains(e))
}

fn lower_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The style markers of one message, added to `s`.
fn count_style(text: &str, s: &mut SpeakerStats) {
    let lower = text.to_lowercase();
    let words = lower_words(text);
    s.messages += 1;
    s.words += words.len() as u64;
    s.questions += u32::from(text.contains('?'));
    s.exclamations += u32::from(text.contains('!'));
    s.emoji += u32::from(has_emoji(text));
    let contraction = words.iter().any(|w| {
        ["n't", "'re", "'ll", "'ve", "'m", "'d"]
            .iter()
            .any(|c| w.ends_with(c))
    });
    s.informal += u32::from(contraction || words.iter().any(|w| INFORMAL.contains(&w.as_str())));
    s.formal += u32::from(
        words.iter().any(|w| FORMAL.contains(&w.as_str()))
            || ["would you", "could you", "thank you", "i would like"]
                .iter()
                .any(|p| lower.contains(p)),
    );
    let command = words
        .first()
        .is_some_and(|w| COMMANDS.contains(&w.as_str()))
        || words
            .windows(2)
            .any(|p| p[0] == "please" && COMMANDS.contains(&p[1].as_str()));
    s.directive += u32::from(command || DIRECTIVE.iter().any(|p| lower.contains(p)));
    s.collaborative += u32::from(COLLABORATIVE.iter().any(|p| lower.contains(p)));
}

/// Words as written (lowercased), so a profile's topics read as words.
fn content_terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 4)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()) && !w.chars().all(|c| c.is_ascii_digit()))
}

fn clip_phrase(s: &str) -> String {
    let lower = s.to_lowercase();
    let end = [
        " so ",
        " and ",
        " because ",
        " but ",
        " since ",
        " which ",
        " for ",
    ]
    .iter()
    .filter_map(|c| lower.find(c))
    .min()
    .unwrap_or(s.len());
    s[..end]
        .split_whitespace()
        .take(6)
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_string()
}

/// Profile contributions of one session, from block `from` on (a multiple of
/// [`PROFILE_BLOCK`]): per block of messages, a `profile` unit per speaker who wrote in
/// it or was described in it.
pub fn profile_units(
    space: &SpaceId,
    s: &SessionInput,
    recorded_at: Timestamp,
    from: usize,
) -> Vec<Unit> {
    (from..s.messages.len())
        .step_by(PROFILE_BLOCK)
        .flat_map(|a| block_units(space, s, recorded_at, a))
        .collect()
}

/// The contributions of the block of messages starting at `start`. The first block's
/// units are `profile:<session>:<speaker>`, a later one's `profile:<session>@<start>:<speaker>`.
fn block_units(
    space: &SpaceId,
    s: &SessionInput,
    recorded_at: Timestamp,
    start: usize,
) -> Vec<Unit> {
    let end = (start + PROFILE_BLOCK).min(s.messages.len());
    let mut stats: BTreeMap<String, SpeakerStats> = BTreeMap::new();
    // A reply time counts from the message before, in this block or not, and only
    // between messages that carry their own times: messages dated by their session
    // alone all share one time, and an assistant's pace says nothing of a person.
    let timed = |i: usize| match s.has_roles() {
        true => None,
        false => s.messages[i].occurred_at,
    };
    let mut prev: Option<(&str, Option<Timestamp>)> = start
        .checked_sub(1)
        .map(|i| (s.messages[i].speaker_name(), timed(i)));
    for (i, m) in s.messages.iter().enumerate().take(end).skip(start) {
        let name = m.speaker_name();
        let at = s.message_time(m);
        let mut st = stats_of(&mut stats, name);
        count_style(&m.text, &mut st);
        if let Some((p, Some(pt))) = prev {
            if let (true, Some(t)) = (p != name, timed(i)) {
                let secs = (t - pt).num_seconds() as f64;
                if (0.0..MAX_REPLY_SECONDS).contains(&secs) {
                    st.reply_seconds += secs;
                    st.replies += 1;
                }
            }
        }
        st.first = match (st.first, at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        st.last = st.last.max(at);
        if let Some(g) = &s.group {
            if !st.groups.contains(g) {
                st.groups.push(g.clone());
            }
        }
        for t in content_terms(&m.text) {
            *st.terms.entry(t).or_default() += 1;
        }
        roles_and_skills(&mut stats, st, s, m);
        prev = Some((name, timed(i)));
    }
    stats
        .into_values()
        .map(|st| profile_unit(space, s, recorded_at, start, st))
        .collect()
}

/// A copy of `name`'s stats so far in the block (filed empty if there are none yet).
fn stats_of(stats: &mut BTreeMap<String, SpeakerStats>, name: &str) -> SpeakerStats {
    stats
        .entry(name.to_string())
        .or_insert_with(|| SpeakerStats {
            speaker: name.to_string(),
            ..Default::default()
        })
        .clone()
}

/// The roles and skills message `m` states, each with its evidence: its speaker's own
/// (into `st`, the speaker's stats, which are then filed) and other people's ("Priya
/// is our QA lead").
fn roles_and_skills(
    stats: &mut BTreeMap<String, SpeakerStats>,
    mut st: SpeakerStats,
    s: &SessionInput,
    m: &Message,
) {
    let name = m.speaker_name();
    let evidence = |what: &str| Evidence {
        what: clip_phrase(what),
        session_id: s.id.clone(),
        message_id: m.id.clone(),
    };
    for c in SELF_ROLE.captures_iter(&m.text) {
        st.roles.push(evidence(&c["role"]));
    }
    for c in SELF_SKILL.captures_iter(&m.text) {
        let skill = ["skill", "skill2", "skill3", "skill4"]
            .iter()
            .find_map(|n| c.name(n));
        if let Some(skill) = skill {
            st.skills.push(evidence(skill.as_str()));
        }
    }
    stats.insert(name.to_string(), st);
    for c in OTHER_ROLE.captures_iter(&m.text) {
        let who = &c["name"];
        if who != name {
            let mut other = stats_of(stats, who);
            other.roles.push(evidence(&c["role"]));
            stats.insert(who.to_string(), other);
        }
    }
    for c in OTHER_SKILL.captures_iter(&m.text) {
        let who = c.name("name").or(c.name("name2")).map(|w| w.as_str());
        let skill = c.name("skill").or(c.name("skill2"));
        if let (Some(who), Some(skill)) = (who, skill) {
            if who != name {
                let mut other = stats_of(stats, who);
                other.skills.push(evidence(skill.as_str()));
                stats.insert(who.to_string(), other);
            }
        }
    }
}

/// A speaker's contribution of the block starting at `start`, as a `profile` unit.
fn profile_unit(
    space: &SpaceId,
    s: &SessionInput,
    recorded_at: Timestamp,
    start: usize,
    mut st: SpeakerStats,
) -> Unit {
    keep_top_terms(&mut st.terms, TERMS_PER_SESSION);
    Unit {
        id: match start {
            0 => format!("profile:{}:{}", s.id, st.speaker),
            _ => format!("profile:{}@{start}:{}", s.id, st.speaker),
        },
        space: space.clone(),
        kind: UnitKind::Profile,
        text: String::new(),
        key: String::new(),
        embed_text: None,
        provenance: Provenance {
            session_id: Some(s.id.clone()),
            message_ids: Vec::new(),
            first_position: start as u32,
            speakers: vec![st.speaker.clone()],
            group: s.group.clone(),
            ..Default::default()
        },
        part_of: None,
        occurred_at: st.first.or(s.occurred_at),
        recorded_at,
        detail: Some(UnitDetail::Speaker(st)),
    }
}

fn keep_top_terms(terms: &mut BTreeMap<String, u32>, n: usize) {
    if terms.len() <= n {
        return;
    }
    let mut v: Vec<(String, u32)> = std::mem::take(terms).into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(n);
    terms.extend(v);
}

/// Facts a profile's summary lists; the profile itself lists them all.
const SUMMARY_FACTS: usize = 12;

/// Adds what the speaker said of themself to their profile: the facts with their
/// evidence, a stated occupation among the roles, and a sentence of the summary.
pub fn add_facts(p: &mut SpeakerProfile, facts: Vec<ProfileFact>) {
    for f in facts
        .iter()
        .filter(|f| f.category == FactCategory::Role && !f.negated)
    {
        if !p
            .roles
            .iter()
            .any(|r| r.what.eq_ignore_ascii_case(&f.value))
        {
            p.roles.push(Evidence {
                what: f.value.clone(),
                session_id: f.session_id.clone(),
                message_id: f.message_id.clone(),
            });
        }
    }
    if !facts.is_empty() {
        let said: Vec<String> = facts.iter().take(SUMMARY_FACTS).map(shown).collect();
        let more = facts.len().saturating_sub(SUMMARY_FACTS);
        p.summary += &format!(" Has said: {}", said.join("; "));
        if more > 0 {
            p.summary += &format!(" (and {more} more)");
        }
        p.summary += ".";
    }
    p.facts = facts;
}

/// A fact as a profile's summary says it: "home: Lisbon", "likes spicy Thai food",
/// "dislikes olives", "habit: hitting the gym", "car: not a Civic". A habit's or plan's
/// attribute is the words its chain compares, so the value says it.
fn shown(f: &ProfileFact) -> String {
    let taste = f.category == FactCategory::Preference && f.attribute.starts_with("taste");
    let attribute = match f.category {
        FactCategory::Habit | FactCategory::Plan => f.category.as_str(),
        _ => f.attribute.as_str(),
    };
    match (taste, f.negated) {
        (true, false) => format!("likes {}", f.value),
        (true, true) => format!("dislikes {}", f.value),
        (false, false) => format!("{attribute}: {}", f.value),
        (false, true) => format!("{attribute}: not {}", f.value),
    }
}

/// Whether a question asks about a person rather than about what they said.
pub fn asks_about_person(query: &str) -> bool {
    // Attributes of a person, not events: "how does Chandler congratulate Joey" asks what
    // happened, "what is Tom's communication style" asks who Tom is.
    const CUES: &[&str] = &[
        "style",
        "communicat",
        "tone of",
        "personality",
        "skill",
        "expert",
        "experience",
        "good at",
        "strength",
        "role",
        "job title",
        "job",
        "position in",
        "responsib",
        "work as",
        "background",
        "specialt",
        "kind of person",
        "profile",
        "known for",
        "best person",
        "best placed",
        "how .* writes?\\b",
        "what does \\w+ do\\b",
    ];
    static CUE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(&format!("(?i)(?:{})", CUES.join("|"))).expect("valid regex"));
    CUE.is_match(query)
}

/// Speakers named in a query (whole words, case-insensitive; a first name counts when
/// no other speaker shares it).
pub fn named_speakers(query: &str, speakers: &[String]) -> Vec<String> {
    let words: Vec<String> = lower_words(query)
        .into_iter()
        .map(|w| w.trim_end_matches("'s").to_string())
        .collect();
    let q = format!(" {} ", words.join(" "));
    let first = |s: &str| {
        crate::work::step(crate::work::steps::FIRST_NAMES_TAKEN);
        s.split_whitespace().next().unwrap_or(s).to_lowercase()
    };
    // How many speakers share each first name, counted once (not per speaker).
    let mut firsts: HashMap<String, usize> = HashMap::new();
    for s in speakers {
        *firsts.entry(first(s)).or_default() += 1;
    }
    speakers
        .iter()
        .filter(|s| {
            let full = s.to_lowercase();
            let f = first(s);
            let unique_first = firsts.get(&f) == Some(&1);
            q.contains(&format!(" {full} ")) || (unique_first && f.len() >= 3 && words.contains(&f))
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_core::Message;

    fn build_profile(speaker: &str, units: &[Unit]) -> Option<SpeakerProfile> {
        Profiles::new(units).profiles(speaker).pop().map(|(p, _)| p)
    }

    fn session(lines: &[(&str, &str, &str)]) -> SessionInput {
        SessionInput {
            id: "Ops/2025-03-02".into(),
            occurred_at: None,
            group: Some("Ops".into()),
            messages: lines
                .iter()
                .enumerate()
                .map(|(i, (who, at, text))| Message {
                    id: i.to_string(),
                    role: None,
                    speaker: Some(who.to_string()),
                    text: text.to_string(),
                    occurred_at: Some(cairn_core::time::parse_timestamp(at).unwrap()),
                    metadata: serde_json::Value::Null,
                })
                .collect(),
            metadata: serde_json::Value::Null,
        }
    }

    #[test]
    fn roles_skills_and_style_come_with_evidence() {
        let s = session(&[
            (
                "Maya",
                "2025-03-02 09:00",
                "Send me the numbers by EOD. Make sure they are final.",
            ),
            (
                "Tom",
                "2025-03-02 09:01",
                "lol ok, gonna do it now 😅 Maya is our finance director btw",
            ),
            ("Maya", "2025-03-02 09:05", "Check the vendor invoices too."),
            (
                "Tom",
                "2025-03-02 09:06",
                "I've got 5 years of experience with SQL so that's easy!",
            ),
        ]);
        let space = SpaceId::new("t").unwrap();
        let units = profile_units(&space, &s, chrono::Utc::now(), 0);
        assert_eq!(units.len(), 2);
        let maya = build_profile("Maya", &units).unwrap();
        assert_eq!(maya.roles[0].what, "finance director");
        assert_eq!(maya.roles[0].message_id, "1");
        assert!(maya.style.traits.iter().any(|t| t.starts_with("directive")));
        let tom = build_profile("Tom", &units).unwrap();
        assert!(
            tom.style.traits.contains(&"casual".to_string()),
            "{:?}",
            tom.style
        );
        assert_eq!(tom.skills[0].what, "SQL");
        assert_eq!(tom.style.avg_reply_seconds, Some(60.0));
        assert!(tom.summary.contains("Skills: SQL"));
        assert!(build_profile("Nobody", &units).is_none());
    }

    /// Two friends chat in sessions dated by the day alone: their messages share one
    /// time, so no reply time is claimed; a word said in every session, or the other's
    /// name, is no topic; what one of them talks about in a few sessions is.
    #[test]
    fn session_dated_chats_claim_no_reply_time_and_topics_are_what_sets_a_speaker_apart() {
        let space = SpaceId::new("t").unwrap();
        let day = |d: usize, lines: &[(&str, &str)]| SessionInput {
            id: format!("s{d}"),
            occurred_at: cairn_core::time::parse_timestamp(&format!("2023-05-{d:02}")).ok(),
            group: None,
            messages: lines
                .iter()
                .enumerate()
                .map(|(i, (who, text))| Message {
                    id: format!("{d}:{i}"),
                    role: None,
                    speaker: Some(who.to_string()),
                    text: text.to_string(),
                    occurred_at: None,
                    metadata: serde_json::Value::Null,
                })
                .collect(),
            metadata: serde_json::Value::Null,
        };
        let mut units = Vec::new();
        for d in 1..=6 {
            let pottery = d <= 2;
            let lines = [
                (
                    "Caroline",
                    "Hey Melanie, thanks! Really great to hear from you.",
                ),
                ("Melanie", "Thanks Caroline, really great to chat again."),
                (
                    "Caroline",
                    if pottery {
                        "My pottery class was fun, pottery is my thing now, the pottery wheel rocks."
                    } else {
                        "Thanks, really great, talk soon Melanie!"
                    },
                ),
                ("Melanie", "Thanks, really great!"),
            ];
            units.extend(profile_units(
                &space,
                &day(d, &lines),
                chrono::Utc::now(),
                0,
            ));
        }
        let caroline = build_profile("Caroline", &units).unwrap();
        assert_eq!(
            caroline.style.avg_reply_seconds, None,
            "{:?}",
            caroline.style
        );
        assert!(
            !caroline.summary.contains("replies after"),
            "{}",
            caroline.summary
        );
        assert_eq!(
            caroline.topics.first().map(String::as_str),
            Some("pottery"),
            "{:?}",
            caroline.topics
        );
        for not_a_topic in ["melanie", "thanks", "really", "great"] {
            assert!(
                !caroline.topics.iter().any(|t| t == not_a_topic),
                "{:?}",
                caroline.topics
            );
        }
    }

    /// The work of the "Who ..." path of recall (`Retrieval::profiles_for`: the names a
    /// question gives, then the best matching person) over a group chat of `n` speakers
    /// who each state a role and a skill: (contributions read, first names taken).
    fn who_work(n: usize) -> (u64, u64) {
        use crate::work::counting::steps_of;
        use crate::work::steps::{CONTRIBUTIONS_READ, FIRST_NAMES_TAKEN};
        let skills = ["database migrations", "load testing", "pricing", "billing"];
        let lines: Vec<(String, String, String)> = (0..n)
            .map(|i| {
                let at = format!("2025-03-02 {:02}:{:02}", 6 + i / 60 % 17, i % 60);
                let text = format!(
                    "I'm the analyst here and I specialize in {}.",
                    skills[i % skills.len()]
                );
                (format!("Person{i} Lee"), at, text)
            })
            .collect();
        let borrowed: Vec<(&str, &str, &str)> = lines
            .iter()
            .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
            .collect();
        let space = SpaceId::new("t").unwrap();
        let units = profile_units(&space, &session(&borrowed), chrono::Utc::now(), 0);
        let speakers: Vec<String> = lines.iter().map(|l| l.0.clone()).collect();
        let query = "Who is the best person for database migrations?";
        let (named, first_names) = steps_of(FIRST_NAMES_TAKEN, || named_speakers(query, &speakers));
        assert!(named.is_empty(), "{named:?}");
        let (best, read) = steps_of(CONTRIBUTIONS_READ, || {
            Profiles::new(&units)
                .best_matching_person(query, None)
                .unwrap()
        });
        let best = best.expect("someone specializes in database migrations");
        assert!(
            best.skills[0].what.contains("database migrations"),
            "{best:?}"
        );
        (read, first_names)
    }

    /// Issue 38: a "Who ..." recall once built every speaker's profile from every
    /// contribution (and compared every speaker's first name with every other's), so its
    /// CPU grew with the square of the speakers. This counts the work instead of timing
    /// it: doubling the speakers at most doubles it (allowing 10% for the odd extra block).
    #[test]
    fn who_recall_work_grows_linearly_with_speakers() {
        let (read_1, first_1) = who_work(500);
        let (read_2, first_2) = who_work(1000);
        assert!(read_1 > 0 && first_1 > 0);
        let (read_growth, first_growth) = (
            read_2 as f64 / read_1 as f64,
            first_2 as f64 / first_1 as f64,
        );
        assert!(
            read_growth <= 2.2,
            "contributions read: {read_1} -> {read_2}"
        );
        assert!(
            first_growth <= 2.2,
            "first names taken: {first_1} -> {first_2}"
        );
        // And linear in absolute terms: a few steps per speaker, not one per pair.
        assert!(
            read_2 <= 4 * 1000,
            "{read_2} contributions read for 1000 speakers"
        );
        assert!(
            first_2 <= 4 * 1000,
            "{first_2} first names for 1000 speakers"
        );
    }

    #[test]
    fn finds_people_named_in_questions() {
        let speakers = vec![
            "Maya Chen".to_string(),
            "Tom".to_string(),
            "Tomas".to_string(),
        ];
        assert_eq!(
            named_speakers("How would you describe Maya's style?", &speakers),
            ["Maya Chen"]
        );
        assert_eq!(named_speakers("what does tom do?", &speakers), ["Tom"]);
        assert!(asks_about_person("What is Tom's role on the team?"));
        assert!(asks_about_person(
            "How does Omar usually write in the chats?"
        ));
        assert!(asks_about_person("What does Kenji do?"));
        assert!(!asks_about_person("How does Chandler congratulate Joey?"));
        assert!(!asks_about_person("When is the launch?"));
    }
}
