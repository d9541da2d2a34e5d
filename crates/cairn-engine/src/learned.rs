//! Learned ranking: the second pass as a weighted sum of the signals it already computes.
//!
//! The hand-set second pass (`rank.rs`) fuses the lexical and dense lists, then multiplies
//! by a question penalty and a time boost. [`Features`] names those signals and a few it
//! leaves unused (raw cosine, list ranks, the kind, key length, recency, the session's
//! own match); with `[engine.rank.learned]` set, a unit's score is `weights . features`
//! instead. The weights are fitted offline by `crates/cairn-bench/scripts/ltr-fit.py`
//! from the features an explained recall reports (`HitExplanation::features`), fitted on
//! some dev sets and checked on the others, starting from (and pulled towards) weights
//! close to the hand-set pass: `fused` 1, `fused_asking` -0.15, `fused_in_time` 0.3.
//! Off by default: no fit so far beat the hand-set pass on every dev set
//! (`docs/benchmarks/experiments.md`, "Learned ranking").
use crate::query::QueryAnalysis;
use cairn_core::{Timestamp, Unit, UnitKind};
use std::collections::{BTreeMap, HashMap};

/// Declares [`Features`] once: the struct (also the weights' shape in configuration) and
/// its field names in order.
macro_rules! features {
    ($($(#[doc = $doc:literal])* $name:ident),* $(,)?) => {
        /// One ranked unit's signals, or (as `[engine.rank.learned]`) the weight of each.
        /// An unnamed weight is 0.
        #[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct Features {
            $($(#[doc = $doc])* pub $name: f32,)*
        }

        impl Features {
            /// The field names, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            /// The values in the order of [`Features::NAMES`] (no allocation: the learned
            /// score takes two of these per ranked unit).
            pub fn values(&self) -> [f32; Self::NAMES.len()] {
                [$(self.$name),*]
            }
        }
    };
}

features! {
    /// The fused score (lexical plus dense, each scaled 0..1 over its candidates).
    fused,
    /// The lexical list's scaled BM25 (0 when the unit was not a lexical candidate).
    lexical,
    /// The dense list's scaled cosine.
    dense,
    /// The raw cosine of the unit's vector and the query's (the same scale in every
    /// recall, which the scaled scores are not).
    cosine,
    /// `1 / rank` in the lexical list (0 when absent).
    lexical_rr,
    /// `1 / rank` in the dense list as searched (0 when absent or only completed).
    dense_rr,
    /// The share of the key's sentences that ask (of its head, `Unit::key_head`).
    asking,
    /// `fused * asking`: the hand-set pass's question penalty is `-0.15` of this.
    fused_asking,
    /// 1 when the unit lies inside the period the question names.
    in_time,
    /// `fused * in_time`: the hand-set time boost is `0.3` of this.
    fused_in_time,
    /// The fused score of the unit's session (its episode unit), 0 when not a candidate.
    session,
    /// 1 when a part (a turn of a round) credited its score to the unit.
    part,
    /// `ln(1 + words)` of the unit's key head (`Unit::key_head`).
    key_words,
    /// Where the unit's time lies among the candidates' (1 the newest, 0 the oldest).
    recency,
    /// Kind indicators (a turn has none).
    kind_round,
    kind_episode,
    kind_fact,
    kind_note,
    kind_event,
    kind_slice,
}

impl Features {
    /// `self . weights`.
    pub fn score(&self, weights: &Features) -> f32 {
        self.values()
            .iter()
            .zip(weights.values())
            .map(|(f, w)| f * w)
            .sum()
    }

    /// By name, for an explanation.
    pub fn named(&self) -> BTreeMap<String, f32> {
        Self::NAMES
            .iter()
            .zip(self.values())
            .map(|(n, v)| (n.to_string(), v))
            .collect()
    }
}

/// What the candidate lists said about one candidate, for its features.
#[derive(Debug, Clone, Copy, Default)]
pub struct Signal {
    /// Scaled 0..1 over the list (weight 1).
    pub lexical: f32,
    pub lexical_rank: Option<usize>,
    pub dense: f32,
    /// Place in the dense list as searched; `None` for a completed cosine.
    pub dense_rank: Option<usize>,
    pub cosine: f32,
}

/// Signals by candidate id.
pub type Signals = HashMap<String, Signal>;

/// What every candidate's features are computed against.
pub struct FeatureContext<'a> {
    pub analysis: &'a QueryAnalysis,
    pub session_prior: &'a HashMap<&'a str, f32>,
    /// The oldest and newest time among the candidates.
    pub span: Option<(Timestamp, Timestamp)>,
}

/// The oldest and newest `occurred_at` of `units`.
pub fn time_span<'a>(units: impl Iterator<Item = &'a Unit>) -> Option<(Timestamp, Timestamp)> {
    units
        .filter_map(|u| u.occurred_at)
        .fold(None, |acc, t| match acc {
            None => Some((t, t)),
            Some((lo, hi)) => Some((lo.min(t), hi.max(t))),
        })
}

/// The features of `u`, scored `fused` as candidate `scored_as` (itself or its part).
pub fn features(
    u: &Unit,
    fused: f32,
    scored_as: &str,
    signal: Option<&Signal>,
    asking: f32,
    ctx: &FeatureContext<'_>,
) -> Features {
    let s = signal.copied().unwrap_or_default();
    let rr = |rank: Option<usize>| rank.map_or(0.0, |r| 1.0 / r as f32);
    let in_time = match (ctx.analysis.time, u.occurred_at) {
        (Some(range), Some(t)) if range.contains(t) => 1.0,
        _ => 0.0,
    };
    let recency = match (ctx.span, u.occurred_at) {
        (Some((lo, hi)), Some(t)) if hi > lo => {
            (t - lo).num_seconds() as f32 / (hi - lo).num_seconds() as f32
        }
        _ => 0.0,
    };
    let session = u
        .provenance
        .session_id
        .as_deref()
        .filter(|_| u.kind != UnitKind::Episode)
        .and_then(|sid| ctx.session_prior.get(sid).copied())
        .unwrap_or(0.0);
    let kind = |k: UnitKind| if u.kind == k { 1.0 } else { 0.0 };
    Features {
        fused,
        lexical: s.lexical,
        dense: s.dense,
        cosine: s.cosine,
        lexical_rr: rr(s.lexical_rank),
        dense_rr: rr(s.dense_rank),
        asking,
        fused_asking: fused * asking,
        in_time,
        fused_in_time: fused * in_time,
        session,
        part: if scored_as == u.id { 0.0 } else { 1.0 },
        key_words: (1.0 + u.key_head().split_whitespace().count() as f32).ln(),
        recency,
        kind_round: kind(UnitKind::Round),
        kind_episode: kind(UnitKind::Episode),
        kind_fact: kind(UnitKind::Fact),
        kind_note: kind(UnitKind::Note),
        kind_event: kind(UnitKind::Event),
        kind_slice: kind(UnitKind::Slice),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_fields_and_unknown_weights_are_refused() {
        assert_eq!(Features::NAMES.len(), Features::default().values().len());
        assert_eq!(Features::NAMES[0], "fused");
        let w: Features = serde_json::from_str(r#"{"fused": 1.0, "kind_fact": 0.5}"#).unwrap();
        assert_eq!((w.fused, w.kind_fact, w.cosine), (1.0, 0.5, 0.0));
        let err = serde_json::from_str::<Features>(r#"{"fuzed": 1.0}"#).unwrap_err();
        assert!(err.to_string().contains("fuzed"), "{err}");
    }

    #[test]
    fn the_score_is_the_dot_product() {
        let f = Features {
            fused: 2.0,
            asking: 1.0,
            fused_asking: 2.0,
            ..Features::default()
        };
        let w = Features {
            fused: 1.0,
            fused_asking: -0.15,
            ..Features::default()
        };
        assert!((f.score(&w) - 1.7).abs() < 1e-6);
        assert_eq!(f.named()["fused_asking"], 2.0);
    }
}
