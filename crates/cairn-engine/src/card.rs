//! The user's card: a few lines at the head of a recall's context that an agent should
//! know on every turn, whatever was asked: the user's standing instructions ("from now
//! on, answer in metric units"), then what they said of themself that holds now and
//! bears on the query (a diet before "what should I cook?"), then their key facts (diet,
//! health, home, work) while there is room. Letta keeps such a block in every prompt;
//! here it is derived, current, cited and bounded.
//!
//! - **Current**: each line is the newest statement of one of the user's version chains
//!   that the request's view sees (as of its time, in its scope), and an instruction a
//!   newer one about the same thing replaced is left out: two instructions are about the
//!   same thing when their chains join, or what they direct is
//!   [`CardConfig::same_instruction`] close in meaning.
//! - **Bounded**: the card takes at most [`CardConfig::share`] of the token budget; the
//!   context's evidence has the rest.
//! - **One user**: a view whose statements of the user span several end users (several
//!   partitions) has no card.
//!
//! The engine reads the chains and the cosines (`engine/card.rs`); this module chooses
//! and writes the lines.
use cairn_core::{CardLine, FactCategory, Unit};

/// How the card is made (`[engine.card]`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CardConfig {
    /// The most of a recall's token budget the card may take (0: no card).
    pub share: f32,
    /// The cosine of what two instructions direct (their vectors leave the lead-ins out)
    /// from which the newer replaces the older: "give me measurements in metric units"
    /// and "go back to imperial units" are .45 apart with MiniLM, "answer in metric
    /// units" and "answer briefly" .28.
    pub same_instruction: f32,
    /// The most instructions read per recall, newest first.
    pub instructions: usize,
    /// The most key facts ([`KEY`]) on a card, newest first (0: none).
    pub key_facts: usize,
}

/// The categories of the user's key facts, on the card whatever was asked (after the
/// instructions and what bears on the query, while the card has room): what any advice
/// must respect (a diet, an allergy or condition) and where the user lives and works.
pub const KEY: &[FactCategory] = &[
    FactCategory::Diet,
    FactCategory::Health,
    FactCategory::Home,
    FactCategory::Work,
];

impl Default for CardConfig {
    fn default() -> Self {
        Self {
            share: 0.15,
            same_instruction: 0.35,
            instructions: 16,
            key_facts: 4,
        }
    }
}

/// The first line of a card in the context.
pub const HEADING: &str = "About the user:";

/// A statement the card may show: the newest of its chain.
pub struct Candidate<'a> {
    pub fact: &'a Unit,
    /// Its cosine with the query.
    pub relevance: f32,
}

/// The category of a fact unit.
pub fn category(u: &Unit) -> Option<FactCategory> {
    crate::facts::detail(u)?.category
}

/// Instructions among `newest_first` that a newer one replaced: each with the newest
/// instruction `same` close to it.
pub type Replaced<'a> = Vec<(&'a Unit, &'a Unit)>;

/// The instructions still standing among `newest_first` (with their vectors, the same
/// order): each one no newer instruction is `same` close to; and those replaced.
pub fn standing<'a>(
    newest_first: &[&'a Unit],
    vectors: &[Vec<f32>],
    same: f32,
) -> (Vec<&'a Unit>, Replaced<'a>) {
    let close = |a: usize, b: usize| match (vectors.get(a), vectors.get(b)) {
        (Some(x), Some(y)) => dot(x, y) >= same,
        _ => false,
    };
    let (mut kept, mut replaced) = (Vec::new(), Vec::new());
    for (i, &u) in newest_first.iter().enumerate() {
        match (0..i).find(|&newer| close(newer, i)) {
            Some(newer) => replaced.push((u, newest_first[newer])),
            None => kept.push(u),
        }
    }
    (kept, replaced)
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The card's lines and its text, within `budget` tokens: instructions newest first,
/// then the statements that bear on the query by relevance, then the key facts newest
/// first, each once, while it fits and takes at most half of `budget`.
pub fn write(
    (instructions, mut facts, key): (&[&Unit], Vec<Candidate<'_>>, &[&Unit]),
    budget: usize,
    count_tokens: &dyn Fn(&str) -> usize,
) -> Option<(String, Vec<CardLine>, usize)> {
    facts.sort_by(|a, b| b.relevance.total_cmp(&a.relevance));
    let mut text = HEADING.to_string();
    let mut used = count_tokens(&text);
    let mut lines: Vec<CardLine> = Vec::new();
    for u in instructions
        .iter()
        .copied()
        .chain(facts.iter().map(|c| c.fact))
        .chain(key.iter().copied())
    {
        let Some(line) = card_line(u) else { continue };
        if lines.iter().any(|l| l.unit_id == line.unit_id) {
            continue;
        }
        let written = format!("\n- {}", shown(&line));
        let tokens = count_tokens(&written);
        // A compact card: no one statement takes more than half of it (a long message
        // that happens to hold a directive is no line of a card).
        if used + tokens > budget || tokens > budget / 2 {
            continue;
        }
        used += tokens;
        text.push_str(&written);
        lines.push(line);
    }
    (!lines.is_empty()).then_some((text, lines, used))
}

/// A line as the context writes it: date, category, the sentence.
fn shown(line: &CardLine) -> String {
    let date = crate::facts::day(line.stated_at);
    format!("[{date}] {}: {}", line.category.as_str(), line.statement)
}

/// The card line citing fact unit `u` (`None`: not a personal fact of one message).
fn card_line(u: &Unit) -> Option<CardLine> {
    let category = category(u)?;
    let p = &u.provenance;
    Some(CardLine {
        unit_id: u.id.clone(),
        category,
        statement: crate::facts::stated(u).to_string(),
        stated_at: u.occurred_at,
        session_id: p.session_id.clone()?,
        message_id: p.message_ids.first()?.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_core::{FactDetail, Provenance, SpaceId, UnitDetail, UnitKind};

    fn fact(id: &str, category: FactCategory, sentence: &str) -> Unit {
        Unit {
            id: id.into(),
            space: SpaceId::new("s").unwrap(),
            kind: UnitKind::Fact,
            text: format!("user: {sentence}"),
            key: String::new(),
            embed_text: None,
            provenance: Provenance {
                session_id: Some("s1".into()),
                message_ids: vec![format!("m-{id}")],
                speakers: vec!["user".into()],
                ..Default::default()
            },
            part_of: None,
            occurred_at: cairn_core::time::parse_timestamp("2024-03-02").ok(),
            recorded_at: chrono::Utc::now(),
            detail: Some(UnitDetail::Fact(FactDetail {
                category: Some(category),
                person: Some("user".into()),
                ..Default::default()
            })),
        }
    }

    fn words(s: &str) -> usize {
        s.split_whitespace().count()
    }

    #[test]
    fn a_newer_instruction_about_the_same_thing_replaces_the_older() {
        let (metric, short, imperial) = (
            fact("a", FactCategory::Instruction, "Use metric units."),
            fact("b", FactCategory::Instruction, "Keep replies short."),
            fact("c", FactCategory::Instruction, "Use imperial units."),
        );
        // Newest first: imperial, short, metric; imperial is close to metric only.
        let vectors = vec![
            vec![0.8, 0.6, 0.0],
            vec![0.0, 0.0, 1.0],
            vec![1.0, 0.0, 0.0],
        ];
        let (kept, replaced) = standing(&[&imperial, &short, &metric], &vectors, 0.75);
        let ids: Vec<&str> = kept.iter().map(|u| u.id.as_str()).collect();
        assert_eq!(ids, ["c", "b"]);
        let pairs: Vec<(&str, &str)> = replaced
            .iter()
            .map(|(old, new)| (old.id.as_str(), new.id.as_str()))
            .collect();
        assert_eq!(pairs, [("a", "c")]);
    }

    #[test]
    fn instructions_come_first_then_the_most_relevant_facts_within_the_budget() {
        let i = fact(
            "i",
            FactCategory::Instruction,
            "From now on answer in metric units.",
        );
        let diet = fact("d", FactCategory::Diet, "I am vegetarian now.");
        let home = fact("h", FactCategory::Home, "I moved to Lisbon.");
        let facts = vec![
            Candidate {
                fact: &home,
                relevance: 0.2,
            },
            Candidate {
                fact: &diet,
                relevance: 0.6,
            },
        ];
        let (text, lines, used) = write((&[&i], facts, &[&home]), 100, &words).unwrap();
        let ids: Vec<&str> = lines.iter().map(|l| l.unit_id.as_str()).collect();
        assert_eq!(ids, ["i", "d", "h"]);
        assert!(text.starts_with(HEADING), "{text}");
        assert!(
            text.contains("- [2024-03-02] diet: I am vegetarian now."),
            "{text}"
        );
        assert_eq!(used, words(&text));

        // A line takes at most half the card: twice its size keeps the instruction only.
        let line = words("\n- [2024-03-02] instruction: From now on answer in metric units.");
        let (_, lines, used) = write((&[&i], Vec::new(), &[]), 2 * line, &words).unwrap();
        assert_eq!((lines.len(), used), (1, words(HEADING) + line));
        assert!(write((&[&i], Vec::new(), &[]), 2 * line - 1, &words).is_none());
    }
}
