//! Why a recall answered what it did (`explain: true`): a hit's parts and explanation,
//! the recall's explanation. The server's own types, converted from the library's
//! (`cairn::explain`) by destructuring every field and matching every variant, so a
//! change there is a compile error here; they serialise exactly as the library's do.
//! Nested objects and enumerations are inlined in the document.
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

use cairn::explain as lib;

/// One unit of a place hit's excerpt, with the messages it covers.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = HitPart)]
pub struct HitPartOut {
    pub unit_id: String,
    pub turn_ids: Vec<String>,
}

impl From<cairn::HitPart> for HitPartOut {
    fn from(p: cairn::HitPart) -> Self {
        let cairn::HitPart { unit_id, turn_ids } = p;
        Self { unit_id, turn_ids }
    }
}

/// What one candidate list said about a hit.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ListScore)]
pub struct ListScoreOut {
    /// BM25 (lexical) or cosine (dense).
    pub score: f32,
    /// Place in the list as searched, from 1; absent for a cosine computed by score completion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// What fusion took from this list.
    pub fused: f32,
}

impl From<lib::ListScore> for ListScoreOut {
    fn from(s: lib::ListScore) -> Self {
        let lib::ListScore { score, rank, fused } = s;
        Self { score, rank, fused }
    }
}

/// A step of the second pass (or of placement after it) that changed a hit's score.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepOut {
    ContainerCredit,
    SessionEvidence,
    QuestionPenalty,
    TimeBoost,
    SessionDecay,
    VersionPlacement,
    ProfilePlacement,
    FactFolded,
    PersonalFact,
    PreferencePlacement,
    NewestPlacement,
    GraphLink,
    Learned,
}

impl From<lib::Step> for StepOut {
    fn from(s: lib::Step) -> Self {
        use lib::Step as S;
        match s {
            S::ContainerCredit => Self::ContainerCredit,
            S::SessionEvidence => Self::SessionEvidence,
            S::QuestionPenalty => Self::QuestionPenalty,
            S::TimeBoost => Self::TimeBoost,
            S::SessionDecay => Self::SessionDecay,
            S::VersionPlacement => Self::VersionPlacement,
            S::ProfilePlacement => Self::ProfilePlacement,
            S::FactFolded => Self::FactFolded,
            S::PersonalFact => Self::PersonalFact,
            S::PreferencePlacement => Self::PreferencePlacement,
            S::NewestPlacement => Self::NewestPlacement,
            S::GraphLink => Self::GraphLink,
            S::Learned => Self::Learned,
        }
    }
}

/// How a step changed the score.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OpOut {
    Add,
    Multiply,
    Set,
}

impl From<lib::Op> for OpOut {
    fn from(o: lib::Op) -> Self {
        match o {
            lib::Op::Add => Self::Add,
            lib::Op::Multiply => Self::Multiply,
            lib::Op::Set => Self::Set,
        }
    }
}

/// One adjustment with its size and the score after it.
#[derive(Debug, Serialize, ToSchema)]
pub struct AdjustmentOut {
    #[schema(inline)]
    pub step: StepOut,
    #[schema(inline)]
    pub op: OpOut,
    pub by: f32,
    pub score_after: f32,
    pub note: String,
}

impl From<lib::Adjustment> for AdjustmentOut {
    fn from(a: lib::Adjustment) -> Self {
        let lib::Adjustment {
            step,
            op,
            by,
            score_after,
            note,
        } = a;
        Self {
            step: step.into(),
            op: op.into(),
            by,
            score_after,
            note,
        }
    }
}

/// Where a hit's score came from.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = HitExplanation)]
pub struct HitExplanationOut {
    /// The candidate whose scores this hit carries (itself, or the part that credited it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scored_as: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical: Option<ListScoreOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense: Option<ListScoreOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fused: Option<f32>,
    /// The signals a learned ranking weighs (`[engine.rank.learned]`), by name: fused, lexical, dense, cosine, list ranks, question share, time match, session match, kind, key length, recency. Absent for hits placed after the second pass.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub features: BTreeMap<String, f32>,
    /// Every step that changed the score after fusion, in order.
    #[schema(inline)]
    pub adjustments: Vec<AdjustmentOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub version_notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placed_above: Option<String>,
}

impl From<lib::HitExplanation> for HitExplanationOut {
    fn from(e: lib::HitExplanation) -> Self {
        let lib::HitExplanation {
            scored_as,
            lexical,
            dense,
            fused,
            features,
            adjustments,
            version_notes,
            placed_above,
        } = e;
        Self {
            scored_as,
            lexical: lexical.map(ListScoreOut::from),
            dense: dense.map(ListScoreOut::from),
            fused,
            features,
            adjustments: adjustments.into_iter().map(AdjustmentOut::from).collect(),
            version_notes,
            placed_above,
        }
    }
}

/// What packing did with one hit.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PackOutcomeOut {
    Whole,
    Trimmed,
    Cut,
    Duplicate,
    Dropped,
}

impl From<lib::PackOutcome> for PackOutcomeOut {
    fn from(o: lib::PackOutcome) -> Self {
        use lib::PackOutcome as P;
        match o {
            P::Whole => Self::Whole,
            P::Trimmed => Self::Trimmed,
            P::Cut => Self::Cut,
            P::Duplicate => Self::Duplicate,
            P::Dropped => Self::Dropped,
        }
    }
}

/// One hit as packing saw it, in rank order.
#[derive(Debug, Serialize, ToSchema)]
pub struct PackedEntryOut {
    pub unit_id: String,
    #[schema(inline)]
    pub outcome: PackOutcomeOut,
    /// Tokens of the whole entry (date, source and text).
    pub full_tokens: usize,
    /// Tokens it takes in the context (0 when left out).
    pub tokens: usize,
}

impl From<lib::PackedEntry> for PackedEntryOut {
    fn from(e: lib::PackedEntry) -> Self {
        let lib::PackedEntry {
            unit_id,
            outcome,
            full_tokens,
            tokens,
        } = e;
        Self {
            unit_id,
            outcome: outcome.into(),
            full_tokens,
            tokens,
        }
    }
}

/// What packing did with the token budget.
#[derive(Debug, Serialize, ToSchema)]
pub struct PackingOut {
    pub token_budget: usize,
    pub tokens_used: usize,
    #[schema(inline)]
    pub entries: Vec<PackedEntryOut>,
}

impl From<lib::PackingExplanation> for PackingOut {
    fn from(p: lib::PackingExplanation) -> Self {
        let lib::PackingExplanation {
            token_budget,
            tokens_used,
            entries,
        } = p;
        Self {
            token_budget,
            tokens_used,
            entries: entries.into_iter().map(PackedEntryOut::from).collect(),
        }
    }
}

/// Candidates kept by each stage.
#[derive(Debug, Serialize, ToSchema)]
pub struct StageCountsOut {
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

impl From<lib::StageCounts> for StageCountsOut {
    fn from(c: lib::StageCounts) -> Self {
        let lib::StageCounts {
            lexical,
            dense,
            completed,
            fused,
            visible,
            ranked,
        } = c;
        Self {
            lexical,
            dense,
            completed,
            fused,
            visible,
            ranked,
        }
    }
}

/// A stage and its time.
#[derive(Debug, Serialize, ToSchema)]
pub struct StageTimeOut {
    pub stage: String,
    pub ms: f64,
}

impl From<lib::StageTime> for StageTimeOut {
    fn from(t: lib::StageTime) -> Self {
        let lib::StageTime { stage, ms } = t;
        Self { stage, ms }
    }
}

/// What the recall as a whole did.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = RecallExplanation)]
pub struct RecallExplanationOut {
    #[schema(inline)]
    pub counts: StageCountsOut,
    /// Hits passed over because their kind had used its quota.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub quota_skipped: Vec<String>,
    #[schema(inline)]
    pub packing: PackingOut,
    /// Ranking split into its stages (fuse, load, second pass, versions, quotas, profiles), in order.
    #[schema(inline)]
    pub stages: Vec<StageTimeOut>,
}

impl From<lib::RecallExplanation> for RecallExplanationOut {
    fn from(e: lib::RecallExplanation) -> Self {
        let lib::RecallExplanation {
            counts,
            quota_skipped,
            packing,
            stages,
        } = e;
        Self {
            counts: counts.into(),
            quota_skipped,
            packing: packing.into(),
            stages: stages.into_iter().map(StageTimeOut::from).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::to_value;

    /// Each explanation serialises exactly as the library's, every optional field both
    /// present and absent.
    #[test]
    fn each_explanation_is_the_json_the_library_wrote() {
        let score = lib::ListScore {
            score: 1.5,
            rank: Some(2),
            fused: 0.25,
        };
        let full = lib::HitExplanation {
            scored_as: Some("turn:s:1".into()),
            lexical: Some(score.clone()),
            dense: Some(lib::ListScore {
                rank: None,
                ..score
            }),
            fused: Some(0.5),
            features: [("cosine".to_string(), 0.75)].into(),
            adjustments: vec![lib::Adjustment {
                step: lib::Step::PreferencePlacement,
                op: lib::Op::Multiply,
                by: 1.25,
                score_after: 0.625,
                note: "part turn:s:1".into(),
            }],
            version_notes: vec!["current".into()],
            placed_above: Some("fact:s:0".into()),
        };
        for e in [full, lib::HitExplanation::default()] {
            assert_eq!(
                to_value(HitExplanationOut::from(e.clone())).unwrap(),
                to_value(&e).unwrap()
            );
        }
        let recall = lib::RecallExplanation {
            counts: lib::StageCounts {
                lexical: 1,
                dense: 2,
                completed: 3,
                fused: 4,
                visible: 5,
                ranked: 6,
            },
            quota_skipped: vec!["note:s:0".into()],
            packing: lib::PackingExplanation {
                token_budget: 100,
                tokens_used: 40,
                entries: vec![lib::PackedEntry {
                    unit_id: "round:s:0".into(),
                    outcome: lib::PackOutcome::Trimmed,
                    full_tokens: 80,
                    tokens: 40,
                }],
            },
            stages: vec![lib::StageTime {
                stage: "fuse".into(),
                ms: 0.5,
            }],
        };
        let empty = lib::RecallExplanation {
            quota_skipped: Vec::new(),
            ..recall.clone()
        };
        for e in [recall, empty] {
            assert_eq!(
                to_value(RecallExplanationOut::from(e.clone())).unwrap(),
                to_value(&e).unwrap()
            );
        }
        let part = cairn::HitPart {
            unit_id: "turn:s:0".into(),
            turn_ids: vec!["0".into()],
        };
        assert_eq!(
            to_value(HitPartOut::from(part.clone())).unwrap(),
            to_value(&part).unwrap()
        );
    }
}
