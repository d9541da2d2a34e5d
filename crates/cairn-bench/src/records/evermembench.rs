//! The record of `cairn bench evermembench`: one question under one config row (ids,
//! hits, scores, timings; no question, option or answer text).
use crate::qa::QaRecord;
use crate::scoring::options::{ChoiceResult, OpenDiagnostic};
use cairn::{Timestamp, Timings, UnitKind};
use serde::{Deserialize, Serialize};

/// One question under one config row (a line of `results.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EverRecord {
    pub dataset: String,
    pub question_id: String,
    /// From the id: `F_SH`, `MA_U`, `P_Style`, ...
    pub category: String,
    /// `F`, `MA` or `P`.
    pub major: String,
    pub config: String,
    /// `multiple_choice` or `open`.
    pub kind: String,
    pub as_of: Option<Timestamp>,
    #[serde(default)]
    pub error: Option<String>,
    pub hits: Vec<EverHit>,
    pub context_tokens: usize,
    pub hits_cut: usize,
    pub recall_wall_ms: f64,
    pub recall_timings: Option<Timings>,
    /// Multiple choice: the option scorer's scores and pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<ChoiceResult>,
    /// Open-ended: the retrieval-only diagnostic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenDiagnostic>,
    /// The reader's answer and verdict (runs with `--reader`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qa: Option<QaRecord>,
}

/// One returned hit (ids and scores; no text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EverHit {
    pub rank: usize,
    pub unit_id: String,
    pub kind: UnitKind,
    pub session_id: Option<String>,
    pub score: f32,
    pub in_context: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
}
