//! Standing instructions: what a user tells the assistant to do from now on ("from now
//! on, answer in metric units", "always cite your sources", "never use emojis", "keep
//! your replies short", "I'd like you to call me Sam going forward").
//!
//! Read from the grammar of a directive, not from phrasings of any conversation: a
//! clause addressed to the assistant (an imperative, "I want you to ...", "could you
//! ..."), that holds beyond the reply it asks for: it says so ("from now on", "always",
//! "never", "anymore"), or it is about the assistant's replies themselves ("your
//! answers", "replies"). "Give me a pasta recipe" asks for one reply and is no
//! instruction; neither is a question, unless it asks for something from now on.
use super::discourse::Speaking;
use super::fact::Personal;
use super::phrase::{tokens, Tok};
use cairn_core::FactCategory;

/// Words a directive may open with that carry nothing of it.
const LEAD: &[&str] = &[
    "please", "also", "and", "so", "ok", "okay", "oh", "just", "kindly", "actually", "well", "hey",
    "alright", "now", "but",
];

/// How a directive says it holds from now on, each a run of words: before its verb
/// ("from now on, answer ...", "always cite ...")...
const LASTING_BEFORE: &[&[&str]] = &[
    &["from", "now", "on"],
    &["from", "today", "on"],
    &["from", "this", "point", "on"],
    &["for", "the", "future"],
    &["from", "here", "on"],
    &["going", "forward"],
    &["moving", "forward"],
    &["in", "the", "future"],
    &["in", "future"],
    &["henceforth"],
    &["by", "default"],
    &["always"],
];

/// ... or at its end ("... in metric units from now on", "... anymore"). Elsewhere, and
/// "in the future" at the end, the words belong to what is asked ("how do I prevent it
/// in the future?").
const LASTING_AFTER: &[&[&str]] = &[
    &["from", "now", "on"],
    &["from", "today", "on"],
    &["from", "this", "point", "on"],
    &["from", "here", "on"],
    &["going", "forward"],
    &["moving", "forward"],
    &["by", "default"],
    &["anymore"],
    &["any", "more"],
    &["no", "longer"],
    &["every", "time"],
    &["each", "time"],
];

/// Clauses of a recurring condition before a directive ("whenever I ask ..., ...").
const RECURRING: &[&[&str]] = &[
    &["whenever"],
    &["when"],
    &["every", "time"],
    &["each", "time"],
    &["any", "time"],
    &["anytime"],
];

/// What the assistant produces: a directive about these ("your replies", "all answers",
/// "keep replies short") is about every reply.
const REPLIES: &[&str] = &["answers", "replies", "responses", "explanations"];

/// Words before [`REPLIES`] that make them every reply, not those of one thing.
const EVERY: &[&str] = &["your", "all", "any", "future"];

/// Verbs a directive to an assistant opens with, besides the verbs the personal grammar
/// knows: what it can be told to do with its replies.
const DIRECTING: &[&str] = &[
    "use",
    "answer",
    "reply",
    "respond",
    "write",
    "keep",
    "give",
    "call",
    "address",
    "include",
    "cite",
    "explain",
    "show",
    "list",
    "format",
    "add",
    "avoid",
    "mention",
    "remind",
    "suggest",
    "recommend",
    "ask",
    "tell",
    "talk",
    "speak",
    "stick",
    "assume",
    "treat",
    "refer",
    "convert",
    "round",
    "start",
    "end",
    "skip",
    "focus",
    "limit",
    "check",
    "be",
    "put",
    "make",
    "send",
    "let",
    "stay",
    "translate",
    "summarize",
    "summarise",
    "spell",
    "sign",
    "quote",
    "go",
    "switch",
    "change",
    "return",
    "do",
    "try",
    "leave",
    "bring",
    "drop",
    "get",
    "note",
];

/// Auxiliaries that, before "you", make a request of a question ("could you ...").
const ASKING: &[&str] = &["can", "could", "would", "will"];

/// A standing instruction in `sentence`, said by `speaking`'s speaker to an assistant:
/// whom it binds is the assistant, whose instruction it is the speaker's. A
/// short lead-in before a colon ("Change of plan: ...", "One more thing for the future:
/// ...") is read for its lasting phrase, and the directive after it.
pub(super) fn read(sentence: &str, speaking: &Speaking<'_>) -> Option<Personal> {
    let question = sentence.trim_end().ends_with('?');
    let (lasting, said) = match sentence.split_once(':') {
        Some((lead, rest)) if lead.split_whitespace().count() <= LEAD_IN_WORDS => {
            let lead = tokens(lead);
            (
                (0..lead.len()).any(|i| lasting_at(&lead, i).is_some()),
                rest,
            )
        }
        _ => (false, sentence),
    };
    let toks = tokens(said);
    let d = directive(&toks, question, lasting)?;
    let words: Vec<&str> = toks[d.at..d.end].iter().map(|t| t.orig.as_str()).collect();
    let key = words.join(" ").to_lowercase();
    // A note is written for the user it serves: its instruction is theirs.
    let person = match speaking.speaker {
        crate::NOTE_SPEAKER => super::reported::USER,
        speaker => speaker,
    };
    Some(Personal {
        person: person.to_string(),
        category: FactCategory::Instruction,
        label: format!("instruction: {key}"),
        key,
        value: words.join(" "),
        negated: d.negated,
        revision: true,
        since: None,
    })
}

/// The most words a lead-in before a colon may have.
const LEAD_IN_WORDS: usize = 6;

/// Where a directive's words are in a clause, and whether it denies them.
struct Directive {
    at: usize,
    end: usize,
    negated: bool,
}

/// The directive of `toks`, if it is one that lasts (`lasting`: a lead-in said so).
fn directive(toks: &[Tok], question: bool, mut lasting: bool) -> Option<Directive> {
    let (mut at, also) = skip_lead(toks, 0);
    lasting |= also;
    let mut nominal = false;
    match addressed(toks, at, question) {
        Some(Address::Verb(after)) => {
            let (after, also) = skip_lead(toks, after);
            (at, lasting) = (after, lasting || also);
        }
        Some(Address::Replies(after)) => (at, nominal) = (after, true),
        None if question => return None,
        None => {}
    }
    let mut negated = false;
    if let Some(after) = denial(toks, at) {
        negated = true;
        lasting |= toks[at].is(&["never"]);
        let (after, also) = skip_lead(toks, after);
        (at, lasting) = (after, lasting || also);
    }
    if !nominal && !is_directing(toks.get(at)?) {
        return None;
    }
    let (end, closing) = closing(toks, at);
    // "go back to", "switch back to": a return to a standing way of answering.
    let returns = toks[at].is(&["go", "switch", "change"])
        && toks.get(at + 1).is_some_and(|t| t.is(&["back"]))
        && toks.get(at + 2).is_some_and(|t| t.is(&["to"]));
    let about_replies = nominal
        || (at + 1..end).any(|i| toks[i].is(REPLIES) && (i == at + 1 || toks[i - 1].is(EVERY)));
    (lasting || closing || returns || about_replies).then_some(Directive { at, end, negated })
}

/// Where the directive that opens at `at` ends, and whether a lasting phrase closes it:
/// at the end of the sentence (politeness after it aside: "... from now on, please") or
/// of a clause ("... anymore; point me to ...").
fn closing(toks: &[Tok], at: usize) -> (usize, bool) {
    let mut last = toks.len();
    while last > at + 1 && toks[last - 1].is(LEAD) {
        last -= 1;
    }
    for a in at + 1..last {
        if let Some(n) = LASTING_AFTER
            .iter()
            .find(|run| starts(&toks[a..last], run))
            .map(|r| r.len())
        {
            if a + n == last || toks[a + n - 1].pause {
                return (a, true);
            }
        }
    }
    (last, false)
}

/// The lasting phrase that opens at `i`, if one does (its length).
fn lasting_at(toks: &[Tok], i: usize) -> Option<usize> {
    LASTING_BEFORE
        .iter()
        .chain(LASTING_AFTER)
        .find(|run| starts(&toks[i..], run))
        .map(|r| r.len())
}

/// Whether `toks` opens with `run`.
fn starts(toks: &[Tok], run: &[&str]) -> bool {
    toks.len() >= run.len() && toks.iter().zip(run).all(|(t, r)| t.low == *r)
}

/// The first word at or after `at` that is neither a lead-in, a lasting phrase nor a
/// clause of a recurring condition ("whenever I ask about wine, ...", "when you write
/// Python for me, ..."), and whether a lasting phrase or such a clause was passed
/// ("never" stays: it is the directive's denial).
fn skip_lead(toks: &[Tok], mut at: usize) -> (usize, bool) {
    let mut lasting = false;
    loop {
        let rest = &toks[at.min(toks.len())..];
        if let Some(run) = LASTING_BEFORE.iter().find(|run| starts(rest, run)) {
            at += run.len();
            lasting = true;
        } else if RECURRING.iter().any(|run| starts(rest, run)) {
            // The condition ends at its comma; without one it is no lead.
            match rest.iter().position(|t| t.pause) {
                Some(p) => (at, lasting) = (at + p + 1, true),
                None => return (at, lasting),
            }
        } else if rest.first().is_some_and(|t| t.is(LEAD)) {
            at += 1;
        } else {
            return (at, lasting);
        }
    }
}

/// How a lead addresses the assistant.
enum Address {
    /// "I want you to", "I'd like you to", "could you", "feel free to": the directive's
    /// verb is here.
    Verb(usize),
    /// "I want all answers ...", "I prefer your replies ...": what the replies should be
    /// starts here.
    Replies(usize),
}

/// How the lead at `at` addresses the assistant, if it does.
fn addressed(toks: &[Tok], at: usize, question: bool) -> Option<Address> {
    let w = |i: usize| toks.get(at + i).map_or("", |t| t.low.as_str());
    let verb = match (w(0), w(1), w(2), w(3)) {
        ("i", "want" | "need", "you", "to") => Some(at + 4),
        ("i", "would", "like" | "prefer", "you") if w(4) == "to" => Some(at + 5),
        ("i", "would", "like" | "prefer", "you") => Some(at + 4),
        ("i", "prefer", "you", "to") => Some(at + 4),
        ("i", "prefer", "you", _) => Some(at + 3),
        ("feel", "free", "to", _) => Some(at + 3),
        (a, "you", _, _) if question && ASKING.contains(&a) => Some(at + 2),
        _ => None,
    };
    if let Some(v) = verb {
        return Some(Address::Verb(v));
    }
    let wants = matches!((w(0), w(1)), ("i", "want" | "need" | "prefer"));
    let replies = |i: usize| toks.get(i).is_some_and(|t| t.is(REPLIES));
    match wants && !question {
        true if replies(at + 2) => Some(Address::Replies(at + 2)),
        true if toks.get(at + 2).is_some_and(|t| t.is(EVERY)) && replies(at + 3) => {
            Some(Address::Replies(at + 2))
        }
        _ => None,
    }
}

/// After a denial the directive opens with ("do not", "never", "stop"), where its verb is.
fn denial(toks: &[Tok], at: usize) -> Option<usize> {
    let w = |i: usize| toks.get(at + i).map_or("", |t| t.low.as_str());
    match (w(0), w(1)) {
        ("do", "not") => Some(at + 2),
        ("never" | "stop", _) => Some(at + 1),
        _ => None,
    }
}

/// Whether a directive may open with `verb`: one that directs a reply ("stop using"
/// opens with its -ing form).
fn is_directing(verb: &Tok) -> bool {
    let w = verb.low.as_str();
    let base = w.strip_suffix("ing").unwrap_or(w);
    DIRECTING.contains(&w) || DIRECTING.contains(&base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instruction(s: &str) -> Option<(String, bool)> {
        let speaking = Speaking {
            speaker: "user",
            at: None,
            with_assistant: true,
        };
        read(s, &speaking).map(|p| (p.value, p.negated))
    }

    #[test]
    fn a_lasting_directive_is_an_instruction() {
        let (v, neg) = instruction("From now on, please answer in metric units.").unwrap();
        assert_eq!((v.as_str(), neg), ("answer in metric units", false));
        let (v, _) = instruction("I'd like you to call me Sam going forward.").unwrap();
        assert_eq!(v, "call me Sam");
        let (v, neg) = instruction("Never use emojis when you write to me.").unwrap();
        assert_eq!((v.as_str(), neg), ("use emojis when you write to me", true));
        let (v, _) = instruction("Could you always cite your sources?").unwrap();
        assert_eq!(v, "cite your sources");
        let (v, _) = instruction("From now on, always answer me in French.").unwrap();
        assert_eq!(v, "answer me in French");
        let (v, _) = instruction("Actually, go back to imperial units from now on.").unwrap();
        assert_eq!(v, "go back to imperial units");
        let (v, _) =
            instruction("Keep your answers short from now on, three sentences at most.").unwrap();
        assert_eq!(v, "Keep your answers short");
        let (v, _) =
            instruction("Whenever I ask about wine, stick to bottles from Portugal.").unwrap();
        assert_eq!(v, "stick to bottles from Portugal");
        let (v, _) = instruction("Change of plan: from now on use Australian spelling.").unwrap();
        assert_eq!(v, "use Australian spelling");
        let (v, _) = instruction("Quote prices in euros from now on, please.").unwrap();
        assert_eq!(v, "Quote prices in euros");
        let (v, _) = instruction("Note: I want all answers in Spanish.").unwrap();
        assert_eq!(v, "all answers in Spanish");
        let (v, _) = instruction("Keep your replies short.").unwrap();
        assert_eq!(v, "Keep your replies short");
        let (v, neg) = instruction("Don't suggest recipes with nuts anymore.").unwrap();
        assert_eq!((v.as_str(), neg), ("suggest recipes with nuts", true));
    }

    #[test]
    fn a_one_off_request_or_a_statement_is_not() {
        for s in [
            "Give me a recipe for pasta.",
            "Can you recommend a good book?",
            "I always go running on Sundays.",
            "My sister never eats meat.",
            "Thanks, that answers my question.",
            "Always good to hear from you!",
            "What did you answer last time?",
            "Can you tell me how to prevent fin rot in the future?",
            "Write a scene for an episode of It's Always Sunny in Philadelphia.",
            "Can you give me some suggestions?",
            "Would you like some specific recommendations?",
            "Make sure to include the correct answer for each question.",
            "Try again.",
            "Let me try that again.",
            "Going back to my skincare routine, I like the new cream.",
            "When I was a kid, I lived in Porto.",
        ] {
            assert_eq!(instruction(s), None, "{s}");
        }
    }
}

/// What the reader finds in a file of messages, one per line (`CAIRN_INSTRUCTION_SAMPLE`):
/// `cargo test -p cairn-engine --lib instruction::sample -- --ignored --nocapture`.
#[cfg(test)]
#[test]
#[ignore]
fn sample() {
    let Ok(path) = std::env::var("CAIRN_INSTRUCTION_SAMPLE") else {
        return;
    };
    let text = std::fs::read_to_string(path).expect("sample file");
    let speaking = Speaking {
        speaker: "user",
        at: None,
        with_assistant: true,
    };
    let (mut messages, mut found) = (0, 0);
    for line in text.lines() {
        messages += 1;
        for (sentence, p) in super::read(line, &speaking) {
            if p.category == FactCategory::Instruction {
                found += 1;
                println!("{} | {sentence}", p.value);
            }
        }
    }
    println!("{found} instructions in {messages} messages");
}

#[cfg(test)]
#[test]
fn a_note_of_an_instruction_is_the_users() {
    let speaking = Speaking {
        speaker: crate::NOTE_SPEAKER,
        at: None,
        with_assistant: false,
    };
    let found = super::read(
        "From now on, always answer the user in metric units.",
        &speaking,
    );
    let p = found
        .iter()
        .map(|(_, p)| p)
        .find(|p| p.category == FactCategory::Instruction)
        .unwrap_or_else(|| panic!("{found:?}"));
    assert_eq!(p.person, super::reported::USER);
    assert!(p.value.contains("metric units"), "{p:?}");
}
