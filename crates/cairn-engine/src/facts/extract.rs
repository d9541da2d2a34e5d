//! Facts read from one message by patterns: a subject's value stated or revised, an
//! owner assigned; the fact units of a session.
use super::*;

/// Words that qualify a subject without naming it: "the final budget" is the budget.
pub(super) const GENERIC: &[&str] = &[
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
pub(super) const MAX_SUBJECT_WORDS: usize = 6;
/// Longest value, in words.
pub(super) const MAX_VALUE_WORDS: usize = 8;

pub(super) const REVISION_VERBS: &str = "changed|moved|updated|revised|pushed(?: back| out)?|pulled(?: in| forward)?|shifted|increased|decreased|reduced|raised|lowered|cut|bumped(?: up| down)?|extended|reset|finali[sz]ed|rescheduled|adjusted|switched|dropped|upped|set";
pub(super) const SUBJECT: &str = r"(?P<subj>[\w$'&/-]+(?:\s+[\w$'&/-]+){0,9}?)";
pub(super) const VALUE: &str = r"(?P<val>[^.;!?\n]{1,100})";

pub(super) static STATED_REVISION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i){SUBJECT}\s+(?:has been|have been|was|were|is|are|got|will be|'s been|just)?\s*(?:{REVISION_VERBS})\s+(?:back\s+)?(?:to|at)\s+{VALUE}"
    ))
    .expect("valid regex")
});
pub(super) static ASKED_REVISION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(?:change|move|push|set|update|bump|increase|reduce|cut|raise|lower|extend|reschedule|shift|adjust|switch)\s+(?:the\s+|our\s+)?{SUBJECT}\s+(?:to|at)\s+{VALUE}"
    ))
    .expect("valid regex")
});
pub(super) static NOW_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i){SUBJECT}\s+(?:is|are|will be)\s+(?:now|finally|officially|confirmed(?: as| at| for)?|locked(?: in)?(?: at| as| for)?)\s+{VALUE}"
    ))
    .expect("valid regex")
});
pub(super) static STATED_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i){SUBJECT}\s*(?:\bis\b|\bare\b|\bwill be\b|\bshould be\b|\bis going to be\b|\bstays at\b|\bremains\b|=|:)\s*{VALUE}"
    ))
    .expect("valid regex")
});
pub(super) static OWNER_WILL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?P<who>[A-Z][a-z]+)\s+(?i:will\s+|is going to\s+|'ll\s+)?(?i:own|owns|lead|leads|take over|takes over|handle|handles|drive|drives|is owning|is leading|is handling|is driving|is responsible for|will be responsible for|is in charge of|is taking over)\s+(?i:the\s+)?(?P<task>[^.;!?\n,]{2,60})")
        .expect("valid regex")
});
pub(super) static OWNER_ASSIGNED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i:the\s+)?(?P<task>[\w'&/-]+(?:\s+[\w'&/-]+){0,5}?)\s+(?i:is|was|has been|will be|gets|got)\s+(?i:\w+ly\s+|therefore\s+|now\s+|then\s+)?(?i:re)?(?i:assigned)\s+to\s+(?P<who>[A-Z][a-z]+)")
        .expect("valid regex")
});
pub(super) static OWNER_ASSIGN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i:assign|assigning|reassign|reassigning|hand|handing|give|giving)\s+(?i:the\s+)?(?P<task>[\w'&/-]+(?:\s+[\w'&/-]+){0,5}?)\s+(?i:over\s+)?(?i:to)\s+(?P<who>[A-Z][a-z]+)")
        .expect("valid regex")
});
pub(super) static OWNER_SELF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bI(?:'ll| will|'m going to| am going to| can)\s+(?:own|take|handle|lead|drive|take over)\s+(?:the\s+)?(?P<task>[^.;!?\n,]{2,60})")
        .expect("valid regex")
});
pub(super) static INSTEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:go with|do|use|make it|switch to|settle on|pick|choose)\s+(?P<val>[^.;!?\n]{1,40}?)\s+instead\b")
        .expect("valid regex")
});
pub(super) static HAS_NUMBER_OR_DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)[\d$€£¥%]|\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|next week|end of (?:the )?(?:week|month|quarter|year)|eod|eow|q[1-4])\b")
        .expect("valid regex")
});

/// Leading words that start a sentence but are not part of a subject.
pub(super) const LEAD_FILLERS: &[&str] = &[
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
pub(super) const POINTERS: &[&str] = &[
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

pub(super) fn key_words(text: &str) -> impl Iterator<Item = String> + '_ {
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
pub(super) fn clean_subject(raw: &str) -> Option<String> {
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
pub(super) fn clean_value(raw: &str) -> Option<String> {
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

pub(super) fn capture(re: &Regex, sentence: &str, revision: bool, out: &mut Vec<Extracted>) {
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

pub(super) fn capture_owner(
    re: &Regex,
    sentence: &str,
    who: Option<&str>,
    out: &mut Vec<Extracted>,
) {
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
pub(super) fn value_shape(v: &str) -> u8 {
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

pub(super) fn fact_id(session: &str, message: &str, n: usize) -> String {
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
pub(super) fn fact_unit(
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
