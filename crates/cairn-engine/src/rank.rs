//! Fusion and the second pass: from per-index candidate lists to ranked units.
use crate::query::QueryAnalysis;
use cairn_core::Unit;
use std::collections::{HashMap, HashSet};

/// Ranking settings. The same values serve every dataset and every user.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RankConfig {
    /// Reciprocal rank fusion constant.
    pub rrf_k: f32,
    pub lexical_weight: f32,
    pub dense_weight: f32,
    /// Candidates taken from each index.
    pub candidates: usize,
    /// Weight of a unit's session evidence (its other matching units) in its score.
    pub session_weight: f32,
    /// Multiplier for units inside the period a question names.
    pub time_boost: f32,
}

impl Default for RankConfig {
    fn default() -> Self {
        Self {
            rrf_k: 60.0,
            lexical_weight: 1.0,
            dense_weight: 1.0,
            candidates: 100,
            session_weight: 0.0,
            time_boost: 0.0,
        }
    }
}

/// Weighted reciprocal rank fusion: `score(d) = sum_i w_i / (k + rank_i(d))`, ranks from 1.
pub fn rrf_fuse(lists: &[(&[(String, f32)], f32)], k: f32) -> Vec<(String, f32)> {
    let mut scores: HashMap<&str, f32> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (list, weight) in lists {
        for (rank, (id, _)) in list.iter().enumerate() {
            let e = scores.entry(id.as_str()).or_insert_with(|| {
                order.push(id.as_str());
                0.0
            });
            *e += weight / (k + rank as f32 + 1.0);
        }
    }
    let mut out: Vec<(String, f32)> = order
        .into_iter()
        .map(|id| (id.to_string(), scores[id]))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// A unit with its final score.
#[derive(Debug, Clone)]
pub struct Ranked {
    pub unit: Unit,
    pub score: f32,
}

/// The second pass over fused candidates:
/// 1. a part (a turn inside a round) hands its score to its container, so recall shows
///    whole exchanges, scored by their best evidence;
/// 2. units gain from the other evidence of their session (`session_weight`);
/// 3. units inside the period the question names gain `time_boost`;
/// 4. a unit whose messages are all covered by better units is dropped.
pub fn second_pass(
    fused: &[(String, f32)],
    units: &HashMap<String, Unit>,
    containers: &HashMap<String, Unit>,
    analysis: &QueryAnalysis,
    cfg: &RankConfig,
) -> Vec<Ranked> {
    let mut best: HashMap<String, f32> = HashMap::new();
    for (id, score) in fused {
        let Some(u) = units.get(id) else { continue };
        let target = match &u.part_of {
            Some(c) if containers.contains_key(c) => c.clone(),
            _ => u.id.clone(),
        };
        let e = best.entry(target).or_insert(0.0);
        *e = e.max(*score);
    }
    let lookup = |id: &str| units.get(id).or_else(|| containers.get(id));
    let mut session_mass: HashMap<&str, f32> = HashMap::new();
    for (id, s) in &best {
        if let Some(sid) = lookup(id).and_then(|u| u.provenance.session_id.as_deref()) {
            *session_mass.entry(sid).or_insert(0.0) += s;
        }
    }
    let mut ranked: Vec<Ranked> = best
        .iter()
        .filter_map(|(id, &s)| {
            let u = lookup(id)?;
            let mut score = s;
            if let Some(sid) = u.provenance.session_id.as_deref() {
                score += cfg.session_weight * (session_mass.get(sid).copied().unwrap_or(0.0) - s);
            }
            if let (Some(range), Some(t)) = (analysis.time, u.occurred_at) {
                if range.contains(t) {
                    score *= 1.0 + cfg.time_boost;
                }
            }
            Some(Ranked {
                unit: u.clone(),
                score,
            })
        })
        .collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.unit.id.cmp(&b.unit.id)));
    drop_covered(ranked)
}

fn drop_covered(ranked: Vec<Ranked>) -> Vec<Ranked> {
    let mut covered: HashSet<(Option<String>, String)> = HashSet::new();
    let mut out = Vec::with_capacity(ranked.len());
    for r in ranked {
        let sid = r.unit.provenance.session_id.clone();
        let ids = &r.unit.provenance.message_ids;
        let all_covered = !ids.is_empty()
            && ids
                .iter()
                .all(|m| covered.contains(&(sid.clone(), m.clone())));
        if all_covered {
            continue;
        }
        for m in ids {
            covered.insert((sid.clone(), m.clone()));
        }
        out.push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(ids: &[&str]) -> Vec<(String, f32)> {
        ids.iter().map(|i| (i.to_string(), 1.0)).collect()
    }

    #[test]
    fn rrf_adds_weighted_reciprocal_ranks() {
        let a = l(&["x", "y"]);
        let b = l(&["y", "z"]);
        let fused = rrf_fuse(&[(&a, 1.0), (&b, 1.0)], 60.0);
        assert_eq!(fused[0].0, "y");
        let y = 1.0 / 62.0 + 1.0 / 61.0;
        assert!((fused[0].1 - y).abs() < 1e-7);
        assert!((fused[1].1 - 1.0 / 61.0).abs() < 1e-7);
        assert_eq!(fused[1].0, "x", "ties keep first-seen order");
        let weighted = rrf_fuse(&[(&a, 1.0), (&b, 3.0)], 60.0);
        assert_eq!(weighted[1].0, "z");
    }
}
