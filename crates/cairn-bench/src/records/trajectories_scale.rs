//! The record of `cairn bench trajectories-scale`: one query.
use cairn::Timings;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryRecord {
    pub query_index: usize,
    pub hits: usize,
    pub hits_by_kind: BTreeMap<String, usize>,
    pub context_tokens: usize,
    pub wall_ms: f64,
    pub timings: Timings,
}
