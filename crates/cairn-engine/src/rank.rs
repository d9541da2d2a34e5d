//! Fusion and the second pass: from per-index candidate lists to ranked units.
use crate::learned::{features, time_span, FeatureContext, Features, Signals};
use crate::query::QueryAnalysis;
use cairn_core::explain::{Adjustment, HitExplanation, Op, Step};
use cairn_core::{Unit, UnitKind};
use std::collections::{HashMap, HashSet};

/// Ranking settings. The same values serve every dataset and every user.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RankConfig {
    /// How the lexical and dense candidate lists are combined.
    pub fusion: Fusion,
    /// Reciprocal rank fusion constant.
    pub rrf_k: f32,
    pub lexical_weight: f32,
    pub dense_weight: f32,
    /// BM25 weight of a unit's full text next to its key (the words that say what the
    /// unit is about, e.g. the user's side of a round), which weighs 1.
    pub text_weight: f32,
    /// Candidates taken from each index.
    pub candidates: usize,
    /// Weight of the session's own match (its episode unit: everything said in it) in
    /// the score of each of its units.
    pub session_weight: f32,
    /// Multiplier for units inside the period a question names.
    pub time_boost: f32,
    /// Diversity across conversation stretches: a unit's score is multiplied by this for
    /// every unit of the same stretch already ranked above it (1: no effect). Questions
    /// whose evidence spans several conversations then see all of them near the top.
    pub session_decay: f32,
    /// Two units of a session belong to the same stretch when their first messages are
    /// at most this many positions apart. Short topical sessions are one stretch; long
    /// multi-topic sessions are several.
    pub stretch: u32,
    /// Share of its score a unit loses when its key is all questions (in proportion to
    /// the key's sentences that ask): evidence is more often said than asked, and a
    /// question's own words match the question best.
    pub question_penalty: f32,
    /// Under convex fusion, a lexical candidate missing from the dense list gets its
    /// exact cosine there, and the dense scores are scaled over all candidates: a word
    /// match is not left at zero meaning (nor tied with a unit found by meaning alone).
    /// The lexical list is not completed the same way: a unit close in meaning that
    /// lacks the one rare word asked for would gain on the unit that has it.
    pub complete_dense: bool,
    /// Two-level results (`places.rs`): hits are places (sessions), ranked by their best
    /// unit, each an excerpt of its best units.
    pub places: bool,
    /// Most units one place's hit carries.
    pub place_units: usize,
    /// A unit joins its place's hit when it scores at least this share of the place's
    /// best unit.
    pub place_ratio: f32,
    /// The entity graph joins recall (`engine/graph.rs`): units linked to an entity the
    /// question names are lifted and graph-only units can rank.
    pub graph: bool,
    /// Share a ranked unit gains when it is linked to an entity the question names.
    pub graph_boost: f32,
    /// Score of a graph-only unit relative to its cosine against the best reached one.
    pub graph_weight: f32,
    /// Graph-only units allowed among the first `top_k`.
    pub graph_slots: usize,
    /// Learned ranking (`learned.rs`): a unit's score is these weights times its
    /// features, in place of the session evidence, question penalty and time boost
    /// above. None: the hand-set pass.
    pub learned: Option<Features>,
    /// A request for advice ("can you recommend a restaurant?") is searched for by what
    /// it is about, without its request words, which every other request shares.
    pub request_topic: bool,
    /// In a request for advice, the asker's personal fact closest in meaning to it is
    /// placed first (`engine/recall.rs`, `with_preference`).
    pub preference_placement: bool,
    /// Share a personal fact (what someone said of themself: a liking, a habit, a
    /// belonging) gains in a request for advice, which depends on them.
    pub request_boost: f32,
    /// Share a personal fact about the person a question asks about (the asker for
    /// "where do I live?", the sister for "where does my sister live?") gains.
    pub focus_boost: f32,
    /// For a question about the present, the newest of the first places scoring at
    /// least this share of the best is placed first (`present.rs`); 0 turns it off.
    pub newest_ratio: f32,
}

impl Default for RankConfig {
    fn default() -> Self {
        Self {
            fusion: Fusion::Convex,
            rrf_k: 60.0,
            lexical_weight: 1.0,
            dense_weight: 1.0,
            text_weight: 0.35,
            candidates: 100,
            session_weight: 0.0,
            time_boost: 0.3,
            session_decay: 1.0,
            stretch: 12,
            question_penalty: 0.15,
            complete_dense: true,
            places: true,
            place_units: 6,
            place_ratio: 0.6,
            graph: false,
            graph_boost: 0.3,
            graph_weight: 0.5,
            graph_slots: 2,
            learned: None,
            request_topic: true,
            preference_placement: true,
            request_boost: 0.6,
            focus_boost: 0.3,
            newest_ratio: 0.5,
        }
    }
}

/// How per-index candidate lists become one list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fusion {
    /// Reciprocal rank fusion: only ranks count.
    Rrf,
    /// A weighted sum of scores, each list's scores scaled to 0..1 over its candidates:
    /// a candidate far ahead in one list keeps its lead, which ranks alone lose.
    Convex,
}

/// Fuses weighted candidate lists (best first) by `fusion`.
pub fn fuse(lists: &[(&[(String, f32)], f32)], cfg: &RankConfig) -> Vec<(String, f32)> {
    sum_per_list(lists, |list, weight| gives(list, weight, cfg))
}

/// What one list gives each of its candidates under `cfg.fusion`, in list order: the
/// terms [`fuse`] adds up (and an explanation shows).
pub fn gives(list: &[(String, f32)], weight: f32, cfg: &RankConfig) -> Vec<f32> {
    match cfg.fusion {
        Fusion::Rrf => rrf_gives(list, weight, cfg.rrf_k),
        Fusion::Convex => convex_gives(list, weight),
    }
}

/// `score(d) = sum_i w_i * (s_i(d) - min_i) / (max_i - min_i)` over the lists holding
/// `d`; a list whose scores are all equal gives each of its candidates `w_i`. ([`fuse`]
/// computes the same through [`gives`]; this form is for tests.)
#[cfg(test)]
pub fn convex_fuse(lists: &[(&[(String, f32)], f32)]) -> Vec<(String, f32)> {
    sum_per_list(lists, convex_gives)
}

pub(crate) fn convex_gives(list: &[(String, f32)], weight: f32) -> Vec<f32> {
    let (lo, hi) = list.iter().fold((f32::MAX, f32::MIN), |(lo, hi), (_, s)| {
        (lo.min(*s), hi.max(*s))
    });
    let span = hi - lo;
    list.iter()
        .map(|(_, s)| weight * if span > 0.0 { (s - lo) / span } else { 1.0 })
        .collect()
}

/// Weighted reciprocal rank fusion: `score(d) = sum_i w_i / (k + rank_i(d))`, ranks from 1.
pub fn rrf_fuse(lists: &[(&[(String, f32)], f32)], k: f32) -> Vec<(String, f32)> {
    sum_per_list(lists, |list, weight| rrf_gives(list, weight, k))
}

fn rrf_gives(list: &[(String, f32)], weight: f32, k: f32) -> Vec<f32> {
    (0..list.len())
        .map(|rank| weight / (k + rank as f32 + 1.0))
        .collect()
}

/// Adds up what each list gives its candidates (`gives(list, weight)`: one value per
/// entry, in list order); best first, ties in first-seen order.
fn sum_per_list(
    lists: &[(&[(String, f32)], f32)],
    gives: impl Fn(&[(String, f32)], f32) -> Vec<f32>,
) -> Vec<(String, f32)> {
    let mut scores: HashMap<&str, f32> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (list, weight) in lists {
        for ((id, _), g) in list.iter().zip(gives(list, *weight)) {
            let e = scores.entry(id.as_str()).or_insert_with(|| {
                order.push(id.as_str());
                0.0
            });
            *e += g;
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
    /// Where the score came from; only when the recall asked for an explanation.
    pub why: Option<Box<HitExplanation>>,
    /// A place hit's units (`places.rs`), best first then in rank order, whose excerpt
    /// `unit` is; empty for a hit of one unit.
    pub parts: Vec<Part>,
    /// A place's further units in rank order, not in its excerpt: packing shows them when
    /// the budget has room once every hit's best evidence is in (`pack.rs`).
    pub more: Vec<Part>,
}

/// One unit of a place hit, with its score in the unit ranking.
#[derive(Debug, Clone)]
pub struct Part {
    pub unit: Unit,
    pub score: f32,
}

impl Ranked {
    /// A unit placed at `score` by `step` rather than ranked (a profile, a preference),
    /// its explanation (when `explain`) saying so with `note`.
    pub fn placed(
        unit: Unit,
        score: f32,
        explain: bool,
        step: Step,
        note: impl FnOnce() -> String,
    ) -> Self {
        let mut r = Ranked {
            unit,
            score,
            why: explain.then(Box::<HitExplanation>::default),
            parts: Vec::new(),
            more: Vec::new(),
        };
        r.record(step, Op::Set, score, note);
        r
    }

    /// Records a step that changed the score (to `self.score`), when explaining.
    pub fn record(&mut self, step: Step, op: Op, by: f32, note: impl FnOnce() -> String) {
        if let Some(why) = &mut self.why {
            why.adjustments.push(Adjustment {
                step,
                op,
                by,
                score_after: self.score,
                note: note(),
            });
        }
    }
}

/// The second pass over fused candidates:
/// 1. a part (a turn inside a round) hands its score to its container, so recall shows
///    whole exchanges, scored by their best evidence;
/// 2. units gain from how well their whole session matches (`session_weight` times the
///    fused score of the session's episode); episodes themselves are hits only when
///    asked for by kind;
/// 3. a unit whose key only asks loses a share of its score (`question_penalty`);
/// 4. units inside the period the question names gain `time_boost`;
/// 5. a unit whose messages are all covered by better units is dropped;
/// 6. with `session_decay` below 1, units of a stretch already ranked lose a share.
///
/// With `cfg.learned`, steps 2-4 are one weighted sum of the unit's features instead
/// (`signals`: what the candidate lists said of each candidate). With `explain`, each hit
/// records the candidate it was scored as, its features and every step.
#[allow(clippy::too_many_arguments)]
pub fn second_pass(
    fused: &[(String, f32)],
    signals: &Signals,
    units: &HashMap<String, Unit>,
    containers: &HashMap<String, Unit>,
    analysis: &QueryAnalysis,
    cfg: &RankConfig,
    episodes_as_hits: bool,
    explain: bool,
) -> Vec<Ranked> {
    let g = gather_targets(
        fused,
        units,
        containers,
        analysis,
        cfg,
        episodes_as_hits,
        explain,
    );
    let want_features = g.want_features;
    let lookup = |id: &str| units.get(id).or_else(|| containers.get(id));
    let targets: Vec<(&Unit, f32, &str)> = g
        .best
        .iter()
        .filter_map(|(id, &s)| {
            let part = g.scored_as.get(id).map_or(id.as_str(), String::as_str);
            Some((lookup(id)?, s, part))
        })
        .collect();
    let ctx = FeatureContext {
        analysis,
        session_prior: &g.session_prior,
        span: want_features
            .then(|| time_span(targets.iter().map(|(u, _, _)| *u)))
            .flatten(),
    };
    let mut ranked: Vec<Ranked> = targets
        .into_iter()
        .map(|(u, s, part)| {
            let asking = asking_share(u.key_head());
            let f = want_features.then(|| features(u, s, part, signals.get(part), asking, &ctx));
            let why = explain.then(|| explanation(part, s, f.as_ref(), &g.factors));
            match (&cfg.learned, f) {
                (Some(w), Some(f)) => learned(u, &f, w, why),
                _ => adjust(u, s, asking, why, &g.session_prior, analysis, cfg),
            }
        })
        .collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.unit.id.cmp(&b.unit.id)));
    spread_sessions(drop_covered(ranked), cfg.session_decay, cfg.stretch)
}

/// What the second pass gathers from the fused candidates before scoring.
struct Gathered<'a> {
    /// Features (learned ranking, explanations) are computed only when wanted, and with
    /// them the candidate whose score each target took.
    want_features: bool,
    /// Each target's best score: a part's goes to its container.
    best: HashMap<String, f32>,
    /// The candidate whose score each target took (when features are wanted).
    scored_as: HashMap<String, String>,
    /// Each session's episode score.
    session_prior: HashMap<&'a str, f32>,
    /// Personal facts whose fused score was multiplied, by how much (explained only).
    factors: HashMap<&'a str, f32>,
}

/// Step 1 of the second pass: each candidate's score (a personal fact's multiplied by
/// its `personal_factor`) handed to its target, its container when it is a part; an
/// episode gives its session's prior, and is a target itself only with
/// `episodes_as_hits`.
fn gather_targets<'a>(
    fused: &'a [(String, f32)],
    units: &'a HashMap<String, Unit>,
    containers: &HashMap<String, Unit>,
    analysis: &QueryAnalysis,
    cfg: &RankConfig,
    episodes_as_hits: bool,
    explain: bool,
) -> Gathered<'a> {
    let mut g = Gathered {
        want_features: explain || cfg.learned.is_some(),
        best: HashMap::new(),
        scored_as: HashMap::new(),
        session_prior: HashMap::new(),
        factors: HashMap::new(),
    };
    for (id, score) in fused {
        let Some(u) = units.get(id) else { continue };
        let factor = personal_factor(u, analysis, cfg);
        if explain && factor != 1.0 {
            g.factors.insert(id.as_str(), factor);
        }
        let boosted = *score * factor;
        let score = &boosted;
        if u.kind == UnitKind::Episode {
            if let Some(sid) = u.provenance.session_id.as_deref() {
                let e = g.session_prior.entry(sid).or_insert(0.0);
                *e = e.max(*score);
            }
            if !episodes_as_hits {
                continue;
            }
        }
        let target = match &u.part_of {
            Some(c) if units.contains_key(c) || containers.contains_key(c) => c.clone(),
            _ => u.id.clone(),
        };
        if g.want_features && g.best.get(&target).is_none_or(|b| *score > *b) {
            g.scored_as.insert(target.clone(), id.clone());
        }
        let e = g.best.entry(target).or_insert(0.0);
        *e = e.max(*score);
    }
    g
}

/// A hit's explanation as the second pass starts it: the candidate it was scored as,
/// its fused score and features, and the personal-fact factor applied, if any.
fn explanation(
    part: &str,
    s: f32,
    f: Option<&Features>,
    factors: &HashMap<&str, f32>,
) -> Box<HitExplanation> {
    let mut why = HitExplanation {
        scored_as: Some(part.to_string()),
        fused: Some(s),
        features: f.map(Features::named).unwrap_or_default(),
        ..Default::default()
    };
    if let Some(&by) = factors.get(part) {
        why.adjustments.push(Adjustment {
            step: Step::PersonalFact,
            op: Op::Multiply,
            by,
            score_after: s,
            note: format!("{part} is a personal fact the question depends on"),
        });
    }
    Box::new(why)
}

/// What a personal fact's fused score is multiplied by: in a request for advice, a
/// fact of what someone is, has, likes or does gains `request_boost` (not a plan: a
/// request is itself often one, and other plans match it by their form); a fact about
/// the person the question asks about gains `focus_boost`. 1 for any other unit.
fn personal_factor(u: &Unit, analysis: &QueryAnalysis, cfg: &RankConfig) -> f32 {
    let Some(cairn_core::UnitDetail::Fact(d)) = &u.detail else {
        return 1.0;
    };
    let Some(person) = &d.person else {
        return 1.0;
    };
    let mut factor = 1.0;
    if analysis.request.is_some() && d.category != Some(cairn_core::FactCategory::Plan) {
        factor += cfg.request_boost;
    }
    let about = match &analysis.focus {
        // The asker said it of themself.
        Some(crate::query::Focus::Me) => u.provenance.speakers.iter().any(|s| s == person),
        Some(crate::query::Focus::Relation(r)) => person.ends_with(&format!("'s {r}")),
        None => false,
    };
    // ... and of what the question asks about: its key (how such a fact is asked about,
    // "where do I live" for a home) shares a word with the question.
    let asked = about
        && crate::text::words(u.key_head())
            .iter()
            .any(|w| analysis.words.contains(w));
    let about = asked;
    if about {
        factor += cfg.focus_boost;
    }
    factor
}

/// A unit scored by the learned weights over its features `f`.
fn learned(u: &Unit, f: &Features, weights: &Features, why: Option<Box<HitExplanation>>) -> Ranked {
    let mut r = Ranked {
        unit: u.clone(),
        score: f.score(weights),
        why,
        parts: Vec::new(),
        more: Vec::new(),
    };
    r.record(Step::Learned, Op::Set, r.score, || {
        "the learned weights times the features".into()
    });
    r
}

/// A unit scored from its best fused score `s`: session evidence, question penalty (by
/// `asking`, the share of its key's sentences that ask) and time boost, each recorded in
/// `why` (when explaining) with its size.
fn adjust(
    u: &Unit,
    s: f32,
    asking: f32,
    why: Option<Box<HitExplanation>>,
    session_prior: &HashMap<&str, f32>,
    analysis: &QueryAnalysis,
    cfg: &RankConfig,
) -> Ranked {
    let mut r = Ranked {
        unit: u.clone(),
        score: s,
        why,
        parts: Vec::new(),
        more: Vec::new(),
    };
    let part = r.why.as_ref().and_then(|w| w.scored_as.clone());
    if let Some(part) = part.filter(|p| *p != u.id) {
        r.record(Step::ContainerCredit, Op::Set, s, || format!("part {part}"));
    }
    if let Some(sid) = u.provenance.session_id.as_deref() {
        if u.kind != UnitKind::Episode {
            let prior = session_prior.get(sid).copied().unwrap_or(0.0);
            let add = cfg.session_weight * prior;
            r.score += add;
            if add != 0.0 {
                r.record(Step::SessionEvidence, Op::Add, add, || {
                    format!("session {sid} matched {prior:.3}")
                });
            }
        }
    }
    let penalty = cfg.question_penalty;
    if penalty > 0.0 {
        let share = asking;
        let factor = 1.0 - penalty * share;
        r.score *= factor;
        if share > 0.0 {
            r.record(Step::QuestionPenalty, Op::Multiply, factor, || {
                format!("{:.0}% of the key's sentences ask", share * 100.0)
            });
        }
    }
    if let (Some(range), Some(t)) = (analysis.time, u.occurred_at) {
        if range.contains(t) {
            let factor = 1.0 + cfg.time_boost;
            r.score *= factor;
            r.record(Step::TimeBoost, Op::Multiply, factor, || {
                format!("{} is inside the period asked about", t.format("%Y-%m-%d"))
            });
        }
    }
    r
}

/// The share of `text`'s sentences that are questions (of a key, read from its head:
/// what a lean read returns of it).
pub(crate) fn asking_share(text: &str) -> f32 {
    let s = crate::text::sentences(text);
    if s.is_empty() {
        return 0.0;
    }
    let asking = s
        .iter()
        .filter(|&&(a, b)| text[a..b].trim_end().ends_with('?'))
        .count();
    asking as f32 / s.len() as f32
}

/// Greedy re-rank: each step takes the unit with the best score after multiplying by
/// `decay` once per unit of its session already taken. Scores of the result are the
/// adjusted ones, so they stay in descending order.
fn spread_sessions(ranked: Vec<Ranked>, decay: f32, stretch: u32) -> Vec<Ranked> {
    if decay >= 1.0 || ranked.len() < 2 {
        return ranked;
    }
    // Positions of the units already taken, per session.
    let mut taken: HashMap<Option<String>, Vec<u32>> = HashMap::new();
    let mut rest = ranked;
    let mut out = Vec::with_capacity(rest.len());
    while !rest.is_empty() {
        // Units of the same stretch already taken.
        let above = |r: &Ranked, taken: &HashMap<Option<String>, Vec<u32>>| {
            let p = r.unit.provenance.first_position;
            taken.get(&r.unit.provenance.session_id).map_or(0, |ps| {
                ps.iter().filter(|&&q| q.abs_diff(p) <= stretch).count()
            })
        };
        let mut best = 0;
        let mut best_score = f32::MIN;
        let mut best_above = 0;
        for (i, r) in rest.iter().enumerate() {
            let n = above(r, &taken);
            let s = r.score * decay.max(0.0).powi(n as i32);
            if s > best_score {
                best = i;
                best_score = s;
                best_above = n;
            }
        }
        let mut r = rest.remove(best);
        taken
            .entry(r.unit.provenance.session_id.clone())
            .or_default()
            .push(r.unit.provenance.first_position);
        r.score = best_score;
        if best_above > 0 {
            let factor = decay.max(0.0).powi(best_above as i32);
            r.record(Step::SessionDecay, Op::Multiply, factor, || {
                format!("{best_above} hits of the same stretch rank above")
            });
        }
        out.push(r);
    }
    out
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

    #[test]
    fn convex_fusion_keeps_a_lead_that_ranks_hide() {
        // "n" is far ahead lexically and fourth in the dense list; "d" is second in
        // both. Ranks alone put "d" first; scores keep "n"'s lead.
        let lexical = [("n".to_string(), 9.0), ("d".into(), 4.0), ("x".into(), 3.0)];
        let dense: Vec<(String, f32)> =
            [("y", 0.9), ("d", 0.85), ("w", 0.8), ("n", 0.75), ("z", 0.5)]
                .iter()
                .map(|(id, s)| (id.to_string(), *s))
                .collect();
        let lists = [(&lexical[..], 1.0), (&dense[..], 1.0)];
        assert_eq!(rrf_fuse(&lists, 60.0)[0].0, "d");
        let fused = convex_fuse(&lists);
        assert_eq!(fused[0].0, "n");
        assert!((fused[0].1 - 1.625).abs() < 1e-5);
        let d = fused.iter().find(|(id, _)| id == "d").unwrap().1;
        assert!((d - (1.0 / 6.0 + 0.875)).abs() < 1e-5);
        // A list of equal scores gives each of its candidates its whole weight.
        let flat = [("a".to_string(), 2.0), ("b".into(), 2.0)];
        assert_eq!(convex_fuse(&[(&flat[..], 0.5)])[1].1, 0.5);
    }

    #[test]
    fn a_key_is_penalized_by_its_share_of_questions() {
        assert_eq!(asking_share("What did I buy?"), 1.0);
        assert_eq!(
            asking_share("I bought a bike. Where should I ride it?"),
            0.5
        );
        assert_eq!(asking_share("I bought a bike."), 0.0);
        assert_eq!(asking_share("Bob: really? Then go."), 0.5);
        assert_eq!(asking_share(""), 0.0);
    }

    /// A round keyed by `key`, scored alone by the second pass.
    fn scored(key: &str) -> f32 {
        let u = Unit {
            id: "round:s:0".into(),
            space: cairn_core::SpaceId::new("a").unwrap(),
            kind: UnitKind::Round,
            text: String::new(),
            key: key.into(),
            embed_text: None,
            provenance: Default::default(),
            part_of: None,
            occurred_at: None,
            recorded_at: chrono::Utc::now(),
            detail: None,
        };
        let units = HashMap::from([(u.id.clone(), u)]);
        let analysis = crate::query::analyze_query("what now", chrono::Utc::now());
        let fused = [("round:s:0".to_string(), 1.0)];
        let cfg = RankConfig::default();
        let ranked = second_pass(
            &fused,
            &Signals::new(),
            &units,
            &HashMap::new(),
            &analysis,
            &cfg,
            false,
            false,
        );
        ranked[0].score
    }

    #[test]
    fn a_key_is_ranked_by_its_head_as_a_lean_read_returns_it() {
        let head = "I said a thing. ".repeat(cairn_core::KEY_HEAD_BYTES / 16);
        let long = format!("{head}What now? Where? Why?");
        assert_eq!(scored(&long), scored(cairn_core::unit::key_head(&long)));
        assert_eq!(scored(&long), 1.0, "its questions lie past the head");
        assert!(scored("What now?") < 1.0);
    }
}
