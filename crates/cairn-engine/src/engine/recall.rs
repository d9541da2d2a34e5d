//! The recall pipeline, one stage per call (the data flow of ARCHITECTURE.md): check,
//! analyze, candidates (lexical and dense, completed), fuse, load what is visible,
//! second pass, versions, quotas, profiles, pack. With `RecallOptions::explain` the
//! stages also say why (`Hit::explain`, `Recall::explain`); without it they compute
//! nothing for it.
use crate::budget::check;
use crate::learned::Signals;
use crate::pack::{pack, PackInput, PackItem, Packed};
use crate::places;
use crate::query::{analyze_query, QueryAnalysis};
use crate::rank::{convex_gives, fuse, gives, second_pass, RankConfig, Ranked};
use cairn_core::explain::{
    ListScore, PackingExplanation, RecallExplanation, StageCounts, StageTime,
};
use cairn_core::{Hit, HitPart, InputError, Recall, RecallOptions, SpaceId, Timings, UnitKind};
use std::collections::HashMap;
use std::time::Instant;

use super::candidates::{Candidates, Loaded};
use super::card;
use super::error::EngineError;
use super::relevance::{relevance, Cosines};
use super::scope::View;
use super::services::Retrieval;
use super::state::ms;

/// What a question asks, as placing its hits needs it.
#[derive(Clone, Copy)]
struct Asks {
    /// About the asker's present (`present.rs`): the newest close statement goes first.
    present: bool,
    /// About the asker or someone they name by relation: the relevance floor does not
    /// apply to the asker's own conversations.
    about_person: bool,
}

/// Stage times and counts for an explanation; `None` when not explaining, so nothing is
/// measured for it.
struct Trace(Option<(Instant, RecallExplanation)>);

impl Trace {
    fn new(on: bool) -> Self {
        Trace(on.then(|| {
            let packing = PackingExplanation {
                token_budget: 0,
                tokens_used: 0,
                entries: Vec::new(),
            };
            let e = RecallExplanation {
                counts: StageCounts::default(),
                quota_skipped: Vec::new(),
                packing,
                stages: Vec::new(),
            };
            (Instant::now(), e)
        }))
    }

    /// Ends the stage running since the last call.
    fn stage(&mut self, name: &str) {
        if let Some((t, e)) = &mut self.0 {
            e.stages.push(StageTime {
                stage: name.to_string(),
                ms: ms(*t),
            });
            *t = Instant::now();
        }
    }

    fn counts(&mut self, f: impl FnOnce(&mut StageCounts)) {
        if let Some((_, e)) = &mut self.0 {
            f(&mut e.counts);
        }
    }

    /// The candidate counts: found by each list, fused, and visible once loaded.
    fn found(&mut self, found: &Candidates, fused: usize, visible: usize) {
        self.counts(|c| {
            c.lexical = found.lexical.len();
            c.dense = found.searched;
            c.completed = found.dense.len() - found.searched;
            c.fused = fused;
            c.visible = visible;
        });
    }
}

/// What the ranking stages hand to packing: the candidates, the places (the first `hits`
/// of them are the hits), what versions, the graph and cosines say of them, and the
/// request's timings and trace so far.
struct Placed {
    found: Candidates,
    top: Vec<Ranked>,
    hits: usize,
    superseded: HashMap<String, String>,
    via: super::graph::Via,
    cosines: Cosines,
    timings: Timings,
    trace: Trace,
}

impl Retrieval<'_> {
    /// Recalls evidence for `query` from one space.
    pub fn recall(
        &self,
        space: &SpaceId,
        query: &str,
        opts: &RecallOptions,
    ) -> Result<Recall, EngineError> {
        let t0 = Instant::now();
        let view = self.check_recall(space, query, opts)?;
        let warnings = self.filter_warnings(space, &view.scope)?;
        let analysis = analyze_query(query, opts.scope.as_of.unwrap_or_else(chrono::Utc::now));
        let placed = self.ranked_places(space, query, &analysis, &view, opts)?;
        let mut recall = self.answer(space, &analysis, &view, opts, placed, t0)?;
        recall.warnings = warnings;
        Ok(recall)
    }

    /// Candidates, fused, loaded within the view, ranked (graph and versions included)
    /// and placed: the stages up to the hits.
    fn ranked_places(
        &self,
        space: &SpaceId,
        query: &str,
        analysis: &QueryAnalysis,
        view: &View,
        opts: &RecallOptions,
    ) -> Result<Placed, EngineError> {
        let mut timings = Timings::default();
        let rc = &self.cfg.rank;
        let meant = match (&analysis.request, rc.request_topic) {
            (Some(topic), true) => topic.as_str(),
            _ => query,
        };
        let mut found = self.candidates(space, meant, view, &mut timings)?;
        check("recall: candidates")?;
        let t = Instant::now();
        let mut trace = Trace::new(opts.explain);
        let fused = fuse(
            &[
                (&found.lexical, rc.lexical_weight),
                (&found.dense, rc.dense_weight),
            ],
            rc,
        );
        trace.stage("fuse");
        let loaded = self.load_visible(space, &fused, &mut found, view)?;
        trace.stage("load");
        check("recall: loading candidates")?;
        let fused = self
            .knowledge()
            .graph_lift(space, query, fused, &loaded.units, view)?;
        trace.stage("graph_lift");
        // The list signals are read only by a learned ranker or an explanation.
        let signals = match rc.learned.is_some() || opts.explain {
            true => signals(&found),
            false => Signals::new(),
        };
        let ranked = rank(&fused, &signals, &loaded, analysis, rc, view, opts.explain);
        trace.stage("second_pass");
        let qv = found.query_vector.as_deref();
        let (ranked, via) = self
            .knowledge()
            .graph_stage(space, query, qv, view, opts, ranked)?;
        trace.stage("graph");
        check("recall: entity graph")?;
        trace.found(&found, fused.len(), loaded.units.len());
        let (ranked, superseded) = self.resolve_versions(space, ranked, view, opts.top_k)?;
        trace.stage("versions");
        check("recall: fact versions")?;
        let mut cosines: Cosines = found.dense.iter().cloned().collect();
        let prefer = |top, cosines: &mut Cosines| match rc.preference_placement {
            true => self.with_preference(
                space,
                view,
                analysis,
                (&found, &loaded),
                (top, cosines),
                opts,
            ),
            false => Ok(top),
        };
        let asks = Asks {
            present: crate::present::asks_present(query, analysis),
            about_person: analysis.focus.is_some(),
        };
        let (top, hits) = self.places(
            space,
            (query, asks),
            view,
            ranked,
            (qv, &mut cosines),
            opts,
            &mut trace,
            prefer,
        )?;
        timings.rank_ms = ms(t);
        Ok(Placed {
            found,
            top,
            hits,
            superseded,
            via,
            cosines,
            timings,
            trace,
        })
    }

    /// The user's card, the packed context and the answer with its hits, from the places.
    fn answer(
        &self,
        space: &SpaceId,
        analysis: &QueryAnalysis,
        view: &View,
        opts: &RecallOptions,
        placed: Placed,
        t0: Instant,
    ) -> Result<Recall, EngineError> {
        let Placed {
            found,
            mut top,
            hits,
            mut superseded,
            via,
            mut cosines,
            mut timings,
            mut trace,
        } = placed;
        let no_relevant_memory = hits == 0;
        let t = Instant::now();
        let qv = found.query_vector.as_deref();
        let asked = card::Asked {
            query_vector: qv,
            hits: &top[..hits],
            cosines: &cosines,
            dense: &found.dense,
            lexical: &found.lexical,
            about_user: analysis.focus == Some(crate::query::Focus::Me),
        };
        let card::UserCard { card, replaced } = self.user_card(space, view, &asked, opts)?;
        self.mark_replaced(space, &mut top[..hits], &replaced, &mut superseded)?;
        trace.stage("card");
        check("recall: the user's card")?;
        let mut packed = self.pack_hits(&top, hits, analysis, opts, card.as_ref());
        let card = card.filter(|(text, _, _)| packed.context.starts_with(text.as_str()));
        let mut top = shown_hits(places::with_shown(top, &packed.shown), hits, &packed.shown);
        let extra = top.split_off(hits);
        timings.pack_ms = ms(t);
        self.complete_cosines(space, qv, top.iter().chain(&extra), &mut cosines)?;
        timings.total_ms = ms(t0);
        let explain = trace.0.map(|(_, mut e)| {
            e.packing = PackingExplanation {
                token_budget: opts.token_budget,
                tokens_used: packed.tokens,
                entries: std::mem::take(&mut packed.entries),
            };
            e
        });
        let (top, extra) = if explain.is_some() {
            let scored = |t| with_list_scores(t, &found, &self.cfg.rank);
            (scored(top), scored(extra))
        } else {
            (top, extra)
        };
        let as_hit = |r| hit(r, &superseded, &cosines, &via);
        Ok(Recall {
            hits: top.into_iter().map(as_hit).collect(),
            extra_hits: extra.into_iter().map(as_hit).collect(),
            context: packed.context,
            card: card.map(|(_, lines, _)| lines).unwrap_or_default(),
            context_tokens: packed.tokens,
            hits_cut: packed.cut_ids.len(),
            hits_cut_ids: packed.cut_ids,
            no_relevant_memory,
            context_unit_ids: packed.unit_ids,
            timings,
            explain,
            warnings: Vec::new(),
        })
    }

    /// The ranked units as places (a fact folded into the unit showing its message), those
    /// above the relevance floor unless the query asks about a person (the newest close
    /// to the best first when it asks about the present), the first `top_k` (`prefer`
    /// placing a personal fact, then profiles) and then the places that may fill what
    /// the budget leaves, with their texts; and how many are hits (none: no relevant
    /// memory).
    #[allow(clippy::too_many_arguments)]
    fn places(
        &self,
        space: &SpaceId,
        (query, asks): (&str, Asks),
        view: &View,
        ranked: Vec<Ranked>,
        (qv, cosines): (Option<&[f32]>, &mut Cosines),
        opts: &RecallOptions,
        trace: &mut Trace,
        prefer: impl FnOnce(Vec<Ranked>, &mut Cosines) -> Result<Vec<Ranked>, EngineError>,
    ) -> Result<(Vec<Ranked>, usize), EngineError> {
        let ranked = places::by_place(places::fold_facts(ranked), &self.cfg.rank, opts.top_k);
        trace.counts(|c| c.ranked = ranked.len());
        trace.stage("places");
        let ranked = self.above_floor(space, qv, ranked, cosines, (opts, asks.about_person))?;
        trace.stage("floor");
        let ranked = self.newest_first(space, qv, ranked, cosines, asks.present)?;
        trace.stage("newest");
        let mut top = take_with_quotas(ranked, opts, opts.top_k * FILL, trace);
        let fill = top.split_off(top.len().min(opts.top_k));
        trace.stage("quotas");
        let top = if top.is_empty() {
            top
        } else {
            prefer(top, cosines)?
        };
        trace.stage("preference");
        let mut top = if top.is_empty() {
            top
        } else {
            self.with_profiles(space, query, view, opts, top)?
        };
        trace.stage("profiles");
        check("recall: profiles")?;
        let hits = top.len();
        // Places after the hits fill what the budget leaves, by their excerpts' units.
        top.extend(fill.into_iter().map(|r| Ranked {
            more: Vec::new(),
            ..r
        }));
        let top = self.with_texts(space, top)?;
        trace.stage("texts");
        Ok((top, hits))
    }

    /// Refuses bad options and an empty query, requires the space, commits pending index
    /// writes so the recall sees everything acknowledged, and resolves the options' scope
    /// against the space: what this recall sees.
    fn check_recall(
        &self,
        space: &SpaceId,
        query: &str,
        opts: &RecallOptions,
    ) -> Result<View, EngineError> {
        let scope = opts.checked_scope()?;
        if query.trim().is_empty() {
            return Err(InputError::new("recall", "`query` is empty")
                .at("query")
                .into());
        }
        self.require_space(space)?;
        self.flush_for_read()?;
        self.view(space, &scope)
    }

    /// Writes the user's `card`, then the hits (the first `hits` of `top`, then places
    /// that may fill what is left) into a context within the token budget: the hits
    /// have what the card leaves.
    fn pack_hits(
        &self,
        top: &[Ranked],
        hits: usize,
        analysis: &QueryAnalysis,
        opts: &RecallOptions,
        card: Option<&card::Card>,
    ) -> Packed {
        let items: Vec<PackItem<'_>> = top
            .iter()
            .map(|r| PackItem {
                unit: &r.unit,
                score: r.score,
                parts: &r.parts,
                more: &r.more,
            })
            .collect();
        let counter = |s: &str| self.b.embedder.count_tokens(s);
        let additive = self.b.embedder.whitespace_additive();
        let taken = card.map_or(0, |(_, _, tokens)| tokens + counter(CARD_SEPARATOR));
        let mut packed = pack(&PackInput {
            items: &items,
            hits,
            query_words: &analysis.words,
            budget: opts.token_budget.saturating_sub(taken),
            format: opts.format,
            count_tokens: &counter,
            additive,
            explain: opts.explain,
        });
        if let Some((text, lines, tokens)) = card {
            let context = match packed.context.is_empty() {
                true => text.clone(),
                false => format!("{text}{CARD_SEPARATOR}{}", packed.context),
            };
            let used = match (additive, packed.context.is_empty()) {
                (true, true) => *tokens,
                (true, false) => taken + packed.tokens,
                (false, _) => counter(&context),
            };
            // A tokenizer that counts a joined text apart from its pieces may leave no
            // room: the evidence keeps the budget then.
            if used <= opts.token_budget {
                packed.context = context;
                packed.tokens = used;
                let ids = lines.iter().map(|l| l.unit_id.clone());
                packed.unit_ids.splice(0..0, ids);
            }
        }
        packed
    }
}

/// Between the user's card and the evidence in a context.
const CARD_SEPARATOR: &str = "\n\n";

/// How many places a recall may pack per hit asked for (`top_k`): the hits, then places
/// ranked after them that fill what the budget leaves (returned as hits when shown).
const FILL: usize = 3;

/// The hits, then the places after them that the context shows (`shown`, per place).
fn shown_hits(mut top: Vec<Ranked>, hits: usize, shown: &[Vec<String>]) -> Vec<Ranked> {
    let mut i = 0;
    top.retain(|_| {
        i += 1;
        i <= hits || !shown[i - 1].is_empty()
    });
    top
}

/// The first `limit` units, taking no more of a kind than its quota allows.
fn take_with_quotas(
    ranked: Vec<Ranked>,
    opts: &RecallOptions,
    limit: usize,
    trace: &mut Trace,
) -> Vec<Ranked> {
    let Some(quotas) = &opts.quotas else {
        return ranked.into_iter().take(limit).collect();
    };
    let mut taken: HashMap<UnitKind, usize> = HashMap::new();
    let mut out = Vec::with_capacity(limit);
    for r in ranked {
        if out.len() == limit {
            break;
        }
        let n = taken.entry(r.unit.kind).or_default();
        if quotas.get(&r.unit.kind).is_some_and(|&q| *n >= q) {
            if let Some((_, e)) = &mut trace.0 {
                e.quota_skipped.push(r.unit.id.clone());
            }
            continue;
        }
        *n += 1;
        out.push(r);
    }
    out
}

/// The second pass over the fused candidates, keeping the kinds asked for.
fn rank(
    fused: &[(String, f32)],
    signals: &Signals,
    loaded: &Loaded,
    analysis: &QueryAnalysis,
    rc: &RankConfig,
    view: &View,
    explain: bool,
) -> Vec<Ranked> {
    let kinds = &view.scope.kinds;
    let episodes_as_hits = kinds
        .as_ref()
        .is_some_and(|k| k.contains(&UnitKind::Episode));
    second_pass(
        fused,
        signals,
        &loaded.units,
        &loaded.containers,
        analysis,
        rc,
        episodes_as_hits,
        explain,
    )
    .into_iter()
    .filter(|r| kinds.as_ref().is_none_or(|k| k.contains(&r.unit.kind)))
    .collect()
}

/// What the candidate lists said about each candidate, for learned ranking's features:
/// each list's scores scaled 0..1 (weight 1), places, and the raw cosine.
fn signals(found: &Candidates) -> Signals {
    let mut out = Signals::new();
    // In reverse, so a repeated id keeps its first (best) place.
    let lexical = convex_gives(&found.lexical, 1.0);
    for (i, ((id, _), g)) in found.lexical.iter().zip(lexical).enumerate().rev() {
        let s = out.entry(id.clone()).or_default();
        s.lexical = g;
        s.lexical_rank = Some(i + 1);
    }
    let dense = convex_gives(&found.dense, 1.0);
    for (i, ((id, cosine), g)) in found.dense.iter().zip(dense).enumerate().rev() {
        let s = out.entry(id.clone()).or_default();
        s.dense = g;
        s.cosine = *cosine;
        s.dense_rank = (i < found.searched).then_some(i + 1);
    }
    out
}

/// Fills in what each candidate list said about the hits being explained: score, place
/// and what fusion took from it.
fn with_list_scores(mut top: Vec<Ranked>, found: &Candidates, rc: &RankConfig) -> Vec<Ranked> {
    let index = |list: &[(String, f32)], weight: f32, searched: usize| {
        let given = gives(list, weight, rc);
        let mut by_id: HashMap<String, ListScore> = HashMap::new();
        for (i, ((id, score), fused)) in list.iter().zip(given).enumerate() {
            by_id.entry(id.clone()).or_insert(ListScore {
                score: *score,
                rank: (i < searched).then_some(i + 1),
                fused,
            });
        }
        by_id
    };
    let lexical = index(&found.lexical, rc.lexical_weight, found.lexical.len());
    let dense = index(&found.dense, rc.dense_weight, found.searched);
    for r in &mut top {
        let Some(why) = &mut r.why else { continue };
        let Some(id) = why.scored_as.clone() else {
            continue;
        };
        why.lexical = lexical.get(&id).cloned();
        why.dense = dense.get(&id).cloned();
    }
    top
}

/// A ranked unit as the hit a caller sees.
fn hit(
    r: Ranked,
    superseded: &HashMap<String, String>,
    cosines: &Cosines,
    via: &super::graph::Via,
) -> Hit {
    Hit {
        via: via.get(&r.unit.id).cloned(),
        relevance: relevance(&r, cosines),
        kind: r.unit.kind,
        text: r.unit.text,
        score: r.score,
        session_id: r.unit.provenance.session_id,
        turn_ids: r.unit.provenance.message_ids,
        speakers: r.unit.provenance.speakers,
        occurred_at: r.unit.occurred_at,
        superseded_by: superseded.get(&r.unit.id).cloned(),
        trajectory_id: r.unit.provenance.trajectory_id,
        states: r.unit.provenance.states,
        explain: r.why.map(|w| *w),
        parts: r
            .parts
            .into_iter()
            .map(|p| HitPart {
                unit_id: p.unit.id,
                turn_ids: p.unit.provenance.message_ids,
            })
            .collect(),
        unit_id: r.unit.id,
    }
}
