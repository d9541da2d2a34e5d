//! Why a recall answered what it did, returned when `RecallOptions::explain` is set: for
//! each hit, where its score came from (the candidate lists, fusion, every second-pass
//! adjustment with its size, version and profile placement); for the recall, what the
//! stages kept and what packing did with the token budget. Nothing here is computed
//! when `explain` is off.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one candidate list said about a hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListScore {
    /// The list's own score: BM25 for the lexical list, cosine for the dense one.
    pub score: f32,
    /// Place in the list as searched, from 1; `None` for a cosine computed because the
    /// lexical list found the unit and the dense search did not (score completion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// What fusion gave the unit from this list (its weight times the min-max scaled
    /// score under convex fusion, `weight / (k + rank)` under reciprocal rank fusion).
    pub fused: f32,
}

/// A step of the second pass (or of placement after it) that changed a hit's score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// A part (a turn inside a round) handed its fused score to its container.
    ContainerCredit,
    /// `session_weight` times the fused score of the hit's session (its episode).
    SessionEvidence,
    /// A key that only asks loses `question_penalty` times its share of questions.
    QuestionPenalty,
    /// The hit lies inside the period the question names.
    TimeBoost,
    /// `session_decay` once per hit of the same stretch ranked above it.
    SessionDecay,
    /// A current fact version placed just above the superseded hit that stated an
    /// older value: it takes that hit's score.
    VersionPlacement,
    /// A profile of the person asked about, placed first with the best hit's score.
    ProfilePlacement,
    /// A fact ranked above the unit that shows its message: that unit takes the fact's
    /// place and score, and the fact's version note, so the message is shown once.
    FactFolded,
    /// A personal fact's fused score, multiplied: in a request for advice (what the
    /// person is, has, likes, does), or about the person the question asks about.
    PersonalFact,
    /// In a request for advice, the asker's personal fact closest in meaning to it
    /// (a liking, a habit, a belonging), placed first with the best hit's score.
    PreferencePlacement,
    /// For a question about the present, the newest of the places scoring close to the
    /// best, placed first with the best's score (`engine/present.rs`).
    NewestPlacement,
    /// The entity graph linked the hit to an entity the question names (a multiplied
    /// score), or found it alone (its score set from its cosine).
    GraphLink,
    /// Learned ranking (`[engine.rank.learned]`): the weights times the hit's
    /// `features` set the score, in place of session evidence, question penalty and
    /// time boost.
    Learned,
}

/// How a step changed the score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// `score + by`.
    Add,
    /// `score * by`.
    Multiply,
    /// `by` replaces the score.
    Set,
}

/// One adjustment with its size and the score after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Adjustment {
    pub step: Step,
    pub op: Op,
    pub by: f32,
    pub score_after: f32,
    /// What it was about, for people (`part turn:s1:3`, `2 of 2 sentences ask`).
    pub note: String,
}

/// Where a hit's score came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct HitExplanation {
    /// The candidate whose list scores this hit carries: the hit itself, or the part
    /// that credited its container; `None` for hits placed by versions or profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scored_as: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical: Option<ListScore>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dense: Option<ListScore>,
    /// The fused score of `scored_as` (the sum of its lists' `fused`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fused: Option<f32>,
    /// The signals a learned ranking weighs, by name (what `ltr-fit.py` fits on);
    /// empty for hits placed after the second pass.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub features: BTreeMap<String, f32>,
    /// Every step that changed the score after fusion, in order.
    pub adjustments: Vec<Adjustment>,
    /// Notes the version chain added to the hit's text (current / superseded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub version_notes: Vec<String>,
    /// For a current version the engine placed: the superseded hit it stands above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placed_above: Option<String>,
}

/// What packing did with one hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PackOutcome {
    /// In the context whole.
    Whole,
    /// In the context cut to its best sentences.
    Trimmed,
    /// Left out: not even its best sentence fitted.
    Cut,
    /// Left out: the synthesized context already holds the same text.
    Duplicate,
    /// Packed, then dropped from the end because the joined context ran over budget.
    Dropped,
}

/// One hit as packing saw it, in rank order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackedEntry {
    pub unit_id: String,
    pub outcome: PackOutcome,
    /// Tokens of the whole entry (date, source and text).
    pub full_tokens: usize,
    /// Tokens it takes in the context (0 when left out).
    pub tokens: usize,
}

/// What packing did with the token budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackingExplanation {
    pub token_budget: usize,
    pub tokens_used: usize,
    pub entries: Vec<PackedEntry>,
}

/// How many candidates each stage kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct StageCounts {
    /// Found by the lexical index.
    pub lexical: usize,
    /// Found by the vector index.
    pub dense: usize,
    /// Lexical candidates given their exact cosine (score completion).
    pub completed: usize,
    /// Distinct candidates after fusion.
    pub fused: usize,
    /// Fused candidates visible under the options (as_of, since, filters, kinds).
    pub visible: usize,
    /// Hits after the second pass and version placement, before `top_k`.
    pub ranked: usize,
}

/// A stage and its time, finer than [`crate::Timings`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageTime {
    pub stage: String,
    pub ms: f64,
}

/// What the recall as a whole did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecallExplanation {
    pub counts: StageCounts,
    /// Hits passed over because their kind had used its quota.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quota_skipped: Vec<String>,
    pub packing: PackingExplanation,
    /// Ranking split into its stages (fuse, load, second pass, versions, quotas,
    /// profiles), in order.
    pub stages: Vec<StageTime>,
}
