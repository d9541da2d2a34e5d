//! Facts with a subject, read from messages by patterns (no model): values stated or
//! revised ("the budget for Atlas is $120k", "launch moved to May 3", "let's do $95k
//! instead", "Dana will own the vendor review"), and the version chains they form.
//!
//! Beside them, personal facts (`personal/`): what people say of themselves and the
//! people around them ("I moved to Lisbon last month", "my sister lives in Rome").
//!
//! Extraction is per message and pure, so fact units are derived like any other unit.
//! Chains are computed when asked (history, recall) from every fact of the space: a
//! later statement about the same subject supersedes an earlier one, and both stay. A
//! personal fact's chain holds only facts about the same person of the same category.
use crate::personal::{self, Personal, Speaking};
use crate::text::{sentences, stem, STOP_WORDS};
use cairn_core::{
    FactCategory, FactDetail, FactHistory, FactVersion, Message, Provenance, Role, SessionInput,
    SpaceId, Timestamp, Unit, UnitDetail, UnitKind,
};
use regex::Regex;
use std::collections::HashMap;
use std::sync::LazyLock;

mod index;
pub use index::FactIndex;
#[cfg(test)]
use index::SubjectIndex;

mod chains;
mod extract;
#[cfg(test)]
mod tests;
pub use chains::*;
pub use extract::*;

pub(crate) fn detail(u: &Unit) -> Option<&FactDetail> {
    match &u.detail {
        Some(UnitDetail::Fact(f)) => Some(f),
        _ => None,
    }
}

/// The sentence a fact unit states, as its speaker said it (its text less the
/// `speaker: ` it opens with).
pub(crate) fn stated(u: &Unit) -> &str {
    let speaker = u.provenance.speakers.first().map_or("", String::as_str);
    u.text
        .strip_prefix(speaker)
        .and_then(|t| t.strip_prefix(": "))
        .unwrap_or(&u.text)
}

/// Whether `f` is a fact about `person` (lowercased).
pub(crate) fn is_about(f: &Unit, person: &str) -> bool {
    detail(f)
        .and_then(|d| d.person.as_deref())
        .is_some_and(|p| p.to_lowercase() == person)
}
