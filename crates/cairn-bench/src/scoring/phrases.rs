//! The reference's phrase-set match (LongMemEval-V2 `norm_phrase_set_match[_ordered]`)
//! applied to the packed context instead of an answer: whether the evidence is there, not
//! whether a reader would answer.
use cairn::formats::lme_v2::{EvalFunction, EvalKind};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhraseDiagnostic {
    /// Normalized phrases of the reference answer.
    pub phrases: usize,
    /// Of those, found in the normalized context (word-bounded).
    pub found: usize,
    /// Every phrase found (in order, for the ordered kind): what the reference would
    /// accept if the context were the answer.
    pub all_found: bool,
}

fn contains_phrase(haystack: &str, phrase: &str) -> Option<usize> {
    // Word-bounded: the phrase is preceded and followed by a space or an end.
    let mut from = 0;
    while let Some(i) = haystack[from..].find(phrase) {
        let start = from + i;
        let end = start + phrase.len();
        let before = start == 0 || haystack.as_bytes()[start - 1] == b' ';
        let after = end == haystack.len() || haystack.as_bytes()[end] == b' ';
        if before && after {
            return Some(end);
        }
        from = start + haystack[start..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// The reference's phrase-set match applied to the context.
pub fn phrase_diagnostic(f: &EvalFunction, answer: &str, context: &str) -> PhraseDiagnostic {
    let ctx = f.normalize(context);
    let phrases = f.answer_phrases(answer);
    let found = phrases
        .iter()
        .filter(|p| contains_phrase(&ctx, p).is_some())
        .count();
    let all_found = if f.kind == EvalKind::NormPhraseSetMatchOrdered {
        let mut at = 0;
        phrases
            .iter()
            .all(|p| match contains_phrase(&ctx[at..], p) {
                Some(end) => {
                    at += end;
                    true
                }
                None => false,
            })
    } else {
        found == phrases.len()
    };
    PhraseDiagnostic {
        phrases: phrases.len(),
        found,
        all_found: all_found && !phrases.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_match_word_bounded_and_in_order() {
        let f = EvalFunction::parse_spec("norm_phrase_set_match").unwrap();
        let ctx = "[12] alert 'You saved the product.' then Marketing > Cart-Price Rules";
        let d = phrase_diagnostic(&f, "You saved the product; cart price rules", ctx);
        assert_eq!((d.phrases, d.found, d.all_found), (2, 2, true));
        let d = phrase_diagnostic(&f, "save", ctx);
        assert!(!d.all_found, "word-bounded: 'save' is not 'saved'");
        let o = EvalFunction::parse_spec("norm_phrase_set_match_ordered").unwrap();
        let d = phrase_diagnostic(&o, "cart price rules; saved", ctx);
        assert_eq!((d.found, d.all_found), (2, false), "out of order");
        let d = phrase_diagnostic(&o, "saved; cart price rules", ctx);
        assert!(d.all_found);
    }
}
