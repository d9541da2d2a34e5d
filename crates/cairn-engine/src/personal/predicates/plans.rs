//! What a subject intends (plan to, will, want to) and does regularly (a verb with a
//! frequency).
use super::facts::Facts;
use crate::personal::clause::{verb_stem, Clause, Tense};
use crate::personal::phrase::{
    canon, is_known_verb, is_pointer, is_verb, noun_phrase, number, phrase, Tok,
};
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
pub(super) fn frequency(low: &str) -> bool {
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

/// "I plan to", "I want to", "I'm hoping to", "I decided to": a plan.
pub(super) fn intend(f: &mut Facts<'_, '_>, r: usize) {
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
pub(super) fn plan_phrase(f: &mut Facts<'_, '_>, from: usize) {
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
pub(super) fn plan_key(toks: &[Tok], from: usize) -> String {
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
        if !t.is(crate::personal::phrase::DETERMINERS) {
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
pub(super) fn habit(f: &mut Facts<'_, '_>) {
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
pub(super) fn main_part(c: &Clause<'_>) -> String {
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
pub(super) fn is_state_of_mind(w: &str) -> bool {
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
pub(super) fn not_an_activity(w: &str) -> bool {
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
pub(super) fn habit_key(toks: &[Tok], from: usize) -> String {
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
