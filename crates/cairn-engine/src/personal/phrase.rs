//! Words and phrases: tokens of a clause (contractions spelled out), base forms of
//! verbs, and the phrases a statement's value is read from.
use super::lexicon::{IRREGULAR, KNOWN_VERBS, NUMBERS};

/// One word of a clause: as written, and lowercased.
#[derive(Debug, Clone, PartialEq)]
pub struct Tok {
    pub orig: String,
    pub low: String,
    /// A comma, semicolon or colon followed it.
    pub pause: bool,
}

impl Tok {
    fn new(orig: &str, pause: bool) -> Self {
        Tok {
            orig: orig.to_string(),
            low: orig.to_lowercase(),
            pause,
        }
    }

    /// Written with a capital, as a name is.
    pub fn cap(&self) -> bool {
        self.orig.chars().next().is_some_and(char::is_uppercase)
    }

    pub fn is(&self, words: &[&str]) -> bool {
        words.contains(&self.low.as_str())
    }
}

/// Contractions and their spelled-out words.
const CONTRACTIONS: &[(&str, &[&str])] = &[
    ("i'm", &["i", "am"]),
    ("im", &["i", "am"]),
    ("i've", &["i", "have"]),
    ("ive", &["i", "have"]),
    ("i'd", &["i", "would"]),
    ("i'll", &["i", "will"]),
    ("we're", &["we", "are"]),
    ("we've", &["we", "have"]),
    ("we'd", &["we", "would"]),
    ("we'll", &["we", "will"]),
    ("he's", &["he", "is"]),
    ("she's", &["she", "is"]),
    ("he'll", &["he", "will"]),
    ("she'll", &["she", "will"]),
    ("he'd", &["he", "would"]),
    ("she'd", &["she", "would"]),
    ("it's", &["it", "is"]),
    ("that's", &["that", "is"]),
    ("they're", &["they", "are"]),
    ("don't", &["do", "not"]),
    ("dont", &["do", "not"]),
    ("doesn't", &["does", "not"]),
    ("doesnt", &["does", "not"]),
    ("didn't", &["did", "not"]),
    ("didnt", &["did", "not"]),
    ("can't", &["can", "not"]),
    ("cant", &["can", "not"]),
    ("cannot", &["can", "not"]),
    ("won't", &["will", "not"]),
    ("isn't", &["is", "not"]),
    ("aren't", &["are", "not"]),
    ("wasn't", &["was", "not"]),
    ("weren't", &["were", "not"]),
    ("haven't", &["have", "not"]),
    ("hasn't", &["has", "not"]),
    ("hadn't", &["had", "not"]),
    ("couldn't", &["could", "not"]),
    ("wouldn't", &["would", "not"]),
    ("shouldn't", &["should", "not"]),
    ("gonna", &["going", "to"]),
    ("wanna", &["want", "to"]),
    ("gotta", &["have", "to"]),
];

/// The words of `text`, contractions spelled out, punctuation around words dropped
/// (a pause after a word is kept as [`Tok::pause`]).
pub fn tokens(text: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    for raw in text.split_whitespace() {
        let raw = raw.replace(['\u{2019}', '\u{2018}'], "'");
        let pause = raw.ends_with([',', ';', ':']) || raw == "-" || raw == "—";
        let word = raw.trim_matches(|c: char| {
            !(c.is_alphanumeric() || c == '$' || c == '%' || c == '&' || c == '+')
        });
        if word.is_empty() {
            if pause {
                if let Some(last) = out.last_mut() {
                    let last: &mut Tok = last;
                    last.pause = true;
                }
            }
            continue;
        }
        let low = word.to_lowercase();
        match CONTRACTIONS.iter().find(|(c, _)| *c == low) {
            Some((_, parts)) => {
                for (i, p) in parts.iter().enumerate() {
                    let orig = if i == 0 && word.starts_with(['I']) {
                        "I"
                    } else {
                        p
                    };
                    out.push(Tok::new(orig, pause && i + 1 == parts.len()));
                }
            }
            None => out.push(Tok::new(word, pause)),
        }
    }
    out
}

/// The canonical stem of a verb form, the same for all its forms: irregular forms
/// mapped to their base, suffixes (-ing, -ed, -s) and a final `e` dropped ("moved",
/// "moving", "moves" -> "mov"; "woke" -> "wak"). Compared with [`canon`] of a base form.
pub fn canon(w: &str) -> String {
    let w = match IRREGULAR.iter().find(|(f, _)| *f == w) {
        Some((_, base)) => base,
        None => w,
    };
    let strip = |w: &str, suffix: &str| -> Option<String> {
        let stem = w.strip_suffix(suffix)?;
        (stem.len() >= 2).then(|| stem.to_string())
    };
    let undouble = |s: String| {
        let b = s.as_bytes();
        let n = b.len();
        if n >= 3 && b[n - 1] == b[n - 2] && !b"aeioulsz".contains(&b[n - 1]) {
            s[..n - 1].to_string()
        } else {
            s
        }
    };
    let stem = if let Some(s) = strip(w, "ying") {
        s + "y"
    } else if let Some(s) = strip(w, "ing") {
        undouble(s)
    } else if let Some(s) = strip(w, "ied") {
        s + "y"
    } else if let Some(s) = strip(w, "ed") {
        undouble(s)
    } else if let Some(s) = strip(w, "ies") {
        s + "y"
    } else if let Some(s) = w
        .strip_suffix("es")
        .filter(|s| s.ends_with(['s', 'x', 'z', 'h']))
    {
        s.to_string()
    } else if let Some(s) = w
        .strip_suffix('s')
        .filter(|s| s.len() >= 2 && !s.ends_with('s'))
    {
        s.to_string()
    } else {
        w.to_string()
    };
    match stem.strip_suffix('e') {
        Some(s) if s.len() >= 2 => s.to_string(),
        _ => stem,
    }
}

/// Whether `w` is a form of one of the verbs `bases` (base forms).
pub fn is_verb(w: &str, bases: &[&str]) -> bool {
    let c = canon(w);
    bases.iter().any(|b| canon(b) == c)
}

/// A verb some predicate reads, in any form.
pub fn is_known_verb(w: &str) -> bool {
    is_verb(w, KNOWN_VERBS)
}

/// A number written as digits or a word ("3", "three"); not times, years or money.
pub fn number(w: &str) -> Option<u32> {
    if let Some((_, n)) = NUMBERS.iter().find(|(x, _)| *x == w) {
        return Some(*n);
    }
    let n: u32 = w.parse().ok()?;
    (!(1900..=2100).contains(&n)).then_some(n)
}

/// Determiners and possessives that open a noun phrase without naming anything.
pub const DETERMINERS: &[&str] = &[
    "a", "an", "the", "my", "our", "his", "her", "their", "some", "this", "that", "these", "those",
    "its", "your",
];

/// Words that close a value: the start of another clause, a reason, a time, a place
/// said of something else.
pub const VALUE_STOPS: &[&str] = &[
    "because",
    "since",
    "so",
    "but",
    "and",
    "or",
    "with",
    "who",
    "which",
    "that",
    "when",
    "while",
    "where",
    "if",
    "from",
    "as",
    "after",
    "before",
    "until",
    "till",
    "though",
    "although",
    "ago",
    "last",
    "next",
    "this",
    "these",
    "now",
    "anymore",
    "again",
    "lately",
    "recently",
    "today",
    "yesterday",
    "tonight",
    "tomorrow",
    "too",
    "already",
    "yet",
    "every",
    "each",
    "once",
    "twice",
    "by",
    "during",
    "than",
    "for",
    "instead",
    "currently",
    "soon",
    "though",
    "either",
    "honestly",
    "actually",
    "lol",
    "haha",
    "btw",
    "right",
    "anyway",
    "here",
    "there",
    "at",
    "on",
    "in",
    "to",
    "of",
    "about",
    "like",
    "just",
    "mostly",
    "mainly",
    "usually",
    "always",
    "really",
    "still",
    "then",
    "all",
    "do",
    "did",
    "is",
    "are",
    "was",
    "were",
    "am",
    "be",
    "been",
    "it",
    "i",
    "we",
    "you",
    "he",
    "she",
    "they",
    "me",
    "him",
    "them",
    "us",
    "not",
    "no",
    "very",
    "pretty",
    "quite",
    "so-far",
    "these days",
    "either",
    "both",
    "almost",
    "nearly",
    "ever",
    "even",
    "what",
    "how",
    "why",
    "called",
    "named",
];

/// Reads a phrase from `toks[from..]`: determiners at its start are skipped, and it
/// ends before any of `stops` (after its first word), at a pause, or after `max` words.
/// Returns the phrase as written and the index after it.
pub fn phrase(toks: &[Tok], from: usize, stops: &[&str], max: usize) -> (String, usize) {
    let mut i = from;
    while i < toks.len() && toks[i].is(DETERMINERS) {
        i += 1;
    }
    let start = i;
    while i < toks.len() && i - start < max {
        if i > start && toks[i].is(stops) {
            break;
        }
        i += 1;
        if toks[i - 1].pause {
            break;
        }
    }
    let words: Vec<&str> = toks[start..i].iter().map(|t| t.orig.as_str()).collect();
    (words.join(" "), i)
}

/// A noun phrase: [`phrase`] with the usual stops, at most six words.
pub fn noun_phrase(toks: &[Tok], from: usize) -> (String, usize) {
    phrase(toks, from, VALUE_STOPS, 6)
}

/// Words that only point at something said before ("it", "that", "one").
pub fn is_pointer(value: &str) -> bool {
    const POINTERS: &[&str] = &[
        "it",
        "that",
        "this",
        "them",
        "those",
        "these",
        "one",
        "ones",
        "you",
        "yours",
        "idea",
        "ideas",
        "suggestion",
        "suggestions",
        "thing",
        "things",
        "stuff",
        "lot",
        "bit",
        "way",
        "everything",
        "something",
        "anything",
        "nothing",
        "all",
        "both",
        "him",
        "her",
        "me",
        "us",
        "which",
        "what",
        "much",
        "more",
        "most",
        "sound",
        "sounds",
        "too",
        "so",
        "well",
        "options",
        "list",
        "tips",
        "answer",
        "help",
        "advice",
        "info",
        "information",
        "recommendation",
        "recommendations",
        "question",
        "reply",
        "response",
        "explanation",
        "point",
        "points",
        "part",
        "look",
        "fact",
        "way",
    ];
    let words: Vec<String> = value
        .split_whitespace()
        .map(|w| w.to_lowercase())
        .filter(|w| !DETERMINERS.contains(&w.as_str()))
        .collect();
    words.is_empty() || words.iter().all(|w| POINTERS.contains(&w.as_str()))
}

/// A past form of a verb ("moved", "sold", "went"), not one that is also its base form
/// ("read", "quit") or a word that only ends the same way ("need", "speed").
pub fn past_form(w: &str) -> bool {
    const NOT_PAST: &[&str] = &[
        "need", "feed", "seed", "speed", "bleed", "breed", "proceed", "succeed", "exceed", "weed",
        "shed", "bed", "red", "wed", "embed", "indeed", "ted",
    ];
    const SAME: &[&str] = &[
        "read", "quit", "set", "put", "cut", "hurt", "hit", "let", "run", "come", "become", "been",
        "has", "had",
    ];
    (w.ends_with("ed") && w.len() > 4 && !NOT_PAST.contains(&w))
        || IRREGULAR.iter().any(|(f, _)| *f == w) && !SAME.contains(&w) && !w.ends_with("en")
}

/// Words that may be a verb after a subject.
pub(super) fn verbish(t: &Tok) -> bool {
    const AUX: &[&str] = &[
        "am",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "have",
        "has",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "can",
        "could",
        "should",
        "might",
        "may",
        "must",
        "shall",
        "not",
        "never",
        "used",
        "going",
        "got",
        "gets",
        "get",
        "just",
        "also",
        "really",
        "still",
        "always",
        "usually",
        "recently",
        "finally",
        "now",
        "actually",
        "currently",
    ];
    t.is(AUX) || is_known_verb(&t.low) || t.low.ends_with("ed")
}

/// A verb that may open a clause whose subject is understood ("Finally sold the Civic",
/// "and bought a Tesla"): not "like" (mostly a preposition there) and not an -ing form
/// (a gerund is a subject: "having an RV would...").
pub(super) fn understood_subject_verb(t: &Tok) -> bool {
    let gerund = t.low.ends_with("ing") && t.low.len() > 4;
    !(t.is(&["like", "likes"]) || gerund) && is_known_verb(&t.low)
}

/// The words of `toks[from..]` up to the clause's end, lowercased.
pub fn lows(toks: &[Tok], from: usize) -> Vec<&str> {
    toks.iter().skip(from).map(|t| t.low.as_str()).collect()
}

/// Items of a list: "peanuts and shellfish", "pork or beef".
pub fn list(toks: &[Tok], from: usize) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spells_out_contractions_and_keeps_pauses() {
        let t = tokens("I'm based in Porto, and I don't drive.");
        let low: Vec<&str> = t.iter().map(|t| t.low.as_str()).collect();
        assert_eq!(
            low,
            ["i", "am", "based", "in", "porto", "and", "i", "do", "not", "drive"]
        );
        assert!(t[4].pause);
        assert_eq!(t[0].orig, "I");
    }

    #[test]
    fn finds_one_stem_for_every_form() {
        for (w, base) in [
            ("moved", "move"),
            ("running", "run"),
            ("bought", "buy"),
            ("lives", "live"),
            ("practicing", "practice"),
            ("studies", "study"),
            ("switched", "switch"),
            ("swimming", "swim"),
            ("woke", "wake"),
            ("joined", "join"),
            ("loves", "love"),
            ("relocated", "relocate"),
        ] {
            assert_eq!(canon(w), canon(base), "{w}");
        }
    }

    #[test]
    fn reads_phrases_up_to_their_end() {
        let t = tokens("a golden retriever puppy called Biscuit last week");
        assert_eq!(noun_phrase(&t, 0).0, "golden retriever puppy");
        assert!(is_pointer("that idea"));
        assert!(!is_pointer("spicy Thai food"));
        assert_eq!(number("three"), Some(3));
        assert_eq!(number("2012"), None);
    }
}
