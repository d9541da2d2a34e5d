//! Config rows: the recall options a question is asked with. Every bench with rows has
//! the same two: `defaults` (the engine's stock `RecallOptions`) and `bench` (ten raw
//! hits in a larger budget).
use crate::args::ConfigChoice;
use cairn::RecallOptions;
use serde::{Deserialize, Serialize};

/// One config row: a name and the recall options it runs with (`as_of` is set per
/// question).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigRow {
    pub name: String,
    pub options: RecallOptions,
}

/// The rows `choice` names; `bench` recalls `top_k=10` raw hits in `bench_budget` tokens
/// (10,000 for one-history-per-question benches; EverMemBench's single long history uses
/// 2,000, what a reader would be given).
pub fn config_rows(choice: ConfigChoice, bench_budget: usize) -> Vec<ConfigRow> {
    let defaults = ConfigRow {
        name: "defaults".into(),
        options: RecallOptions::default(),
    };
    let bench = ConfigRow {
        name: "bench".into(),
        options: RecallOptions {
            top_k: 10,
            token_budget: bench_budget,
            format: cairn::Format::Raw,
            ..RecallOptions::default()
        },
    };
    match choice {
        ConfigChoice::Defaults => vec![defaults],
        ConfigChoice::Bench => vec![bench],
        ConfigChoice::Both => vec![defaults, bench],
    }
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
