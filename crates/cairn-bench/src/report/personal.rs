//! `bench personal`'s summary: extraction precision and recall per category and split,
//! and the share of questions whose first hit states the current value.
use crate::records::personal::ConversationRecord;
use crate::report::methodology;
use crate::run::RunMeta;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Counts of one category (or of all).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Extraction {
    pub extracted: usize,
    pub correct: usize,
    pub expected: usize,
    pub found: usize,
    pub precision: f64,
    pub recall: f64,
}

impl Extraction {
    fn finish(&mut self) {
        self.precision = ratio(self.correct, self.extracted);
        self.recall = ratio(self.found, self.expected);
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// One config row over one split (or all of them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub conversations: usize,
    pub by_category: BTreeMap<String, Extraction>,
    pub all: Extraction,
    pub questions: usize,
    pub first_hit_current: f64,
    pub context_current: f64,
    /// Of the questions, those asked as of a date, and how many of them the first hit
    /// and the context answer with the value of that date (counted in the two above too).
    #[serde(default)]
    pub as_of_questions: usize,
    #[serde(default)]
    pub as_of_first_hit: f64,
    #[serde(default)]
    pub as_of_context: f64,
    /// Of the questions, how many the user's card answers with the current value, and
    /// of those with an earlier value, how many find the earlier one on the card.
    #[serde(default)]
    pub card_current: f64,
    #[serde(default)]
    pub replaced: usize,
    #[serde(default)]
    pub card_earlier: f64,
    pub dated_at_recording: usize,
    pub llm_facts: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub meta: RunMeta,
    /// Config row -> split ("all" for every conversation) -> part.
    pub rows: BTreeMap<String, BTreeMap<String, Part>>,
}

pub fn summarize(meta: &RunMeta, records: &[ConversationRecord]) -> Summary {
    let mut rows: BTreeMap<String, BTreeMap<String, Part>> = BTreeMap::new();
    let mut hits: BTreeMap<(String, String), [usize; 6]> = BTreeMap::new();
    for r in records {
        for split in [r.split.as_str(), "all"] {
            let part = rows
                .entry(r.config.clone())
                .or_default()
                .entry(split.to_string())
                .or_default();
            part.conversations += 1;
            part.dated_at_recording += r.dated_at_recording;
            part.llm_facts += r.llm_facts;
            for f in &r.extracted {
                for e in [
                    part.by_category.entry(f.category.clone()).or_default(),
                    &mut part.all,
                ] {
                    e.extracted += 1;
                    e.correct += usize::from(f.correct);
                }
            }
            for x in &r.expected {
                for e in [
                    part.by_category.entry(x.category.clone()).or_default(),
                    &mut part.all,
                ] {
                    e.expected += 1;
                    e.found += usize::from(x.found);
                }
            }
            part.questions += r.questions.len();
            part.as_of_questions += r.questions.iter().filter(|q| q.as_of.is_some()).count();
            let h = hits
                .entry((r.config.clone(), split.to_string()))
                .or_default();
            for q in &r.questions {
                let dated = usize::from(q.as_of.is_some());
                h[0] += usize::from(q.first_hit_current);
                h[1] += usize::from(q.context_current);
                h[2] += dated * usize::from(q.first_hit_current);
                h[3] += dated * usize::from(q.context_current);
                h[4] += usize::from(q.card_current);
                h[5] += usize::from(q.card_earlier);
            }
            part.replaced += r.questions.iter().filter(|q| q.earlier.is_some()).count();
        }
    }
    for (config, parts) in &mut rows {
        for (split, part) in parts.iter_mut() {
            part.all.finish();
            part.by_category.values_mut().for_each(Extraction::finish);
            let [first, ctx, dated_first, dated_ctx, card, card_earlier] =
                hits[&(config.clone(), split.clone())];
            part.card_current = ratio(card, part.questions);
            part.card_earlier = ratio(card_earlier, part.replaced);
            part.first_hit_current = ratio(first, part.questions);
            part.context_current = ratio(ctx, part.questions);
            part.as_of_first_hit = ratio(dated_first, part.as_of_questions);
            part.as_of_context = ratio(dated_ctx, part.as_of_questions);
        }
    }
    Summary {
        meta: meta.clone(),
        rows,
    }
}

pub fn render_summary(s: &Summary) -> String {
    let mut out = format!("# {} — personal memory\n\n", s.meta.run_label);
    let _ = writeln!(
        out,
        "Cairn {} (git {}), embedding model `{}`; targets: precision >= .90 and recall >= .75 per category, first hit current >= .90.\n",
        s.meta.cairn_version, s.meta.git_sha, s.meta.embedding_model
    );
    for (config, parts) in &s.rows {
        let splits: Vec<&String> = parts.keys().collect();
        let _ = writeln!(out, "## Config `{config}`\n");
        extraction_table(&mut out, parts, &splits);
        question_table(&mut out, parts, &splits);
        out.push('\n');
    }
    out
}

/// A config's extraction table: precision and recall per category and split, then all
/// categories together.
fn extraction_table(out: &mut String, parts: &BTreeMap<String, Part>, splits: &[&String]) {
    let _ = writeln!(
        out,
        "Extraction, precision / recall (correct/extracted, found/expected):\n"
    );
    let _ = write!(out, "| category |");
    for sp in splits {
        let _ = write!(out, " {sp} |");
    }
    let _ = write!(out, "\n|---|");
    for _ in splits {
        let _ = write!(out, "---|");
    }
    out.push('\n');
    let mut categories: Vec<&String> = parts.values().flat_map(|p| p.by_category.keys()).collect();
    categories.sort();
    categories.dedup();
    let cell = |e: Option<&Extraction>| match e {
        Some(e) => format!(
            "{:.2} / {:.2} ({}/{}, {}/{})",
            e.precision, e.recall, e.correct, e.extracted, e.found, e.expected
        ),
        None => "-".into(),
    };
    for c in categories {
        let _ = write!(out, "| {c} |");
        for sp in splits {
            let _ = write!(out, " {} |", cell(parts[*sp].by_category.get(c)));
        }
        out.push('\n');
    }
    let _ = write!(out, "| **all** |");
    for sp in splits {
        let _ = write!(out, " {} |", cell(Some(&parts[*sp].all)));
    }
}

/// A config's question table: one column per split, the questions' outcomes as rows.
fn question_table(out: &mut String, parts: &BTreeMap<String, Part>, splits: &[&String]) {
    let _ = write!(out, "\n\n| | ");
    out.push_str(
        &splits
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(" | "),
    );
    let _ = write!(out, " |\n|---|");
    for _ in splits {
        let _ = write!(out, "---|");
    }
    out.push('\n');
    let row = |name: &str, f: &dyn Fn(&Part) -> String| {
        let cells: Vec<String> = splits.iter().map(|sp| f(&parts[*sp])).collect();
        format!("| {name} | {} |\n", cells.join(" | "))
    };
    *out += &row("conversations", &|p| p.conversations.to_string());
    *out += &row("questions", &|p| p.questions.to_string());
    *out += &row("first hit states the current value", &|p| {
        format!("{:.3}", p.first_hit_current)
    });
    *out += &row("context holds the current value", &|p| {
        format!("{:.3}", p.context_current)
    });
    *out += &row("the user's card holds the current value", &|p| {
        format!("{:.3}", p.card_current)
    });
    *out += &row(
        "... holds a replaced value (of the questions with one)",
        &|p| format!("{:.3} ({})", p.card_earlier, p.replaced),
    );
    if splits.iter().any(|sp| parts[*sp].as_of_questions > 0) {
        *out += &row("asked as of a date", &|p| p.as_of_questions.to_string());
        *out += &row("... first hit states the value of that date", &|p| {
            format!("{:.3}", p.as_of_first_hit)
        });
        *out += &row("... context holds it", &|p| {
            format!("{:.3}", p.as_of_context)
        });
    }
    *out += &row("messages dated at recording", &|p| {
        p.dated_at_recording.to_string()
    });
    *out += &row("facts read by the LLM", &|p| p.llm_facts.to_string());
}

pub fn render_methodology(s: &Summary, values: &[(&str, String)]) -> String {
    methodology::render(methodology::PERSONAL, &s.meta, values)
}
