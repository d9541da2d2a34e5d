//! The personal-memory suite (`fixtures/personal/*.txt`, format in its README): short
//! multi-session user/assistant conversations with the personal facts each user line
//! states and questions whose first hit must state the current value. The three files
//! of the repository are built in; `cairn bench personal --suite FILE` reads others in
//! the same format.
use anyhow::{bail, Context as _};
use cairn::{FactCategory, Timestamp};

/// The suite's files in the repository: (split, text).
pub const BUILT_IN: [(&str, &str); 3] = [
    ("dev", include_str!("../../fixtures/personal/dev.txt")),
    (
        "holdout",
        include_str!("../../fixtures/personal/holdout.txt"),
    ),
    (
        "holdout2",
        include_str!("../../fixtures/personal/holdout2.txt"),
    ),
];

#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub id: String,
    /// The file (split) it comes from.
    pub split: String,
    pub sessions: Vec<Session>,
    pub questions: Vec<Question>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// `None`: appended without a time (it gets the time it is recorded).
    pub date: Option<Timestamp>,
    pub turns: Vec<Turn>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub user: bool,
    pub text: String,
    pub facts: Vec<Expected>,
}

/// A fact a user line states.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    pub category: FactCategory,
    /// Whom it is about; any of these names matches.
    pub about: Vec<String>,
    /// The words the extracted fact must hold.
    pub value: String,
    pub negated: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub question: String,
    /// The value the answer must state: the newest, or the one true at `as_of`.
    pub current: String,
    pub earlier: Option<String>,
    /// Asked as of this time (`? @YYYY-MM-DD ...`): the memory as it was then.
    pub as_of: Option<cairn::Timestamp>,
}

/// The conversations of one suite file; errors name the line.
pub fn parse(text: &str, split: &str) -> anyhow::Result<Vec<Conversation>> {
    let mut out: Vec<Conversation> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        parse_line(line, split, &mut out).with_context(|| format!("{split}: line {}", n + 1))?;
    }
    Ok(out)
}

fn parse_line(line: &str, split: &str, out: &mut Vec<Conversation>) -> anyhow::Result<()> {
    if line.trim().is_empty() {
        return Ok(());
    }
    if let Some(id) = line.strip_prefix("=== ") {
        out.push(Conversation {
            id: id.trim().to_string(),
            split: split.to_string(),
            sessions: Vec::new(),
            questions: Vec::new(),
        });
        return Ok(());
    }
    let Some(conv) = out.last_mut() else {
        bail!("a line before the first `=== <id>`");
    };
    if let Some(date) = line.strip_prefix("--- ") {
        let date = match date.trim() {
            "undated" => None,
            d => Some(cairn::parse_timestamp(d).map_err(|e| anyhow::anyhow!("{e}"))?),
        };
        conv.sessions.push(Session {
            date,
            turns: Vec::new(),
        });
        return Ok(());
    }
    if let Some(q) = line.strip_prefix("? ") {
        let (as_of, q) = match q.strip_prefix('@') {
            Some(dated) => {
                let (date, rest) = dated
                    .split_once(' ')
                    .context("`? @<date>` needs the question after the date")?;
                let at = cairn::parse_timestamp(date).map_err(|e| anyhow::anyhow!("{e}"))?;
                (Some(at), rest)
            }
            None => (None, q),
        };
        let (question, answer) = q.split_once(" => ").context("a question needs ` => `")?;
        let (current, earlier) = match answer.split_once(" | ") {
            Some((c, e)) => (c, Some(e.trim().to_string())),
            None => (answer, None),
        };
        conv.questions.push(Question {
            question: question.trim().to_string(),
            current: current.trim().to_string(),
            earlier,
            as_of,
        });
        return Ok(());
    }
    let Some(session) = conv.sessions.last_mut() else {
        bail!("a line before the first `--- <date>`");
    };
    if let Some(f) = line.trim_start().strip_prefix("+ ") {
        let turn = session
            .turns
            .last_mut()
            .filter(|t| t.user)
            .context("an expected fact must follow a `U:` line")?;
        turn.facts.push(expected(f)?);
        return Ok(());
    }
    let (user, text) = match (line.strip_prefix("U: "), line.strip_prefix("A: ")) {
        (Some(t), _) => (true, t),
        (_, Some(t)) => (false, t),
        _ => bail!("unknown line (expected ===, ---, U:, A:, + or ?)"),
    };
    session.turns.push(Turn {
        user,
        text: text.to_string(),
        facts: Vec::new(),
    });
    Ok(())
}

/// `<category> <about>: <value>`, a `!` before the value for a negated fact.
fn expected(f: &str) -> anyhow::Result<Expected> {
    let (head, value) = f
        .split_once(": ")
        .context("a fact is `<category> <about>: <value>`")?;
    let (category, about) = head
        .split_once(' ')
        .context("a fact needs whom it is about")?;
    let category =
        FactCategory::parse(category).with_context(|| format!("unknown category {category:?}"))?;
    let (negated, value) = match value.strip_prefix('!') {
        Some(v) => (true, v),
        None => (false, value),
    };
    Ok(Expected {
        category,
        about: about.split('|').map(|a| a.trim().to_string()).collect(),
        value: value.trim().to_string(),
        negated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_suite_parses() {
        let mut conversations = 0;
        for (split, text) in BUILT_IN {
            let convs = parse(text, split).unwrap();
            conversations += convs.len();
            for c in &convs {
                assert!(c.sessions.len() >= 2, "{}: multi-session", c.id);
                assert!(!c.questions.is_empty(), "{}: a question", c.id);
            }
        }
        assert!(conversations >= 60, "{conversations} conversations");
    }

    #[test]
    fn a_question_dated_with_at_is_asked_as_of_that_date() {
        let text = "=== a\n--- 2024-01-01\nU: I live in Leeds.\n? @2024-02-01 Where do I live? => Leeds | York\n? Where do I live? => York\n";
        let q = &parse(text, "t").unwrap()[0].questions;
        assert_eq!(
            q[0].as_of,
            Some(cairn::parse_timestamp("2024-02-01").unwrap())
        );
        assert_eq!(
            (q[0].question.as_str(), q[0].current.as_str()),
            ("Where do I live?", "Leeds")
        );
        assert_eq!(q[1].as_of, None);
        let e = parse("=== a\n--- 2024-01-01\n? @2024-13-40 Where? => X\n", "t").unwrap_err();
        assert!(format!("{e:#}").contains("line 3"), "{e:#}");
    }

    #[test]
    fn bad_lines_are_named() {
        let e = parse("=== a\n--- 2024-01-01\n+ home user: X\n", "t").unwrap_err();
        assert!(format!("{e:#}").contains("line 3"), "{e:#}");
        let e = parse("=== a\n--- 2024-01-01\nU: hi\n  + hobby user: X\n", "t").unwrap_err();
        assert!(format!("{e:#}").contains("unknown category"), "{e:#}");
    }
}
