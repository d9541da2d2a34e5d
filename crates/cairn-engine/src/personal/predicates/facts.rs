//! The facts read from one clause, as the readers of each kind of verb add them.
use crate::personal::clause::Clause;
use crate::personal::fact::Personal;
use crate::personal::phrase::is_pointer;
use crate::personal::when;
use cairn_core::FactCategory as C;

/// A fact of the clause's subject.
pub(super) struct Facts<'c, 'a> {
    pub(super) c: &'c Clause<'a>,
    pub(super) out: Vec<Personal>,
    pub(super) at: Option<cairn_core::Timestamp>,
    pub(super) speaker: String,
}

impl Facts<'_, '_> {
    /// Adds a fact; `negated` and `revision` are added to what the clause says itself.
    pub(super) fn add(&mut self, category: C, label: &str, key: &str, value: &str, negated: bool) {
        self.add_about(
            &self.c.who.person.clone(),
            category,
            label,
            key,
            value,
            negated,
        );
    }

    pub(super) fn add_about(
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
    pub(super) fn changed(&mut self, from: usize) {
        let since = when::since(&self.c.low, self.at);
        for p in &mut self.out[from..] {
            p.revision = true;
            p.since = p.since.or(since);
        }
    }
}
