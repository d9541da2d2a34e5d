//! Recall options and results.
use crate::explain::{HitExplanation, RecallExplanation};
use crate::{InputError, Timestamp, UnitKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How the packed context is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Verbatim excerpts in chronological order, each prefixed with its date and speaker.
    Raw,
    /// Compact, deduplicated, newest first; built without an LLM.
    #[default]
    Synthesized,
}

impl std::str::FromStr for Format {
    type Err = InputError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "raw" => Ok(Format::Raw),
            "synthesized" => Ok(Format::Synthesized),
            other => Err(InputError::new(
                "format",
                format!("unknown format {other:?} (expected raw or synthesized)"),
            )),
        }
    }
}

pub use crate::bounds::{in_range, MAX_TOKEN_BUDGET, MAX_TOP_K};
/// The stock relevance floor ([`RecallOptions::min_relevance`]), chosen from the dev sets
/// (docs/benchmarks/relevance-floor.md: the curve of evidence kept and off-topic questions
/// answered "no relevant memory" at each floor).
pub const DEFAULT_MIN_RELEVANCE: f32 = 0.2;

/// Options of one recall. `Default` gives the engine's stock settings
/// (`top_k=3, token_budget=600, format=synthesized, min_relevance=DEFAULT_MIN_RELEVANCE`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecallOptions {
    pub top_k: usize,
    pub token_budget: usize,
    pub format: Format,
    /// What the recall may see: `as_of` (units that occurred later are invisible, and
    /// relative time expressions in the query resolve against it; `None` means now),
    /// `since`, `sessions`, `speakers`, `groups`, `kinds`, `filter` and `partition`, as
    /// every read takes them ([`crate::ScopeOptions`]; in JSON, fields of the options
    /// themselves).
    #[serde(flatten)]
    pub scope: crate::ScopeOptions,
    /// At most this many hits of a kind (per-pool quotas); kinds not named are unlimited.
    pub quotas: Option<BTreeMap<UnitKind, usize>>,
    /// The relevance floor: a recall none of whose places reaches it (their
    /// [`Hit::relevance`], the cosine of query and hit) has no hits and answers
    /// [`Recall::no_relevant_memory`]; otherwise the hits are those without a floor (a
    /// weaker place beside a strong one stays: on the dev sets such places held evidence).
    /// A question about the asker or someone they name ("which company pays my salary?")
    /// asked of the asker's own conversations (places the user speaks in) is not refused:
    /// what they told is what it is about, in whatever words. `-1` turns it off. Default
    /// [`DEFAULT_MIN_RELEVANCE`].
    pub min_relevance: f32,
    /// Explain every hit's score and what packing did (`Hit::explain`,
    /// `Recall::explain`). Off, nothing of it is computed. Left out of the JSON when
    /// off, so recorded options read as before.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub explain: bool,
}

impl Default for RecallOptions {
    fn default() -> Self {
        Self {
            top_k: 3,
            token_budget: 600,
            format: Format::Synthesized,
            scope: crate::ScopeOptions::default(),
            quotas: None,
            min_relevance: DEFAULT_MIN_RELEVANCE,
            explain: false,
        }
    }
}

impl RecallOptions {
    pub fn validate(&self) -> Result<(), InputError> {
        self.checked_scope().map(|_| ())
    }

    /// Checks every option and returns the recall's scope (what it may see).
    pub fn checked_scope(&self) -> Result<crate::Scope, InputError> {
        if self.top_k == 0 || self.top_k > MAX_TOP_K {
            return Err(InputError::new(
                "recall options",
                format!("`top_k` must be 1..={MAX_TOP_K}, got {}", self.top_k),
            )
            .at("top_k"));
        }
        if self.token_budget == 0 || self.token_budget > MAX_TOKEN_BUDGET {
            return Err(InputError::new(
                "recall options",
                format!(
                    "`token_budget` must be 1..={MAX_TOKEN_BUDGET}, got {}",
                    self.token_budget
                ),
            )
            .at("token_budget"));
        }
        let range = crate::bounds::MIN_RELEVANCE_RANGE;
        if !range.contains(&self.min_relevance) {
            return Err(InputError::new(
                "recall options",
                format!(
                    "`min_relevance` must be {}..={} (a cosine similarity), got {}",
                    range.start(),
                    range.end(),
                    self.min_relevance
                ),
            )
            .at("min_relevance"));
        }
        self.scope.scope()
    }
}

/// One ranked piece of evidence. `score` ranks hits within one recall (fused lexical and
/// dense scores, each scaled over this recall's candidates, then adjusted): a lone
/// candidate scores high whatever it says, so compare `relevance` across queries, never
/// `score`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub unit_id: String,
    pub kind: UnitKind,
    pub text: String,
    pub score: f32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The messages (turns) this hit covers.
    pub turn_ids: Vec<String>,
    pub speakers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurred_at: Option<Timestamp>,
    /// The trajectory and states `[first, end)` a trajectory unit cites.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub states: Option<[u32; 2]>,
    /// For a fact that a later statement replaced (as of the recall time): the unit of
    /// the version that replaced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// How close the hit's meaning is to the query: the cosine similarity of their
    /// embeddings (-1..=1, in practice 0..=1), the same scale for every query, so it can
    /// be thresholded (`RecallOptions::min_relevance` does). `score` only orders the hits
    /// of one recall: it is scaled over that recall's candidates. A place hit has the best
    /// of its units', a fact that of the message stating it. `None` for hits without a
    /// vector (computed profiles, episodes, events that are not embedded): they do not
    /// pass the floor themselves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevance: Option<f32>,
    /// The units this hit's text shows, when it shows several: a hit is a place (one
    /// conversation), its text an excerpt of the place's best units in conversation order,
    /// `unit_id` the best of them (listed first, then the others in rank order).
    /// `turn_ids` covers them all. Empty when the hit is one unit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<HitPart>,
    /// How the entity graph linked the hit to the question ("graph: Melanie (speaker_of)";
    /// "graph-only: ..." for a hit that only the graph found). `None`: the graph played
    /// no part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Where the score came from (only with `RecallOptions::explain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<HitExplanation>,
}

/// One unit of a place hit's excerpt, with the messages it covers (so a context that
/// shows only some of a place's units cites exactly those: `Recall::context_unit_ids`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HitPart {
    pub unit_id: String,
    pub turn_ids: Vec<String>,
}

/// Where recall spent its time, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    pub embed_ms: f64,
    pub lexical_ms: f64,
    pub dense_ms: f64,
    pub rank_ms: f64,
    pub pack_ms: f64,
    pub total_ms: f64,
}

/// The answer to a recall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recall {
    pub hits: Vec<Hit>,
    /// Places ranked after the first `top_k` that the context also shows, because the
    /// budget had room once the hits were in: cited like `hits`, in rank order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_hits: Vec<Hit>,
    /// The evidence written out within `token_budget`.
    pub context: String,
    /// The user's card at the head of `context`: their standing instructions, then what
    /// they said of themself that holds now and bears on the query, each cited (empty
    /// when the view holds no statement of the user's, or the space holds several end
    /// users' and the request pins no `partition`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub card: Vec<CardLine>,
    /// Tokens in `context`, counted with the embedding model's tokenizer.
    pub context_tokens: usize,
    /// Hits that are in `hits` but did not fit (wholly) into the context.
    pub hits_cut: usize,
    /// The `unit_id`s of those hits: trimmed to what fitted, shown in part (a place
    /// without some of its units) or left out.
    #[serde(default)]
    pub hits_cut_ids: Vec<String>,
    /// True when nothing the recall found reaches the relevance floor
    /// (`RecallOptions::min_relevance`): then there are no hits and the context holds at most the user's card,
    /// and an agent can say it does not know.
    #[serde(default)]
    pub no_relevant_memory: bool,
    /// The unit ids whose text (whole or trimmed) is in `context`; for a place hit, each
    /// of its `parts` the context shows (of `hits` and `extra_hits`).
    pub context_unit_ids: Vec<String>,
    pub timings: Timings,
    /// What the stages kept and packing did (only with `RecallOptions::explain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<RecallExplanation>,
    /// What the caller should know about its request (a filter key no session carries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<crate::Warning>,
}

/// One line of the user's card ([`Recall::card`]): the newest statement of one of their
/// version chains that the view sees, as they said it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardLine {
    /// The fact unit it cites.
    pub unit_id: String,
    pub category: crate::FactCategory,
    /// The sentence that states it, verbatim.
    pub statement: String,
    /// When it was said.
    pub stated_at: Option<Timestamp>,
    pub session_id: String,
    pub message_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scope is one struct in code and fields of the options in JSON, as recorded
    /// options (bench runs, configuration) have always been written.
    #[test]
    fn options_carry_the_scope_as_their_own_fields() {
        let o: RecallOptions = serde_json::from_value(serde_json::json!({
            "top_k": 5, "as_of": "2025-03-01T00:00:00Z", "sessions": ["s1"],
            "filter": {"user_id": "u1"}, "min_relevance": -1.0
        }))
        .expect("options");
        assert_eq!(o.top_k, 5);
        assert_eq!(o.scope.sessions, Some(vec!["s1".to_string()]));
        assert!(o.scope.as_of.is_some() && o.scope.filter.is_some());
        assert_eq!(o.token_budget, RecallOptions::default().token_budget);
        let written = serde_json::to_value(&o).expect("json");
        assert_eq!(written["sessions"], serde_json::json!(["s1"]));
        assert!(written.get("scope").is_none() && written.get("partition").is_none());
        let back: RecallOptions = serde_json::from_value(written).expect("read back");
        assert_eq!(back, o);
    }
}
