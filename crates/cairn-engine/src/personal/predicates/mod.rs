//! What a clause says of its subject, by the kind of its verb: where they live (live,
//! move), work (work at, join, leave), what they are (the copula with a role, a diet, a
//! status), what they have (have, own, adopt, buy, sell), like (love, hate, prefer), do
//! regularly (a verb with a frequency), plan (plan to, will, a progressive with a future
//! time), and how many of something (a number with a plural noun).
use super::clause::{verb_stem, Clause, Tense};
use super::lexicon::{
    BODY, BUSINESSES, CONDITIONS, DIETS, PETS, RELATIONS, ROLES, ROLE_SUFFIXES, THINGS,
};
use super::phrase::{
    canon, is_known_verb, is_pointer, is_verb, noun_phrase, number, phrase, Tok, VALUE_STOPS,
};
use super::{when, Context, Personal, Speaking};
use cairn_core::FactCategory as C;

mod copula;
mod counts;
mod having;
mod likes;
mod places;
mod plans;
use copula::*;
use counts::*;
use having::*;
use likes::*;
use places::*;
use plans::*;

/// Verbs after "want to", "plan to" that ask for something rather than intend it.
const REQUEST_VERBS: &[&str] = &[
    "know",
    "ask",
    "find",
    "hear",
    "understand",
    "figure",
    "check",
    "see",
    "discuss",
    "talk",
    "brainstorm",
    "compare",
    "decide",
    "confirm",
    "clarify",
    "explore",
    "look",
    "get",
    "learn more",
    "make sure",
    "share",
    "say",
    "thank",
    "mention",
    "let",
    "tell",
    "start by",
    "chat",
    "vent",
    "double-check",
    "try",
    "be",
    "keep",
    "go over",
    "review",
    "read up",
    "narrow",
    "create",
    "come up",
    "organize",
    "set up",
    "research",
];

/// Expressions of how often something is done.
fn frequency(low: &str) -> bool {
    const SPANS: &str = "(?:day|days|night|nights|morning|mornings|evening|evenings|week|weeks|weekend|weekends|month|months|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekday|weekdays|afternoon|afternoons)";
    // "on Saturdays" is a habit, "on Saturday" a date.
    const PLURAL: &str = "(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekends|weekdays|mornings|evenings|nights|afternoons)";
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(&format!(
            r"\b(?:every(?:\s+other)?\s+(?:single\s+)?{SPANS}|each\s+{SPANS}|daily|nightly|weekly|monthly|(?:\d+|once|twice|one|two|three|four|five|six|seven|several|a few|a couple of)\s+(?:times?\s+)?(?:a|per|each)\s+{SPANS}|(?:a|per)\s+(?:day|week|month)\b|on\s+{PLURAL}|most\s+{SPANS}|in\s+the\s+(?:mornings|evenings)|before\s+(?:bed|work|school)|after\s+work|at\s+night|every\s+now\s+and\s+then)"
        ))
        .expect("valid regex")
    });
    RE.is_match(low)
}

/// A fact of the clause's subject.
struct Facts<'c, 'a> {
    c: &'c Clause<'a>,
    out: Vec<Personal>,
    at: Option<cairn_core::Timestamp>,
    speaker: String,
}

impl Facts<'_, '_> {
    /// Adds a fact; `negated` and `revision` are added to what the clause says itself.
    fn add(&mut self, category: C, label: &str, key: &str, value: &str, negated: bool) {
        self.add_about(
            &self.c.who.person.clone(),
            category,
            label,
            key,
            value,
            negated,
        );
    }

    fn add_about(
        &mut self,
        person: &str,
        category: C,
        label: &str,
        key: &str,
        value: &str,
        negated: bool,
    ) {
        let value = value
            .trim()
            .trim_end_matches(|c: char| !c.is_alphanumeric());
        if value.is_empty() || key.trim().is_empty() || is_pointer(value) {
            return;
        }
        self.out.push(Personal {
            person: person.to_string(),
            category,
            label: label.to_string(),
            key: key.to_lowercase(),
            value: value.to_string(),
            negated,
            revision: self.c.change,
            since: None,
        });
    }

    /// Marks the facts added since `from` as a change, dated by the clause.
    fn changed(&mut self, from: usize) {
        let since = when::since(&self.c.low, self.at);
        for p in &mut self.out[from..] {
            p.revision = true;
            p.since = p.since.or(since);
        }
    }
}

/// "her name is Rosie", "his name's Max": the name.
pub fn naming(toks: &[Tok]) -> Option<String> {
    let i = toks.iter().position(|t| !t.is(&["and", "so", "oh"]))?;
    if !toks[i].is(&["her", "his", "its", "their"]) {
        return None;
    }
    let rest = toks.get(i + 1..i + 4)?;
    (rest[0].is(&["name", "name's"]) && rest[1].is(&["is", "was"]) && rest[2].cap())
        .then(|| rest[2].orig.clone())
        .or_else(|| (rest[0].is(&["name's"]) && rest[1].cap()).then(|| rest[1].orig.clone()))
}

/// Statements whose subject is not a person but which say something of the speaker:
/// "Coffee is my thing", "reading isn't really my thing", "the ThinkPad finally died".
pub fn without_subject(toks: &[Tok], speaking: &Speaking<'_>) -> Option<Personal> {
    let be = toks
        .iter()
        .position(|t| t.is(&["is", "are", "was", "has", "died", "broke"]))?;
    if be == 0
        || toks[..be]
            .iter()
            .any(|t| t.is(&["i", "we", "you", "he", "she", "they", "it"]))
    {
        return None;
    }
    let mut start = 0;
    while toks[start].is(&[
        "honestly", "so", "well", "oh", "and", "but", "also", "the", "my", "our", "actually",
    ]) && start + 1 < be
    {
        start += 1;
    }
    let thing: Vec<&str> = toks[start..be].iter().map(|t| t.orig.as_str()).collect();
    let thing = thing.join(" ");
    let after: Vec<&str> = toks[be + 1..]
        .iter()
        .map(|t| t.low.as_str())
        .filter(|w| {
            !matches!(
                *w,
                "really"
                    | "just"
                    | "totally"
                    | "definitely"
                    | "always"
                    | "been"
                    | "honestly"
                    | "kind"
                    | "of"
            )
        })
        .collect();
    let person = speaking.speaker.to_string();
    let fact = |category, label: String, key: &str, value: &str, negated| Personal {
        person: person.clone(),
        category,
        label,
        key: key.to_lowercase(),
        value: value.to_string(),
        negated,
        revision: false,
        since: None,
    };
    let negated = after.first() == Some(&"not");
    let after = if negated { &after[1..] } else { &after[..] };
    if after.first() == Some(&"my")
        && after.get(1).is_some_and(|w| {
            matches!(
                *w,
                "thing"
                    | "jam"
                    | "favorite"
                    | "favourite"
                    | "passion"
                    | "weakness"
                    | "obsession"
                    | "go-to"
            )
        })
        && !is_pointer(&thing)
    {
        return Some(fact(
            C::Preference,
            format!("taste: {thing}"),
            &thing,
            &thing,
            negated,
        ));
    }
    // "the ThinkPad finally died", "my old car broke down"
    let words: Vec<&str> = toks[start..be]
        .iter()
        .map(|t| t.low.as_str())
        .filter(|w| !w.ends_with("ly") && !matches!(*w, "just" | "now" | "also" | "still"))
        .collect();
    let gone = toks[be..]
        .iter()
        .take(3)
        .any(|t| t.is(&["died", "broke", "stolen", "totaled"]));
    if gone && toks.first().is_some_and(|t| t.is(&["the", "my", "our"])) {
        if let Some((C::Possession, kind)) = kind_of(&words) {
            let model = brand_words(toks, start, be);
            let key = if model.is_empty() {
                kind.clone()
            } else {
                model
            };
            let thing = toks[start..be]
                .iter()
                .filter(|t| !t.low.ends_with("ly"))
                .map(|t| t.orig.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            return Some(fact(C::Possession, kind, &key, &thing, true));
        }
    }
    None
}

/// The personal facts of one clause.
pub fn read(c: &Clause<'_>, speaking: &Speaking<'_>, ctx: &mut Context) -> Vec<Personal> {
    let mut f = Facts {
        c,
        out: Vec::new(),
        at: speaking.at,
        speaker: speaking.speaker.to_string(),
    };
    let before = f.out.len();
    if c.verb >= c.toks.len() {
        return f.out;
    }
    if c.verb_tok().is(&["my", "our"]) {
        possessive_statement(&mut f);
    } else if c.copula {
        copula(&mut f, ctx);
    } else {
        verb(&mut f, ctx);
    }
    if f.out.len() == before {
        count(&mut f, ctx);
    }
    if f.out.len() == before && !c.copula {
        habit(&mut f);
    }
    remember_object(c, ctx);
    if c.who.bare_name {
        f.out.retain(|p| {
            matches!(
                p.category,
                C::Home | C::Work | C::Role | C::Family | C::Plan
            )
        });
    }
    f.out
}

/// "my partner Ana", "my brother Kenji" anywhere in a sentence: a relation with a name
/// (and the name, for later clauses, is that relation).
pub fn named_relations(toks: &[Tok], speaking: &Speaking<'_>, ctx: &mut Context) -> Vec<Personal> {
    let mut out = Vec::new();
    for i in 0..toks.len() {
        if !toks[i].is(&["my", "our"]) {
            continue;
        }
        let mut j = i + 1;
        let best = toks.get(j).is_some_and(|t| t.is(&["best"]));
        if best {
            j += 1;
        }
        let Some(rel) = toks.get(j).filter(|t| t.is(RELATIONS)) else {
            continue;
        };
        let name = toks
            .get(j + 1)
            .filter(|t| t.cap() && t.orig.chars().all(|c| c.is_alphabetic()));
        let Some(name) = name else { continue };
        let label = if best {
            format!("best {}", rel.low)
        } else {
            rel.low.clone()
        };
        let person = format!("{}'s {label}", speaking.speaker);
        if !ctx.aliases.iter().any(|(n, _)| *n == name.orig) {
            ctx.aliases.push((name.orig.clone(), person));
        }
        out.push(Personal {
            person: speaking.speaker.to_string(),
            category: C::Family,
            label: label.clone(),
            key: label,
            value: name.orig.clone(),
            negated: false,
            revision: false,
            since: None,
        });
    }
    out
}

/// "my favorite food is sushi", "my goal is to run a marathon", "my knee has been bad".
fn possessive_statement(f: &mut Facts<'_, '_>) {
    let toks = f.c.toks;
    let i = f.c.verb;
    let Some(be) = (i + 1..toks.len().min(i + 6)).find(|&k| {
        toks[k].is(&["is", "are", "was", "has", "have", "keeps"])
            || (toks[k].is(&["died", "broke", "passed"]) && k > i + 1)
    }) else {
        return;
    };
    let head: Vec<&str> = toks[i + 1..be].iter().map(|t| t.low.as_str()).collect();
    let named: Vec<&str> = toks[i + 1..be].iter().map(|t| t.orig.as_str()).collect();
    let mut after = be + 1;
    while toks.get(after).is_some_and(|t| {
        t.is(&[
            "been",
            "to",
            "be",
            "always",
            "definitely",
            "probably",
            "really",
            "still",
            "now",
            "got",
            "going",
            "gonna",
            "has",
            "have",
            "just",
            "not",
        ])
    }) {
        after += 1;
    }
    let negated = toks[be..after].iter().any(|t| t.is(&["not"]));
    let favorite = head
        .first()
        .is_some_and(|w| matches!(*w, "favorite" | "favourite" | "fave" | "fav"));
    let (value, _) = phrase(toks, after, &["because", "but", "since", "so", "which"], 6);
    if favorite {
        let label = named.join(" ");
        f.add(C::Preference, &label, &label, &value, negated);
        return;
    }
    if head.len() <= 3
        && head.iter().any(|w| {
            matches!(
                *w,
                "goal" | "plan" | "dream" | "resolution" | "aim" | "hope" | "intention"
            )
        })
    {
        let (value, _) = phrase(toks, after, &["because", "but", "since", "so"], 8);
        f.add(C::Plan, &format!("plan: {value}"), &value, &value, false);
        return;
    }
    if head.len() == 1
        && matches!(
            head[0],
            "job" | "role" | "title" | "profession" | "occupation"
        )
    {
        f.add(C::Role, "occupation", "occupation", &value, negated);
        return;
    }
    if head.len() == 1 && BODY.contains(&head[0]) {
        let (state, _) = phrase(toks, be, &["because", "but", "since", "so", "which"], 6);
        f.add(
            C::Health,
            head[0],
            head[0],
            &format!("{} {state}", head[0]),
            false,
        );
        return;
    }
    // "my dog died", "my laptop broke"
    if toks[be].is(&["died", "broke", "passed"]) {
        let thing = named.join(" ");
        let kind = kind_of(&head);
        match kind {
            Some((C::Pet, _)) => f.add(C::Pet, &thing, &thing, &thing, true),
            Some((C::Possession, k)) => f.add(C::Possession, &k, &thing, &thing, true),
            _ if head.iter().any(|w| RELATIONS.contains(w)) => {
                f.add(C::Family, &thing, &thing, &thing, true)
            }
            _ => {}
        }
    }
}

/// What kind of thing a phrase (lowercased words) names: a pet (its animal) or a
/// belonging (its kind). Read from its head, the last word, or from the word before a
/// brand or model at the end ("MacBook Pro", "Fitbit Charge 5"); "cat food" and "a
/// stuffed animal dog" are neither.
fn kind_of(words: &[&str]) -> Option<(C, String)> {
    const NOT_ALIVE: &[&str] = &[
        "toy", "stuffed", "plush", "figurine", "statue", "painting", "photo", "picture", "drawing",
        "food", "treats", "bed", "leash", "collar", "bowl", "crate", "costume", "mug", "shirt",
        "poster", "sticker", "video", "videos", "show", "movie",
    ];
    if words.iter().any(|w| NOT_ALIVE.contains(w)) {
        return None;
    }
    let lookup = |w: &str| {
        let w = w.trim_end_matches("'s");
        if let Some((_, animal)) = PETS.iter().find(|(p, _)| *p == w) {
            return Some((C::Pet, animal.to_string()));
        }
        THINGS
            .iter()
            .find(|(t, _)| *t == w)
            .map(|(_, kind)| (C::Possession, kind.to_string()))
    };
    let head = *words.last()?;
    if let Some(k) = lookup(head) {
        return Some(k);
    }
    // A model after the kind: "macbook pro", "charge 5"; the head is then a short word
    // or a number.
    let model_tail = head.len() <= 4 || head.chars().any(|c| c.is_ascii_digit());
    if model_tail && words.len() >= 2 {
        return lookup(words[words.len() - 2]);
    }
    None
}

/// The words of `toks[from..]` up to the clause's end, lowercased.
fn lows(toks: &[Tok], from: usize) -> Vec<&str> {
    toks.iter().skip(from).map(|t| t.low.as_str()).collect()
}

/// Items of a list: "peanuts and shellfish", "pork or beef".
fn list(toks: &[Tok], from: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = from;
    let stops: Vec<&str> = VALUE_STOPS
        .iter()
        .copied()
        .filter(|w| !matches!(*w, "and" | "or"))
        .collect();
    while i < toks.len() {
        let (item, end) = phrase(toks, i, &[&stops[..], &["and", "or"]].concat(), 4);
        if !item.is_empty() {
            out.push(item);
        }
        if end >= toks.len() || !toks[end].is(&["and", "or"]) && !toks[end - 1].pause {
            break;
        }
        i = if toks[end].is(&["and", "or"]) {
            end + 1
        } else {
            end
        };
        if toks.get(i).is_some_and(|t| t.is(&["i", "we", "so", "but"])) {
            break;
        }
    }
    out
}

/// A main verb's statement.
fn verb(f: &mut Facts<'_, '_>, ctx: &mut Context) {
    let c = f.c;
    let v = verb_stem(c);
    let r = c.rest();
    let toks = c.toks;
    let next = toks.get(r).map(|t| t.low.as_str()).unwrap_or("");
    let n = f.out.len();
    let is = |bases: &[&str]| bases.iter().any(|b| canon(b) == v);
    if c.rather && !c.negated {
        // "I'd rather have something salty (than sweet)"
        let (thing, end) = noun_phrase(toks, r);
        if !thing.is_empty() && !is_pointer(&thing) {
            f.add(
                C::Preference,
                &format!("taste: {thing}"),
                &thing,
                &thing,
                false,
            );
            if toks.get(end).is_some_and(|t| t.is(&["than"])) {
                let (other, _) = noun_phrase(toks, end + 1);
                f.add(
                    C::Preference,
                    &format!("taste: {other}"),
                    &other,
                    &other,
                    true,
                );
            }
        }
        return;
    }
    if is(&["live", "reside"]) {
        return home(f, r);
    }
    if is(&["move", "relocate", "settle"]) {
        return moved(f, r);
    }
    if is(&["grow"]) && next == "up" {
        if let Some(p) = toks.iter().skip(r).position(|t| t.is(&["in"])) {
            let (place, _) = noun_phrase(toks, r + p + 1);
            f.add(C::Home, "home", "home", &place, true);
        }
        return;
    }
    if is(&["work"]) {
        return work(f, r);
    }
    if is(&["join"]) {
        let (org, end) = noun_phrase(toks, r);
        let named = toks.get(r).is_some_and(|t| t.cap())
            || org
                .to_lowercase()
                .split(' ')
                .any(|w| matches!(w, "company" | "startup" | "firm" | "team"));
        if named && !c.is_future() {
            f.add(C::Work, "workplace", "workplace", &org, c.negated);
            if toks.get(end).is_some_and(|t| t.is(&["as"])) {
                role_phrase(f, end + 1, c.negated, ctx);
            }
            f.changed(n);
        } else if named {
            plan_phrase(f, c.verb);
        }
        return;
    }
    if is(&["become"]) {
        role_phrase(f, r, c.negated, ctx);
        f.changed(n);
        return;
    }
    if is(&["get", "land", "accept", "take", "start", "begin", "find"]) && job_words(toks, r) {
        return got_job(f, r, ctx);
    }
    if is(&["get"]) {
        return got(f, r, ctx);
    }
    if is(&["start", "begin"]) {
        return started(f, r);
    }
    if is(&["switch", "change"]) {
        if let Some(p) = toks.iter().skip(r).position(|t| t.is(&["to"])) {
            let what = lows(toks, r)[..p].join(" ");
            let (to, _) = noun_phrase(toks, r + p + 1);
            if what.contains("major") || what.contains("degree") {
                f.add(C::Role, "studies", "studies", &to, false);
                f.changed(n);
            } else if what.contains("job") || what.contains("career") {
                role_phrase(f, r + p + 1, false, ctx);
                f.changed(n);
            }
        }
        return;
    }
    if is(&["leave", "quit", "resign", "retire"]) || is(&["lose"]) && job_words(toks, r) {
        return left(f, r);
    }
    if is(&["teach"]) {
        let (what, _) = noun_phrase(toks, r);
        f.add(
            C::Role,
            "occupation",
            "occupation",
            &format!("teaching {what}"),
            c.negated || c.is_over(),
        );
        return;
    }
    if is(&["study", "major"]) {
        let from = if next == "in" { r + 1 } else { r };
        let (field, end) = noun_phrase(toks, from);
        if matches!(
            field.to_lowercase().as_str(),
            "hard" | "a lot" | "late" | "all" | "together" | "there" | "it" | "for"
        ) {
            return;
        }
        f.add(
            C::Role,
            "studies",
            "studies",
            &field,
            c.negated || c.is_over(),
        );
        if let Some(t) = toks.get(end).filter(|t| t.is(&["at"])) {
            let _ = t;
            let (school, _) = noun_phrase(toks, end + 1);
            f.add(
                C::Work,
                "school",
                "school",
                &school,
                c.negated || c.is_over(),
            );
        }
        return;
    }
    if is(&[
        "own", "run", "manage", "found", "open", "co-own", "co-found",
    ]) && business(toks, r)
    {
        let (biz, end) = noun_phrase(toks, r);
        let named = named_after(toks, end);
        let value = match named {
            Some(name) => format!("{biz} {name}"),
            None => biz,
        };
        // Owning or running a business is over once said in the past; opening or
        // founding one is how it started.
        let over = c.is_over() && is(&["own", "run", "manage", "co-own"]);
        f.add(C::Work, "workplace", "workplace", &value, c.negated || over);
        if !over {
            f.changed(n);
        }
        return;
    }
    if is(&[
        "have", "own", "adopt", "rescue", "buy", "purchase", "upgrade", "drive", "ride", "replace",
        "pick", "order", "bring",
    ]) {
        return have(f, &v, r, ctx);
    }
    if is(&["sell", "trade", "give", "lose"]) {
        return gave_up_thing(f, &v, r);
    }
    if is(&[
        "love", "like", "enjoy", "adore", "prefer", "hate", "dislike", "detest", "loathe",
        "despise", "stand", "bear",
    ]) {
        return liking(f, &v, r);
    }
    if is(&["eat", "drink"]) && (c.negated || c.tense == Tense::UsedTo) {
        for item in list(toks, r) {
            f.add(C::Diet, &format!("diet: {item}"), &item, &item, true);
        }
        return;
    }
    if is(&["avoid", "cut", "stop", "give", "quit"]) {
        return stopped(f, r);
    }
    if is(&["watch"]) && toks.get(r).is_some_and(|t| t.is(&["my", "our"])) {
        let (what, _) = noun_phrase(toks, r);
        f.add(C::Diet, &format!("diet: {what}"), &what, &what, false);
        return;
    }
    if is(&["suffer", "struggle", "battle", "recover", "deal", "fight"])
        && condition_after(toks, r).is_some()
    {
        if let Some(cond) = condition_after(toks, r) {
            f.add(C::Health, &cond, &cond, &cond, c.negated);
        }
        return;
    }
    if is(&[
        "break",
        "sprain",
        "injure",
        "hurt",
        "pull",
        "tear",
        "twist",
        "fracture",
        "dislocate",
        "strain",
        "bruise",
    ]) {
        let body = toks
            .iter()
            .skip(r)
            .take(4)
            .find(|t| BODY.contains(&t.low.as_str()));
        if let Some(b) = body {
            let value = format!("{} {}", c.verb_tok().orig, b.orig);
            f.add(C::Health, &b.low, &b.low, &value, false);
            f.changed(n);
        }
        return;
    }
    if is(&["take"]) {
        return take(f, r);
    }
    if is(&["use"]) {
        let (thing, _) = noun_phrase(toks, r);
        let medical = [
            "inhaler",
            "insulin",
            "cpap",
            "hearing aid",
            "wheelchair",
            "crutches",
            "cane",
            "epipen",
            "glasses",
            "contacts",
        ];
        if medical.iter().any(|m| thing.to_lowercase().contains(m)) {
            f.add(C::Health, &thing, &thing, &thing, c.negated);
            if frequency(&c.low) {
                habit(f);
            }
        }
        return;
    }
    if is(&[
        "plan", "intend", "aim", "hope", "want", "decide", "expect", "mean", "try",
    ]) {
        return intend(f, r);
    }
    if is(&["push", "postpone", "reschedule", "delay", "bump", "shift"])
        && toks.iter().skip(r).any(|t| t.is(&["to", "until", "till"]))
    {
        return moved(f, r);
    }
    if is(&["think", "consider"]) && c.progressive {
        let from = if matches!(next, "of" | "about") {
            r + 1
        } else {
            r
        };
        if toks.get(from).is_some_and(|t| {
            t.low.ends_with("ing") && !t.is(&["nothing", "something", "anything", "everything"])
        }) {
            plan_phrase(f, from);
        }
        return;
    }
    if is(&["learn"]) && c.progressive && c.tense == Tense::Present && !c.negated {
        if !toks
            .get(r)
            .is_some_and(|t| t.is(&["about", "more", "that", "how", "what", "to"]))
            || toks.get(r).is_some_and(|t| t.is(&["to"]))
        {
            plan_phrase(f, c.verb);
        }
        return;
    }
    if is(&["save"]) || (is(&["train", "prepare"]) && next == "for") {
        plan_phrase(f, c.verb);
        return;
    }
    if is(&["enroll", "register", "sign"]) {
        let mut from = r;
        while toks
            .get(from)
            .is_some_and(|t| t.is(&["up", "in", "for", "on", "to"]))
        {
            from += 1;
        }
        plan_phrase(f, from);
        return;
    }
    if is(&["marry"]) {
        if c.is_future() {
            plan_phrase(f, c.verb);
        } else {
            f.add(
                C::Family,
                "relationship status",
                "relationship status",
                "married",
                c.negated,
            );
            f.changed(n);
        }
        return;
    }
    if is(&["date", "see"]) && c.progressive {
        let (who, _) = noun_phrase(toks, r);
        if who.eq_ignore_ascii_case("someone") || toks.get(r).is_some_and(|t| t.cap()) {
            f.add(
                C::Family,
                "relationship status",
                "relationship status",
                &format!("dating {who}"),
                c.negated,
            );
        }
        return;
    }
    if is(&["wake", "get"]) && next == "up"
        || is(&["set"]) && toks.iter().skip(r).any(|t| t.is(&["alarm"]))
    {
        let label = if is(&["set"]) {
            "alarm"
        } else {
            "wake-up time"
        };
        let (when_, _) = phrase(
            toks,
            c.verb,
            &["because", "but", "since", "so", "and", "which"],
            8,
        );
        f.add(
            C::Habit,
            label,
            label,
            &when_,
            c.negated || c.tense == Tense::UsedTo,
        );
        if c.change {
            f.changed(n);
        }
        return;
    }
    if is(&["die", "pass"]) && !c.who.speaker {
        // "my grandmother passed away": the speaker has one no longer.
        let me = f.speaker.clone();
        if let Some(rel) = c.who.person.strip_prefix(&format!("{me}'s ")) {
            f.add_about(&me, C::Family, rel, rel, rel, true);
        }
        return;
    }
    if c.is_future()
        && !c.negated
        && is(&[
            "visit", "travel", "fly", "go", "head", "attend", "start", "move", "take", "get",
            "spend", "host", "throw",
        ])
    {
        plan_phrase(f, c.verb);
    }
}
