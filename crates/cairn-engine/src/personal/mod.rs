//! Personal facts, read from what people say about themselves and the people around
//! them, without a model: from the grammar of each clause (a first-person subject, or
//! someone the speaker names, with a verb or copula and its complement; negation, tense
//! and modality), not from phrases of any conversation.
//!
//! "I moved to Lisbon last month" is the speaker's home, changed, since about a month
//! before the message; "my sister lives in Rome" is the sister's home; "if I moved to
//! Paris" and "would I need French?" state nothing; "I used to live in Porto" denies a
//! home; "I love spicy Thai food but dislike olives" are two preferences, one negated.
//! What a clause says becomes a [`Personal`]: whom it is about, its category, the
//! attribute it gives a value to (the subject of a version chain), the value.
//!
//! `instruction.rs` reads what the speaker tells an assistant to do from now on;
//! `clause.rs` splits sentences into clauses and reads their auxiliaries, negation
//! and tense; `subject.rs` whom each clause is about; `predicates/` reads what each
//! kind of verb says;
//! `reported.rs` turns a note about "the user" into the user's own words;
//! `phrase.rs` has the words and phrases; `lexicon.rs` the word classes; `when.rs`
//! dates a change; `fact.rs` holds the [`Personal`] fact; `discourse.rs` who is
//! speaking, whom a clause is about and what the message said before.
mod clause;
mod discourse;
mod fact;
mod instruction;
mod lexicon;
mod phrase;
mod predicates;
mod reported;
mod subject;
mod when;

use clause::Clause;
use discourse::Context;

pub use discourse::Speaking;
pub use fact::Personal;
pub use phrase::number;
pub use reported::USER;

/// Whether `word` names a relation ("sister", "husband", "boss").
pub fn is_relation(word: &str) -> bool {
    lexicon::RELATIONS.contains(&word)
}

/// The personal facts of one message, each with the sentence it was read from.
pub fn read(text: &str, speaking: &Speaking<'_>) -> Vec<(String, Personal)> {
    let mut ctx = Context::default();
    let mut out: Vec<(String, Personal)> = Vec::new();
    for sentence in sentences(text) {
        // A note about "the user" is read as the user saying it: in a note, or in a chat
        // with an assistant. In a chat of named speakers "the user" is more often a
        // product's user than the one speaking ("the user clicks Save and it crashes").
        let to_assistant = speaking.with_assistant || speaking.speaker == crate::NOTE_SPEAKER;
        let reported = to_assistant
            .then(|| reported::in_first_person(&sentence))
            .flatten();
        // A directive to the assistant binds it, not the speaker: it states no other
        // fact. Read as written ("always answer the user in metric units"), or as the
        // user's own words ("Note: the user wants all answers in Spanish").
        let directive = || {
            let as_said = instruction::read(&sentence, speaking);
            as_said.or_else(|| instruction::read(reported.as_deref()?, speaking))
        };
        if let Some(p) = to_assistant.then(directive).flatten() {
            push(&mut out, &sentence, p);
            continue;
        }
        let user = Speaking {
            speaker: reported::USER,
            ..*speaking
        };
        let (toks, speaking) = match &reported {
            Some(said) => (phrase::tokens(said), &user),
            None => (phrase::tokens(&sentence), speaking),
        };
        ctx.last_subject = None;
        ctx.skipped = false;
        // "my partner Ana": said in any clause, a question's too.
        for p in predicates::named_relations(&toks, speaking, &mut ctx) {
            push(&mut out, &sentence, p);
        }
        for piece in clause::split(&toks) {
            let words = &toks[piece.1.clone()];
            // "her name is Rosie": names what the message just introduced.
            if let Some(name) = predicates::naming(words) {
                if let Some((_, last)) = out.last_mut().filter(|(_, p)| p.names_something()) {
                    last.name(&name);
                }
                continue;
            }
            let found = match predicates::without_subject(words, speaking) {
                Some(p) => vec![p],
                None => match Clause::parse(&toks, piece, speaking, &mut ctx) {
                    Some(c) => {
                        ctx.skipped = false;
                        predicates::read(&c, speaking, &mut ctx)
                    }
                    None => {
                        ctx.skipped = true;
                        continue;
                    }
                },
            };
            for p in found {
                push(&mut out, &sentence, p);
            }
        }
    }
    out
}

fn push(out: &mut Vec<(String, Personal)>, sentence: &str, p: Personal) {
    let dup = out
        .iter()
        .any(|(_, q)| q.subject() == p.subject() && q.value == p.value);
    if !dup {
        out.push((sentence.to_string(), p));
    }
}

/// The sentences of `text`, a piece ending in an abbreviation ("St.", "Dr.") joined to
/// the next.
fn sentences(text: &str) -> Vec<String> {
    const ABBREVIATIONS: &[&str] = &[
        "st.", "dr.", "mr.", "mrs.", "ms.", "jr.", "sr.", "mt.", "inc.", "co.", "ltd.", "vs.",
        "prof.", "ave.", "no.", "approx.", "e.g.", "i.e.", "etc.",
    ];
    let mut out: Vec<String> = Vec::new();
    let mut joined = false;
    for (a, b) in crate::text::sentences(text) {
        let piece = text[a..b].trim();
        match out.last_mut() {
            Some(last) if joined => {
                last.push(' ');
                last.push_str(piece);
            }
            _ => out.push(piece.to_string()),
        }
        let last_word = piece.rsplit(' ').next().unwrap_or("").to_lowercase();
        joined = ABBREVIATIONS.contains(&last_word.as_str());
    }
    out
}

#[cfg(test)]
mod tests;
