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

/// The copula's complement: a role, a diet, a status, a liking, a place.
fn copula(f: &mut Facts<'_, '_>, ctx: &Context) {
    let c = f.c;
    let toks = c.toks;
    let i = c.verb;
    let w = lows(toks, i);
    let first = w[0];
    let second = w.get(1).copied().unwrap_or("");
    let over = c.is_over() && c.tense != Tense::Perfect;
    let negated = c.negated || over;
    let n = f.out.len();
    // Where someone lives.
    if matches!(first, "based" | "located" | "settled" | "living") && second == "in" {
        let (place, _) = noun_phrase(toks, i + 2);
        f.add(C::Home, "home", "home", &place, negated);
        return;
    }
    // "I've been in London since 2015": lived there.
    if first == "in"
        && c.tense == Tense::Perfect
        && toks.get(i + 1).is_some_and(|t| t.cap())
        && (c.low.contains(" since ") || c.low.contains(" for "))
    {
        let (place, _) = noun_phrase(toks, i + 1);
        f.add(C::Home, "home", "home", &place, c.negated);
        return;
    }
    if matches!(first, "job") && matches!(second, "hunting" | "searching" | "seeking") {
        f.add(
            C::Plan,
            "plan: job hunting",
            "job hunting",
            "job hunting",
            c.negated,
        );
        return;
    }
    if first == "allergic" || (first == "intolerant" && second == "to") {
        let from = i + 1 + usize::from(second == "to");
        for item in list(toks, from) {
            f.add(
                C::Diet,
                &format!("allergy: {item}"),
                &item,
                &item,
                c.negated,
            );
        }
        return;
    }
    // A diet ("vegetarian", "on a keto diet", "lactose intolerant").
    let start = if matches!(first, "a" | "an") { 1 } else { 0 };
    let rest = w[start..].join(" ");
    if let Some(d) = DIETS.iter().find(|d| rest.starts_with(*d)) {
        f.add(C::Diet, "diet", "diet", d, negated);
        if c.change || over {
            f.changed(n);
        }
        return;
    }
    if first == "on" && w.contains(&"diet") {
        let (d, _) = phrase(toks, i + 1, &["diet"], 4);
        f.add(C::Diet, "diet", "diet", &format!("{d} diet"), negated);
        return;
    }
    // Relationship status.
    const STATUS: &[&str] = &[
        "married",
        "engaged",
        "single",
        "divorced",
        "widowed",
        "separated",
        "dating",
        "seeing",
        "taken",
    ];
    if STATUS.contains(&first)
        || (first == "in" && second == "a" && w.get(2) == Some(&"relationship"))
    {
        let (status, _) = phrase(toks, i, &["because", "but", "since", "so", "and", "for"], 5);
        f.add(
            C::Family,
            "relationship status",
            "relationship status",
            &status,
            negated,
        );
        if c.change || over {
            f.changed(n);
        }
        return;
    }
    if matches!(
        first,
        "pregnant" | "diabetic" | "asthmatic" | "epileptic" | "anemic"
    ) {
        f.add(C::Health, first, first, first, negated);
        return;
    }
    if first == "diagnosed" && second == "with" {
        let (cond, _) = noun_phrase(toks, i + 2);
        f.add(C::Health, &cond, &cond, &cond, c.negated);
        f.changed(n);
        return;
    }
    if matches!(first, "retired" | "unemployed") || (first == "between" && second == "jobs") {
        f.add(C::Role, "occupation", "occupation", first, c.negated);
        f.changed(n);
        return;
    }
    if matches!(first, "laid" | "fired" | "let") {
        let from = w.iter().position(|x| *x == "from").map(|p| i + p + 1);
        let org = from
            .map(|p| noun_phrase(toks, p).0)
            .unwrap_or_else(|| "job".into());
        f.add(C::Work, "workplace", "workplace", &org, true);
        f.changed(n);
        return;
    }
    // Likings said with the copula.
    if let Some(skip) = liking_copula(&w) {
        let stops: Vec<&str> = VALUE_STOPS
            .iter()
            .copied()
            .filter(|w| !matches!(*w, "of" | "in" | "on" | "at"))
            .collect();
        let (thing, _) = phrase(toks, i + skip, &stops, 6);
        let neg = c.negated || w.first() == Some(&"not");
        f.add(
            C::Preference,
            &format!("taste: {thing}"),
            &thing,
            &thing,
            neg,
        );
        return;
    }
    if (first == "a" || first == "an") && w.contains(&"person") {
        let p = w.iter().position(|x| *x == "person").unwrap_or(1);
        let kind = w[1..p].join(" ");
        if matches!(kind.as_str(), "morning" | "night" | "early" | "evening") {
            f.add(
                C::Habit,
                &format!("{kind} person"),
                &format!("{kind} person"),
                &format!("{kind} person"),
                c.negated,
            );
        } else if !kind.is_empty() {
            f.add(
                C::Preference,
                &format!("taste: {kind}"),
                &kind,
                &kind,
                c.negated,
            );
        }
        return;
    }
    if w.starts_with(&["a", "night", "owl"]) || w.starts_with(&["an", "early", "bird"]) {
        let v = w[1..3].join(" ");
        f.add(C::Habit, &v, &v, &v, c.negated);
        return;
    }
    // Plans said with the copula: "I'm saving up for a house", "I'm about to".
    if first == "about" && second == "to" {
        plan_phrase(f, i + 2);
        return;
    }
    // "the X person"? no. "a nurse", "the vice principal", "a student at McGill".
    role_phrase(f, i, negated, ctx);
    if !f.out[n..].is_empty() && (c.change || over) {
        f.changed(n);
    }
    // "I'm from Ohio", "I'm in Lisbon" and the like say where someone is, not lives.
    let _ = ctx;
}

/// How many words a copula liking takes before its object ("a big fan of" = 4).
fn liking_copula(w: &[&str]) -> Option<usize> {
    let w: Vec<&str> = w.iter().copied().filter(|x| *x != "really").collect();
    let s = w.join(" ");
    for (p, n) in [
        ("not a fan of ", 4),
        ("a huge fan of ", 4),
        ("a big fan of ", 4),
        ("a massive fan of ", 4),
        ("a fan of ", 3),
        ("huge fan of ", 3),
        ("big fan of ", 3),
        ("fan of ", 2),
        ("not into ", 2),
        ("into ", 1),
        ("obsessed with ", 2),
        ("passionate about ", 2),
        ("crazy about ", 2),
        ("hooked on ", 2),
        ("addicted to ", 2),
        ("in love with ", 3),
        ("keen on ", 2),
        ("fond of ", 2),
        ("a sucker for ", 3),
        ("tired of ", 2),
        ("sick of ", 2),
        ("not a big fan of ", 5),
    ] {
        if s.starts_with(p) {
            let extra = usize::from(w.len() < s.split(' ').count());
            return Some(n + extra);
        }
    }
    None
}

/// "a software engineer at Shopify", "the vice principal": an occupation, and where.
fn role_phrase(f: &mut Facts<'_, '_>, i: usize, negated: bool, _ctx: &Context) {
    let toks = f.c.toks;
    let mut j = i;
    let mut negated = negated;
    if toks.get(j).is_some_and(|t| t.is(&["no"])) {
        negated = true;
    }
    if toks
        .get(j)
        .is_some_and(|t| t.is(&["a", "an", "the", "now", "currently", "no"]))
    {
        j += 1;
    }
    let start = j;
    let mut end = j;
    let mut head: Option<usize> = None;
    while end < toks.len() && end - start < 6 {
        let t = &toks[end];
        if t.is(&[
            "at", "for", "in", "with", "and", "but", "so", "because", "who", "since", "by", "from",
            "on",
        ]) {
            break;
        }
        if is_role(&t.low) {
            head = Some(end);
        }
        end += 1;
        if t.pause {
            break;
        }
    }
    let Some(h) = head else { return };
    // "a fan", "a morning person" are not occupations; the head must end the phrase
    // or be followed by a place.
    if DIETS.contains(&toks[h].low.as_str()) {
        return;
    }
    let words: Vec<&str> = toks[start..=h].iter().map(|t| t.orig.as_str()).collect();
    let role = words.join(" ");
    let studies = toks[h].is(&["student", "undergrad", "grad", "phd"]);
    f.add(C::Role, "occupation", "occupation", &role, negated);
    if let Some(p) = toks.get(h + 1).filter(|t| t.is(&["at", "for", "with"])) {
        let _ = p;
        let (org, _) = noun_phrase(toks, h + 2);
        if !org.is_empty() {
            let label = if studies { "school" } else { "workplace" };
            f.add(C::Work, label, label, &org, negated);
        }
    }
}

fn is_role(w: &str) -> bool {
    let w = w.trim_end_matches("'s");
    ROLES.contains(&w)
        || (w.len() > 5
            && ROLE_SUFFIXES.iter().any(|s| w.ends_with(s))
            && !DIETS.contains(&w)
            && !matches!(
                w,
                "vegetarian" | "pescatarian" | "list" | "interest" | "exist"
            ))
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

/// "I live in Porto", "we live with my parents", "I lived in Oslo" (over).
fn home(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let mut i = r;
    while toks
        .get(i)
        .is_some_and(|t| t.is(&["here", "currently", "now", "still", "right"]))
    {
        i += 1;
    }
    let Some(prep) = toks.get(i) else { return };
    let over = c.tense == Tense::UsedTo || (c.tense == Tense::Past && !c.progressive);
    if c.is_future() && !over {
        return;
    }
    let negated = c.negated || over;
    if prep.is(&["in", "at", "near", "outside", "on"]) {
        let (place, _) = noun_phrase(toks, i + 1);
        f.add(C::Home, "home", "home", &place, negated);
    } else if prep.is(&["with"]) {
        let (who, _) = noun_phrase(toks, i + 1);
        f.add(C::Home, "home", "home", &format!("with {who}"), negated);
    }
    if c.change {
        let n = f.out.len().saturating_sub(1);
        f.changed(n);
    }
}

/// "I moved to Lisbon last month" (a new home), "I'm moving to Denver" (a plan).
fn moved(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    let w = lows(toks, r);
    let to = w
        .iter()
        .position(|x| matches!(*x, "to" | "into"))
        .filter(|&p| p <= 3);
    // "we moved the wedding to October": a plan rescheduled, not a home.
    let object = w.first().is_some_and(|x| {
        !matches!(
            *x,
            "to" | "into"
                | "back"
                | "out"
                | "in"
                | "away"
                | "over"
                | "here"
                | "there"
                | "home"
                | "abroad"
                | "across"
                | "down"
                | "up"
                | "from"
        )
    });
    if let (Some(p), true) = (to, object) {
        let (what, _) = noun_phrase(toks, r);
        let (when_, _) = phrase(
            toks,
            r + p + 1,
            &["because", "but", "since", "so", "which", "and"],
            5,
        );
        let key = what.to_lowercase();
        f.add(
            C::Plan,
            &format!("plan: {what}"),
            &key,
            &format!("{what} to {when_}"),
            false,
        );
        f.changed(n);
        return;
    }
    let Some(p) = to else {
        if w.first() == Some(&"in") && w.get(1) == Some(&"with") {
            let (who, _) = noun_phrase(toks, r + 2);
            f.add(C::Home, "home", "home", &format!("with {who}"), c.negated);
            f.changed(n);
        }
        return;
    };
    let (mut place, end) = noun_phrase(toks, r + p + 1);
    // "our new place in Denver": the place is where it is.
    let generic = [
        "place",
        "house",
        "home",
        "apartment",
        "flat",
        "condo",
        "neighborhood",
        "neighbourhood",
        "city",
        "town",
    ];
    if generic.iter().any(|g| place.to_lowercase().ends_with(g))
        && toks.get(end).is_some_and(|t| t.is(&["in"]))
    {
        place = noun_phrase(toks, end + 1).0;
    }
    if c.is_future() || c.progressive {
        plan_phrase(f, c.verb);
        return;
    }
    // "moved to Berlin for a job at Spotify"
    if let Some(q) = w
        .iter()
        .position(|x| matches!(*x, "job" | "position" | "role"))
    {
        if w.get(q + 1).is_some_and(|x| matches!(*x, "at" | "with")) {
            let (org, _) = noun_phrase(toks, r + q + 2);
            f.add(C::Work, "workplace", "workplace", &org, false);
        }
    }
    if c.negated {
        return;
    }
    f.add(C::Home, "home", "home", &place, false);
    if let Some(q) = w[..p].iter().position(|x| *x == "from") {
        let (old, _) = noun_phrase(toks, r + q + 1);
        f.add(C::Home, "home", "home", &old, true);
    }
    f.changed(n);
}

/// "I work at Stripe", "I work as a nurse", "I work night shifts", "I worked at X".
fn work(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let over = c.tense == Tense::UsedTo || (c.tense == Tense::Past && !c.progressive);
    let negated = c.negated || over;
    let w = lows(toks, r);
    let n = f.out.len();
    match w.first().copied() {
        Some("as") => role_phrase(f, r + 1, negated, &Context::default()),
        Some("at" | "for") => {
            let (org, end) = noun_phrase(toks, r + 1);
            f.add(C::Work, "workplace", "workplace", &org, negated);
            if toks.get(end).is_some_and(|t| t.is(&["as"])) {
                role_phrase(f, end + 1, negated, &Context::default());
            }
        }
        Some("in") => {
            let (field, _) = noun_phrase(toks, r + 1);
            let place = toks.get(r + 1).is_some_and(|t| t.is(&["a", "an", "the"]))
                || toks.get(r + 1).is_some_and(|t| t.cap());
            if place {
                f.add(C::Work, "workplace", "workplace", &field, negated);
            } else {
                f.add(C::Role, "occupation", "occupation", &field, negated);
            }
        }
        Some("from" | "remotely" | "remote") => {
            let (how, _) = phrase(
                toks,
                c.verb,
                &["because", "but", "since", "so", "and", "which"],
                5,
            );
            f.add(
                C::Habit,
                "work arrangement",
                "work arrangement",
                &how,
                negated,
            );
        }
        Some(_)
            if frequency(&c.low)
                || w.iter().take(3).any(|x| {
                    matches!(
                        *x,
                        "shifts" | "shift" | "part-time" | "full-time" | "nights" | "weekends"
                    )
                }) =>
        {
            let (how, _) = phrase(
                toks,
                c.verb,
                &["because", "but", "since", "so", "which", "as"],
                6,
            );
            f.add(C::Habit, "work schedule", "work schedule", &how, negated);
        }
        _ => {}
    }
    // "I work night shifts at the airport as an air traffic controller"
    if f.out.len() > n && f.out[n].category == C::Habit {
        if let Some(p) = w.iter().position(|x| *x == "at") {
            let (org, end) = noun_phrase(toks, r + p + 1);
            f.add(C::Work, "workplace", "workplace", &org, negated);
            if toks.get(end).is_some_and(|t| t.is(&["as"])) {
                role_phrase(f, end + 1, negated, &Context::default());
            }
        }
    }
    if c.change || c.progressive {
        f.changed(n);
    }
}

/// The words after `r` speak of a job ("a job at", "a new position as", "working at").
fn job_words(toks: &[Tok], r: usize) -> bool {
    toks.iter().skip(r).take(5).any(|t| {
        t.is(&[
            "job",
            "position",
            "role",
            "gig",
            "internship",
            "promoted",
            "promotion",
            "hired",
            "working",
            "work",
        ])
    }) || toks.get(r).is_some_and(|t| t.is(&["at", "as"]))
}

/// "I got a job at X as Y", "I started at Google", "I got promoted to manager".
fn got_job(f: &mut Facts<'_, '_>, r: usize, ctx: &Context) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    let w = lows(toks, r);
    if c.is_future() || c.negated {
        return;
    }
    if let Some(p) = w.iter().position(|x| *x == "promoted") {
        if w.get(p + 1) == Some(&"to") {
            role_phrase(f, r + p + 2, false, ctx);
        }
        f.changed(n);
        return;
    }
    if let Some(p) = w.iter().position(|x| *x == "at").filter(|&p| p <= 5) {
        let (org, end) = noun_phrase(toks, r + p + 1);
        f.add(C::Work, "workplace", "workplace", &org, false);
        if toks.get(end).is_some_and(|t| t.is(&["as"])) {
            role_phrase(f, end + 1, false, ctx);
        }
    }
    if let Some(p) = w.iter().position(|x| *x == "as").filter(|&p| p <= 5) {
        if !f.out[n..].iter().any(|p| p.category == C::Role) {
            role_phrase(f, r + p + 1, false, ctx);
        }
    }
    f.changed(n);
}

/// "got married", "got a dog", "got diagnosed with", "got laid off", "get migraines".
fn got(f: &mut Facts<'_, '_>, r: usize, ctx: &mut Context) {
    let c = f.c;
    let toks = c.toks;
    let w = lows(toks, r);
    let n = f.out.len();
    let first = w.first().copied().unwrap_or("");
    if matches!(first, "married" | "engaged" | "divorced") {
        if c.is_future() || c.progressive {
            plan_phrase(f, c.verb);
        } else if !c.negated {
            f.add(
                C::Family,
                "relationship status",
                "relationship status",
                first,
                false,
            );
            f.changed(n);
        }
        return;
    }
    if matches!(first, "laid" | "fired" | "let") {
        let from = w.iter().position(|x| *x == "from").map(|p| r + p + 1);
        let org = from
            .map(|p| noun_phrase(toks, p).0)
            .unwrap_or_else(|| "job".into());
        f.add(C::Work, "workplace", "workplace", &org, true);
        f.changed(n);
        return;
    }
    if first == "diagnosed" && w.get(1) == Some(&"with") {
        let (cond, _) = noun_phrase(toks, r + 2);
        f.add(C::Health, &cond, &cond, &cond, false);
        f.changed(n);
        return;
    }
    if let Some(cond) = condition_after(toks, r) {
        f.add(C::Health, &cond, &cond, &cond, c.negated);
        return;
    }
    if c.progressive && !c.is_future() {
        return;
    }
    have(f, "get", r, ctx);
}

/// "I started eating fish again", "I started running", "I started a new job".
fn started(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    let Some(next) = toks.get(r) else { return };
    if c.is_future() {
        plan_phrase(f, c.verb);
        return;
    }
    if next.is(&["eating", "drinking"]) {
        for item in list(toks, r + 1) {
            f.add(C::Diet, &format!("diet: {item}"), &item, &item, c.negated);
        }
        f.changed(n);
        return;
    }
    if next.low.ends_with("ing") && next.low.len() > 4 && !is_state_of_mind(&next.low) {
        let (what, _) = phrase(
            toks,
            r,
            &[
                "because", "but", "since", "so", "and", "which", "in", "last", "this", "ago",
            ],
            5,
        );
        let key = habit_key(toks, r);
        f.add(C::Habit, &format!("habit: {key}"), &key, &what, c.negated);
        f.changed(n);
    }
}

/// "I left Shopify", "I quit my job at the bank", "I retired".
fn left(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    if c.is_future() || c.negated {
        if c.is_future() && !c.negated {
            plan_phrase(f, c.verb);
        }
        return;
    }
    let w = lows(toks, r);
    if verb_stem(c) == canon("retire") && (w.is_empty() || !w[0].starts_with("from")) {
        f.add(C::Role, "occupation", "occupation", "retired", false);
        f.changed(n);
        return;
    }
    let from = if w.first() == Some(&"from") { r + 1 } else { r };
    if toks.get(from).is_some_and(|t| t.low.ends_with("ing")) {
        return stopped(f, r);
    }
    let (what, end) = noun_phrase(toks, from);
    let lw = what.to_lowercase();
    let org = toks.get(from).is_some_and(|t| t.cap())
        || lw.split(' ').any(|x| {
            BUSINESSES.contains(&x) || matches!(x, "job" | "company" | "position" | "role")
        });
    if !org {
        return;
    }
    let at = toks
        .get(end)
        .filter(|t| t.is(&["at"]))
        .map(|_| noun_phrase(toks, end + 1).0);
    let value = at.unwrap_or(what);
    f.add(C::Work, "workplace", "workplace", &value, true);
    // "lost my job as a banker"
    if toks.get(end).is_some_and(|t| t.is(&["as"])) {
        role_phrase(f, end + 1, true, &Context::default());
    }
    f.changed(n);
}

/// "I don't eat pork", "I stopped eating meat", "I quit smoking", "I avoid gluten".
fn stopped(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    let Some(next) = toks.get(r) else { return };
    let mut from = r;
    if next.is(&["up", "out", "down", "on"]) {
        from += 1;
    }
    let first = toks.get(from).map(|t| t.low.as_str()).unwrap_or("");
    if matches!(first, "eating" | "drinking") {
        for item in list(toks, from + 1) {
            f.add(C::Diet, &format!("diet: {item}"), &item, &item, !c.negated);
        }
    } else if first.ends_with("ing") && first.len() > 4 {
        let key = habit_key(toks, from);
        let (what, _) = phrase(
            toks,
            from,
            &[
                "because", "but", "since", "so", "and", "which", "last", "this", "ago", "in",
            ],
            5,
        );
        f.add(C::Habit, &format!("habit: {key}"), &key, &what, !c.negated);
    } else if matches!(
        first,
        "alcohol"
            | "sugar"
            | "meat"
            | "dairy"
            | "gluten"
            | "caffeine"
            | "coffee"
            | "carbs"
            | "red"
            | "junk"
            | "soda"
            | "bread"
            | "fried"
            | "processed"
            | "beer"
            | "wine"
    ) || verb_stem(c) == canon("avoid")
    {
        for item in list(toks, from) {
            f.add(C::Diet, &format!("diet: {item}"), &item, &item, !c.negated);
        }
    }
    if f.out.len() > n {
        f.changed(n);
    }
}

/// What follows `r` names a condition of health ("migraines", "type 2 diabetes").
fn condition_after(toks: &[Tok], r: usize) -> Option<String> {
    let (np, _) = phrase(
        toks,
        r,
        &[
            "because", "but", "since", "so", "and", "which", "when", "last", "ago", "for", "after",
            "from", "a", "every", "in", "on",
        ],
        5,
    );
    let low = np.to_lowercase();
    let hit = CONDITIONS
        .iter()
        .any(|c| low.split(' ').any(|w| w == *c) || (c.contains(' ') && low.contains(c)))
        || low
            .split(' ')
            .any(|w| w.ends_with("itis") || w.ends_with("osis") || w.ends_with("emia"));
    hit.then_some(np)
}

/// Someone takes a medication ("I take metformin twice a day") or a class ("I take a
/// pottery class every Tuesday").
fn take(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let Some(next) = toks.get(r) else { return };
    let bare = !next.is(&[
        "a", "an", "the", "my", "our", "some", "care", "time", "it", "that", "this", "place",
        "part", "turns", "off", "over", "up",
    ]);
    let medication = bare
        && !next.cap()
        && (frequency(&c.low)
            || c.low.contains(" for my ")
            || c.low.contains("daily")
            || next.is(&[
                "medication",
                "meds",
                "pills",
                "vitamins",
                "supplements",
                "insulin",
                "antidepressants",
                "painkillers",
            ]));
    if medication {
        let (med, _) = noun_phrase(toks, r);
        let value = phrase(toks, r, &["because", "but", "since", "so", "which"], 7).0;
        f.add(
            C::Health,
            &format!("medication: {med}"),
            &med,
            &value,
            c.negated || c.tense == Tense::UsedTo,
        );
        return;
    }
    if frequency(&c.low) || c.habitual {
        habit(f);
    } else if c.is_future() {
        plan_phrase(f, c.verb);
    }
}

/// Possessions, pets, relations, conditions and counts after have/own/buy/adopt/get,
/// each of a list ("a MacBook Pro for work and an old ThinkPad at home").
fn have(f: &mut Facts<'_, '_>, v: &str, r: usize, ctx: &mut Context) {
    have_one(f, v, r, ctx);
    let toks = f.c.toks;
    let and = (r + 1..toks.len().min(r + 9)).find(|&i| {
        toks[i].is(&["and"])
            && toks
                .get(i + 1)
                .is_some_and(|t| t.is(&["a", "an", "my", "our", "the", "some"]))
    });
    if let Some(i) = and {
        have_one(f, v, i + 1, ctx);
    }
}

fn have_one(f: &mut Facts<'_, '_>, v: &str, r: usize, ctx: &mut Context) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    let w = lows(toks, r);
    let Some(&first) = w.first() else { return };
    if c.is_future() && v != canon("have") {
        if !c.negated {
            plan_phrase(f, c.verb);
        }
        return;
    }
    let over = c.tense == Tense::UsedTo;
    let negated = c.negated || over;
    let change =
        v != canon("have") && v != canon("own") && v != canon("drive") && v != canon("ride");
    if v == canon("replace") {
        if let Some(p) = w.iter().position(|x| *x == "with") {
            return have(f, &canon("buy"), r + p + 1, ctx);
        }
        return;
    }
    // A count: "two cats", "three kids" (and the pets or relations counted).
    if let Some(k) = number(first).filter(|k| *k >= 2 || first == "one") {
        let (thing, _) = noun_phrase(toks, r + 1);
        if !thing.is_empty() && !is_measure(&thing) {
            let key = thing.to_lowercase();
            f.add(
                C::Count,
                &format!("number of {thing}"),
                head_noun(&key),
                &format!("{k} {thing}"),
                negated,
            );
            let words: Vec<&str> = key.split(' ').collect();
            if let Some((C::Pet, animal)) = kind_of(&words) {
                for name in names_after(toks, r + 1).0 {
                    f.add(
                        C::Pet,
                        &format!("{animal} {name}"),
                        &format!("{animal} {name}"),
                        &name,
                        negated,
                    );
                }
            }
            if change || c.change {
                f.changed(n);
            }
            return;
        }
    }
    let (np, end) = noun_phrase(toks, r);
    if np.is_empty() {
        return;
    }
    let low = np.to_lowercase();
    let words: Vec<&str> = low.split(' ').collect();
    // Allergies: "a peanut allergy", "allergies to cats".
    if words.iter().any(|w| w.starts_with("allerg")) {
        let item = words
            .iter()
            .filter(|w| {
                !w.starts_with("allerg") && !matches!(**w, "severe" | "mild" | "bad" | "slight")
            })
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        let item = if item.is_empty() {
            toks.iter()
                .skip(end)
                .skip_while(|t| !t.is(&["to"]))
                .nth(1)
                .map(|t| t.orig.clone())
                .unwrap_or_default()
        } else {
            item
        };
        f.add(C::Diet, &format!("allergy: {item}"), &item, &item, negated);
        return;
    }
    if let Some(cond) = condition_after(toks, r).filter(|_| v == canon("have") || v == canon("get"))
    {
        f.add(C::Health, &cond, &cond, &cond, negated);
        return;
    }
    let head = words.last().copied().unwrap_or("");
    if RELATIONS.contains(&head) && v == canon("have") {
        let label = words
            .iter()
            .filter(|w| RELATIONS.contains(w))
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        f.add(C::Family, &label, &label, &np, negated);
        return;
    }
    match kind_of(&words) {
        Some((C::Pet, animal)) => {
            let (names, desc) = names_after(toks, end);
            if names.is_empty() {
                f.add(C::Pet, &animal, &animal, &np, negated);
            }
            let described = if desc.is_empty() {
                np.clone()
            } else {
                format!("{np}, {desc}")
            };
            for name in names {
                f.add(
                    C::Pet,
                    &format!("{animal} {name}"),
                    &format!("{animal} {name}"),
                    &format!("{described} {name}"),
                    negated,
                );
                ctx.aliases
                    .push((name.clone(), format!("{}'s {animal} {name}", c.who.person)));
            }
            if change {
                f.changed(n);
            }
        }
        Some((C::Possession, kind)) => {
            let model = brand_words(toks, r, end);
            let key = if model.is_empty() {
                kind.clone()
            } else {
                model.clone()
            };
            f.add(C::Possession, &kind, &key, &np, negated);
            if change {
                f.changed(n);
            }
        }
        _ => {
            // A brand or model with a capital ("a Tesla Model 3", "my Gibson ES-335").
            let model = brand_words(toks, r, end);
            let buys = v != canon("have")
                || toks.get(r).is_some_and(|t| t.is(&["a", "an"])) && !model.is_empty();
            let drives = v == canon("drive") || v == canon("ride");
            if !model.is_empty() && (buys || drives) && !c.negated {
                let kind = if drives {
                    "car".to_string()
                } else {
                    model.clone()
                };
                f.add(C::Possession, &kind, &model, &np, negated);
                if change {
                    f.changed(n);
                }
            } else if (v == canon("buy")
                || v == canon("purchase")
                || (v == canon("get") && words.contains(&"new")))
                && matches!(c.tense, Tense::Past | Tense::Perfect)
            {
                // Something bought: its kind is its head ("a new phone case").
                if BUSINESSES.iter().any(|b| words.contains(b)) {
                    f.add(C::Work, "workplace", "workplace", &np, false);
                } else if !is_pointer(&np)
                    && !words.iter().any(|w| {
                        matches!(
                            *w,
                            "job"
                                | "idea"
                                | "perspective"
                                | "appreciation"
                                | "understanding"
                                | "opportunity"
                                | "chance"
                                | "feeling"
                                | "friend"
                                | "friends"
                                | "hobby"
                        )
                    })
                {
                    let kind = words
                        .iter()
                        .filter(|w| !matches!(**w, "new" | "used" | "old" | "brand"))
                        .copied()
                        .collect::<Vec<_>>()
                        .join(" ");
                    f.add(C::Possession, &kind, &kind, &np, negated);
                    if change {
                        f.changed(n);
                    }
                }
            }
        }
    }
}

/// Capitalized words (a brand, a model) of `toks[from..end]`, or a word with a digit
/// beside them ("Model 3", "ES-335").
fn brand_words(toks: &[Tok], from: usize, end: usize) -> String {
    let words: Vec<&str> = toks[from..end]
        .iter()
        .filter(|t| {
            t.cap() && !t.is(&["i"])
                || (t.low.chars().any(|c| c.is_ascii_digit())
                    && t.low.len() <= 6
                    && !t.low.starts_with("20")
                    && !t.low.starts_with("19"))
        })
        .map(|t| t.orig.as_str())
        .collect();
    if words.iter().all(|w| w.chars().any(|c| c.is_ascii_digit())) {
        return String::new();
    }
    words.join(" ")
}

/// Names given right after a phrase: "called Biscuit", "named Skye", ", Pepper and Salt",
/// ", a tabby named Ginger". Returns the names, and the words that describe the named
/// one when they differ from the phrase ("tabby").
fn names_after(toks: &[Tok], from: usize) -> (Vec<String>, String) {
    let mut i = from;
    let mut out = Vec::new();
    let mut desc = Vec::new();
    let limit = (from + 8).min(toks.len());
    // Up to "named"/"called", or to a capitalized name right after a pause.
    let mut found = false;
    while i < limit {
        let t = &toks[i];
        if t.is(&["named", "called"]) {
            i += 1;
            found = true;
            break;
        }
        if t.cap() && i > from && toks[i - 1].pause {
            found = true;
            break;
        }
        if t.is(&[
            "and", "but", "because", "so", "who", "which", "that", "i", "we", "she", "he", "to",
            "for",
        ]) {
            return (out, String::new());
        }
        if toks[i].pause {
            desc.clear();
        } else if !t.is(super::phrase::DETERMINERS)
            && !t.is(&["last", "week", "month", "ago", "yesterday", "year"])
        {
            desc.push(t.orig.clone());
        }
        i += 1;
    }
    if !(found || i == from && toks.get(i).is_some_and(|t| t.cap())) {
        return (out, String::new());
    }
    while let Some(t) = toks.get(i) {
        if t.cap() && !t.is(&["i"]) && t.orig.chars().all(|c| c.is_alphabetic()) {
            out.push(t.orig.clone());
        } else if !t.is(&["and", "&"]) {
            break;
        }
        i += 1;
    }
    (out, desc.join(" "))
}

/// "called Crumb" after a phrase.
fn named_after(toks: &[Tok], end: usize) -> Option<String> {
    toks.iter()
        .skip(end)
        .take(4)
        .position(|t| t.is(&["called", "named"]))
        .and_then(|p| toks.get(end + p + 1))
        .map(|t| t.orig.clone())
}

fn business(toks: &[Tok], r: usize) -> bool {
    toks.iter().skip(r).take(5).any(|t| t.is(BUSINESSES))
}

/// Sold, traded in, gave away, lost: a possession no longer had.
fn gave_up_thing(f: &mut Facts<'_, '_>, v: &str, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    let mut from = r;
    if toks.get(from).is_some_and(|t| t.is(&["in", "away"])) {
        from += 1;
    }
    if c.is_future() || c.negated {
        return;
    }
    let (np, end) = noun_phrase(toks, from);
    let low = np.to_lowercase();
    let words: Vec<&str> = low.split(' ').collect();
    if v == canon("lose") && kind_of(&words).is_none() {
        return;
    }
    if words.iter().any(|w| BUSINESSES.contains(w)) {
        f.add(C::Work, "workplace", "workplace", &np, true);
    } else {
        let model = brand_words(toks, from, end);
        let kind = kind_of(&words).map(|(_, k)| k);
        let key = if model.is_empty() {
            kind.clone().unwrap_or_else(|| low.clone())
        } else {
            model
        };
        if kind.is_none()
            && key == low
            && !toks
                .get(from)
                .is_some_and(|t| t.cap() || t.is(&["my", "the", "our"]))
        {
            return;
        }
        f.add(
            C::Possession,
            kind.as_deref().unwrap_or(&key),
            &key,
            &np,
            true,
        );
    }
    // "traded in the Outback for a VW California camper"
    if let Some(p) = toks.iter().skip(end).position(|t| t.is(&["for"])) {
        have(f, &canon("buy"), end + p + 1, &mut Context::default());
    }
    f.changed(n);
}

/// Likes and dislikes: "I love X", "I can't stand X", "I prefer X over Y".
fn liking(f: &mut Facts<'_, '_>, v: &str, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let dislike = [
        "hate", "dislike", "detest", "loathe", "despise", "stand", "bear",
    ]
    .iter()
    .any(|b| canon(b) == v);
    // "can't stand", "can't bear" are dislikes said with a negation.
    let stand = v == canon("stand") || v == canon("bear");
    if stand && !c.negated {
        return;
    }
    let negated = if stand { true } else { dislike != c.negated };
    let mut from = r;
    if toks.get(from).is_some_and(|t| t.is(&["to"])) {
        from += 1;
    }
    if toks.get(from).is_some_and(|t| {
        t.is(&[
            "it", "that", "this", "them", "you", "how", "what", "when", "the idea", "your",
        ])
    }) {
        return;
    }
    let stops: Vec<&str> = VALUE_STOPS
        .iter()
        .copied()
        .filter(|w| !matches!(*w, "to" | "of" | "in" | "on" | "at"))
        .collect();
    let (thing, end) = phrase(toks, from, &stops, 6);
    let thing = thing.trim_end_matches(" so much").to_string();
    if thing.is_empty() || is_pointer(&thing) || about_something_said(toks, from, end) {
        return;
    }
    f.add(
        C::Preference,
        &format!("taste: {thing}"),
        &thing,
        &thing,
        negated,
    );
    if v == canon("prefer") {
        if let Some(p) = toks
            .iter()
            .skip(end)
            .take(2)
            .position(|t| t.is(&["over", "to", "than"]))
        {
            let (other, _) = phrase(toks, end + p + 1, &stops, 5);
            f.add(
                C::Preference,
                &format!("taste: {other}"),
                &other,
                &other,
                true,
            );
        }
    }
    // "I love spicy Thai food but I really dislike olives" is two clauses; "I love
    // cycling and hiking" one liking of each.
    if toks.get(end).is_some_and(|t| t.is(&["and"]))
        && !toks.get(end + 1).is_some_and(|t| t.is(&["i", "we", "my"]))
    {
        let (other, _) = phrase(toks, end + 1, &stops, 5);
        if !other.is_empty()
            && !is_known_verb(&other.split(' ').next().unwrap_or("").to_lowercase())
        {
            f.add(
                C::Preference,
                &format!("taste: {other}"),
                &other,
                &other,
                negated,
            );
        }
    }
}

/// Whether a liked phrase is about what was just said ("the idea of ...", "the sound of
/// that") or a bare -ing form of something pointed at ("watching them play").
fn about_something_said(toks: &[Tok], from: usize, end: usize) -> bool {
    let words: Vec<&str> = toks[from..end]
        .iter()
        .map(|t| t.low.as_str())
        .filter(|w| !super::phrase::DETERMINERS.contains(w))
        .collect();
    let first = words.first().copied().unwrap_or("");
    let talk = [
        "idea",
        "ideas",
        "sound",
        "look",
        "thought",
        "way",
        "fact",
        "concept",
        "suggestion",
        "suggestions",
        "recommendation",
        "recommendations",
        "tip",
        "tips",
        "option",
        "options",
        "plan",
        "approach",
        "list",
        "advice",
        "help",
        "resources",
        "info",
        "information",
        "answer",
        "response",
        "feedback",
        "question",
        "point",
        "part",
    ];
    talk.contains(&first)
        || (words.len() == 1
            && first.ends_with("ing")
            && toks.get(end).is_some_and(|t| {
                t.is(&[
                    "them", "it", "that", "this", "him", "her", "those", "these", "you",
                ])
            }))
}

/// "I plan to", "I want to", "I'm hoping to", "I decided to": a plan.
fn intend(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let v = verb_stem(c);
    let mut i = r;
    if toks.get(i).is_some_and(|t| t.is(&["on", "to"])) {
        i += 1;
    } else if v == canon("plan")
        && toks
            .get(i)
            .is_some_and(|t| t.is(&["a", "an", "my", "our", "the"]))
    {
        // "I'm planning a trip to Denver"
    } else if v == canon("want") && toks.get(i).is_some_and(|t| t.is(&["a", "an"])) {
        // "I want a dog"
    } else {
        return;
    }
    if c.negated && v != canon("plan") {
        return;
    }
    // "I wanted to", "I hoped to": what was meant once, not a plan now.
    if c.tense == Tense::Past && v != canon("decide") {
        return;
    }
    let next = toks.get(i).map(|t| t.low.as_str()).unwrap_or("");
    let two = toks
        .get(i + 1)
        .map(|t| format!("{next} {}", t.low))
        .unwrap_or_default();
    if REQUEST_VERBS
        .iter()
        .any(|q| canon(q) == canon(next) || *q == two)
    {
        return;
    }
    if v == canon("try") && !next.is_empty() && !is_known_verb(next) {
        return;
    }
    plan_phrase(f, i);
}

/// A plan read from `toks[from..]`: the intended act as said.
fn plan_phrase(f: &mut Facts<'_, '_>, from: usize) {
    let c = f.c;
    let toks = c.toks;
    let (what, _) = phrase(
        toks,
        from,
        &[
            "because", "but", "since", "so", "which", "and", "if", "as", "cause", "while", "though",
        ],
        9,
    );
    if what.is_empty() || is_pointer(&what) {
        return;
    }
    let key = plan_key(toks, from);
    // "play this one", "make that happen": the plan is something said before.
    let object: Vec<&str> = key.split(' ').skip(1).collect();
    if !object.is_empty() && is_pointer(&object.join(" ")) {
        return;
    }
    f.add(C::Plan, &format!("plan: {key}"), &key, &what, c.negated);
}

/// The words naming a plan without its time: "visit Japan in October" -> "visit japan".
fn plan_key(toks: &[Tok], from: usize) -> String {
    const TIME: &[&str] = &[
        "in", "on", "at", "next", "this", "by", "before", "after", "for", "with", "soon",
        "tomorrow", "tonight", "later", "someday", "one", "during", "around", "to",
    ];
    let mut words: Vec<String> = Vec::new();
    for t in toks.iter().skip(from).take(7) {
        // A preposition right after the verb belongs to it ("work on", "move to").
        let particle =
            words.len() == 1 && t.is(&["on", "to", "in", "for", "at", "up", "out", "with"]);
        if t.is(TIME) && !words.is_empty() && !particle
            || t.is(&["because", "but", "so", "and", "which"])
        {
            break;
        }
        if !t.is(super::phrase::DETERMINERS) {
            words.push(t.low.clone());
        }
        if t.pause {
            break;
        }
    }
    words.join(" ")
}

/// A verb with a frequency or a habitual adverb: "I run every morning", "I usually
/// wake up at 6:30", "I've been doing yoga lately".
fn habit(f: &mut Facts<'_, '_>) {
    let c = f.c;
    let main = main_part(c);
    let lately = (c.progressive || c.tense == Tense::Perfect)
        && (main.contains("lately") || main.contains("these days") || main.contains("recently"));
    // "I collect vinyl records", "I play guitar": the present simple of an activity is
    // what someone does.
    let simple = c.tense == Tense::Present
        && !c.progressive
        && c.who.speaker
        && !c.verb_tok().low.ends_with("ed")
        && !not_an_activity(&c.verb_tok().low)
        && c.toks
            .get(c.verb + 1)
            .is_some_and(|t| number(&t.low).is_none())
        && c.toks.get(c.verb + 1).is_some_and(|t| {
            !t.is(&[
                "to", "that", "if", "what", "how", "you", "it", "this", "that", "so", "about",
            ])
        });
    if !(frequency(&main) || c.habitual || lately || c.tense == Tense::UsedTo || simple) {
        return;
    }
    if c.copula || c.verb >= c.toks.len() || c.is_future() {
        return;
    }
    let verb = c.verb_tok();
    if verb.is(&["to", "a", "an", "the", "it", "that", "this", "so"])
        || verb.cap()
        || is_state_of_mind(&verb.low)
    {
        return;
    }
    let key = habit_key(c.toks, c.verb);
    if key.is_empty() {
        return;
    }
    let (what, _) = phrase(
        c.toks,
        c.verb,
        &[
            "because", "but", "since", "so", "which", "and", "if", "though", "while", "when",
            "instead",
        ],
        9,
    );
    let n = f.out.len();
    f.add(
        C::Habit,
        &format!("habit: {key}"),
        &key,
        &what,
        c.negated || c.tense == Tense::UsedTo,
    );
    // "I swim three times a week instead of running": the one replaced is over.
    if let Some(p) = c.toks.iter().position(|t| t.is(&["instead"])) {
        if c.toks.get(p + 1).is_some_and(|t| t.is(&["of"])) {
            let other = habit_key(c.toks, p + 2);
            let (was, _) = phrase(c.toks, p + 2, &["now", "because", "but", "so"], 4);
            f.add(C::Habit, &format!("habit: {other}"), &other, &was, true);
        }
    }
    if c.change {
        f.changed(n);
    }
}

/// The clause up to a relative clause ("a league that ran every Thursday"): where a
/// frequency says how often the subject does something.
fn main_part(c: &Clause<'_>) -> String {
    let end = c
        .toks
        .iter()
        .skip(c.verb)
        .position(|t| t.is(&["that", "which", "who", "where", "when", "whenever", "while"]))
        .map_or(c.toks.len(), |p| c.verb + p);
    c.toks[..end]
        .iter()
        .map(|t| t.low.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Verbs of thinking, feeling, seeking and wanting: what someone did so is no habit
/// ("I've been thinking about my career lately", "I've been looking for ...").
fn is_state_of_mind(w: &str) -> bool {
    is_verb(
        w,
        &[
            "feel",
            "think",
            "wonder",
            "need",
            "want",
            "like",
            "love",
            "look",
            "search",
            "try",
            "hope",
            "mean",
            "plan",
            "consider",
            "worry",
            "struggle",
            "deal",
            "wait",
            "ask",
            "remember",
            "forget",
            "know",
            "believe",
            "guess",
            "realize",
            "notice",
            "hear",
            "see",
            "check",
            "figure",
            "find",
            "crave",
            "wish",
            "miss",
            "get",
            "have",
            "be",
            "say",
            "tell",
            "talk",
            "keep",
            "seem",
            "stick",
            "focus",
            "hate",
            "enjoy",
            "agree",
            "understand",
            "appreciate",
            "suppose",
            "bet",
            "promise",
            "apologize",
            "doubt",
            "reckon",
            "prefer",
            "mean",
            "recommend",
            "suggest",
            "expect",
            "owe",
            "thank",
            "welcome",
            "imagine",
            "assume",
            "adore",
            "dislike",
            "recall",
            "admit",
        ],
    )
}

/// Verbs whose present simple says what someone did or does now rather than what they
/// do habitually ("I quit", "I take it", "I go there"), or is past in the same form.
fn not_an_activity(w: &str) -> bool {
    is_verb(
        w,
        &[
            "own", "bring", "take", "give", "put", "send", "let", "make", "help", "go", "come",
            "start", "finish", "stop", "continue", "leave", "call", "show", "add", "change",
            "lose", "win", "buy", "sell", "pay", "set", "quit", "cut", "hit", "hurt", "read", "do",
            "use", "try", "plan", "move", "live", "work", "love", "like",
        ],
    )
}

/// The words naming a habit: its verb's stem and its object's head ("go running" ->
/// "run"; "drink about four cups" -> "drink cups"; "play guitar in a band" -> "play
/// guitar").
fn habit_key(toks: &[Tok], from: usize) -> String {
    let Some(v) = toks.get(from) else {
        return String::new();
    };
    let mut verb = canon(&v.low);
    let mut i = from + 1;
    // "go running", "go for a run"
    if verb == canon("go") {
        if let Some(t) = toks.get(i).filter(|t| t.low.ends_with("ing")) {
            return canon(&t.low);
        }
    }
    if toks
        .get(i)
        .is_some_and(|t| t.is(&["up", "out", "off", "down", "in", "to"]))
        && verb != canon("go")
    {
        verb = format!("{verb} {}", toks[i].low);
        i += 1;
    }
    // The head of its object: the last word of the phrase after the verb, quantities
    // left out ("a lot of indie-folk" -> "indie-folk").
    let (np, _) = noun_phrase(toks, i);
    let object = np.split(' ').map(str::to_lowercase).rfind(|w| {
        !matches!(
            w.as_str(),
            "lot"
                | "of"
                | "bit"
                | "couple"
                | "few"
                | "more"
                | "some"
                | "about"
                | "around"
                | "most"
                | "much"
                | "many"
                | "least"
        ) && number(w).is_none()
            && !w.is_empty()
    });
    match object {
        Some(o) if !frequency(&o) => format!("{verb} {o}"),
        _ => verb,
    }
}

/// A number of things: "I've visited 14 countries", "I just passed 350 records", "I
/// have about 300" (of the thing named before).
fn count(f: &mut Facts<'_, '_>, ctx: &Context) {
    let c = f.c;
    let toks = c.toks;
    if c.copula && !c.low.contains(" been to ") || c.is_future() {
        return;
    }
    const COUNTING: &[&str] = &[
        "have", "own", "visit", "read", "watch", "try", "finish", "complete", "collect", "adopt",
        "buy", "get", "make", "run", "attend", "see", "pass", "reach", "hit", "raise", "grow",
        "plant", "take", "do", "write", "bake", "knit", "paint", "publish", "win", "play", "keep",
        "save", "lose", "climb", "hike", "cook", "brew", "build", "sell", "go", "be", "earn",
        "score", "record", "finish", "host", "travel", "fly", "land", "lift", "swim",
    ];
    if !c.copula && !is_verb(&c.verb_tok().low, COUNTING) || frequency(&main_part(c)) {
        return;
    }
    for i in c.verb..toks.len() {
        let Some(k) = number(&toks[i].low).filter(|k| *k >= 2) else {
            continue;
        };
        // Not a time, an age, a price or a measure.
        if toks.get(i + 1).is_some_and(|t| {
            t.low.starts_with("year") && toks.get(i + 2).is_some_and(|t| t.is(&["old"]))
        }) {
            return;
        }
        let (thing, _) = phrase(toks, i + 1, VALUE_STOPS, 4);
        let thing = if thing.is_empty()
            || toks
                .get(i + 1)
                .is_some_and(|t| t.is(&["at", "so", "now", "by", "this", "in"]))
        {
            match &ctx.last_object {
                Some(o) => o.clone(),
                None => return,
            }
        } else {
            thing
        };
        let low = thing.to_lowercase();
        if is_measure(&low)
            || !(low.ends_with('s') || low.ends_with("ren") || low.ends_with("people"))
        {
            return;
        }
        let n = f.out.len();
        f.add(
            C::Count,
            &format!("number of {thing}"),
            head_noun(&low),
            &format!("{k} {thing}"),
            c.negated,
        );
        if c.change || !matches!(verb_stem(c).as_str(), "hav") {
            f.changed(n);
        }
        return;
    }
}

/// The last word of a phrase: what a count counts ("vinyl records" -> "records").
fn head_noun(phrase: &str) -> &str {
    phrase.rsplit(' ').next().unwrap_or(phrase)
}

/// Units of measure and of time, which a number counts without them being things had.
fn is_measure(thing: &str) -> bool {
    const MEASURES: &[&str] = &[
        "cups",
        "glasses",
        "miles",
        "km",
        "kilometers",
        "kilometres",
        "steps",
        "hours",
        "minutes",
        "seconds",
        "days",
        "weeks",
        "months",
        "years",
        "times",
        "pounds",
        "kilos",
        "kg",
        "lbs",
        "calories",
        "dollars",
        "bucks",
        "euros",
        "percent",
        "reps",
        "sets",
        "laps",
        "pages",
        "grams",
        "liters",
        "litres",
        "meters",
        "metres",
        "feet",
        "inches",
        "degrees",
        "points",
        "mins",
        "hrs",
        "nights",
        "bottles",
        "shots",
        "servings",
        "slices",
        "pieces",
        "words",
        "people",
        "guests",
        "friends",
        "bucks",
        "k",
        "am",
        "pm",
        "o'clock",
        "weekends",
        "decades",
        "semesters",
        "seasons",
        "episodes",
        "rounds",
        "sessions",
    ];
    let first = thing.split(' ').next().unwrap_or("");
    MEASURES.contains(&first) || MEASURES.contains(&thing)
}

/// Keeps the last plural object named, for a number said without one ("I have 300").
fn remember_object(c: &Clause<'_>, ctx: &mut Context) {
    if c.verb >= c.toks.len() {
        return;
    }
    let (np, _) = noun_phrase(c.toks, c.verb + 1);
    let low = np.to_lowercase();
    if low.ends_with('s')
        && !is_pointer(&np)
        && number(low.split(' ').next().unwrap_or("")).is_none()
    {
        ctx.last_object = Some(np);
    }
}
