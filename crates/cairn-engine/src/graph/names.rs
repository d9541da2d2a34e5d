//! What in a text is a name: capitalized words and runs of them, with whether they open
//! a sentence and the word before them, and the kind of entity each is.
use cairn_core::EntityKind;

/// Capitalized words that are not names wherever they stand (pronouns, interjections;
/// days and months too, see [`not_a_name`]: a time is not an entity).
pub(super) const NOT_NAMES: &[&str] = &[
    "i",
    "i'm",
    "i've",
    "i'll",
    "i'd",
    "im",
    "ive",
    "ok",
    "okay",
    "oh",
    "hey",
    "hi",
    "hello",
    "yes",
    "yeah",
    "no",
    "nope",
    "thanks",
    "thank",
    "wow",
    "omg",
    "lol",
    "haha",
    "hmm",
    "um",
    "uh",
    "ah",
    "aw",
    "awesome",
    "great",
    "cool",
    "sure",
    "well",
    "so",
    "but",
    "and",
    "or",
    "the",
    "a",
    "an",
    "my",
    "your",
    "our",
    "their",
    "his",
    "her",
    "its",
    "we",
    "you",
    "he",
    "she",
    "they",
    "it",
    "this",
    "that",
    "these",
    "those",
    "what",
    "who",
    "when",
    "where",
    "why",
    "how",
    "which",
    "today",
    "tomorrow",
    "yesterday",
    "mr",
    "mrs",
    "ms",
    "dr",
    "please",
    "dear",
    "good",
    "nice",
    "love",
    "congrats",
    "anyway",
];

/// Whether a lowercased word is never a name: [`NOT_NAMES`], or a day or month (the
/// query analysis's own lists).
pub(super) fn not_a_name(word: &str) -> bool {
    NOT_NAMES.contains(&word)
        || crate::calendar::MONTHS.contains(&word)
        || crate::calendar::WEEKDAYS.contains(&word)
}

/// Words that make a name an organization.
pub(super) const ORG_WORDS: &[&str] = &[
    "inc",
    "corp",
    "corporation",
    "company",
    "co",
    "llc",
    "ltd",
    "university",
    "college",
    "school",
    "institute",
    "club",
    "society",
    "association",
    "foundation",
    "group",
    "team",
    "agency",
    "bank",
    "hospital",
    "church",
    "center",
    "centre",
    "lab",
    "labs",
];

/// Words before a name that make it a place.
pub(super) const PLACE_CUES: &[&str] = &[
    "in", "at", "from", "to", "near", "visited", "visit", "around",
];

/// A name found in a text: its words as written and the word before it.
pub(super) struct Found {
    pub(super) name: String,
    pub(super) at_start: bool,
    pub(super) after: Option<String>,
}

pub(super) fn strip_possessive(w: &str) -> &str {
    w.strip_suffix("'s")
        .or_else(|| w.strip_suffix("’s"))
        .or_else(|| w.strip_suffix('\''))
        .unwrap_or(w)
}

pub(super) fn kind_of(n: &Found) -> EntityKind {
    let lower = n.name.to_lowercase();
    if lower.split(' ').any(|w| ORG_WORDS.contains(&w)) {
        EntityKind::Organization
    } else if n.after.as_deref().is_some_and(|a| PLACE_CUES.contains(&a)) {
        EntityKind::Place
    } else {
        EntityKind::Thing
    }
}

/// Capitalized words and runs of them in `text` (a run may hold "of": "Bank of
/// America"), with whether the run opens a sentence and the word before it.
pub(super) fn names_in(text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let mut run_start = false;
    let mut run_after: Option<String> = None;
    let mut at_start = true;
    let mut prev: Option<String> = None;
    let flush = |run: &mut Vec<&str>, start: bool, after: &Option<String>, out: &mut Vec<Found>| {
        while run.last().is_some_and(|w| *w == "of") {
            run.pop();
        }
        if !run.is_empty() {
            out.push(Found {
                name: run.join(" "),
                at_start: start,
                after: after.clone(),
            });
        }
        run.clear();
    };
    for raw in text.split_whitespace() {
        let ends = raw.ends_with(['.', '!', '?', ':', ';']) || raw.ends_with("\"");
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’');
        let word = strip_possessive(word);
        let cap = word.chars().next().is_some_and(|c| c.is_uppercase())
            && word.chars().count() >= 2
            && !not_a_name(&word.to_lowercase())
            && word
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '\'');
        if cap {
            if run.is_empty() {
                run_start = at_start;
                run_after = prev.clone();
            }
            run.push(word);
        } else if word == "of" && !run.is_empty() {
            run.push("of");
        } else {
            flush(&mut run, run_start, &run_after, &mut out);
        }
        // Punctuation inside a run ends it ("Paris, Rome" are two names).
        if raw.ends_with([',', ')']) || ends {
            flush(&mut run, run_start, &run_after, &mut out);
        }
        at_start = ends || raw.is_empty();
        prev = Some(word.to_lowercase());
    }
    flush(&mut run, run_start, &run_after, &mut out);
    out
}
