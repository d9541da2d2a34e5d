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
//! dates a change.
mod clause;
mod instruction;
mod lexicon;
mod phrase;
mod predicates;
mod reported;
mod subject;
mod when;

use cairn_core::{FactCategory, Timestamp};
use clause::Clause;
use subject::Who;

pub use phrase::number;
pub use reported::USER;

/// Whether `word` names a relation ("sister", "husband", "boss").
pub fn is_relation(word: &str) -> bool {
    lexicon::RELATIONS.contains(&word)
}

/// One personal fact read from a clause.
#[derive(Debug, Clone, PartialEq)]
pub struct Personal {
    /// Whom it is about: the speaker, "<speaker>'s <relation>", or a name.
    pub person: String,
    pub category: FactCategory,
    /// The attribute as a reader sees it ("home", "diet: pork").
    pub label: String,
    /// The words naming the attribute, which chains compare ("home", "pork").
    pub key: String,
    pub value: String,
    pub negated: bool,
    /// The statement says it changes something ("moved to", "now", "no longer").
    pub revision: bool,
    /// When the change took effect, when the clause dates it.
    pub since: Option<Timestamp>,
}

impl Personal {
    /// The fact's subject: `<person>'s <label>`.
    pub fn subject(&self) -> String {
        format!("{}'s {}", self.person, self.label)
    }

    /// The words a question about this fact asks with: its attribute, whom it is about
    /// (a relation: "sister"), and the words its category is asked about with ("where do
    /// I live" for a home, "how many" for a count). The fact's lexical key.
    pub fn asked_with(&self) -> String {
        let category = match self.category {
            FactCategory::Home => "home live lives living based",
            FactCategory::Work => "work works working workplace employer company job",
            FactCategory::Role => "job occupation profession work do title role study",
            FactCategory::Family if lexicon::is_partner(&self.label) => "partner relationship",
            FactCategory::Family => "family",
            FactCategory::Pet => "pet",
            FactCategory::Possession => "own have",
            FactCategory::Health => "health condition",
            FactCategory::Diet => "diet eat allergic allergy",
            FactCategory::Preference => "like likes love favorite",
            FactCategory::Habit => "usually habit",
            FactCategory::Plan => "plan planning",
            FactCategory::Count => "how many number",
            FactCategory::Instruction => "instruction always answer reply",
        };
        let relation = self.person.split_once("'s ").map_or("", |(_, r)| r);
        format!("{relation} {} {category}", self.label.replace(':', ""))
    }

    /// A pet, or someone the speaker is with, that a later clause may name.
    fn names_something(&self) -> bool {
        matches!(self.category, FactCategory::Pet | FactCategory::Family) && !self.negated
    }

    /// Gives the name said after ("her name is Rosie").
    fn name(&mut self, name: &str) {
        self.value = format!("{} {name}", self.value);
        if self.category == FactCategory::Pet {
            self.label = format!("{} {name}", self.label);
            self.key = format!("{} {}", self.key, name.to_lowercase());
        }
    }
}

/// Who is speaking, and when.
#[derive(Debug, Clone, Copy)]
pub struct Speaking<'a> {
    pub speaker: &'a str,
    pub at: Option<Timestamp>,
    /// The chat is with an assistant (roles): "we" is the speaker's household there; in
    /// a chat of named speakers it may be a team.
    pub with_assistant: bool,
}

/// What a message has said so far, for the clauses after: names given to relations
/// ("my partner Ana"), the last third party ("she"), the last thing named.
#[derive(Debug, Default)]
struct Context {
    aliases: Vec<(String, String)>,
    last_third: Option<String>,
    last_object: Option<String>,
    last_subject: Option<Who>,
    /// The clause before in this sentence stated nothing (a question, a modal).
    skipped: bool,
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
