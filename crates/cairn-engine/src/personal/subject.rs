//! Whom a clause is about: its subject ("I", "my sister", "she", a name), or the
//! subject understood from the clause before ("and bought a Tesla").
use super::discourse::{Context, Speaking, Who};
use super::lexicon::RELATIONS;
use super::phrase::{is_known_verb, past_form, understood_subject_verb, verbish, Tok};

/// Capitalized words that open sentences without being names.
pub(super) const STARTERS: &[&str] = &[
    "the",
    "this",
    "that",
    "these",
    "those",
    "it",
    "there",
    "here",
    "so",
    "but",
    "and",
    "also",
    "just",
    "any",
    "some",
    "what",
    "thanks",
    "thank",
    "yes",
    "no",
    "oh",
    "hey",
    "hi",
    "hello",
    "ok",
    "okay",
    "well",
    "honestly",
    "actually",
    "finally",
    "sadly",
    "luckily",
    "today",
    "yesterday",
    "tomorrow",
    "last",
    "next",
    "big",
    "quick",
    "update",
    "change",
    "good",
    "great",
    "sure",
    "please",
    "anyway",
    "unfortunately",
    "fortunately",
    "recently",
    "lately",
    "apparently",
    "basically",
    "overall",
    "speaking",
    "since",
    "because",
    "as",
    "after",
    "before",
    "when",
    "while",
    "if",
    "maybe",
    "perhaps",
    "probably",
    "guess",
    "funny",
    "fun",
    "random",
    "plus",
    "then",
    "now",
    "once",
    "every",
    "each",
    "most",
    "many",
    "both",
    "all",
    "not",
    "nothing",
    "everything",
    "someone",
    "somebody",
    "nobody",
    "everyone",
    "everybody",
    "i",
    "we",
    "my",
    "our",
    "you",
    "your",
    "he",
    "she",
    "they",
    "his",
    "her",
    "their",
    "its",
    "a",
    "an",
    "one",
    "two",
    "three",
    "wow",
    "cool",
    "nice",
    "awesome",
    "amazing",
    "sounds",
    "love",
    "lol",
    "haha",
    "yeah",
    "yep",
    "nope",
    "cheers",
    "congrats",
    "congratulations",
    "sorry",
    "omg",
    "btw",
    "fyi",
    "ps",
    "also",
    "still",
    "even",
    "only",
    "really",
    "very",
    "much",
    "more",
    "less",
    "how",
    "why",
    "where",
    "who",
    "which",
    "whose",
    "do",
    "does",
    "did",
    "is",
    "are",
    "was",
    "were",
    "can",
    "could",
    "would",
    "should",
    "will",
    "may",
    "might",
    "have",
    "has",
    "had",
    "let",
    "let's",
    "lets",
    "in",
    "on",
    "at",
    "for",
    "with",
    "from",
    "by",
    "about",
    "of",
    "to",
    "during",
    "without",
    "between",
    "like",
    "unlike",
    "despite",
    "given",
    "due",
    "according",
];

/// The subject at `toks[k]` and the index after it.
pub(super) fn subject(
    toks: &[Tok],
    k: usize,
    after_pause: bool,
    speaking: &Speaking<'_>,
    ctx: &mut Context,
) -> Option<(Who, usize)> {
    let me = |speaker: bool| Who {
        person: speaking.speaker.to_string(),
        speaker,
        bare_name: false,
    };
    let t = &toks[k];
    match t.low.as_str() {
        "i" => return Some((me(true), k + 1)),
        "we" if speaking.with_assistant => return Some((me(true), k + 1)),
        "we" => return None,
        "he" | "she" => {
            let person = ctx.last_third.clone()?;
            return Some((
                Who {
                    person,
                    speaker: false,
                    bare_name: false,
                },
                k + 1,
            ));
        }
        "my" | "our" => return relation_subject(toks, k, speaking, ctx),
        _ => {}
    }
    // A verb with its subject understood: the speaker at a sentence's start, else the
    // clause before's subject (none when that clause stated nothing: "we could camp
    // there and wake up to the sunrise").
    let participle = after_pause && t.low.ends_with("ing");
    let at_start = k == 0 && !after_pause && ctx.last_subject.is_none();
    let past_or_been = past_form(&t.low) || t.is(&["been", "love", "loved"]);
    if (understood_subject_verb(t) && (!at_start || past_or_been))
        || t.is(&["been"])
        || participle && is_known_verb(&t.low)
    {
        if ctx.skipped {
            return None;
        }
        let who = ctx.last_subject.clone().unwrap_or_else(|| me(true));
        return Some((who, k));
    }
    if t.cap() && !t.is(STARTERS) {
        let name = t.orig.trim_end_matches("'s").to_string();
        if toks.get(k + 1).is_none_or(|n| !verbish(n)) {
            return None;
        }
        let known = ctx
            .aliases
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(&name))
            .map(|(_, p)| p.clone());
        let who = Who {
            bare_name: known.is_none(),
            person: known.unwrap_or(name),
            speaker: false,
        };
        return Some((who, k + 1));
    }
    None
}

/// "my sister", "my partner Ana", "my wife and I": a relation the speaker names.
/// Other "my ..." subjects are read by the predicates that know them ("my favorite
/// food is", "my knee is"), as the speaker's.
fn relation_subject(
    toks: &[Tok],
    k: usize,
    speaking: &Speaking<'_>,
    ctx: &mut Context,
) -> Option<(Who, usize)> {
    let mut j = past_relation_modifiers(toks, k + 1);
    let best = toks
        .get(j)
        .is_some_and(|t| t.is(&["best", "close", "good"]));
    if best {
        j += 1;
    }
    let head = toks.get(j)?;
    let relation = head.low.trim_end_matches("'s");
    if !RELATIONS.contains(&relation) {
        // "my knee", "my favorite food": the speaker's own; the predicate reads it.
        let who = Who {
            person: speaking.speaker.to_string(),
            speaker: true,
            bare_name: false,
        };
        return Some((who, k));
    }
    if head.low.ends_with("'s") {
        // "my wife's job": about the relation's things, not a statement by a subject.
        return None;
    }
    let label = if best {
        format!("best {relation}")
    } else {
        relation.to_string()
    };
    let person = format!("{}'s {label}", speaking.speaker);
    let mut after = j + 1;
    if let Some(name) = toks.get(after).filter(|t| t.cap() && !t.is(STARTERS)) {
        ctx.aliases.push((name.orig.clone(), person.clone()));
        after += 1;
    }
    // "my wife and I", "my girlfriend Lena and I"
    if toks.get(after).is_some_and(|t| t.is(&["and"]))
        && toks.get(after + 1).is_some_and(|t| t.is(&["i"]))
    {
        if !speaking.with_assistant {
            return None;
        }
        let who = Who {
            person: speaking.speaker.to_string(),
            speaker: true,
            bare_name: false,
        };
        return Some((who, after + 2));
    }
    let who = Who {
        person,
        speaker: false,
        bare_name: false,
    };
    Some((who, after))
}

/// Past the words that describe a relation before it ("older", "little", "late",
/// "sweet"), from `j`: where the relation (or "best") is.
fn past_relation_modifiers(toks: &[Tok], mut j: usize) -> usize {
    while toks.get(j).is_some_and(|t| {
        t.is(&[
            "older",
            "younger",
            "little",
            "big",
            "oldest",
            "youngest",
            "eldest",
            "baby",
            "twin",
            "dear",
            "late",
            "new",
            "lovely",
            "sweet",
            "beautiful",
        ])
    }) {
        j += 1;
    }
    j
}
