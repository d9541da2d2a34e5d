//! What the QA rows score with, as pure functions: the reader prompts, each benchmark's
//! judge prompt (texts in `prompts/*.txt`, kept byte for byte as the benchmarks publish
//! them), reading a judge's verdict, the letter a multiple-choice answer picks, and token
//! F1. The calls to the models are `crate::qa`'s.
use crate::template::{fill, prompt};

/// How a dataset's questions are read and judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    LongMemEval,
    LoCoMo,
    FriendsQa,
    EverMemOpen,
}

impl Style {
    pub fn for_dataset(dataset: &str) -> Style {
        match dataset {
            "longmemeval" => Style::LongMemEval,
            "friendsqa" => Style::FriendsQa,
            "evermembench" => Style::EverMemOpen,
            _ => Style::LoCoMo,
        }
    }
}

/// The letter an answer picks: the first standalone option letter ("B", "B.", "(B)",
/// "Answer: B").
pub fn picked_letter(answer: &str, letters: &[&str]) -> Option<String> {
    answer
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| letters.contains(w))
        .map(String::from)
}

/// LongMemEval's official reading prompt (history, current date, question).
const READER_LONGMEMEVAL: &str = include_str!("../../prompts/reader-longmemeval.txt");
/// A short answer in the context's own words (LoCoMo, FriendsQA, EverMemBench open).
const READER_SHORT_ANSWER: &str = include_str!("../../prompts/reader-short-answer.txt");
/// A letter for a multiple-choice question (EverMemBench).
const READER_MULTIPLE_CHOICE: &str = include_str!("../../prompts/reader-multiple-choice.txt");
/// The CORRECT/WRONG judge popularized by Mem0's LoCoMo evaluation.
const JUDGE_CORRECT_WRONG: &str = include_str!("../../prompts/judge-correct-wrong.txt");
/// LongMemEval's `evaluate_qa.py` prompts, per question type.
const JUDGE_LME: &str = include_str!("../../prompts/judge-longmemeval.txt");
const JUDGE_LME_TEMPORAL: &str =
    include_str!("../../prompts/judge-longmemeval-temporal-reasoning.txt");
const JUDGE_LME_UPDATE: &str = include_str!("../../prompts/judge-longmemeval-knowledge-update.txt");
const JUDGE_LME_PREFERENCE: &str = include_str!("../../prompts/judge-longmemeval-preference.txt");
const JUDGE_LME_ABSTENTION: &str = include_str!("../../prompts/judge-longmemeval-abstention.txt");

/// The reader prompt. LongMemEval's is its official reading prompt (history, current
/// date, question); the others ask for a short answer from the context.
pub fn reader_prompt(style: Style, context: &str, question: &str, date: Option<&str>) -> String {
    let date_line = date
        .map(|d| format!("Current Date: {d}\n"))
        .unwrap_or_default();
    let template = match style {
        Style::LongMemEval => READER_LONGMEMEVAL,
        _ => READER_SHORT_ANSWER,
    };
    fill(
        prompt(template),
        &[
            ("context", context),
            ("date_line", &date_line),
            ("question", question),
        ],
    )
}

/// The multiple-choice reader prompt: the options as `A. text` lines.
pub fn choice_prompt(context: &str, question: &str, options: &[(String, String)]) -> String {
    let opts: String = options.iter().map(|(l, t)| format!("{l}. {t}\n")).collect();
    fill(
        prompt(READER_MULTIPLE_CHOICE),
        &[
            ("context", context),
            ("question", question),
            ("options", &opts),
        ],
    )
}

/// The judge prompt of each benchmark.
pub fn judge_prompt(
    style: Style,
    qtype: &str,
    abstention: bool,
    question: &str,
    gold: &str,
    response: &str,
) -> String {
    let template = match (style, abstention, qtype) {
        (Style::LongMemEval, true, _) => JUDGE_LME_ABSTENTION,
        (Style::LongMemEval, false, "temporal-reasoning") => JUDGE_LME_TEMPORAL,
        (Style::LongMemEval, false, "knowledge-update") => JUDGE_LME_UPDATE,
        (Style::LongMemEval, false, "single-session-preference") => JUDGE_LME_PREFERENCE,
        (Style::LongMemEval, false, _) => JUDGE_LME,
        _ => JUDGE_CORRECT_WRONG,
    };
    fill(
        prompt(template),
        &[
            ("question", question),
            ("gold", gold),
            ("response", response),
        ],
    )
}

/// Reads a judge's reply: LongMemEval counts "yes" anywhere in it (as `evaluate_qa.py`
/// does); the CORRECT/WRONG judge's label is taken from its JSON, else from the last
/// label word in the text.
pub fn verdict(style: Style, reply: &str) -> bool {
    if style == Style::LongMemEval {
        return reply.to_lowercase().contains("yes");
    }
    if let Some(label) = cairn_llm::extract_json(reply).and_then(|v| {
        v.get("label")
            .and_then(|l| l.as_str())
            .map(str::to_uppercase)
    }) {
        return label.trim() == "CORRECT";
    }
    let up = reply.to_uppercase();
    match (up.rfind("CORRECT"), up.rfind("WRONG")) {
        (Some(c), Some(w)) => c > w && !up[..c].ends_with("IN"),
        (Some(c), None) => !up[..c].ends_with("IN"),
        _ => false,
    }
}

/// SQuAD-style token F1 (lowercased, punctuation and articles dropped), as LoCoMo scores.
pub fn token_f1(prediction: &str, gold: &str) -> f64 {
    let norm = |s: &str| -> Vec<String> {
        s.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty() && !matches!(*w, "a" | "an" | "the" | "and"))
            .map(String::from)
            .collect()
    };
    let (p, g) = (norm(prediction), norm(gold));
    if p.is_empty() || g.is_empty() {
        return if p == g { 1.0 } else { 0.0 };
    }
    let mut pool = g.clone();
    let mut common = 0usize;
    for w in &p {
        if let Some(i) = pool.iter().position(|x| x == w) {
            pool.swap_remove(i);
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let precision = common as f64 / p.len() as f64;
    let recall = common as f64 / g.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judge_prompts_follow_each_benchmark() {
        let p = judge_prompt(
            Style::LongMemEval,
            "temporal-reasoning",
            false,
            "Q?",
            "18 days",
            "19 days",
        );
        assert!(p.contains("do not penalize off-by-one errors"));
        assert!(p.ends_with("Is the model response correct? Answer yes or no only."));
        let p = judge_prompt(
            Style::LongMemEval,
            "knowledge-update",
            false,
            "Q?",
            "A",
            "R",
        );
        assert!(p.contains("as long as the updated answer is the required answer"));
        let p = judge_prompt(
            Style::LongMemEval,
            "single-session-preference",
            false,
            "Q?",
            "A",
            "R",
        );
        assert!(p.contains("Rubric: A"));
        let p = judge_prompt(
            Style::LongMemEval,
            "multi-session",
            true,
            "Q?",
            "never said",
            "R",
        );
        assert!(p.contains("correctly identify the question as unanswerable"));
        let p = judge_prompt(Style::LoCoMo, "2-temporal", false, "Q?", "May 7", "7 May");
        assert!(p.contains("Gold answer: May 7") && p.contains("\"label\""));
    }

    #[test]
    fn verdicts_and_letters_parse() {
        assert!(verdict(Style::LongMemEval, "Yes."));
        assert!(!verdict(Style::LongMemEval, "No"));
        assert!(verdict(
            Style::LoCoMo,
            "It matches. {\"label\": \"CORRECT\"}"
        ));
        assert!(!verdict(Style::LoCoMo, "{\"label\": \"WRONG\"}"));
        assert!(!verdict(Style::LoCoMo, "This is INCORRECT"));
        assert!(verdict(Style::LoCoMo, "Same date, so CORRECT"));
        assert_eq!(
            picked_letter("(B) the caterer", &["A", "B", "C", "D"]),
            Some("B".into())
        );
        assert_eq!(
            picked_letter("Answer: C.", &["A", "B", "C", "D"]),
            Some("C".into())
        );
        assert_eq!(picked_letter("none", &["A", "B"]), None);
    }

    #[test]
    fn token_f1_is_squad_style() {
        assert_eq!(token_f1("The shell necklace", "a shell necklace"), 1.0);
        assert!((token_f1("shell", "shell necklace") - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(token_f1("", ""), 1.0);
        assert_eq!(token_f1("x", ""), 0.0);
    }

    /// The prompts are the benchmarks' published texts, byte for byte (trailing spaces
    /// included): an edit of a file changes every QA number, so it must be deliberate
    /// (update the digest with the prompt, and say so in the run notes).
    #[test]
    fn prompt_files_are_the_published_texts() {
        use sha2::{Digest, Sha256};
        let files = [
            (
                JUDGE_CORRECT_WRONG,
                "2c18a9ec655b84109ea8838e7ba5e9e6c850259617a58044c73599e4e0c640d8",
            ),
            (
                JUDGE_LME_ABSTENTION,
                "3f0afe68a426807f53d641dde7b7ec15d5a086491b393d577442c9732b678a3f",
            ),
            (
                JUDGE_LME_UPDATE,
                "c086854f7fee91f8648ca72057366d06b1b16fbb97fc12a6136027a4b752d9e7",
            ),
            (
                JUDGE_LME_PREFERENCE,
                "ead84b1ef387dc7ff3970352b11e7c06e65a96f479de186c73aa165c5b42a467",
            ),
            (
                JUDGE_LME_TEMPORAL,
                "f98d8a1322bfc89391c6aff0314c500e8d049009cf2d83d42e87646ae5052900",
            ),
            (
                JUDGE_LME,
                "b9da67744cf995e32d8c997fa1f9e577bb92b94a8c26c3f7aeecb5d6ad2e86c4",
            ),
            (
                READER_LONGMEMEVAL,
                "5c64df8b430db4cdc6a5ede1d7a83ba9b6c13c800e5cc658cc9856de2cd29760",
            ),
            (
                READER_MULTIPLE_CHOICE,
                "9cbd8853c899d1fb90b8e7f4ed73b9a6c0b3fae411c8ae95ca904ecd4a1e9102",
            ),
            (
                READER_SHORT_ANSWER,
                "dc4c0a46de9106fe30bab0f056425e27b1a42ac611c7e7c7a4a5b63b646b732b",
            ),
        ];
        for (text, want) in files {
            let got = hex::encode(Sha256::digest(text.as_bytes()));
            assert_eq!(got, want, "prompt changed: {}", &text[..60]);
        }
    }

    #[test]
    fn prompts_fill_in_one_pass() {
        let p = reader_prompt(Style::LoCoMo, "CTX {{question}}", "Q?", Some("May 7"));
        assert!(p.starts_with("CTX {{question}}\n\nCurrent Date: May 7\nBased on the above"));
        assert!(p.ends_with("Question: Q? Short answer:"));
        let opts = [
            ("A".to_string(), "one".to_string()),
            ("B".to_string(), "two".to_string()),
        ];
        let p = choice_prompt("ctx", "Which?", &opts);
        assert!(
            p.contains("Question: Which?\n\nOptions:\nA. one\nB. two\n\nAnswer with the letter")
        );
    }
}
