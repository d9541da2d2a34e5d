//! Facts with a subject, read from messages by patterns (no model): values stated or
//! revised ("the budget for Atlas is $120k", "launch moved to May 3", "let's do $95k
//! instead", "Dana will own the vendor review"), and the version chains they form.
//!
//! Beside them, personal facts (`personal/`): what people say of themselves and the
//! people around them ("I moved to Lisbon last month", "my sister lives in Rome").
//!
//! Extraction is per message and pure, so fact units are derived like any other unit.
//! Chains are computed when asked (history, recall) from every fact of the space: a
//! later statement about the same subject supersedes an earlier one, and both stay. A
//! personal fact's chain holds only facts about the same person of the same category.
use crate::personal::{self, Personal, Speaking};
use crate::text::{sentences, stem, STOP_WORDS};
use cairn_core::{
    FactCategory, FactDetail, FactHistory, FactVersion, Message, Provenance, Role, SessionInput,
    SpaceId, Timestamp, Unit, UnitDetail, UnitKind,
};
use regex::Regex;
use std::collections::HashMap;
use std::sync::LazyLock;

mod index;
pub use index::FactIndex;
#[cfg(test)]
use index::SubjectIndex;

/// Words that qualify a subject without naming it: "the final budget" is the budget.
const GENERIC: &[&str] = &[
    "final",
    "new",
    "current",
    "revised",
    "updated",
    "latest",
    "official",
    "actual",
    "now",
    "confirmed",
    "agreed",
    "proposed",
    "planned",
    "target",
    "initial",
    "original",
    "old",
];

/// Longest subject, in words, that a pattern may capture.
const MAX_SUBJECT_WORDS: usize = 6;
/// Longest value, in words.
const MAX_VALUE_WORDS: usize = 8;

const REVISION_VERBS: &str = "changed|moved|updated|revised|pushed(?: back| out)?|pulled(?: in| forward)?|shifted|increased|decreased|reduced|raised|lowered|cut|bumped(?: up| down)?|extended|reset|finali[sz]ed|rescheduled|adjusted|switched|dropped|upped|set";
const SUBJECT: &str = r"(?P<subj>[\w$'&/-]+(?:\s+[\w$'&/-]+){0,9}?)";
const VALUE: &str = r"(?P<val>[^.;!?\n]{1,100})";

static STATED_REVISION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i){SUBJECT}\s+(?:has been|have been|was|were|is|are|got|will be|'s been|just)?\s*(?:{REVISION_VERBS})\s+(?:back\s+)?(?:to|at)\s+{VALUE}"
    ))
    .expect("valid regex")
});
static ASKED_REVISION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(?:change|move|push|set|update|bump|increase|reduce|cut|raise|lower|extend|reschedule|shift|adjust|switch)\s+(?:the\s+|our\s+)?{SUBJECT}\s+(?:to|at)\s+{VALUE}"
    ))
    .expect("valid regex")
});
static NOW_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i){SUBJECT}\s+(?:is|are|will be)\s+(?:now|finally|officially|confirmed(?: as| at| for)?|locked(?: in)?(?: at| as| for)?)\s+{VALUE}"
    ))
    .expect("valid regex")
});
static STATED_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i){SUBJECT}\s*(?:\bis\b|\bare\b|\bwill be\b|\bshould be\b|\bis going to be\b|\bstays at\b|\bremains\b|=|:)\s*{VALUE}"
    ))
    .expect("valid regex")
});
static OWNER_WILL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?P<who>[A-Z][a-z]+)\s+(?i:will\s+|is going to\s+|'ll\s+)?(?i:own|owns|lead|leads|take over|takes over|handle|handles|drive|drives|is owning|is leading|is handling|is driving|is responsible for|will be responsible for|is in charge of|is taking over)\s+(?i:the\s+)?(?P<task>[^.;!?\n,]{2,60})")
        .expect("valid regex")
});
static OWNER_ASSIGNED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i:the\s+)?(?P<task>[\w'&/-]+(?:\s+[\w'&/-]+){0,5}?)\s+(?i:is|was|has been|will be|gets|got)\s+(?i:\w+ly\s+|therefore\s+|now\s+|then\s+)?(?i:re)?(?i:assigned)\s+to\s+(?P<who>[A-Z][a-z]+)")
        .expect("valid regex")
});
static OWNER_ASSIGN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i:assign|assigning|reassign|reassigning|hand|handing|give|giving)\s+(?i:the\s+)?(?P<task>[\w'&/-]+(?:\s+[\w'&/-]+){0,5}?)\s+(?i:over\s+)?(?i:to)\s+(?P<who>[A-Z][a-z]+)")
        .expect("valid regex")
});
static OWNER_SELF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bI(?:'ll| will|'m going to| am going to| can)\s+(?:own|take|handle|lead|drive|take over)\s+(?:the\s+)?(?P<task>[^.;!?\n,]{2,60})")
        .expect("valid regex")
});
static INSTEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:go with|do|use|make it|switch to|settle on|pick|choose)\s+(?P<val>[^.;!?\n]{1,40}?)\s+instead\b")
        .expect("valid regex")
});
static HAS_NUMBER_OR_DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)[\d$€£¥%]|\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|next week|end of (?:the )?(?:week|month|quarter|year)|eod|eow|q[1-4])\b")
        .expect("valid regex")
});

/// Leading words that start a sentence but are not part of a subject.
const LEAD_FILLERS: &[&str] = &[
    "so",
    "ok",
    "okay",
    "well",
    "update",
    "fyi",
    "and",
    "but",
    "also",
    "just",
    "hey",
    "hi",
    "team",
    "everyone",
    "all",
    "guys",
    "folks",
    "i",
    "think",
    "heads",
    "up",
    "quick",
    "note",
    "btw",
    "yes",
    "yeah",
    "sure",
    "great",
    "good",
    "news",
    "then",
    "that",
    "means",
    "because",
    "since",
    "if",
    "as",
    "we",
    "agreed",
    "decided",
    "confirm",
    "confirmed",
    "looks",
    "like",
    "please",
    "let's",
    "lets",
    "let",
    "us",
    "can",
    "could",
    "should",
    "you",
    "reminder",
    "remember",
    "officially",
];
/// Subjects that only point elsewhere.
const POINTERS: &[&str] = &[
    "it",
    "this",
    "that",
    "which",
    "what",
    "there",
    "here",
    "he",
    "she",
    "they",
    "i",
    "we",
    "you",
    "who",
    "mine",
    "yours",
    "everything",
    "nothing",
    "something",
    "one",
    "answer",
    "question",
    "problem",
    "issue",
    "thing",
    "idea",
    "plan",
    "point",
    "reason",
    "goal",
];

/// A fact found in a message, before it becomes a unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Extracted {
    pub subject: String,
    pub value: String,
    pub revision: bool,
    /// The sentence it was read from.
    pub sentence: String,
    /// Set for a personal fact: whom it is about, its category and attribute.
    pub personal: Option<Personal>,
}

/// Normalized subject words: stop and generic words dropped, stemmed, sorted, unique.
pub fn subject_key(subject: &str) -> Vec<String> {
    let mut key: Vec<String> = key_words(subject).collect();
    key.sort();
    key.dedup();
    key
}

fn key_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(&w.as_str()))
        .filter(|w| !GENERIC.contains(&w.as_str()))
        .map(|w| stem(&w))
}

/// The key words of a subject that name the thing itself rather than its owner:
/// "my brother's locker combination" -> combination, locker; "owner of the deck" ->
/// owner; "the budget for Atlas" -> budget. A subject that is all owner keeps every
/// word.
pub fn subject_own_words(subject: &str) -> Vec<String> {
    let mut own: Vec<String> = Vec::new();
    for token in subject.split_whitespace() {
        let lower = token.to_lowercase();
        let bare = lower.trim_matches(|c: char| !c.is_alphanumeric());
        if matches!(bare, "of" | "for") && !own.is_empty() {
            break;
        }
        if lower.ends_with("'s") || lower.ends_with("\u{2019}s") || lower.ends_with("s'") {
            own.clear();
            continue;
        }
        own.extend(key_words(bare));
    }
    if own.is_empty() {
        return subject_key(subject);
    }
    own.sort();
    own.dedup();
    own
}

/// Keeps the words of a captured subject that name it: after the last determiner, or
/// without leading fillers, at most [`MAX_SUBJECT_WORDS`].
fn clean_subject(raw: &str) -> Option<String> {
    let raw = raw.rsplit([',', ':', '(']).next().unwrap_or(raw);
    let words: Vec<&str> = raw.split_whitespace().collect();
    let start = words
        .iter()
        .rposition(|w| {
            matches!(
                w.to_lowercase().as_str(),
                "the" | "our" | "my" | "your" | "their" | "its" | "his" | "her" | "this" | "that"
            )
        })
        .map(|i| i + 1)
        .unwrap_or_else(|| {
            words
                .iter()
                .position(|w| !LEAD_FILLERS.contains(&w.to_lowercase().as_str()))
                .unwrap_or(words.len())
        });
    let words = &words[start..];
    let words = &words[words.len().saturating_sub(MAX_SUBJECT_WORDS)..];
    let subject = words.join(" ");
    let key = subject_key(&subject);
    let pointer_only = key
        .iter()
        .all(|w| POINTERS.contains(&w.as_str()) || w.chars().all(|c| c.is_ascii_digit()));
    if key.is_empty() || pointer_only {
        return None;
    }
    Some(subject)
}

/// Cuts a captured value at the first clause that is not part of it.
fn clean_value(raw: &str) -> Option<String> {
    const CUTS: &[&str] = &[
        " because ",
        " since ",
        " so that ",
        " so ",
        " but ",
        " and then ",
        " if ",
        ", ",
        " instead",
        " for now",
        " as discussed",
        " as agreed",
        " which ",
        " after ",
        " unless ",
    ];
    let lower = raw.to_lowercase();
    let end = CUTS
        .iter()
        .filter_map(|c| lower.find(c))
        .min()
        .unwrap_or(raw.len());
    // Words that close a sentence without saying anything about the value.
    const TRAILING: &[&str] = &[
        "then", "now", "too", "again", "anyway", "instead", "please", "ok", "okay", "today",
        "tonight", "asap", "already", "here", "there",
    ];
    let mut value: Vec<&str> = raw[..end]
        .split_whitespace()
        .take(MAX_VALUE_WORDS)
        .collect();
    while value.len() > 1
        && value.last().is_some_and(|w| {
            let w = w
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase();
            TRAILING.contains(&w.as_str())
        })
    {
        value.pop();
    }
    let value = value
        .join(" ")
        .trim_matches(|c: char| !c.is_alphanumeric() && !"$€£¥%)".contains(c))
        .to_string();
    (!value.is_empty()).then_some(value)
}

fn capture(re: &Regex, sentence: &str, revision: bool, out: &mut Vec<Extracted>) {
    for c in re.captures_iter(sentence) {
        let (Some(s), Some(v)) = (c.name("subj"), c.name("val")) else {
            continue;
        };
        if let (Some(subject), Some(value)) = (clean_subject(s.as_str()), clean_value(v.as_str())) {
            out.push(Extracted {
                subject,
                value,
                revision,
                sentence: sentence.to_string(),
                personal: None,
            });
        }
    }
}

fn capture_owner(re: &Regex, sentence: &str, who: Option<&str>, out: &mut Vec<Extracted>) {
    for c in re.captures_iter(sentence) {
        let Some(task) = c.name("task").and_then(|t| clean_value(t.as_str())) else {
            continue;
        };
        let Some(who) = c.name("who").map(|w| w.as_str()).or(who) else {
            continue;
        };
        if subject_key(&task).is_empty() {
            continue;
        }
        out.push(Extracted {
            subject: format!("owner of {task}"),
            value: who.to_string(),
            revision: sentence.to_lowercase().contains("reassign")
                || sentence.to_lowercase().contains("take over")
                || sentence.to_lowercase().contains("taking over"),
            sentence: sentence.to_string(),
            personal: None,
        });
    }
}

/// Facts stated in one message. `earlier` are the facts of the conversation before it,
/// newest last: a bare "let's do $95k instead" revises the latest of them whose value
/// has the same shape.
pub fn extract(message: &Message, earlier: &[Extracted]) -> Vec<Extracted> {
    let mut out = Vec::new();
    for (a, b) in sentences(&message.text) {
        let sentence = message.text[a..b].trim();
        let before = out.len();
        capture(&STATED_REVISION, sentence, true, &mut out);
        if out.len() == before {
            capture(&ASKED_REVISION, sentence, true, &mut out);
        }
        if out.len() == before {
            capture(&NOW_VALUE, sentence, true, &mut out);
        }
        if out.len() == before {
            let mut stated = Vec::new();
            capture(&STATED_VALUE, sentence, false, &mut stated);
            // "Before I forget: my gate code is 4417" states its inner clause; the lead-in
            // before the colon is not a subject.
            let mut stated: Vec<Extracted> = stated
                .into_iter()
                .flat_map(|f| {
                    let mut inner = Vec::new();
                    capture(&STATED_VALUE, &f.value, false, &mut inner);
                    if inner.is_empty() {
                        return vec![f];
                    }
                    for i in &mut inner {
                        i.sentence = f.sentence.clone();
                    }
                    inner
                })
                .collect();
            // A plain "X is Y" is a fact only when Y is a figure or a date: otherwise
            // it is as likely an opinion ("the demo is great").
            stated.retain(|f| HAS_NUMBER_OR_DATE.is_match(&f.value));
            for f in &mut stated {
                f.revision = sentence.to_lowercase().contains("final");
            }
            out.extend(stated);
        }
        capture_owner(&OWNER_WILL, sentence, None, &mut out);
        capture_owner(&OWNER_ASSIGNED, sentence, None, &mut out);
        capture_owner(&OWNER_ASSIGN, sentence, None, &mut out);
        capture_owner(
            &OWNER_SELF,
            sentence,
            Some(message.speaker_name()),
            &mut out,
        );
        if out.len() == before {
            if let Some(v) = INSTEAD
                .captures(sentence)
                .and_then(|c| c.name("val"))
                .and_then(|v| clean_value(v.as_str()))
            {
                let shape = value_shape(&v);
                let all = earlier.iter().chain(out.iter());
                if let Some(prev) = all.rev().find(|f| value_shape(&f.value) == shape) {
                    let subject = prev.subject.clone();
                    out.push(Extracted {
                        subject,
                        value: v,
                        revision: true,
                        sentence: sentence.to_string(),
                        personal: None,
                    });
                }
            }
        }
    }
    out
}

/// Coarse kind of a value, so a bare revision attaches to a fact of the same kind.
fn value_shape(v: &str) -> u8 {
    let thousands = v.to_lowercase().ends_with('k') && v.contains(char::is_numeric);
    if v.contains(['$', '€', '£', '¥']) || thousands {
        1
    } else if HAS_NUMBER_OR_DATE.is_match(v) && !v.chars().any(|c| c.is_ascii_digit()) {
        2
    } else if v.chars().any(|c| c.is_ascii_digit()) {
        3
    } else {
        4
    }
}

/// The id of the first fact a message states, if it states any.
pub fn first_fact_id(session: &str, message: &str) -> String {
    fact_id(session, message, 0)
}

fn fact_id(session: &str, message: &str, n: usize) -> String {
    format!("fact:{session}:{message}:{n}")
}

/// Fact units of a session: one per fact stated, citing its message.
/// Only messages from `from` on are read; `earlier` holds the facts stated before it, in
/// order (see [`earlier_facts`]).
pub fn fact_units(
    space: &SpaceId,
    s: &SessionInput,
    recorded_at: Timestamp,
    from: usize,
    mut earlier: Vec<Extracted>,
) -> Vec<Unit> {
    let with_assistant = s.has_roles();
    let mut units = Vec::new();
    for (pos, m) in s.messages.iter().enumerate().skip(from) {
        // An assistant's statements are not facts of the user's world.
        if m.role == Some(Role::Assistant) {
            continue;
        }
        let found = extract(m, &earlier);
        let speaking = Speaking {
            speaker: m.speaker_name(),
            at: s.message_time(m),
            with_assistant,
        };
        let personal = personal::read(&m.text, &speaking)
            .into_iter()
            .map(|(sentence, p)| Extracted {
                subject: p.subject(),
                value: p.value.clone(),
                revision: p.revision,
                sentence,
                personal: Some(p),
            });
        for (n, f) in found.iter().cloned().chain(personal).enumerate() {
            units.push(fact_unit(space, s, pos, m, n, f, recorded_at));
        }
        earlier.extend(found);
    }
    units
}

/// The unit of the `n`th fact message `m` (at `pos`) states. A personal fact's sentence
/// gets a vector of its own, so a request that depends on it ("can you recommend a
/// restaurant?") finds it by meaning; its chain compares the attribute's words.
fn fact_unit(
    space: &SpaceId,
    s: &SessionInput,
    pos: usize,
    m: &Message,
    n: usize,
    f: Extracted,
    recorded_at: Timestamp,
) -> Unit {
    let text = format!("{}: {}", m.speaker_name(), f.sentence);
    let detail = match &f.personal {
        Some(p) => FactDetail {
            subject: f.subject.clone(),
            subject_key: subject_key(&p.key),
            value: f.value.clone(),
            revision: f.revision,
            person: Some(p.person.clone()),
            category: Some(p.category),
            negated: p.negated,
            since: p.since,
        },
        None => FactDetail {
            subject_key: subject_key(&f.subject),
            subject: f.subject.clone(),
            value: f.value.clone(),
            revision: f.revision,
            ..Default::default()
        },
    };
    Unit {
        id: fact_id(&s.id, &m.id, n),
        space: space.clone(),
        kind: UnitKind::Fact,
        // An instruction's vector is of what it directs, its lead-ins left out ("from now
        // on, please"): the card compares two instructions by what they are about.
        embed_text: f.personal.as_ref().map(|p| match p.category {
            FactCategory::Instruction => p.value.clone(),
            _ => text.clone(),
        }),
        text,
        // A personal fact's key is how it is asked about, not its sentence again (the
        // text field has it): repeated in a short unit's key, the sentence's words would
        // outweigh the message that says them.
        key: match &f.personal {
            Some(p) => p.asked_with(),
            None => format!("{} {}", f.subject, f.value),
        },
        provenance: Provenance::of_message(s, m, pos),
        part_of: None,
        occurred_at: s.message_time(m),
        recorded_at,
        detail: Some(UnitDetail::Fact(detail)),
    }
}

/// The facts of stored fact units before position `before`, in the order they were
/// stated (what [`fact_units`] needs to go on from there).
pub fn earlier_facts(stored: &[Unit], before: usize) -> Vec<Extracted> {
    let n = |u: &Unit| {
        u.id.rsplit(':')
            .next()
            .and_then(|n| n.parse::<usize>().ok())
    };
    let mut facts: Vec<(u32, Option<usize>, Extracted)> = stored
        .iter()
        .filter(|u| (u.provenance.first_position as usize) < before)
        .filter_map(|u| {
            // Personal facts are not what a bare "instead" revises.
            let d = detail(u).filter(|d| d.person.is_none())?;
            let f = Extracted {
                subject: d.subject.clone(),
                value: d.value.clone(),
                revision: d.revision,
                sentence: stated(u).to_string(),
                personal: None,
            };
            Some((u.provenance.first_position, n(u), f))
        })
        .collect();
    facts.sort_by_key(|(pos, n, _)| (*pos, *n));
    facts.into_iter().map(|(_, _, f)| f).collect()
}

pub(crate) fn detail(u: &Unit) -> Option<&FactDetail> {
    match &u.detail {
        Some(UnitDetail::Fact(f)) => Some(f),
        _ => None,
    }
}

/// The sentence a fact unit states, as its speaker said it (its text less the
/// `speaker: ` it opens with).
pub(crate) fn stated(u: &Unit) -> &str {
    let speaker = u.provenance.speakers.first().map_or("", String::as_str);
    u.text
        .strip_prefix(speaker)
        .and_then(|t| t.strip_prefix(": "))
        .unwrap_or(&u.text)
}

/// Whether `f` is a fact about `person` (lowercased).
pub(crate) fn is_about(f: &Unit, person: &str) -> bool {
    detail(f)
        .and_then(|d| d.person.as_deref())
        .is_some_and(|p| p.to_lowercase() == person)
}

/// A subject as chains compare it: its key and the key words naming the thing itself;
/// for a personal fact also whom it is about and its category (its key is then the
/// attribute's words alone).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Subject {
    key: Vec<String>,
    own: Vec<String>,
    person: Option<(String, FactCategory)>,
}

/// Names that stand for someone a speaker named by their relation ("my husband Tom"):
/// a later fact about "Tom" is about "user's husband". (End-user partition, lowercased
/// name) -> person: one user's "Tom" is nobody else's.
type Aliases = HashMap<(Option<String>, String), String>;

fn aliases<'a>(facts: impl IntoIterator<Item = &'a Unit>) -> Aliases {
    facts
        .into_iter()
        .filter_map(|u| Some((u.provenance.partition.clone(), detail(u)?)))
        .filter(|(_, d)| d.category == Some(FactCategory::Family) && !d.negated)
        .filter_map(|(partition, d)| {
            let speaker = d.person.as_ref()?;
            let relation = d.subject.strip_prefix(&format!("{speaker}'s "))?;
            let name = d.value.trim();
            let one_name = !name.contains(' ') && name.chars().next()?.is_uppercase();
            one_name.then(|| {
                (
                    (partition, name.to_lowercase()),
                    format!("{speaker}'s {relation}").to_lowercase(),
                )
            })
        })
        .collect()
}

impl Subject {
    fn of(d: &FactDetail) -> Self {
        Self::of_in(d, None, &Aliases::new())
    }

    /// The subject with its person named as `aliases` name it in `partition`.
    fn of_in(d: &FactDetail, partition: Option<&str>, aliases: &Aliases) -> Self {
        let person = d.person.as_ref().map(|p| {
            let p = p.to_lowercase();
            let key = (partition.map(str::to_string), p);
            let p = aliases.get(&key).cloned().unwrap_or(key.1);
            (p, d.category.unwrap_or(FactCategory::Plan))
        });
        Self {
            key: d.subject_key.clone(),
            own: match person {
                Some(_) => d.subject_key.clone(),
                None => subject_own_words(&d.subject),
            },
            person,
        }
    }

    fn asked(subject: &str) -> Self {
        Self {
            key: subject_key(subject),
            own: subject_own_words(subject),
            person: None,
        }
    }

    /// The subject as written, person included: what an asked subject is compared with.
    fn written(d: &FactDetail) -> Self {
        Self::asked(&d.subject)
    }
}

/// How two subjects relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SubjectMatch {
    No,
    Same,
    /// Only within one group: a one-word subject ("the budget") is too vague to join
    /// another conversation's chain.
    SameInGroup,
}

/// Two subjects are the same when their keys are equal, or when one key contains the
/// other and the smaller names the larger's thing, not only its owner ("my brother"
/// is not "my brother's locker combination"; "the budget" may be "the Atlas budget").
fn subject_match(a: &Subject, b: &Subject) -> SubjectMatch {
    crate::work::step(crate::work::steps::SUBJECTS_COMPARED);
    if a.person != b.person {
        return SubjectMatch::No;
    }
    if let Some((_, category)) = &a.person {
        // Attributes read by the grammar are named the same way each time, so one
        // attribute has one key: a habit, a liking, a plan is restated with the same
        // words or is another one. A belonging or a pet may be named by less of its
        // name later ("Honda Civic", then "the Civic").
        if a.key == b.key && !a.key.is_empty() {
            return SubjectMatch::Same;
        }
        let (small, big) = if a.key.len() <= b.key.len() {
            (a, b)
        } else {
            (b, a)
        };
        let named = matches!(category, FactCategory::Possession | FactCategory::Pet);
        let contained = !small.key.is_empty() && small.key.iter().all(|w| big.key.contains(w));
        return match named && contained {
            true => SubjectMatch::Same,
            false => SubjectMatch::No,
        };
    }
    if a.key == b.key {
        return SubjectMatch::Same;
    }
    let (small, big) = if a.key.len() <= b.key.len() {
        (a, b)
    } else {
        (b, a)
    };
    let contained = !small.key.is_empty() && small.key.iter().all(|w| big.key.contains(w));
    if !contained || !small.key.iter().any(|w| big.own.contains(w)) {
        SubjectMatch::No
    } else if small.key.len() >= 2 {
        SubjectMatch::Same
    } else {
        SubjectMatch::SameInGroup
    }
}

/// Whether one key equals the other or holds every word of it (non-empty): what
/// [`subject_match`] needs of two subjects' keys before it can call them the same.
fn keys_nest(a: &[String], b: &[String]) -> bool {
    let (small, big) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    a == b || (!small.is_empty() && small.iter().all(|w| big.contains(w)))
}

/// Oldest first (see [`chain_order`]).
fn sort_chain(chain: &mut [&Unit]) {
    chain.sort_by(|a, b| chain_order(a, b));
}

/// Oldest first. Of facts stated at one time (one message), a denied value comes before
/// a stated one: "I started at Globex today, left Acme on Friday" leaves Globex current,
/// not "no longer Acme", whichever the sentence said first. Further ties keep id order.
fn chain_order(a: &Unit, b: &Unit) -> std::cmp::Ordering {
    let affirmed = |u: &Unit| detail(u).is_some_and(|d| !d.negated);
    a.occurred_at
        .cmp(&b.occurred_at)
        .then(affirmed(a).cmp(&affirmed(b)))
        .then(a.id.cmp(&b.id))
}

/// The history of the subject best matching `subject` among `facts`: every fact about
/// a thing whose key equals or contains the asked key's words (or is contained in it);
/// or, when a personal fact matches at least as closely (its subject written with its
/// person, "user's home", has no more words beyond the asked ones), that fact's chain.
pub fn history(subject: &str, facts: &[Unit]) -> Option<FactHistory> {
    let asked = Subject::asked(subject);
    if asked.key.is_empty() {
        return None;
    }
    let extra = |d: &FactDetail| {
        let written = Subject::written(d);
        (subject_match(&asked, &written) == SubjectMatch::Same)
            .then(|| written.key.len().abs_diff(asked.key.len()))
    };
    // A stored key that neither holds nor lies in the other rules a fact out before its
    // subject is built (which allocates): most facts of a large space are about
    // something else.
    let same = |of: &Subject, d: &FactDetail| {
        keys_nest(&of.key, &d.subject_key)
            && subject_match(of, &Subject::of(d)) == SubjectMatch::Same
    };
    let things: Vec<&Unit> = facts
        .iter()
        .filter(|f| detail(f).is_some_and(|d| d.person.is_none() && same(&asked, d)))
        .collect();
    let closest_thing = things
        .iter()
        .filter_map(|f| extra(detail(f)?))
        .min()
        .unwrap_or(usize::MAX);
    let personal = facts
        .iter()
        .filter(|f| detail(f).is_some_and(|d| d.person.is_some()))
        .filter_map(|f| Some((extra(detail(f)?)?, f)))
        .min_by(|a, b| a.0.cmp(&b.0).then(chain_order(b.1, a.1)));
    let mut chain: Vec<&Unit> = match personal {
        Some((closeness, best)) if closeness < closest_thing || things.is_empty() => {
            let of = Subject::of(detail(best)?);
            facts
                .iter()
                .filter(|f| detail(f).is_some_and(|d| same(&of, d)))
                .collect()
        }
        _ => things,
    };
    if chain.is_empty() {
        return None;
    }
    sort_chain(&mut chain);
    let versions = versions(&chain);
    let subject = versions.last()?.subject.clone();
    Some(FactHistory { subject, versions })
}

/// Versions of a chain (oldest first) with their validity intervals.
pub fn versions(chain: &[&Unit]) -> Vec<FactVersion> {
    chain
        .iter()
        .enumerate()
        .filter_map(|(i, u)| {
            let d = detail(u)?;
            let next = chain.get(i + 1);
            Some(FactVersion {
                unit_id: u.id.clone(),
                subject: d.subject.clone(),
                value: d.value.clone(),
                statement: shown_value(d),
                valid_from: u.occurred_at,
                valid_to: next.and_then(|n| n.occurred_at),
                superseded_by: next.map(|n| n.id.clone()),
                session_id: u.provenance.session_id.clone(),
                message_id: u.provenance.message_ids.first().cloned(),
                speaker: u.provenance.speakers.first().cloned(),
                group: u.provenance.group.clone(),
                text: u.text.clone(),
                person: d.person.clone(),
                category: d.category,
                negated: d.negated,
                since: d.since,
            })
        })
        .collect()
}

const SUPERSEDED_NOTE: &str = "[superseded: changed to ";
const CURRENT_NOTE: &str = "[current value; earlier: ";

/// Whether a line of a hit's text is a note [`version_note`] wrote.
pub fn is_version_note(line: &str) -> bool {
    line.starts_with(SUPERSEDED_NOTE) || line.starts_with(CURRENT_NOTE)
}

/// The note of a statement a newer one replaced without being of its chain (a standing
/// instruction the card judged replaced by meaning): the newer sentence and its day.
pub fn replaced_note(newer: &Unit) -> String {
    let day = day(newer.occurred_at);
    format!("{SUPERSEDED_NOTE}\"{}\" on {day}]", stated(newer))
}

/// The day a note or a card line gives a statement: `2024-03-01`, or `undated`.
pub fn day(t: Option<Timestamp>) -> String {
    t.map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| "undated".into())
}

/// Whether a hit's text carries a note that a newer value replaced what it states.
pub fn is_marked_superseded(text: &str) -> bool {
    text.lines().any(|l| l.starts_with(SUPERSEDED_NOTE))
}

/// A note for a fact in a context: superseded by what, or current since when and what
/// came before.
pub fn version_note(fact: &Unit, chain: &[&Unit]) -> Option<String> {
    if chain.len() < 2 {
        return None;
    }
    let pos = chain.iter().position(|u| u.id == fact.id)?;
    let day = |u: &Unit| day(u.occurred_at);
    let value = |u: &Unit| detail(u).map(shown_value).unwrap_or_default();
    if let Some(newest) = chain.last().filter(|_| pos + 1 < chain.len()) {
        return Some(format!(
            "{SUPERSEDED_NOTE}{} on {}]",
            value(newest),
            day(newest)
        ));
    }
    // The latest few earlier values; a long chain would otherwise grow the note (and the
    // packed context) with every version ever stated. `history` has them all.
    const SHOWN: usize = 3;
    let older = pos.saturating_sub(SHOWN);
    let earlier: Vec<String> = chain[older..pos]
        .iter()
        .map(|u| format!("{} ({})", value(u), day(u)))
        .collect();
    let more = if older > 0 {
        format!(" (and {older} older)")
    } else {
        String::new()
    };
    Some(format!("{CURRENT_NOTE}{}{more}]", earlier.join(", ")))
}

/// A fact's value as a note shows it: a denied one as such ("no longer Porto",
/// "dislikes olives").
pub fn shown_value(d: &FactDetail) -> String {
    match (d.negated, d.category) {
        (false, _) => d.value.clone(),
        (true, Some(FactCategory::Preference)) => format!("dislikes {}", d.value),
        (true, _) => format!("no longer {}", d.value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Arc;

    fn said(speaker: &str, text: &str) -> Message {
        Message {
            id: "0".into(),
            role: None,
            speaker: Some(speaker.into()),
            text: text.into(),
            occurred_at: None,
            metadata: serde_json::Value::Null,
        }
    }

    fn one(text: &str) -> Vec<(String, String, bool)> {
        extract(&said("Ann", text), &[])
            .into_iter()
            .map(|f| (f.subject, f.value, f.revision))
            .collect()
    }

    #[test]
    fn reads_stated_and_revised_values() {
        assert_eq!(
            one("The budget for Project Atlas is $120,000 for the quarter."),
            [(
                "budget for Project Atlas".into(),
                "$120,000 for the quarter".into(),
                false
            )]
        );
        assert_eq!(
            one("Update: the Atlas budget has been cut to $95,000 because of the freeze."),
            [("Atlas budget".into(), "$95,000".into(), true)]
        );
        assert_eq!(
            one("Let's move the launch date to May 14."),
            [("launch date".into(), "May 14".into(), true)]
        );
        assert_eq!(
            one("Final decision: the venue is now Harbor Hall."),
            [("venue".into(), "Harbor Hall".into(), true)]
        );
        assert_eq!(
            one("Oh, before I forget: my locker code is 4417, keep it for me."),
            [("locker code".into(), "4417".into(), false)],
            "a lead-in before a colon is not the subject"
        );
        assert_eq!(
            one("Budget: $40,000."),
            [("Budget".into(), "$40,000".into(), false)]
        );
        assert!(
            one("The demo is great.").is_empty(),
            "opinions are not facts"
        );
        assert!(
            one("It is 5pm already").is_empty(),
            "pointers are not subjects"
        );
    }

    #[test]
    fn reads_owners() {
        assert_eq!(
            one("Dana will own the vendor review."),
            [("owner of vendor review".into(), "Dana".into(), false)]
        );
        assert_eq!(
            one("The vendor review is reassigned to Omar."),
            [("owner of vendor review".into(), "Omar".into(), true)]
        );
        assert_eq!(
            one("I'll own the vendor review then!")[0].0,
            "owner of vendor review"
        );
        assert_eq!(
            one("The vendor review is therefore reassigned to Priya.")[0].1,
            "Priya"
        );
        let mine = extract(&said("Lee", "I'll take the onboarding deck."), &[]);
        assert_eq!(mine[0].subject, "owner of onboarding deck");
        assert_eq!(mine[0].value, "Lee");
    }

    #[test]
    fn bare_instead_revises_the_latest_fact_of_its_shape() {
        let earlier = extract(&said("Ann", "The launch date is June 2."), &[]);
        let mut all = earlier.clone();
        all.extend(extract(&said("Bo", "Budget is $50k."), &all));
        let f = extract(&said("Cy", "Let's go with $60k instead."), &all);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].subject, "Budget");
        assert_eq!(f[0].value, "$60k");
        assert!(f[0].revision);
    }

    /// The subjects compared in listing every chain of a space (what
    /// `Engine::fact_subjects` does) where `n` people each state their role and the
    /// budget of a project of their own, and every tenth restates it.
    fn subjects_compared(n: usize) -> u64 {
        use crate::work::{counting::steps_of, steps::SUBJECTS_COMPARED};
        let fact = |i: usize, id: String, d: FactDetail| Unit {
            id,
            space: cairn_core::SpaceId::new("t").unwrap(),
            kind: UnitKind::Fact,
            text: d.value.clone(),
            key: d.value.clone(),
            embed_text: None,
            provenance: cairn_core::Provenance {
                session_id: Some(format!("s{i}")),
                message_ids: vec!["0".into()],
                ..Default::default()
            },
            part_of: None,
            occurred_at: None,
            recorded_at: chrono::Utc::now(),
            detail: Some(UnitDetail::Fact(d)),
        };
        let mut facts = Vec::new();
        for i in 0..n {
            let person = format!("person{i}");
            let role = FactDetail {
                subject: format!("{person}'s role"),
                subject_key: vec!["role".into()],
                value: "analyst".into(),
                person: Some(person.clone()),
                category: Some(FactCategory::Role),
                ..Default::default()
            };
            let budget = FactDetail {
                subject: format!("budget for project{i}"),
                subject_key: vec!["budget".into(), format!("project{i}")],
                value: format!("${i}k"),
                ..Default::default()
            };
            let times = if i % 10 == 0 { 2 } else { 1 };
            for t in 0..times {
                facts.push(fact(i, format!("fact:{i}:role:{t}"), role.clone()));
                facts.push(fact(i, format!("fact:{i}:budget:{t}"), budget.clone()));
            }
        }
        let index = FactIndex::new(Arc::new(facts.clone()));
        let (chains, compared) = steps_of(SUBJECTS_COMPARED, || {
            let mut listed: HashSet<&str> = HashSet::new();
            let mut chains: Vec<usize> = Vec::new();
            for f in &facts {
                if listed.insert(f.id.as_str()) {
                    let chain = index.chain_of(f, |_| true);
                    listed.extend(chain.iter().map(|c| c.id.as_str()));
                    chains.push(chain.len());
                }
            }
            chains
        });
        // One chain per person and per project; restated ones hold two versions.
        assert_eq!(chains.len(), 2 * n);
        assert_eq!(
            chains.iter().filter(|&&c| c == 2).count(),
            2 * n.div_ceil(10)
        );
        compared
    }

    /// The index finds every subject that comparing with each subject finds.
    #[test]
    fn subject_candidates_hold_every_match() {
        let things = [
            "budget",
            "the final budget for Project Atlas",
            "Atlas budget",
            "Beacon budget",
            "budget for Beacon",
            "my brother's locker combination",
            "locker combination",
            "my brother",
            "launch date",
            "date",
            "",
            "owner of vendor review",
            "vendor review",
        ];
        let mut subjects: Vec<(Subject, Vec<usize>)> = things
            .iter()
            .map(|t| (Subject::asked(t), Vec::new()))
            .collect();
        let personal = [
            ("ann", FactCategory::Possession, "honda civic"),
            ("ann", FactCategory::Possession, "civic"),
            ("ann", FactCategory::Role, "role"),
            ("ann", FactCategory::Role, "job role"),
            ("bo", FactCategory::Possession, "civic"),
            ("bo", FactCategory::Pet, ""),
        ];
        for (who, category, key) in personal {
            let key: Vec<String> = key.split_whitespace().map(String::from).collect();
            let person = Some((who.to_string(), category));
            let own = key.clone();
            subjects.push((Subject { key, own, person }, Vec::new()));
        }
        let all = subjects.clone();
        let index = SubjectIndex::new(subjects);
        for (s, _) in &all {
            let matching = |list: Vec<&(Subject, Vec<usize>)>| -> Vec<Subject> {
                list.into_iter()
                    .filter(|(o, _)| subject_match(s, o) != SubjectMatch::No)
                    .map(|(o, _)| o.clone())
                    .collect()
            };
            let want = matching(all.iter().collect());
            let mut got = matching(index.candidates(s).collect());
            got.sort_by_key(|o| all.iter().position(|(a, _)| a == o));
            assert_eq!(got, want, "{s:?}");
        }
    }

    /// Issue 38: listing a space's subjects compared each subject's chain with every
    /// other subject, quadratic in the subjects (3x CPU per doubling of the speakers in
    /// `cairn reliability scaling`). This counts the comparisons instead of timing them.
    #[test]
    fn listing_chains_compares_subjects_linearly() {
        let (at_1, at_2) = (subjects_compared(500), subjects_compared(1000));
        assert!(at_1 > 0);
        let growth = at_2 as f64 / at_1 as f64;
        assert!(growth <= 2.2, "subjects compared: {at_1} -> {at_2}");
        assert!(at_2 <= 4 * 2000, "{at_2} comparisons for 2000 subjects");
    }

    #[test]
    fn keys_match_across_phrasings() {
        let s = Subject::asked;
        let a = s("the final budget for Project Atlas");
        let b = s("Atlas budget");
        assert_eq!(a.key, ["atla", "budget", "project"]);
        assert_eq!(a.own, ["budget"]);
        assert_eq!(subject_match(&a, &b), SubjectMatch::Same);
        assert_eq!(subject_match(&b, &s("Beacon budget")), SubjectMatch::No);
        assert_eq!(subject_match(&s("budget"), &b), SubjectMatch::SameInGroup);
        assert_eq!(subject_match(&s("budget"), &a), SubjectMatch::SameInGroup);
    }

    #[test]
    fn an_owner_is_not_the_thing_owned() {
        let s = Subject::asked;
        let locker = s("my brother's locker combination");
        assert_eq!(locker.own, ["combination", "locker"]);
        assert_eq!(subject_match(&s("my brother"), &locker), SubjectMatch::No);
        assert_eq!(
            subject_match(&s("locker combination"), &locker),
            SubjectMatch::Same
        );
        let owner = s("owner of onboarding deck");
        assert_eq!(
            subject_match(&s("the onboarding deck"), &owner),
            SubjectMatch::No
        );
        assert_eq!(subject_match(&s("deck owner"), &owner), SubjectMatch::Same);
        let all_owner = s("Atlas's");
        assert_eq!(all_owner.own, all_owner.key);
    }
}
