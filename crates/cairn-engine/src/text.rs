//! Light text helpers used for ranking details and context trimming (the index has its
//! own analyzer; these only need to be consistent with themselves).

/// Lowercased word tokens with a crude English suffix strip, for overlap scoring.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| stem(&w.to_lowercase()))
        .collect()
}

pub fn stem(w: &str) -> String {
    for suffix in ["ing", "ed", "es", "s"] {
        if w.len() > suffix.len() + 2 && w.ends_with(suffix) {
            return w[..w.len() - suffix.len()].to_string();
        }
    }
    w.to_string()
}

pub const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "if", "of", "at", "by", "for", "with", "about", "to",
    "from", "in", "on", "is", "are", "was", "were", "be", "been", "am", "do", "did", "does", "i",
    "me", "my", "you", "your", "we", "our", "it", "its", "he", "she", "they", "them", "what",
    "which", "who", "whom", "when", "where", "why", "how", "that", "this", "these", "those", "can",
    "could", "would", "should", "will", "have", "has", "had", "not", "no", "so", "than", "too",
    "very", "just", "there", "their", "any", "some", "into", "up",
];

/// Content words of a query (stop words removed), stemmed like [`words`].
pub fn content_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in non_stop_words(text) {
        let s = stem(&w.to_lowercase());
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The words of `text` as written, stop words left out.
fn non_stop_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(&w.to_lowercase().as_str()))
}

/// `text` without its stop words, its other words as written (for an index with an
/// analyzer of its own): what a lexical search looks for. A stop word held by most units
/// adds almost nothing to any unit's score, yet its long postings are what a search
/// spends its time on.
pub fn without_stop_words(text: &str) -> String {
    non_stop_words(text).collect::<Vec<_>>().join(" ")
}

/// Sentence-ish pieces of a text, keeping their byte ranges. A list number (`2.`) does
/// not end a sentence, and pieces without a word are not sentences.
pub fn sentences(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let list_number = b == b'.' && {
            let piece = text[start..i].trim();
            !piece.is_empty() && piece.bytes().all(|c| c.is_ascii_digit())
        };
        let end_here = b == b'\n'
            || ((b == b'.' || b == b'!' || b == b'?')
                && !list_number
                && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()));
        if end_here {
            if text[start..=i].chars().any(char::is_alphabetic) {
                out.push((start, i + 1));
            }
            start = i + 1;
        }
    }
    if start < text.len() && text[start..].chars().any(char::is_alphabetic) {
        out.push((start, text.len()));
    }
    out
}

/// How many of `query` words appear in `text`: the words of `text` as [`words`] makes
/// them, compared in place. Packing runs this over the sentences of every message it
/// shows (16 KiB of pasted code a message, at most) that may share a word with the
/// query ([`sentence_overlaps`]), so ASCII words, nearly all of them, are lowercased and
/// stemmed by comparison instead of into new strings.
pub fn overlap(query: &[String], text: &str) -> usize {
    let mut found = vec![false; query.len()];
    let mut left = query.len();
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if left == 0 {
            break;
        }
        let owned;
        let stemmed = if w.is_ascii() {
            stem_ascii(w)
        } else {
            owned = stem(&w.to_lowercase());
            owned.as_str()
        };
        for (q, seen) in query.iter().zip(found.iter_mut()).filter(|(_, s)| !**s) {
            // `stemmed` lowercased byte by byte is the word `words` would make (an ASCII
            // word's lowercase keeps its length; the other branch is lowercase already).
            if q.len() == stemmed.len()
                && q.bytes()
                    .zip(stemmed.bytes())
                    .all(|(a, b)| a == b.to_ascii_lowercase())
            {
                *seen = true;
                left -= 1;
            }
        }
    }
    query.len() - left
}

/// [`overlap`] of each of `spans` (byte ranges of `text`, such as its [`sentences`]).
/// A pasted document's sentences mostly share no word with the query, and scanning
/// them word by word made packing cost grow with message length: in an ASCII span a
/// word that matches a query word begins with it (its stem is a prefix of it,
/// lowercased), so one substring search of the lowercased text finds the only ASCII
/// spans worth scanning. Spans holding other characters are always scanned.
pub fn sentence_overlaps(query: &[String], text: &str, spans: &[(usize, usize)]) -> Vec<usize> {
    let lower = text.to_ascii_lowercase();
    let mut starts: Vec<usize> = query
        .iter()
        .filter(|q| !q.is_empty())
        .flat_map(|q| memchr::memmem::find_iter(lower.as_bytes(), q.as_bytes()))
        .collect();
    starts.sort_unstable();
    spans
        .iter()
        .map(|&(a, b)| {
            let next = starts.partition_point(|&p| p < a);
            let may_match = starts.get(next).is_some_and(|&p| p < b);
            if may_match || !text[a..b].is_ascii() {
                overlap(query, &text[a..b])
            } else {
                0
            }
        })
        .collect()
}

/// [`stem`] of an ASCII word's lowercase form, as a slice of the word in its own case.
fn stem_ascii(w: &str) -> &str {
    for suffix in ["ing", "ed", "es", "s"] {
        let n = suffix.len();
        if w.len() > n + 2 && w[w.len() - n..].eq_ignore_ascii_case(suffix) {
            return &w[..w.len() - n];
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition `overlap` computes without allocating.
    fn overlap_by_words(query: &[String], text: &str) -> usize {
        let w = words(text);
        query.iter().filter(|q| w.contains(q)).count()
    }

    #[test]
    fn overlap_counts_what_words_would_find() {
        let texts = [
            "Walking the DOGS, she walked; the dog walks. Walkings!",
            "fn parse_json() { RETURN value; } // retries RETRIED",
            "Café CAFÉS naïve Ünïcode ÉTÉ été, 3.5 km, X1s x1",
            "",
            "ss sss ssss ings ING Things",
        ];
        let queries = [
            vec![],
            vec!["walk".to_string(), "dog".to_string(), "she".to_string()],
            vec![
                "json".to_string(),
                "retri".to_string(),
                "return".to_string(),
                "valu".to_string(),
            ],
            vec![
                "café".to_string(),
                "naïve".to_string(),
                "été".to_string(),
                "x1".to_string(),
            ],
            vec![
                "ss".to_string(),
                "sss".to_string(),
                "thing".to_string(),
                "ing".to_string(),
            ],
            // Not lowercase: never equal to a word of `words`.
            vec!["Dog".to_string(), "WALK".to_string(), "Café".to_string()],
        ];
        for t in texts {
            for q in &queries {
                assert_eq!(overlap(q, t), overlap_by_words(q, t), "{q:?} in {t:?}");
            }
            // Every word of the text as a query finds what `words` says.
            let all = words(t);
            assert_eq!(overlap(&all, t), overlap_by_words(&all, t), "{t:?}");
        }
    }

    #[test]
    fn sentence_overlaps_are_each_sentences_overlap() {
        let texts = [
            "Walking the DOGS. she walked; the dog walks!\nWalkings? nothing here. x",
            "fn parse_json() { RETURN value; }\n// retries RETRIED.\nvalues\n\n",
            "Café CAFÉS naïve. Ünïcode ÉTÉ été, 3.5 km. X1s x1",
            "Dogs walk. Then a café… and the dog.\n[… 80 more bytes] walking",
            "ss sss. ssss ings! ING Things",
            "",
        ];
        let queries = [
            vec![],
            vec!["walk".to_string(), "dog".to_string(), "she".to_string()],
            vec!["json".to_string(), "retri".to_string(), "valu".to_string()],
            vec!["café".to_string(), "été".to_string(), "x1".to_string()],
            vec!["ss".to_string(), "thing".to_string(), "ing".to_string()],
            vec!["".to_string(), "Dog".to_string(), "WALK".to_string()],
            // A word of one letter ends a span.
            vec!["x".to_string()],
        ];
        for t in texts {
            // Sentences, and spans that cut words in two.
            let cut: Vec<(usize, usize)> = (0..t.len())
                .step_by(3)
                .filter(|&a| t.is_char_boundary(a))
                .map(|a| {
                    (
                        a,
                        (a + 5..=t.len())
                            .find(|&b| t.is_char_boundary(b))
                            .unwrap_or(t.len()),
                    )
                })
                .collect();
            for spans in [sentences(t), cut] {
                for q in &queries {
                    let each: Vec<usize> =
                        spans.iter().map(|&(a, b)| overlap(q, &t[a..b])).collect();
                    assert_eq!(sentence_overlaps(q, t, &spans), each, "{q:?} in {t:?}");
                }
            }
        }
    }

    #[test]
    fn sentences_split_on_terminators_and_newlines() {
        let t = "Hello there. How are you?\nFine 3.5 ok\n2. **Scan** your files.\n---\n";
        let s: Vec<&str> = sentences(t).iter().map(|&(a, b)| t[a..b].trim()).collect();
        assert_eq!(
            s,
            [
                "Hello there.",
                "How are you?",
                "Fine 3.5 ok",
                "2. **Scan** your files."
            ]
        );
    }

    #[test]
    fn content_words_drop_stop_words_and_stem() {
        assert_eq!(
            content_words("What are my cooking classes?"),
            ["cook", "class"]
        );
    }

    #[test]
    fn the_lexical_query_keeps_every_word_but_the_stop_words_as_written() {
        assert_eq!(
            without_stop_words("What did I say about Mom's cooking classes in Kyoto?"),
            "say Mom s cooking classes Kyoto"
        );
        assert_eq!(without_stop_words("Who is he? What did I do?"), "");
        assert_eq!(
            without_stop_words("gate code 4417, café"),
            "gate code 4417 café"
        );
    }
}
