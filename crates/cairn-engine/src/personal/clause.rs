//! Clauses of a sentence and what opens each: its subject (`subject.rs`), auxiliaries,
//! negation, tense.
use super::discourse::{Context, Speaking, Who};
use super::lexicon::IRREGULAR;
use super::phrase::{canon, is_known_verb, past_form, understood_subject_verb, verbish, Tok};
use super::subject::{subject, STARTERS};
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tense {
    Present,
    Past,
    /// "I have lived", "I've been": still true.
    Perfect,
    Future,
    /// "used to": true once, no longer.
    UsedTo,
}

/// A clause whose subject and auxiliaries are read: `verb` is the index of its main
/// verb (or of the copula's complement, when `copula`).
#[derive(Debug)]
pub struct Clause<'a> {
    pub who: Who,
    pub toks: &'a [Tok],
    pub verb: usize,
    pub copula: bool,
    /// The main verb is an -ing form after "be" ("I'm moving").
    pub progressive: bool,
    pub tense: Tense,
    pub negated: bool,
    /// A word saying the state is new or over: "now", "anymore", "no longer", "again".
    pub change: bool,
    /// A word saying it is done regularly: "usually", "always", "often".
    pub habitual: bool,
    /// "I'd rather", "I would prefer": a preference said with a modal.
    pub rather: bool,
    /// The clause lowercased, for time and frequency expressions.
    pub low: String,
}

/// Words that join clauses.
const CONJUNCTIONS: &[&str] = &[
    "and", "but", "so", "because", "cause", "cuz", "since", "while", "although", "though",
    "whereas", "when", "whenever", "if", "unless", "which", "where", "or", "plus", "then", "as",
    "after", "before", "until", "till", "once",
];
/// Conjunctions after which a clause states nothing as fact ("if I moved").
const IRREALIS: &[&str] = &[
    "if",
    "unless",
    "when",
    "whenever",
    "whether",
    "suppose",
    "supposing",
    "imagine",
    "wish",
    "until",
    "till",
    "once",
    "before",
    "as",
];
/// Words that open a question.
const INTERROGATIVES: &[&str] = &[
    "do", "does", "did", "is", "are", "am", "was", "were", "can", "could", "would", "should",
    "will", "shall", "may", "might", "what", "how", "where", "when", "why", "who", "which",
    "whose", "any", "anyone", "anything", "have", "has", "had", "isn't", "aren't",
];
/// Words that may open a clause before its subject without changing it.
const FILLERS: &[&str] = &[
    "so",
    "oh",
    "well",
    "honestly",
    "actually",
    "btw",
    "also",
    "and",
    "but",
    "yeah",
    "yes",
    "ok",
    "okay",
    "anyway",
    "anyways",
    "plus",
    "sadly",
    "luckily",
    "fortunately",
    "unfortunately",
    "finally",
    "just",
    "now",
    "then",
    "hey",
    "hi",
    "hello",
    "lol",
    "haha",
    "ah",
    "um",
    "uh",
    "wow",
    "btw",
    "fyi",
    "basically",
    "apparently",
    "recently",
    "lately",
    "currently",
    "still",
    "really",
    "today",
    "yesterday",
    "obviously",
    "ps",
    "p.s",
    "update",
    "besides",
    "meanwhile",
    "otherwise",
    "however",
    "thankfully",
    "hopefully",
    "ugh",
    "yay",
    "alright",
    "right",
    "sure",
    "nope",
    "no",
    "funny",
    "guess",
    "what",
    "oops",
];
/// Adverbs between a subject and its verb.
const ADVERBS: &[&str] = &[
    "just",
    "recently",
    "finally",
    "also",
    "really",
    "actually",
    "still",
    "currently",
    "now",
    "usually",
    "always",
    "often",
    "normally",
    "typically",
    "regularly",
    "generally",
    "sometimes",
    "mostly",
    "honestly",
    "definitely",
    "totally",
    "absolutely",
    "even",
    "already",
    "officially",
    "basically",
    "literally",
    "much",
    "truly",
    "seriously",
    "kinda",
    "pretty",
    "probably",
    "only",
    "ever",
    "rarely",
    "occasionally",
    "frequently",
    "constantly",
    "mainly",
    "primarily",
    "originally",
    "officially",
    "both",
    "all",
    "certainly",
    "genuinely",
    "absolutely",
    "simply",
    "once",
    "first",
    "somehow",
    "almost",
    "nearly",
    "barely",
    "hardly",
    "again",
    "suddenly",
    "eventually",
    "today",
    "tonight",
    "yesterday",
    "happily",
    "proudly",
    "secretly",
    "kind",
    "sort",
    "obviously",
    "unfortunately",
    "sadly",
    "luckily",
    "finally",
];
/// Adverbs that say a thing is done regularly.
const HABITUAL: &[&str] = &[
    "usually",
    "always",
    "often",
    "normally",
    "typically",
    "regularly",
    "generally",
    "sometimes",
    "occasionally",
    "frequently",
    "constantly",
    "rarely",
];
/// Past participles beside the regular -ed/-en forms.
fn participle(w: &str) -> bool {
    w.ends_with("ed")
        || w.ends_with("en")
        || IRREGULAR.iter().any(|(f, _)| *f == w)
        || matches!(w, "been" | "got" | "run" | "come" | "become" | "quit")
}

/// Whether a clause can start at `j`: a subject, or (after `and`/`but` or at a sentence's
/// start) a verb whose subject is understood, or (after a pause) a question.
fn starts_clause(toks: &[Tok], j: usize, lead: Option<&str>, after_pause: bool) -> bool {
    let mut k = j;
    while k < toks.len() && toks[k].is(FILLERS) && !toks[k].is(&["i"]) {
        k += 1;
    }
    let Some(t) = toks.get(k) else { return false };
    if t.is(&["i", "we", "he", "she"]) {
        return true;
    }
    if t.is(&["my", "our"]) {
        return toks[k + 1..].iter().take(4).any(verbish);
    }
    if t.cap() && !t.is(STARTERS) && k > 0 {
        return toks.get(k + 1).is_some_and(verbish);
    }
    if after_pause && t.is(INTERROGATIVES) {
        return true;
    }
    // ", her name is Priya"
    if after_pause && t.is(&["her", "his", "its", "their"]) {
        return toks.get(k + 1).is_some_and(|n| n.is(&["name", "name's"]));
    }
    // At a sentence's start only a past form ("Finally sold the Civic"): a base form
    // there is a request ("Write the SQL").
    if lead.is_none()
        && !after_pause
        && j == 0
        && !past_form(&t.low)
        && !t.is(&["been", "love", "loved"])
    {
        return false;
    }
    let ellipsis = matches!(
        lead,
        Some("and" | "but" | "then" | "or" | "plus" | "so") | None
    );
    // ", studying biology": a participle after a pause says more of the subject.
    let participle = lead.is_none() && after_pause && t.low.ends_with("ing") && t.low.len() > 4;
    ellipsis && (understood_subject_verb(t) || participle && is_known_verb(&t.low))
}

/// The clauses of a sentence's tokens: ranges, with the conjunction that opened each.
pub fn split(toks: &[Tok]) -> Vec<(Option<String>, Range<usize>)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut lead: Option<String> = None;
    let mut i = 1;
    while i < toks.len() {
        let paused = toks[i - 1].pause;
        // "I realized how much I love ...", "I found that I enjoy ...": the clause said.
        let said_at = |i: usize| {
            let j = if toks.get(i + 1).is_some_and(|t| t.is(&["much", "many"])) {
                i + 2
            } else {
                i + 1
            };
            let said = toks[i].is(&["that", "how"])
                && !toks[i - 1].is(super::phrase::DETERMINERS)
                && toks.get(j).is_some_and(|t| t.is(&["i", "we"]));
            said.then_some(j)
        };
        if let Some(j) = said_at(i) {
            out.push((lead.take(), start..i));
            start = j;
            i = j + 1;
            continue;
        }
        let conj = toks[i].is(CONJUNCTIONS);
        if conj && starts_clause(toks, i + 1, Some(&toks[i].low), paused) {
            out.push((lead.take(), start..i));
            lead = Some(toks[i].low.clone());
            start = i + 1;
            i += 2;
            continue;
        }
        if paused && !conj && starts_clause(toks, i, None, true) {
            out.push((lead.take(), start..i));
            start = i;
        }
        i += 1;
    }
    if start < toks.len() {
        out.push((lead, start..toks.len()));
    }
    out
}

/// What a word before a clause's main verb is.
enum Aux {
    /// An auxiliary or adverb, read with this many words after it ("used to": 1).
    Read(usize),
    /// The main verb (or the copula's complement).
    Verb,
    /// A modal ("would", "can"): the clause states no fact.
    Modal,
}

impl<'a> Clause<'a> {
    /// Reads the subject and auxiliaries of `toks[range]`; `None` for a clause that
    /// states no fact of a person (a question, a hypothetical, no person as subject).
    pub fn parse(
        all: &'a [Tok],
        (lead, range): (Option<String>, Range<usize>),
        speaking: &Speaking<'_>,
        ctx: &mut Context,
    ) -> Option<Clause<'a>> {
        let after_pause = range.start > 0 && all[range.start - 1].pause;
        let toks = &all[range];
        if lead.as_deref().is_some_and(|l| IRREALIS.contains(&l)) {
            return None;
        }
        let mut k = 0;
        while k < toks.len() && toks[k].is(FILLERS) && !toks[k].is(&["i"]) {
            if toks[k].is(&["what"]) && toks.get(k + 1).is_some_and(|t| t.is(&["if"])) {
                return None;
            }
            k += 1;
        }
        let first = toks.get(k)?;
        if first.is(IRREALIS) || first.is(&["in"]) && toks.get(k + 1)?.is(&["case"]) {
            return None;
        }
        // A phrase before the subject: "With the new job I wake up at 5:45".
        if first.is(&[
            "with", "after", "for", "in", "at", "on", "during", "since", "thanks", "because", "as",
            "from", "between",
        ]) {
            // The subject after the phrase's pause, else the first "I" near.
            let after_pause = (k..toks.len().min(k + 12))
                .find(|&j| toks[j].pause)
                .map(|j| j + 1)
                .filter(|&j| toks.get(j).is_some_and(|t| t.is(&["i", "we"])));
            k = match after_pause {
                Some(j) => j,
                None => (k + 1..toks.len().min(k + 8)).find(|&j| toks[j].is(&["i", "we"]))?,
            };
        }
        let (who, after) = subject(toks, k, after_pause && k == 0, speaking, ctx)?;
        if !who.speaker {
            ctx.last_third = Some(who.person.clone());
        }
        ctx.last_subject = Some(who.clone());
        let low = toks
            .iter()
            .map(|t| t.low.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let mut c = Clause {
            who,
            toks,
            verb: after,
            copula: false,
            progressive: false,
            tense: Tense::Present,
            negated: false,
            change: false,
            habitual: false,
            rather: false,
            low,
        };
        c.read_auxiliaries()?;
        Some(c)
    }

    /// Moves `verb` past auxiliaries and adverbs, noting tense, negation and
    /// modality; `None` for a modal clause ("I would", "I could").
    fn read_auxiliaries(&mut self) -> Option<()> {
        let toks = self.toks;
        let mut k = self.verb;
        while k < toks.len() {
            match self.auxiliary(k) {
                Aux::Read(more) => k += 1 + more,
                Aux::Verb => break,
                Aux::Modal => return None,
            }
        }
        self.verb = k;
        // "I lived in Oslo", "I wanted to": the verb's own past.
        if self.tense == Tense::Present
            && !self.copula
            && toks.get(k).is_some_and(|t| past_form(&t.low))
        {
            self.tense = Tense::Past;
        }
        if self.low.contains("anymore")
            || self.low.contains("any more")
            || self.low.contains("no longer")
            || self.low.contains("these days")
            || self.low.ends_with(" now")
            || self.low.contains(" now ")
        {
            self.change = true;
        }
        if self.low.contains("anymore") || self.low.contains("any more") {
            self.negated = true;
        }
        let verb = toks.get(k)?;
        if self.copula && verb.low.ends_with("ing") && verb.low.len() > 4 {
            self.copula = false;
            self.progressive = true;
        }
        Some(())
    }

    /// Reads the word at `k` before the main verb: an auxiliary or adverb (noting the
    /// tense, negation, modality it says), the main verb itself, or a modal.
    fn auxiliary(&mut self, k: usize) -> Aux {
        let toks = self.toks;
        let next = toks.get(k + 1).map(|t| t.low.as_str()).unwrap_or("");
        let more = match toks[k].low.as_str() {
            "am" | "is" | "are" => {
                self.copula = true;
                self.tense = Tense::Present;
                0
            }
            "was" | "were" => {
                self.copula = true;
                self.tense = Tense::Past;
                0
            }
            "been" | "be" => {
                self.copula = true;
                if self.tense == Tense::Present {
                    self.tense = Tense::Perfect;
                }
                0
            }
            "have" | "has" if next == "to" => 1,
            "have" | "has" if participle(next) || ADVERBS.contains(&next) => {
                self.tense = Tense::Perfect;
                0
            }
            "had" if participle(next) || ADVERBS.contains(&next) => {
                self.tense = Tense::Past;
                0
            }
            "will" | "shall" => {
                self.tense = Tense::Future;
                0
            }
            "would" | "could" | "might" | "may" | "should" | "must" => match next {
                "rather" => {
                    self.rather = true;
                    1
                }
                "prefer" => 0,
                _ => return Aux::Modal,
            },
            // "I can't eat gluten" denies; "I can always check in" is ability, not
            // a fact.
            "can" if next == "not" => 0,
            "can" => return Aux::Modal,
            "do" | "does" if k + 1 < toks.len() => 0,
            "did" if k + 1 < toks.len() => {
                self.tense = Tense::Past;
                0
            }
            _ => return self.negation_or_adverb(k, next),
        };
        Aux::Read(more)
    }

    /// Reads the word at `k` when it is no auxiliary of tense or mood: a negation, "used
    /// to", "going to", "ended up", an adverb; else the main verb (or "got to", a modal).
    fn negation_or_adverb(&mut self, k: usize, next: &str) -> Aux {
        let more = match self.toks[k].low.as_str() {
            "not" | "never" => {
                self.negated = true;
                0
            }
            "no" if next == "longer" => {
                self.negated = true;
                self.change = true;
                1
            }
            "used" if next == "to" => {
                self.tense = Tense::UsedTo;
                1
            }
            "going" if next == "to" && self.copula => {
                self.tense = Tense::Future;
                self.copula = false;
                1
            }
            "got" if matches!(next, "to") => return Aux::Modal,
            // "I ended up getting a cavalier": what was done in the end.
            "ended" | "end" if next == "up" => {
                self.tense = Tense::Past;
                1
            }
            w if ADVERBS.contains(&w) => {
                if HABITUAL.contains(&w) {
                    self.habitual = true;
                }
                if matches!(w, "now" | "again" | "currently") {
                    self.change = true;
                }
                0
            }
            _ => return Aux::Verb,
        };
        Aux::Read(more)
    }

    /// The main verb (or the copula's first complement word).
    pub fn verb_tok(&self) -> &Tok {
        &self.toks[self.verb]
    }

    /// The tokens after the main verb.
    pub fn rest(&self) -> usize {
        self.verb + 1
    }

    /// A future or intended act ("I'm moving next month", "I will start").
    pub fn is_future(&self) -> bool {
        let arranged = self.progressive
            && self.tense == Tense::Present
            && !self.low.contains("since")
            && (mentions_future(&self.low) || names_a_time(&self.low));
        self.tense == Tense::Future
            || arranged
            || mentions_future(&self.low) && self.tense == Tense::Present
    }

    /// Says a state is over: "used to", or a past tense of a state ("I lived in").
    pub fn is_over(&self) -> bool {
        self.tense == Tense::UsedTo || self.tense == Tense::Past
    }
}

/// Words that place a clause in the future.
pub fn mentions_future(low: &str) -> bool {
    const FUTURE: &[&str] = &[
        "next ",
        "tomorrow",
        "soon",
        "in a few",
        "in two",
        "in three",
        "later this",
        "this coming",
        "upcoming",
        "in the future",
        "someday",
        "one day",
        "this weekend",
        "tonight",
        "next",
    ];
    FUTURE.iter().any(|f| low.contains(f))
}

/// A month, weekday or season: with a progressive verb, an arranged future ("I'm flying
/// out in July", "he's retiring in spring").
fn names_a_time(low: &str) -> bool {
    const TIMES: &[&str] = &[
        "january",
        "february",
        "march",
        "april",
        " may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "spring",
        "summer",
        "fall",
        "autumn",
        "winter",
        "weekend",
    ];
    TIMES.iter().any(|t| low.contains(t))
}

/// The canonical stem of the clause's main verb.
pub fn verb_stem(c: &Clause<'_>) -> String {
    canon(&c.verb_tok().low)
}
