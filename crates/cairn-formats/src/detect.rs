//! Which of the supported shapes a file holds, told from the keys of its first record.
//!
//! A file's name says little (`.json` is LongMemEval, LoCoMo or EverMemBench; `.jsonl`
//! is sessions, group messages, trajectories or an export), and a byte prefix says less:
//! a LoCoMo sample opens with its `qa` list, kilobytes before `conversation`. So detection
//! parses the first record (the first element of a top-level array, else the first JSON
//! value) with its values skipped, and decides by the names of its top-level keys.
use crate::error::FormatError;
use crate::io::{io_err, json_err, open_reader};
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::BTreeSet;
use std::fmt;
use std::io::BufRead;
use std::path::Path;

/// A shape `cairn ingest` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// One session per line (`{id, date, messages: [...]}`).
    Sessions,
    /// One group message per line (`{speaker, group, time, text}`).
    GroupMessages,
    /// One agent trajectory per line (`{id, goal, states: [...]}`, LongMemEval-V2).
    Trajectories,
    /// What `cairn export` writes (`{space, recorded_at, session | trajectory}` per line).
    Export,
    /// EverMemBench's `dialogue_en.json` (`{"dialogues": {day: {group: [...]}}}`).
    EverMemBench,
    /// A LongMemEval file (an array of questions with `haystack_sessions`).
    LongMemEval,
    /// A LoCoMo file (an array of samples with `conversation`).
    Locomo,
}

impl InputFormat {
    pub const ALL: [InputFormat; 7] = [
        InputFormat::Sessions,
        InputFormat::GroupMessages,
        InputFormat::Trajectories,
        InputFormat::Export,
        InputFormat::EverMemBench,
        InputFormat::LongMemEval,
        InputFormat::Locomo,
    ];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::Sessions => "jsonl",
            InputFormat::GroupMessages => "group-jsonl",
            InputFormat::Trajectories => "trajectories",
            InputFormat::Export => "export",
            InputFormat::EverMemBench => "evermembench",
            InputFormat::LongMemEval => "longmemeval",
            InputFormat::Locomo => "locomo",
        }
    }

    /// The format of a `--format` name.
    pub fn parse(name: &str) -> Option<InputFormat> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Every name, for messages: `jsonl|group-jsonl|...`.
    pub fn names() -> String {
        Self::ALL.map(InputFormat::name).join("|")
    }

    /// The format whose records have these top-level keys, if one fits.
    fn of_keys(keys: &BTreeSet<String>) -> Option<InputFormat> {
        let has = |k: &str| keys.contains(k);
        Some(if has("dialogues") {
            InputFormat::EverMemBench
        } else if has("haystack_sessions") || has("question_id") {
            InputFormat::LongMemEval
        } else if has("conversation") || has("sample_id") {
            InputFormat::Locomo
        } else if has("recorded_at") && (has("session") || has("trajectory")) {
            InputFormat::Export
        } else if has("states") {
            InputFormat::Trajectories
        } else if has("messages") {
            InputFormat::Sessions
        } else if has("speaker") && (has("text") || has("group")) {
            InputFormat::GroupMessages
        } else {
            return None;
        })
    }
}

impl fmt::Display for InputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The format of the file at `path` (plain or gzip), from the keys of its first record.
/// Reads that record only; an error names the file, the keys it found and `--format`.
pub fn detect_format(path: impl AsRef<Path>) -> Result<InputFormat, FormatError> {
    let path = path.as_ref();
    let keys = first_record_keys(path)?;
    InputFormat::of_keys(&keys).ok_or_else(|| {
        let found = if keys.is_empty() {
            "no JSON object first".to_string()
        } else {
            let list: Vec<&str> = keys.iter().map(String::as_str).collect();
            format!("its first record has keys {}", list.join(", "))
        };
        FormatError::Json {
            path: path.to_path_buf(),
            msg: format!(
                "cannot tell the format ({found}): pass --format {}",
                InputFormat::names()
            ),
        }
    })
}

/// The top-level keys of the first object: the first element of a top-level array, or the
/// top-level object itself (a JSON file's, or a JSONL file's first line). Reads no further
/// than that record: the rest of a benchmark file can be hundreds of megabytes.
fn first_record_keys(path: &Path) -> Result<BTreeSet<String>, FormatError> {
    let mut reader = open_reader(path)?;
    let first = loop {
        let buf = reader.fill_buf().map_err(|e| io_err(path, e))?;
        let Some(&b) = buf.first() else {
            return Ok(BTreeSet::new());
        };
        if b.is_ascii_whitespace() || buf.starts_with(BOM) {
            let n = if b.is_ascii_whitespace() {
                1
            } else {
                BOM.len()
            };
            reader.consume(n);
            continue;
        }
        break b;
    };
    if first == b'[' {
        // The array's first element is the first record.
        reader.consume(1);
    }
    let mut values = serde_json::Deserializer::from_reader(reader).into_iter::<KeysOf>();
    match values.next() {
        Some(Ok(keys)) => Ok(keys.0),
        Some(Err(e)) => Err(json_err(path, &e)),
        None => Ok(BTreeSet::new()),
    }
}

const BOM: &[u8] = "\u{feff}".as_bytes();

/// An object's key names (values skipped); anything else has none.
struct KeysOf(BTreeSet<String>);

impl<'de> serde::Deserialize<'de> for KeysOf {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = BTreeSet<String>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut keys = BTreeSet::new();
                while let Some(k) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.insert(k);
                }
                Ok(keys)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(BTreeSet::new())
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(BTreeSet::new())
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(BTreeSet::new())
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(BTreeSet::new())
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(BTreeSet::new())
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(BTreeSet::new())
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(BTreeSet::new())
            }
        }
        d.deserialize_any(V).map(KeysOf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect(name: &str, content: &str) -> Result<InputFormat, FormatError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::write(&p, content).unwrap();
        detect_format(&p)
    }

    #[test]
    fn every_shape_is_told_by_its_first_record() {
        let cases = [
            (
                "s.jsonl",
                r#"{"id": "s1", "messages": [{"role": "user", "text": "hi"}]}"#,
                InputFormat::Sessions,
            ),
            (
                "chat.jsonl",
                "{\"speaker\": \"Maya\", \"group\": \"Atlas\", \"time\": \"2025-03-10 14:00\", \"text\": \"hi\"}\n{\"speaker\": \"Tom\"}",
                InputFormat::GroupMessages,
            ),
            (
                "t.jsonl",
                r#"{"id": "t", "domain": "shop", "goal": "g", "states": []}"#,
                InputFormat::Trajectories,
            ),
            (
                "e.jsonl",
                r#"{"space": "a", "recorded_at": "2024-01-01T00:00:00Z", "session": {}}"#,
                InputFormat::Export,
            ),
            (
                "d.json",
                r#"{"dialogues": {"2025-01-02": {}}}"#,
                InputFormat::EverMemBench,
            ),
            (
                "lme.json",
                r#"[{"question_id": "q1", "haystack_sessions": []}, {"question_id": "q2"}]"#,
                InputFormat::LongMemEval,
            ),
            // LoCoMo opens each sample with its (long) question list.
            (
                "locomo.json",
                &format!(
                    r#"[{{"qa": [{}], "conversation": {{}}, "sample_id": "c1"}}, {{"qa": []}}]"#,
                    vec![r#"{"question": "when?", "answer": "May"}"#; 500].join(",")
                ),
                InputFormat::Locomo,
            ),
        ];
        for (name, content, want) in cases {
            assert_eq!(detect(name, content).unwrap(), want, "{name}");
        }
    }

    #[test]
    fn detection_reads_one_record_of_a_broken_file() {
        // A truncated tail is the loader's error to report, with its line.
        let f = detect("x.json", r#"[{"question_id": "q1"}, {"question_id": "#).unwrap();
        assert_eq!(f, InputFormat::LongMemEval);
    }

    #[test]
    fn an_unknown_shape_names_its_keys_and_the_flag() {
        let e = detect("x.jsonl", r#"{"foo": 1, "bar": 2}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("x.jsonl") && e.contains("bar, foo") && e.contains("--format jsonl|"),
            "{e}"
        );
        let e = detect("y.json", "not json").unwrap_err().to_string();
        assert!(e.contains("y.json"), "{e}");
    }

    #[test]
    fn names_round_trip() {
        for f in InputFormat::ALL {
            assert_eq!(InputFormat::parse(f.name()), Some(f));
        }
        assert_eq!(InputFormat::parse("csv"), None);
    }
}
