//! Retrieval metrics over one ranked list of hits and their aggregation over questions.
//! The definitions are written out in `methodology/retrieval.md` (every run's
//! METHODOLOGY.md); latency percentiles are `cairn_load::stats`'s.
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The cut-offs every `@k` metric is reported at.
pub const KS: [usize; 4] = [1, 3, 5, 10];

/// Per-question scores, keyed by metric name (`recall_any@1`, ..., `mrr`,
/// `evidence_in_context`); see [`metric_names`].
pub type Scores = BTreeMap<String, f64>;

/// The metric names in display order.
pub fn metric_names() -> Vec<String> {
    let mut out = Vec::new();
    for m in ["recall_any", "recall_all", "coverage", "ndcg"] {
        for k in KS {
            out.push(format!("{m}@{k}"));
        }
    }
    out.push("mrr".into());
    out.push("evidence_in_context".into());
    out
}

/// One ranked hit as judged against the evidence of its question: which evidence items
/// (indices into the evidence list) it covers, and whether it is in the packed context.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Judged {
    pub covers: Vec<usize>,
    pub in_context: bool,
}

impl Judged {
    pub fn relevant(&self) -> bool {
        !self.covers.is_empty()
    }
}

/// What [`judge_sessions`] and [`judge_turns`] need of a hit.
pub trait HitRef {
    fn session_id(&self) -> Option<&str>;
    fn turn_ids(&self) -> &[String];
    fn in_context(&self) -> bool;
    /// The hit's turns the packed context shows: all of them when it is in the context,
    /// unless (a place hit) the context shows only some of its units.
    fn context_turn_ids(&self) -> &[String] {
        if self.in_context() {
            self.turn_ids()
        } else {
            &[]
        }
    }
}

/// Session level: a hit covers the evidence session it comes from.
pub fn judge_sessions<H: HitRef>(hits: &[H], evidence_sessions: &[String]) -> Vec<Judged> {
    hits.iter()
        .map(|h| judge_session(h.session_id(), h.in_context(), evidence_sessions))
        .collect()
}

/// One slot of a session-level ranking: it covers its session when that is evidence.
fn judge_session(session: Option<&str>, in_context: bool, evidence_sessions: &[String]) -> Judged {
    Judged {
        covers: session
            .and_then(|s| evidence_sessions.iter().position(|e| e == s))
            .into_iter()
            .collect(),
        in_context,
    }
}

/// Session ranking: the hits collapsed into the distinct sessions they come from, in the
/// order each first appears (a session is ranked by its best hit), each judged at session
/// level and in the context when any of its hits is. This is the ranking the LongMemEval
/// reference evaluation and the dev-split baselines score (they rank sessions, not units).
/// Hits without a session each keep their own slot, never relevant.
pub fn judge_session_ranking<H: HitRef>(hits: &[H], evidence_sessions: &[String]) -> Vec<Judged> {
    let mut slots: Vec<(Option<&str>, bool)> = Vec::new();
    for h in hits {
        match h.session_id() {
            Some(s) => match slots.iter_mut().find(|(seen, _)| *seen == Some(s)) {
                Some(slot) => slot.1 |= h.in_context(),
                None => slots.push((Some(s), h.in_context())),
            },
            None => slots.push((None, h.in_context())),
        }
    }
    slots
        .into_iter()
        .map(|(s, in_context)| judge_session(s, in_context, evidence_sessions))
        .collect()
}

/// Turn level: a hit covers every evidence turn `(session, turn)` with its session and one
/// of its turn ids.
pub fn judge_turns<H: HitRef>(hits: &[H], evidence_turns: &[(String, String)]) -> Vec<Judged> {
    hits.iter()
        .map(|h| {
            let covers = match h.session_id() {
                None => Vec::new(),
                Some(s) => evidence_turns
                    .iter()
                    .enumerate()
                    .filter(|(_, (es, et))| es == s && h.turn_ids().iter().any(|t| t == et))
                    .map(|(i, _)| i)
                    .collect(),
            };
            // In the context when a turn of evidence it covers is: a place hit the
            // context shows in part may have left that turn out.
            let shown = h.context_turn_ids();
            let in_context = covers
                .iter()
                .any(|&i| shown.iter().any(|t| *t == evidence_turns[i].1));
            Judged { covers, in_context }
        })
        .collect()
}

/// Scores one ranking. `n_evidence` is the number of evidence items (sessions or turns),
/// `n_available` the number of relevant units that exist (for IDCG).
pub fn score(judged: &[Judged], n_evidence: usize, n_available: usize) -> Scores {
    let mut s = Scores::new();
    for k in KS {
        let top = &judged[..k.min(judged.len())];
        let any = top.iter().any(Judged::relevant);
        let covered: BTreeSet<usize> = top.iter().flat_map(|j| j.covers.iter().copied()).collect();
        let coverage = if n_evidence == 0 {
            0.0
        } else {
            covered.len() as f64 / n_evidence as f64
        };
        let all = n_evidence > 0 && covered.len() >= n_evidence;
        let dcg: f64 = top
            .iter()
            .enumerate()
            .filter(|(_, j)| j.relevant())
            .map(|(i, _)| discount(i + 1))
            .sum();
        let idcg: f64 = (1..=k.min(n_available)).map(discount).sum();
        let ndcg = if idcg > 0.0 { dcg / idcg } else { 0.0 };
        s.insert(format!("recall_any@{k}"), f64::from(u8::from(any)));
        s.insert(format!("recall_all@{k}"), f64::from(u8::from(all)));
        s.insert(format!("coverage@{k}"), coverage);
        s.insert(format!("ndcg@{k}"), ndcg);
    }
    let mrr = judged
        .iter()
        .position(Judged::relevant)
        .map_or(0.0, |p| 1.0 / (p + 1) as f64);
    s.insert("mrr".into(), mrr);
    let in_ctx = judged.iter().any(|j| j.relevant() && j.in_context);
    s.insert("evidence_in_context".into(), f64::from(u8::from(in_ctx)));
    s
}

/// 1 / log2(rank + 1), rank from 1.
fn discount(rank: usize) -> f64 {
    1.0 / ((rank + 1) as f64).log2()
}

/// Mean scores over a set of questions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Means {
    /// Questions averaged.
    pub n: usize,
    pub metrics: BTreeMap<String, f64>,
}

/// Sums scores, then divides.
#[derive(Debug, Default)]
pub struct Accumulator {
    n: usize,
    sums: BTreeMap<String, f64>,
}

impl Accumulator {
    pub fn add(&mut self, s: &Scores) {
        self.n += 1;
        for (k, v) in s {
            *self.sums.entry(k.clone()).or_insert(0.0) += v;
        }
    }

    pub fn means(&self) -> Means {
        Means {
            n: self.n,
            metrics: self
                .sums
                .iter()
                .map(|(k, v)| (k.clone(), if self.n == 0 { 0.0 } else { v / self.n as f64 }))
                .collect(),
        }
    }
}

/// Overall and per-group means.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Grouped {
    pub overall: Means,
    pub by_type: BTreeMap<String, Means>,
}

/// Averages `(group, scores)` pairs overall and per group.
pub fn aggregate<'a>(items: impl IntoIterator<Item = (&'a str, &'a Scores)>) -> Grouped {
    let mut overall = Accumulator::default();
    let mut groups: BTreeMap<String, Accumulator> = BTreeMap::new();
    for (g, s) in items {
        overall.add(s);
        groups.entry(g.to_string()).or_default().add(s);
    }
    Grouped {
        overall: overall.means(),
        by_type: groups.into_iter().map(|(g, a)| (g, a.means())).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct H {
        session: Option<&'static str>,
        turns: Vec<String>,
        ctx: bool,
    }

    impl HitRef for H {
        fn session_id(&self) -> Option<&str> {
            self.session
        }
        fn turn_ids(&self) -> &[String] {
            &self.turns
        }
        fn in_context(&self) -> bool {
            self.ctx
        }
    }

    fn h(session: Option<&'static str>, turns: &[&str]) -> H {
        H {
            session,
            turns: turns.iter().map(|t| t.to_string()).collect(),
            ctx: false,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    fn assert_metric(s: &Scores, name: &str, want: f64) {
        let got = s[name];
        assert!(close(got, want), "{name}: got {got}, want {want}");
    }

    #[test]
    fn session_level_by_hand() {
        // Evidence sessions A and B. Ranking: X, A, (no session), B, A.
        let ev = vec!["A".to_string(), "B".to_string()];
        let hits = [
            h(Some("X"), &["0"]),
            h(Some("A"), &["1"]),
            h(None, &[]),
            h(Some("B"), &["2"]),
            h(Some("A"), &["3"]),
        ];
        let j = judge_sessions(&hits, &ev);
        assert_eq!(
            j.iter().map(Judged::relevant).collect::<Vec<_>>(),
            [false, true, false, true, true]
        );
        // 4 units exist in the evidence sessions.
        let s = score(&j, 2, 4);
        for (k, any, all, cov) in [
            (1, 0.0, 0.0, 0.0),
            (3, 1.0, 0.0, 0.5),
            (5, 1.0, 1.0, 1.0),
            (10, 1.0, 1.0, 1.0),
        ] {
            assert_metric(&s, &format!("recall_any@{k}"), any);
            assert_metric(&s, &format!("recall_all@{k}"), all);
            assert_metric(&s, &format!("coverage@{k}"), cov);
        }
        assert_metric(&s, "mrr", 0.5);
        let l2 = |x: f64| x.log2();
        assert_metric(&s, "ndcg@1", 0.0);
        // @3: relevant at rank 2 only; ideal has min(3, 4) = 3 relevant slots.
        let dcg3 = 1.0 / l2(3.0);
        let idcg3 = 1.0 / l2(2.0) + 1.0 / l2(3.0) + 1.0 / l2(4.0);
        assert_metric(&s, "ndcg@3", dcg3 / idcg3);
        // @5: ranks 2, 4, 5 (the session-less hit keeps rank 3, so B sits at rank 4);
        // ideal has min(5, 4) = 4 slots.
        let dcg5 = 1.0 / l2(3.0) + 1.0 / l2(5.0) + 1.0 / l2(6.0);
        let idcg5 = 1.0 / l2(2.0) + 1.0 / l2(3.0) + 1.0 / l2(4.0) + 1.0 / l2(5.0);
        assert_metric(&s, "ndcg@5", dcg5 / idcg5);
        // @10: only 5 hits; the ideal is still capped at 4 available units.
        assert_metric(&s, "ndcg@10", dcg5 / idcg5);
        assert_metric(&s, "evidence_in_context", 0.0);
    }

    #[test]
    fn session_ranking_collapses_hits_into_their_sessions() {
        // Evidence sessions A and B. Hits: A, A, X, (no session), A, B; the second A is in
        // the context. Sessions ranked: A, X, (none), B.
        let ev = vec!["A".to_string(), "B".to_string()];
        let mut hits = vec![
            h(Some("A"), &["0"]),
            h(Some("A"), &["1"]),
            h(Some("X"), &["0"]),
            h(None, &[]),
            h(Some("A"), &["2"]),
            h(Some("B"), &["0"]),
        ];
        hits[1].ctx = true;
        let j = judge_session_ranking(&hits, &ev);
        assert_eq!(
            j.iter().map(Judged::relevant).collect::<Vec<_>>(),
            [true, false, false, true]
        );
        assert_eq!(
            j.iter().map(|j| j.in_context).collect::<Vec<_>>(),
            [true, false, false, false]
        );
        let s = score(&j, 2, 2);
        assert_metric(&s, "recall_all@3", 0.0);
        assert_metric(&s, "recall_all@5", 1.0);
        assert_metric(&s, "mrr", 1.0);
        // DCG@10 = 1 + 1/log2(5); IDCG = the two evidence sessions first = 1 + 1/log2(3).
        assert_metric(
            &s,
            "ndcg@10",
            (1.0 + 1.0 / 5f64.log2()) / (1.0 + 1.0 / 3f64.log2()),
        );
        assert_metric(&s, "evidence_in_context", 1.0);
    }

    #[test]
    fn a_hit_without_session_takes_its_slot() {
        let ev = vec!["A".to_string()];
        let with_gap = judge_sessions(&[h(None, &[]), h(Some("A"), &["1"])], &ev);
        let s = score(&with_gap, 1, 1);
        assert_metric(&s, "recall_any@1", 0.0);
        assert_metric(&s, "recall_any@3", 1.0);
        assert_metric(&s, "mrr", 0.5);
        // DCG = 1/log2(3); IDCG = min(k, 1) = 1 slot = 1/log2(2) = 1.
        assert_metric(&s, "ndcg@3", 1.0 / 3f64.log2());
        assert_metric(&s, "ndcg@10", 0.630_929_753_571_457_4);
    }

    #[test]
    fn idcg_is_capped_by_available_units() {
        let ev = vec!["A".to_string()];
        let top = judge_sessions(&[h(Some("A"), &["1"]), h(Some("Z"), &["1"])], &ev);
        // One unit available: a perfect ranking at every k.
        let s = score(&top, 1, 1);
        for k in KS {
            assert_metric(&s, &format!("ndcg@{k}"), 1.0);
        }
        // Three units available: @3 ideal is 1 + 1/log2 3 + 1/2, @1 ideal is 1.
        let s = score(&top, 1, 3);
        assert_metric(&s, "ndcg@1", 1.0);
        assert_metric(&s, "ndcg@3", 1.0 / (1.0 + 1.0 / 3f64.log2() + 0.5));
        // Nothing available: NDCG is 0, not NaN.
        let s = score(&top, 1, 0);
        assert_metric(&s, "ndcg@10", 0.0);
        // No hits at all.
        let s = score(&[], 1, 5);
        assert_metric(&s, "recall_any@10", 0.0);
        assert_metric(&s, "mrr", 0.0);
        assert_metric(&s, "ndcg@10", 0.0);
    }

    #[test]
    fn turn_level_needs_session_and_turn() {
        let ev = vec![
            ("s1".to_string(), "3".to_string()),
            ("s2".to_string(), "7".to_string()),
        ];
        let mut in_ctx = h(Some("s2"), &["7"]);
        in_ctx.ctx = true;
        let hits = [
            h(Some("s3"), &["7"]),      // right turn id, wrong session
            h(Some("s1"), &["2", "3"]), // a round covering s1:3
            h(Some("s1"), &["4"]),      // evidence session, not an evidence turn
            in_ctx,                     // s2:7, packed into the context
        ];
        let j = judge_turns(&hits, &ev);
        assert_eq!(j[1].covers, [0]);
        assert_eq!(
            j.iter().map(Judged::relevant).collect::<Vec<_>>(),
            [false, true, false, true]
        );
        let s = score(&j, 2, 2);
        assert_metric(&s, "recall_any@1", 0.0);
        assert_metric(&s, "recall_any@3", 1.0);
        assert_metric(&s, "recall_all@3", 0.0);
        assert_metric(&s, "coverage@3", 0.5);
        assert_metric(&s, "recall_all@5", 1.0);
        assert_metric(&s, "mrr", 0.5);
        // Ranks 2 and 4 relevant; ideal min(5, 2) = 2 slots.
        let want = (1.0 / 3f64.log2() + 1.0 / 5f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert_metric(&s, "ndcg@5", want);
        assert_metric(&s, "evidence_in_context", 1.0);
        // The same rank-4 hit outside the context: no evidence in context.
        let mut j2 = j.clone();
        j2[3].in_context = false;
        j2[2].in_context = true; // irrelevant hit in context does not count
        assert_metric(&score(&j2, 2, 2), "evidence_in_context", 0.0);
    }

    #[test]
    fn aggregates_overall_and_per_group() {
        let a: Scores = [("mrr".to_string(), 1.0)].into();
        let b: Scores = [("mrr".to_string(), 0.5)].into();
        let c: Scores = [("mrr".to_string(), 0.0)].into();
        let g = aggregate([("x", &a), ("x", &b), ("y", &c)]);
        assert_eq!(g.overall.n, 3);
        assert!(close(g.overall.metrics["mrr"], 0.5));
        assert!(close(g.by_type["x"].metrics["mrr"], 0.75));
        assert_eq!(g.by_type["y"].n, 1);
    }
}
