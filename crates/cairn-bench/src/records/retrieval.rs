//! The record of the retrieval benches (LongMemEval, LoCoMo, FriendsQA): one question
//! under one config row.
use crate::qa::QaRecord;
use crate::scoring::retrieval::{HitRef, Scores};
use cairn::{Timestamp, Timings, UnitKind};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;

/// One question under one config row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionRecord {
    pub dataset: String,
    pub question_id: String,
    /// LongMemEval `question_type`; LoCoMo `<category>-<name>` (e.g. `2-temporal`).
    pub question_type: String,
    /// Config row name (`defaults`, `bench`).
    pub config: String,
    pub space: String,
    /// The question and gold answer are dataset content: they are kept in memory for
    /// the run but not written to `results.jsonl` (the question id finds them in the
    /// dataset), so committed results never copy the data.
    #[serde(default, skip_serializing)]
    pub question: String,
    #[serde(default, skip_serializing)]
    pub answer: Option<String>,
    /// The `as_of` the recall ran with.
    #[serde(default)]
    pub as_of: Option<Timestamp>,
    /// Set when `as_of` differs from the question's own date, saying why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_of_note: Option<String>,
    /// Why the question is excluded from aggregates (see [`crate::scoring::exclusion`]);
    /// none when scored.
    #[serde(default)]
    pub exclusion: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    pub evidence: Evidence,
    pub hits: Vec<RankedHit>,
    pub context_tokens: usize,
    pub hits_cut: usize,
    pub context_unit_ids: Vec<String>,
    /// The recall answered that nothing passed its relevance floor.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_relevant_memory: bool,
    /// Messages the context shows in more than one of its entries (hits).
    #[serde(default)]
    pub messages_twice: usize,
    /// The user's card at the head of the context: each line's category and the
    /// `session/message` it cites, as the dataset names them (the card's lines are not
    /// hits, so no metric above counts them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub card: Vec<CardCitation>,
    pub metrics: LevelScores,
    pub timings: QuestionTimings,
    pub ingest: IngestInfo,
    /// Units ingested per evidence session.
    pub ledger: Vec<LedgerEntry>,
    /// The reader's answer and the judge's verdict (runs with `--reader`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qa: Option<QaRecord>,
}

/// The question's evidence, as scored (ids that name nothing ingested are dropped and
/// listed in `notes`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub sessions: Vec<String>,
    /// `(session id, message id)`.
    pub turns: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One returned hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankedHit {
    /// From 1.
    pub rank: usize,
    pub unit_id: String,
    pub kind: UnitKind,
    pub session_id: Option<String>,
    pub turn_ids: Vec<String>,
    pub score: f32,
    /// The unit is in `recall.context_unit_ids`.
    pub in_context: bool,
    /// For a place hit (several units): the turns of its units the context shows (it
    /// may show only some of them). Absent for a hit of one unit: all its turns or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_turn_ids: Option<Vec<String>>,
    /// The hit's relevance (cosine of query and hit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevance: Option<f32>,
    /// Relevant at session / turn level.
    pub session_relevant: bool,
    pub turn_relevant: bool,
    /// The unit's ranking features (runs with `--features-top-k`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<std::collections::BTreeMap<String, f32>>,
}

impl HitRef for RankedHit {
    fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }
    fn turn_ids(&self) -> &[String] {
        &self.turn_ids
    }
    fn in_context(&self) -> bool {
        self.in_context
    }
    fn context_turn_ids(&self) -> &[String] {
        match &self.context_turn_ids {
            Some(t) => t,
            None if self.in_context => &self.turn_ids,
            None => &[],
        }
    }
}

/// Scores at each level; `None` when the level cannot be scored for this question (no
/// evidence at that level).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelScores {
    pub session: Option<Scores>,
    pub turn: Option<Scores>,
    /// Over the hits collapsed into distinct sessions ([`crate::scoring::retrieval::judge_session_ranking`]);
    /// absent from records written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_ranking: Option<Scores>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuestionTimings {
    /// Wall time of the space's ingest (`ingest_sessions` + `flush`).
    pub ingest_ms: f64,
    /// Wall time of the `recall` call.
    pub recall_wall_ms: f64,
    /// The engine's own timings (`recall.timings`).
    pub recall: Option<Timings>,
}

/// The ingest of the question's space (shared by all questions of a LoCoMo conversation).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IngestInfo {
    pub space: String,
    /// True when the space (and this ingest) serves several questions.
    pub shared: bool,
    pub sessions: usize,
    pub messages: usize,
    pub units: usize,
    pub vectors_computed: usize,
    pub vectors_cached: usize,
    pub ms: f64,
    pub skipped_empty_turns: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    pub session_id: String,
    /// Memory units ingested for this session.
    pub units: usize,
    /// Of those, units whose turns cover an evidence turn.
    pub evidence_turn_units: usize,
}

/// Reads every record of a results file (none if it does not exist); lines that do not
/// parse (a line cut short by a crash) are skipped and counted.
pub fn read_results(path: &Path) -> anyhow::Result<(Vec<QuestionRecord>, usize)> {
    super::file::read_jsonl(path)
}

/// `(question id, config)` pairs already in a results file.
pub fn done_pairs(records: &[QuestionRecord]) -> HashSet<(String, String)> {
    records
        .iter()
        .map(|r| (r.question_id.clone(), r.config.clone()))
        .collect()
}

#[cfg(test)]
pub(crate) fn minimal(id: &str, qtype: &str, config: &str) -> QuestionRecord {
    QuestionRecord {
        dataset: "test".into(),
        question_id: id.into(),
        question_type: qtype.into(),
        config: config.into(),
        space: format!("t-{id}"),
        question: "?".into(),
        answer: None,
        as_of: None,
        as_of_note: None,
        exclusion: None,
        error: None,
        evidence: Evidence::default(),
        hits: Vec::new(),
        context_tokens: 0,
        hits_cut: 0,
        context_unit_ids: Vec::new(),
        card: Vec::new(),
        no_relevant_memory: false,
        messages_twice: 0,
        metrics: LevelScores::default(),
        timings: QuestionTimings::default(),
        ingest: IngestInfo {
            space: format!("t-{id}"),
            ..Default::default()
        },
        ledger: Vec::new(),
        qa: None,
    }
}

/// A line of the user's card as a record cites it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardCitation {
    pub category: String,
    pub session_id: String,
    pub message_id: String,
}
