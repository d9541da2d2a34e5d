//! Config rows: the recall options a question is asked with. Every bench with rows has
//! the same two: `defaults` (the engine's stock `RecallOptions`) and `bench` (ten raw
//! hits in a larger budget). The retrieval benches can add `defaults` rows at other
//! relevance floors (`--floors`) and the turn-level peers (`--peers`, [`crate::peers`]).
use crate::args::ConfigChoice;
use crate::peers::Peer;
use cairn::RecallOptions;
use serde::{Deserialize, Serialize};

/// One config row: a name and the recall options it runs with (`as_of` is set per
/// question); a peer row is answered by that peer recipe, not the memory, within
/// `options.token_budget`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigRow {
    pub name: String,
    #[serde(deserialize_with = "options_of_run")]
    pub options: RecallOptions,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<Peer>,
}

/// A row's options as a run recorded them: a run recorded before the relevance floor
/// existed ran without one (`min_relevance` -1), not with today's stock floor.
pub(crate) fn options_of_run<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<RecallOptions, D::Error> {
    let mut v = serde_json::Value::deserialize(d)?;
    if let Some(o) = v.as_object_mut() {
        o.entry("min_relevance").or_insert(serde_json::json!(-1.0));
    }
    serde_json::from_value(v).map_err(serde::de::Error::custom)
}

/// The rows `choice` names; `bench` recalls `top_k=10` raw hits in `bench_budget` tokens
/// (10,000 for one-history-per-question benches; EverMemBench's single long history uses
/// 2,000, what a reader would be given).
pub fn config_rows(choice: ConfigChoice, bench_budget: usize) -> Vec<ConfigRow> {
    let defaults = ConfigRow {
        name: "defaults".into(),
        options: RecallOptions::default(),
        peer: None,
    };
    let bench = ConfigRow {
        name: "bench".into(),
        options: RecallOptions {
            top_k: 10,
            token_budget: bench_budget,
            format: cairn::Format::Raw,
            ..RecallOptions::default()
        },
        peer: None,
    };
    match choice {
        ConfigChoice::Defaults => vec![defaults],
        ConfigChoice::Bench => vec![bench],
        ConfigChoice::Both => vec![defaults, bench],
    }
}

/// `rows` and, after them, a `defaults` row at each of `floors` (`defaults@<floor>`)
/// and a row per peer at the `defaults` budget.
pub fn with_extra_rows(mut rows: Vec<ConfigRow>, floors: &[f32], peers: &[Peer]) -> Vec<ConfigRow> {
    let stock = RecallOptions::default();
    for &f in floors {
        rows.push(ConfigRow {
            name: format!("defaults@{f}"),
            options: RecallOptions {
                min_relevance: f,
                ..stock.clone()
            },
            peer: None,
        });
    }
    for &p in peers {
        rows.push(ConfigRow {
            name: p.row_name().into(),
            options: stock.clone(),
            peer: Some(p),
        });
    }
    rows
}

/// The choice's name in default run labels.
pub fn config_name(c: ConfigChoice) -> &'static str {
    match c {
        ConfigChoice::Defaults => "defaults",
        ConfigChoice::Bench => "bench",
        ConfigChoice::Both => "both",
    }
}

/// `rows` in the order they run for the question at `position`: the order alternates
/// from question to question, so the query embedding (computed by the first recall of a
/// question, served from the cache to the next) is charged to each row equally often.
pub fn in_order(mut rows: Vec<ConfigRow>, position: usize) -> Vec<ConfigRow> {
    if position % 2 == 1 {
        rows.reverse();
    }
    rows
}
