//! Off-topic questions (`--off-topic`): questions a space cannot answer, asked of it
//! besides its own, to count how often recall says `no_relevant_memory` rather than
//! returning its least bad guesses. A source is another benchmark's file (every
//! `question` string in its JSON: LongMemEval, LoCoMo, FriendsQA alike), a text file of
//! one question per line, or `general`, the built-in general-knowledge questions
//! (`offtopic/general.txt`).
use anyhow::Context as _;
use std::path::Path;

const GENERAL: &str = include_str!("../../offtopic/general.txt");

/// The questions of one source.
#[derive(Debug, Clone)]
pub struct Source {
    /// `general`, or the file's name.
    pub name: String,
    pub questions: Vec<String>,
}

/// One off-topic question put to a space.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    pub source: String,
    /// Its place in the source's list.
    pub index: usize,
    pub question: String,
}

/// Loads each source named by `--off-topic`.
pub fn load(names: &[String]) -> anyhow::Result<Vec<Source>> {
    names
        .iter()
        .map(|n| {
            let s = if n == "general" {
                Source {
                    name: n.clone(),
                    questions: lines(GENERAL),
                }
            } else {
                from_file(Path::new(n))?
            };
            anyhow::ensure!(
                !s.questions.is_empty(),
                "--off-topic {n}: no questions in it"
            );
            Ok(s)
        })
        .collect()
}

fn lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

fn from_file(path: &Path) -> anyhow::Result<Source> {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    let is_text = path.extension().is_some_and(|e| e == "txt");
    let questions = if is_text {
        lines(&cairn::formats::read_text_file(path)?)
    } else {
        let v: serde_json::Value = cairn::formats::read_json_file(path)
            .with_context(|| format!("--off-topic {}", path.display()))?;
        let mut out = Vec::new();
        questions_in(&v, &mut out);
        out
    };
    Ok(Source { name, questions })
}

/// Every string under a `question` key, in document order.
fn questions_in(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                match x {
                    serde_json::Value::String(q) if k == "question" => out.push(q.clone()),
                    _ => questions_in(x, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| questions_in(x, out)),
        _ => {}
    }
}

/// The off-topic questions for the `nth` space of a run: `per_source` of each source,
/// taken in turn (the next space gets the next ones, wrapping around).
pub fn for_space(sources: &[Source], nth: usize, per_source: usize) -> Vec<Asked> {
    sources
        .iter()
        .flat_map(|s| {
            let n = s.questions.len();
            (0..per_source.min(n)).map(move |k| {
                let index = (nth * per_source + k) % n;
                Asked {
                    source: s.name.clone(),
                    index,
                    question: s.questions[index].clone(),
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_are_found_in_any_benchmark_shape() {
        let v = serde_json::json!([
            {"question_id": "a", "question": "one?", "haystack_sessions": []},
            {"qa": [{"question": "two?", "answer": "x"}], "conversation": {}},
            {"data": [{"paragraphs": [{"qas": [{"question": "three?"}]}]}]}
        ]);
        let mut out = Vec::new();
        questions_in(&v, &mut out);
        assert_eq!(out, ["one?", "two?", "three?"]);
    }

    #[test]
    fn spaces_take_the_sources_in_turn() {
        let general = &load(&["general".into()]).unwrap()[0];
        assert!(general.questions.len() >= 50);
        assert!(general.questions.iter().all(|q| q.ends_with('?')));
        let s = [Source {
            name: "s".into(),
            questions: vec!["a".into(), "b".into(), "c".into()],
        }];
        let q = |nth| -> Vec<String> {
            for_space(&s, nth, 2)
                .into_iter()
                .map(|a| a.question)
                .collect()
        };
        assert_eq!(q(0), ["a", "b"]);
        assert_eq!(q(1), ["c", "a"]);
        assert_eq!(for_space(&s, 0, 5).len(), 3);
    }
}
