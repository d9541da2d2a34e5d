//! The option scorer: multiple-choice questions answered without an LLM, from the
//! recalled evidence (lexical overlap and embedding similarity, both rank-discounted),
//! and the open-ended diagnostic (reference-answer words found in the context). Used by
//! EverMemBench and LongMemEval-V2; the rules are written out in
//! `methodology/evermembench.md`.
use cairn::Recall;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::sync::OnceLock;

/// What the option scorer did with one multiple-choice question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChoiceResult {
    /// The picked letter.
    pub predicted: String,
    pub correct: bool,
    /// The best total was shared by several options (the first letter was picked).
    pub tie: bool,
    /// Per letter.
    pub scores: BTreeMap<String, OptionScore>,
    /// The memory-free baseline: the option most similar (dense) to the question alone.
    pub question_only_predicted: String,
    pub question_only_correct: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OptionScore {
    pub lexical: f64,
    pub dense: f64,
    pub total: f64,
}

/// Open-ended: how much of the reference answer the context holds (words, not meaning).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenDiagnostic {
    /// Content words of the reference answer (not in the question).
    pub answer_words: usize,
    /// Of those, found in the packed context.
    pub found_in_context: usize,
    /// found / answer_words (1.0 when the answer has no content word of its own).
    pub coverage: f64,
}

const STOPWORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by",
    "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that",
    "these", "those", "he", "she", "they", "them", "his", "her", "their", "we", "our", "you",
    "your", "i", "me", "my", "do", "does", "did", "has", "have", "had", "not", "no", "yes", "so",
    "if", "than", "then", "there", "what", "which", "who", "whom", "when", "where", "why", "how",
    "can", "could", "should", "would", "will", "shall", "may", "might", "must", "about", "into",
    "over", "after", "before", "up", "out", "all", "any", "some", "only", "just", "also", "very",
    "too", "such", "per", "since", "because", "s", "t",
];

fn token_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"[a-z0-9]+(?:\.[0-9]+)?").expect("valid regex"))
}

fn digit_comma_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(\d),(\d{3})").expect("valid regex"))
}

/// Lowercased content words: numbers lose thousands separators (`$36,000` → `36000`),
/// stopwords are dropped, a plural `s` is stripped from words longer than 3 letters.
pub fn content_words(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let lower = digit_comma_re().replace_all(&lower, "$1$2");
    let lower = digit_comma_re().replace_all(&lower, "$1$2");
    token_re()
        .find_iter(&lower)
        .map(|m| m.as_str())
        .filter(|w| !STOPWORDS.contains(w))
        .map(|w| {
            if w.len() > 3
                && w.ends_with('s')
                && !w.ends_with("ss")
                && w.bytes().all(|b| b.is_ascii_alphabetic())
            {
                w[..w.len() - 1].to_string()
            } else {
                w.to_string()
            }
        })
        .collect()
}

/// The rank discount of the `rank`-th evidence item (from 1): 1 / log2(rank + 1).
pub fn discount(rank: usize) -> f64 {
    1.0 / ((rank + 1) as f64).log2()
}

/// Cosine of two unit-length vectors: their dot product.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum()
}

/// Scores options against ranked evidence texts (best first). Returns per option
/// `(lexical, dense, total)`:
/// - lexical: the option's content words that are not in the question; each word counts
///   `discount(r)` for the best-ranked evidence item `r` containing it (0 if none); the
///   option's lexical score is the mean over its words (0 for an option with no word of
///   its own);
/// - dense: the maximum over evidence items of `discount(r) * cos(option, item)`;
/// - total: `0.5 * lexical + 0.5 * dense`.
///
/// `option_vecs` and `evidence_vecs` are unit-length embeddings of the option texts and
/// evidence texts. The weights were fixed before the first run; nothing here knows the
/// dataset.
pub fn score_options(
    question: &str,
    options: &[&str],
    evidence: &[&str],
    option_vecs: &[Vec<f32>],
    evidence_vecs: &[Vec<f32>],
) -> Vec<OptionScore> {
    let q_words: HashSet<String> = content_words(question).into_iter().collect();
    let ev_words: Vec<HashSet<String>> = evidence
        .iter()
        .map(|e| content_words(e).into_iter().collect())
        .collect();
    options
        .iter()
        .zip(option_vecs)
        .map(|(o, ov)| {
            let words: Vec<String> = {
                let mut seen = HashSet::new();
                content_words(o)
                    .into_iter()
                    .filter(|w| !q_words.contains(w) && seen.insert(w.clone()))
                    .collect()
            };
            let lexical = if words.is_empty() {
                0.0
            } else {
                words
                    .iter()
                    .map(|w| {
                        ev_words
                            .iter()
                            .position(|ws| ws.contains(w))
                            .map_or(0.0, |i| discount(i + 1))
                    })
                    .sum::<f64>()
                    / words.len() as f64
            };
            let dense = evidence_vecs
                .iter()
                .enumerate()
                .map(|(i, ev)| discount(i + 1) * cosine(ov, ev))
                .fold(0.0_f64, f64::max);
            OptionScore {
                lexical,
                dense,
                total: 0.5 * lexical + 0.5 * dense,
            }
        })
        .collect()
}

/// Index of the best total (the first on ties) and whether it was tied.
pub fn pick(scores: &[OptionScore]) -> (usize, bool) {
    let mut best = 0;
    for (i, s) in scores.iter().enumerate() {
        if s.total > scores[best].total {
            best = i;
        }
    }
    let tied = scores
        .iter()
        .enumerate()
        .any(|(i, s)| i != best && (s.total - scores[best].total).abs() < 1e-12);
    (best, tied)
}

/// The open-ended diagnostic: reference-answer content words (not in the question) found
/// in the context.
pub fn open_diagnostic(question: &str, answer: &str, context: &str) -> OpenDiagnostic {
    let q: HashSet<String> = content_words(question).into_iter().collect();
    let ctx: HashSet<String> = content_words(context).into_iter().collect();
    let words: HashSet<String> = content_words(answer)
        .into_iter()
        .filter(|w| !q.contains(w))
        .collect();
    let found = words.iter().filter(|w| ctx.contains(*w)).count();
    OpenDiagnostic {
        answer_words: words.len(),
        found_in_context: found,
        coverage: if words.is_empty() {
            1.0
        } else {
            found as f64 / words.len() as f64
        },
    }
}

/// The memory-free baseline: each option scored by its similarity to the question alone
/// (`dense` = `total` = cos(option, question)).
pub fn question_only(option_vecs: &[Vec<f32>], question_vec: &[f32]) -> Vec<OptionScore> {
    option_vecs
        .iter()
        .map(|v| OptionScore {
            dense: cosine(v, question_vec),
            total: cosine(v, question_vec),
            ..Default::default()
        })
        .collect()
}

/// The evidence a reader would see: the texts of the hits packed into the context, in
/// rank order.
pub fn context_evidence(recall: &Recall) -> Vec<&str> {
    let in_ctx: HashSet<&str> = recall.context_unit_ids.iter().map(String::as_str).collect();
    recall
        .hits
        .iter()
        .filter(|h| in_ctx.contains(h.unit_id.as_str()))
        .map(|h| h.text.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_words_normalize_numbers_and_plurals() {
        assert_eq!(
            content_words("The DataForge quote: $36,000 per year, emojis and 97.8%!"),
            ["dataforge", "quote", "36000", "year", "emoji", "97.8"]
        );
        assert_eq!(content_words("$1,250,000"), ["1250000"]);
    }

    #[test]
    fn lexical_overlap_ranks_and_ignores_question_words() {
        let unit = vec![1.0_f32, 0.0];
        let q = "Which caterer was chosen for the offsite?";
        let opts = ["Green Fork", "Olive & Thyme caterer"];
        let ev = [
            "we switched caterers to Olive & Thyme",
            "Green Fork was the first idea",
        ];
        let s = score_options(
            q,
            &opts,
            &ev,
            &[unit.clone(), unit.clone()],
            &[unit.clone(), unit],
        );
        // Olive & Thyme: both own words in evidence rank 1 ("caterer" is a question word).
        assert!((s[1].lexical - 1.0).abs() < 1e-9);
        // Green Fork: both words only at rank 2.
        assert!((s[0].lexical - discount(2)).abs() < 1e-9);
        assert_eq!(pick(&s), (1, false));
        // Identical totals are a tie, won by the first option.
        let t = [OptionScore::default(), OptionScore::default()];
        assert_eq!(pick(&t), (0, true));
    }

    #[test]
    fn open_diagnostic_counts_answer_words_in_context() {
        let d = open_diagnostic(
            "When is the offsite?",
            "June 13 at Harbor Loft",
            "moved to June 13",
        );
        assert_eq!((d.answer_words, d.found_in_context), (4, 2));
        assert!((d.coverage - 0.5).abs() < 1e-9);
    }
}
