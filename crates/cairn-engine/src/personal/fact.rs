//! One personal fact: whom it is about, its category, the attribute it gives a value to
//! (the subject of a version chain), the value.
use super::lexicon;
use cairn_core::{FactCategory, Timestamp};

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
    pub(super) fn names_something(&self) -> bool {
        matches!(self.category, FactCategory::Pet | FactCategory::Family) && !self.negated
    }

    /// Gives the name said after ("her name is Rosie").
    pub(super) fn name(&mut self, name: &str) {
        self.value = format!("{} {name}", self.value);
        if self.category == FactCategory::Pet {
            self.label = format!("{} {name}", self.label);
            self.key = format!("{} {}", self.key, name.to_lowercase());
        }
    }
}
