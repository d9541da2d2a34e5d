//! EverMemBench (multi-party, multi-group workplace chat) and plain group-message JSONL.
//!
//! `dialogue_en.json`: `{"dialogues": {"YYYY-MM-DD": {"<group>": [{speaker, time,
//! dialogue}]}}}`, ingested day by day. `qa_<topic>.json`: `{"qars": [{id, Q, A,
//! options}]}`; the id's prefix names the category (`F_SH_...`, `MA_U_...`, `P_Style_...`).
use crate::error::split_json_error;
use crate::io::read_text_file;
use crate::FormatError;
use cairn_core::{GroupMessage, InputError};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// One day of every group's messages, in the order of the file's days.
#[derive(Debug, Clone, PartialEq)]
pub struct EverDay {
    pub day: String,
    pub messages: Vec<GroupMessage>,
}

#[derive(Deserialize)]
struct DialogueFile {
    dialogues: BTreeMap<String, BTreeMap<String, Vec<RawMessage>>>,
}

#[derive(Deserialize)]
struct RawMessage {
    speaker: String,
    time: String,
    #[serde(alias = "text", alias = "content")]
    dialogue: String,
    #[serde(default)]
    metadata: Value,
}

fn json_error(path: &Path, e: serde_json::Error) -> FormatError {
    let (msg, at) = split_json_error(&e);
    let msg = match at {
        Some((l, c)) => format!("{msg} (line {l}, column {c})"),
        None => msg,
    };
    FormatError::Json {
        path: path.to_path_buf(),
        msg,
    }
}

/// Reads `dialogue_en.json` into days (sorted by date), each with every group's
/// messages. Every message is validated; errors name the day, group and position.
pub fn load_evermem_dialogue(path: impl AsRef<Path>) -> Result<Vec<EverDay>, FormatError> {
    let path = path.as_ref();
    let text = read_text_file(path)?;
    let file: DialogueFile = serde_json::from_str(&text).map_err(|e| json_error(path, e))?;
    let mut days = Vec::with_capacity(file.dialogues.len());
    for (day, groups) in file.dialogues {
        let mut messages = Vec::new();
        for (group, raw) in groups {
            for (i, m) in raw.into_iter().enumerate() {
                let rec = format!("day {day:?} group {group:?} message {i}");
                let time = cairn_core::time::parse_timestamp(&m.time)
                    .map_err(|e| FormatError::record(path, InputError::new(&rec, e.to_string())))?;
                let msg = GroupMessage {
                    id: None,
                    speaker: m.speaker,
                    group: group.clone(),
                    time,
                    text: m.dialogue,
                    metadata: m.metadata,
                };
                msg.validate(i)
                    .map_err(|e| FormatError::record(path, InputError::new(&rec, e.to_string())))?;
                messages.push(msg);
            }
        }
        days.push(EverDay { day, messages });
    }
    Ok(days)
}

/// One EverMemBench question.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EverQuestion {
    pub id: String,
    #[serde(rename = "Q")]
    pub question: String,
    /// The correct letter for multiple choice; the reference answer otherwise.
    #[serde(rename = "A")]
    pub answer: String,
    /// Options `A`..`D` for multiple choice; `None` for open-ended questions.
    #[serde(default)]
    pub options: Option<BTreeMap<String, String>>,
}

impl EverQuestion {
    /// The category from the id: `F_SH_Top004_001` is `F_SH` (major `F`, minor `SH`).
    pub fn category(&self) -> String {
        match self.id.find("_Top") {
            Some(i) => self.id[..i].to_string(),
            None => self.id.split('_').take(2).collect::<Vec<_>>().join("_"),
        }
    }

    pub fn major(&self) -> &str {
        self.id.split('_').next().unwrap_or("")
    }
}

#[derive(Deserialize)]
struct QaFile {
    qars: Vec<EverQuestion>,
}

/// Reads `qa_<topic>.json`.
pub fn load_evermem_qa(path: impl AsRef<Path>) -> Result<Vec<EverQuestion>, FormatError> {
    let path = path.as_ref();
    let text = read_text_file(path)?;
    let file: QaFile = serde_json::from_str(&text).map_err(|e| json_error(path, e))?;
    for (i, q) in file.qars.iter().enumerate() {
        if q.question.trim().is_empty() {
            return Err(FormatError::record(
                path,
                InputError::new(format!("question {i} ({:?})", q.id), "field `Q` is empty"),
            ));
        }
    }
    Ok(file.qars)
}

/// Reads a JSONL file of [`GroupMessage`]s (`{speaker, group, time, text, metadata}`
/// per line). Every line is validated; errors name the line.
pub fn read_group_messages_jsonl(path: impl AsRef<Path>) -> Result<Vec<GroupMessage>, FormatError> {
    let path = path.as_ref();
    let text = read_text_file(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let rec = format!("line {}", i + 1);
        let m: GroupMessage = serde_json::from_str(line).map_err(|e| {
            FormatError::record(path, InputError::new(&rec, split_json_error(&e).0))
        })?;
        m.validate(i)
            .map_err(|e| FormatError::record(path, InputError::new(&rec, e.to_string())))?;
        out.push(m);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_days_and_names_bad_records() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("dialogue_en.json");
        std::fs::write(
            &p,
            r#"{"dialogues": {"2025-01-03": {"Group 2": [{"speaker":"Ann","time":"2025-01-03 09:00:00","dialogue":"hi"}]},
                              "2025-01-02": {"Group 1": [{"speaker":"Bo","time":"2025-01-02 10:00:00","dialogue":"first"}]}}}"#,
        )
        .unwrap();
        let days = load_evermem_dialogue(&p).unwrap();
        assert_eq!(days[0].day, "2025-01-02");
        assert_eq!(days[1].messages[0].group, "Group 2");
        std::fs::write(
            &p,
            r#"{"dialogues": {"2025-01-02": {"G": [{"speaker":"Bo","time":"yesterday","dialogue":"x"}]}}}"#,
        )
        .unwrap();
        let e = load_evermem_dialogue(&p).unwrap_err().to_string();
        assert!(
            e.contains("day \"2025-01-02\" group \"G\" message 0"),
            "{e}"
        );
    }

    #[test]
    fn categories_come_from_ids() {
        let q = EverQuestion {
            id: "P_Skill_Top004_001".into(),
            question: "?".into(),
            answer: "A".into(),
            options: None,
        };
        assert_eq!(q.category(), "P_Skill");
        assert_eq!(q.major(), "P");
    }
}
