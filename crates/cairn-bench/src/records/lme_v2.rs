//! The record of `cairn bench lme-v2`: one question (ids, hits, scores, timings; no
//! question, option or answer text).
use crate::scoring::options::{ChoiceResult, OpenDiagnostic};
use crate::scoring::phrases::PhraseDiagnostic;
use cairn::{Timings, UnitKind};
use serde::{Deserialize, Serialize};

/// One question (a line of `results.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LmeV2Record {
    pub dataset: String,
    pub question_id: String,
    /// As in the file (`procedure`, `procedure-abs`, ...).
    pub question_type: String,
    /// The report group: the type without `-abs`, or `abstention` for every `*-abs`.
    pub group: String,
    /// The `eval_function` name.
    pub eval_function: String,
    pub config: String,
    pub space: String,
    #[serde(default)]
    pub error: Option<String>,
    pub insert: InsertInfo,
    pub hits: Vec<TrajHit>,
    pub context_tokens: usize,
    pub hits_cut: usize,
    pub recall_wall_ms: f64,
    pub recall_timings: Option<Timings>,
    /// Phrase-set questions: answer phrases in the context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phrases: Option<PhraseDiagnostic>,
    /// Multiple choice: the option scorer's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<ChoiceResult>,
    /// LLM-judged (gotchas) questions: reference-answer content words in the context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenDiagnostic>,
    /// Abstention questions: what was retrievable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abstention: Option<AbstentionDiagnostic>,
    /// With `--evidence`: where the evidence trajectories showed up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidenceDiagnostic>,
}

/// The insert of a question's haystack.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InsertInfo {
    pub trajectories: usize,
    pub states: usize,
    /// Haystack ids with no trajectory in the trajectories file (skipped).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    pub units: usize,
    pub vectors_computed: usize,
    pub vectors_cached: usize,
    /// `Trajectories::insert_many` + `flush`, wall time.
    pub ms: f64,
}

/// One returned hit (ids and scores; no text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajHit {
    pub rank: usize,
    pub unit_id: String,
    pub kind: UnitKind,
    pub trajectory_id: Option<String>,
    pub states: Option<[u32; 2]>,
    pub score: f32,
    pub in_context: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbstentionDiagnostic {
    pub hits: usize,
    /// The best hit's score (0 without hits).
    pub top_score: f32,
    /// Content words of the question found in the context, as a share.
    pub question_words_in_context: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidenceDiagnostic {
    pub trajectories: Vec<String>,
    /// Rank of the first hit from an evidence trajectory.
    pub first_rank: Option<usize>,
    /// A hit in the packed context came from an evidence trajectory.
    pub in_context: bool,
    /// A `note` hit came from an evidence trajectory.
    pub note_hit: bool,
}
