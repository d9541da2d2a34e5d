//! The recall pipeline, one stage per call (the data flow of ARCHITECTURE.md): check,
//! analyze, candidates (lexical and dense, completed), fuse, load what is visible,
//! second pass, versions, quotas, profiles, pack. With `RecallOptions::explain` the
//! stages also say why (`Hit::explain`, `Recall::explain`); without it they compute
//! nothing for it.
use crate::embedding::embed_cached;
use crate::learned::Signals;
use crate::pack::{pack, PackInput, PackItem, Packed};
use crate::query::{analyze_query, QueryAnalysis};
use crate::query_embed::QueryEmbedder;
use crate::rank::{convex_gives, fuse, gives, second_pass, Fusion, RankConfig, Ranked};
use crate::{facts, places, profile};
use cairn_core::explain::{
    HitExplanation, ListScore, Op, PackingExplanation, RecallExplanation, StageCounts, StageTime,
    Step,
};
use cairn_core::{
    Hit, HitPart, InputError, Recall, RecallOptions, SpaceId, TextQuery, Timings, Unit, UnitKind,
};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

use super::{ms, Engine, EngineError};

/// What the two indexes found for a query.
struct Candidates {
    /// `(unit id, BM25)`, best first.
    lexical: Vec<(String, f32)>,
    /// `(unit id, cosine)`: the vector search's results best first, then the cosines
    /// of lexical candidates it missed (score completion).
    dense: Vec<(String, f32)>,
    /// How many of `dense` the vector search found (the rest are completions).
    searched: usize,
    /// The query's embedding (the graph stage scores the units it reaches by it).
    query_vector: Option<Vec<f32>>,
}

/// Units the fused candidates name that the options let be seen, and the containers
/// (rounds) their parts credit.
struct Loaded {
    units: HashMap<String, Unit>,
    containers: HashMap<String, Unit>,
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
}

impl Engine {
    /// Recalls evidence for `query` from one space.
    pub fn recall(
        &self,
        space: &SpaceId,
        query: &str,
        opts: &RecallOptions,
    ) -> Result<Recall, EngineError> {
        let t0 = Instant::now();
        let narrowed = self.check_recall(space, query, opts)?;
        let opts = narrowed.as_ref().unwrap_or(opts);
        let mut timings = Timings::default();
        let analysis = analyze_query(query, opts.as_of.unwrap_or_else(chrono::Utc::now));
        let rc = &self.cfg.rank;
        let meant = match (&analysis.request, rc.request_topic) {
            (Some(topic), true) => topic.as_str(),
            _ => query,
        };
        let found = self.candidates(space, meant, opts, &mut timings)?;
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
        let loaded = self.load_visible(space, &fused, opts)?;
        trace.stage("load");
        let fused = self.graph_lift(space, query, fused, &loaded.units)?;
        trace.stage("graph_lift");
        let signals = if rc.learned.is_some() || opts.explain {
            signals(&found)
        } else {
            Signals::new()
        };
        let ranked = rank(&fused, &signals, &loaded, &analysis, rc, opts);
        trace.stage("second_pass");
        let (ranked, via) =
            self.graph_stage(space, query, found.query_vector.as_deref(), opts, ranked)?;
        trace.stage("graph");
        trace.counts(|c| {
            c.lexical = found.lexical.len();
            c.dense = found.searched;
            c.completed = found.dense.len() - found.searched;
            c.fused = fused.len();
            c.visible = loaded.units.len();
        });
        let (ranked, superseded) = self.resolve_versions(space, ranked, opts)?;
        trace.stage("versions");
        let ranked = places::by_place(ranked, rc, opts.top_k);
        trace.counts(|c| c.ranked = ranked.len());
        trace.stage("places");
        let top = take_with_quotas(ranked, opts, &mut trace);
        trace.stage("quotas");
        let top = with_preference(&analysis, &found, &loaded, opts, top);
        trace.stage("preference");
        let top = self.with_profiles(space, query, opts, top)?;
        trace.stage("profiles");
        let top = self.with_texts(space, top)?;
        trace.stage("texts");
        timings.rank_ms = ms(t);

        let t = Instant::now();
        let mut packed = self.pack_hits(&top, &analysis, opts);
        timings.pack_ms = ms(t);
        timings.total_ms = ms(t0);
        let explain = trace.0.map(|(_, mut e)| {
            e.packing = PackingExplanation {
                token_budget: opts.token_budget,
                tokens_used: packed.tokens,
                entries: std::mem::take(&mut packed.entries),
            };
            e
        });
        let top = if explain.is_some() {
            with_list_scores(top, &found, rc)
        } else {
            top
        };
        let cosines: HashMap<&str, f32> = found
            .dense
            .iter()
            .map(|(id, c)| (id.as_str(), *c))
            .collect();
        Ok(Recall {
            hits: top
                .into_iter()
                .map(|r| hit(r, &superseded, &cosines, &via))
                .collect(),
            context: packed.context,
            context_tokens: packed.tokens,
            hits_cut: packed.cut,
            context_unit_ids: packed.unit_ids,
            timings,
            explain,
        })
    }

    /// Refuses bad options and an empty query, requires the space, and commits pending
    /// index writes so the recall sees everything acknowledged. Returns the options with
    /// `sessions` narrowed to those the metadata filter admits (`None`: no filter, the
    /// options stand).
    fn check_recall(
        &self,
        space: &SpaceId,
        query: &str,
        opts: &RecallOptions,
    ) -> Result<Option<RecallOptions>, EngineError> {
        let filter = opts.parsed_filter()?;
        if query.trim().is_empty() {
            return Err(InputError::new("recall", "`query` is empty")
                .at("query")
                .into());
        }
        self.require_space(space)?;
        self.flush()?;
        let Some(filter) = filter else {
            return Ok(None);
        };
        let sessions = self.matching_sessions(space, &filter, opts.sessions.as_deref())?;
        Ok(Some(RecallOptions {
            sessions: Some(sessions),
            filter: None,
            ..opts.clone()
        }))
    }

    /// Lexical (BM25) and dense (cosine) candidates; under convex fusion a lexical
    /// candidate the dense list lacks gets its exact cosine there.
    fn candidates(
        &self,
        space: &SpaceId,
        query: &str,
        opts: &RecallOptions,
        timings: &mut Timings,
    ) -> Result<Candidates, EngineError> {
        let rc = &self.cfg.rank;
        let filtered = opts.speakers.is_some()
            || opts.groups.is_some()
            || opts.sessions.is_some()
            || opts.kinds.is_some()
            || opts.as_of.is_some()
            || opts.since.is_some();
        let pool = if filtered {
            rc.candidates * 4
        } else {
            rc.candidates
        };

        // The query's embedding (a few milliseconds of model time when not cached) is
        // computed while the lexical index is searched, so recall waits for the slower of
        // the two rather than their sum.
        let ((lexical, lexical_ms), (embedded, embed_ms)) = std::thread::scope(|scope| {
            let embedding = scope.spawn(|| {
                let t = Instant::now();
                let r = embed_cached(
                    &QueryEmbedder::new(self.b.embedder.as_ref()),
                    self.b.cache.as_ref(),
                    self.cache_scope(space),
                    &[query],
                );
                (r, ms(t))
            });
            let t = Instant::now();
            // Stop words are searched for by no one, yet their postings were most of
            // what the search read (a 1M-unit space: "i" in half the units).
            let words = crate::text::without_stop_words(query);
            let lexical = self.b.text.search(&TextQuery {
                space,
                text: &words,
                kinds: None,
                sessions: opts.sessions.as_deref(),
                text_weight: rc.text_weight,
                limit: pool,
            });
            let lexical = (lexical, ms(t));
            let embedded = embedding
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (lexical, embedded)
        });
        let lexical = lexical?;
        timings.lexical_ms = lexical_ms;
        let (qv, _) = embedded?;
        timings.embed_ms = embed_ms;
        let t = Instant::now();
        let mut dense = match qv.first() {
            Some(v) => self.b.vectors.search(space, v, pool)?,
            None => Vec::new(),
        };
        timings.dense_ms = ms(t);
        let searched = dense.len();
        // A candidate found by words only keeps what it means, too: its exact cosine
        // joins the dense list, which is then scaled over all candidates.
        if let (Some(v), Fusion::Convex, true) = (qv.first(), rc.fusion, rc.complete_dense) {
            let t = Instant::now();
            dense.extend(
                self.b
                    .vectors
                    .similarities(space, v, &missing(&lexical, &dense))?,
            );
            timings.dense_ms += ms(t);
        }
        Ok(Candidates {
            lexical,
            dense,
            searched,
            query_vector: qv.into_iter().next(),
        })
    }

    /// The kinds whose text candidates are loaded without ([`places::TEXT_READ_LAST`]),
    /// none when the entity graph stage reads candidates' text.
    fn text_read_last(&self) -> &'static [UnitKind] {
        if self.cfg.rank.graph {
            &[]
        } else {
            places::TEXT_READ_LAST
        }
    }

    /// The stored text of the hits' units loaded without it.
    fn with_texts(
        &self,
        space: &SpaceId,
        mut top: Vec<Ranked>,
    ) -> Result<Vec<Ranked>, EngineError> {
        let kinds = self.text_read_last();
        let ids = places::text_ids(&top, kinds);
        if !ids.is_empty() {
            let texts = self.b.records.unit_texts(space, &ids)?;
            places::fill_texts(&mut top, &texts, kinds);
        }
        Ok(top)
    }

    /// Loads the fused candidates the options let be seen, and the containers their
    /// parts credit (unless the kinds asked for leave rounds out), without the text of
    /// conversation units (read for the hits only, [`Engine::with_texts`]).
    fn load_visible(
        &self,
        space: &SpaceId,
        fused: &[(String, f32)],
        opts: &RecallOptions,
    ) -> Result<Loaded, EngineError> {
        let ids: Vec<String> = fused.iter().map(|(id, _)| id.clone()).collect();
        let visible = |u: &Unit| visible(u, opts);
        let lean = self.text_read_last();
        let units: HashMap<String, Unit> = self
            .b
            .records
            .units_without_text(space, &ids, lean)?
            .into_iter()
            .filter(visible)
            .map(|u| (u.id.clone(), u))
            .collect();
        let want_containers = opts
            .kinds
            .as_ref()
            .is_none_or(|k| k.contains(&UnitKind::Round));
        let container_ids: Vec<String> = if want_containers {
            let mut c: Vec<String> = units
                .values()
                .filter_map(|u| u.part_of.clone())
                .filter(|c| !units.contains_key(c))
                .collect();
            c.sort();
            c.dedup();
            c
        } else {
            Vec::new()
        };
        let containers: HashMap<String, Unit> = self
            .b
            .records
            .units_without_text(space, &container_ids, lean)?
            .into_iter()
            .filter(visible)
            .map(|u| (u.id.clone(), u))
            .collect();
        Ok(Loaded { units, containers })
    }

    /// Puts the profiles of the people a question is about first, with the best hit's
    /// score, keeping `top_k`.
    fn with_profiles(
        &self,
        space: &SpaceId,
        query: &str,
        opts: &RecallOptions,
        mut top: Vec<Ranked>,
    ) -> Result<Vec<Ranked>, EngineError> {
        let Some(profiles) = self.profiles_for(space, query, opts)? else {
            return Ok(top);
        };
        let best = top.first().map_or(1.0, |r| r.score);
        for p in profiles.into_iter().rev() {
            let mut r = Ranked {
                unit: p,
                score: best,
                why: opts.explain.then(Box::<HitExplanation>::default),
                parts: Vec::new(),
            };
            r.record(Step::ProfilePlacement, Op::Set, best, || {
                "a profile of the person asked about, placed first".to_string()
            });
            top.insert(0, r);
        }
        top.truncate(opts.top_k.max(1));
        Ok(top)
    }

    /// Writes the hits into a context within the token budget.
    fn pack_hits(&self, top: &[Ranked], analysis: &QueryAnalysis, opts: &RecallOptions) -> Packed {
        let items: Vec<PackItem<'_>> = top
            .iter()
            .map(|r| PackItem {
                unit: &r.unit,
                parts: &r.parts,
            })
            .collect();
        let counter = |s: &str| self.b.embedder.count_tokens(s);
        pack(&PackInput {
            items: &items,
            query_words: &analysis.words,
            budget: opts.token_budget,
            format: opts.format,
            count_tokens: &counter,
            additive: self.b.embedder.whitespace_additive(),
            explain: opts.explain,
        })
    }

    /// Puts what each hit states into its version chain (as of the recall time): a hit
    /// stating a value that was later replaced gets the current version ranked just
    /// above it (unless a better hit already shows it), and every hit stating a
    /// versioned value gets a note saying whether it is current or superseded. Returns
    /// the superseded hits with the fact unit that replaced them.
    pub(super) fn resolve_versions(
        &self,
        space: &SpaceId,
        ranked: Vec<Ranked>,
        opts: &RecallOptions,
    ) -> Result<(Vec<Ranked>, HashMap<String, String>), EngineError> {
        let mut superseded = HashMap::new();
        // Hits far below the cut cannot reach the context; only the window that can is
        // resolved.
        let window = opts.top_k * 2;
        // An index already built answers which hits state facts by itself; otherwise
        // the store is asked first, so the space's facts are read only when they matter.
        let index = match self.built_fact_index(space)? {
            Some(index) => index,
            None if self.any_states_a_fact(space, &ranked[..window.min(ranked.len())])? => {
                self.fact_index(space)?
            }
            None => return Ok((ranked, superseded)),
        };
        let in_view = |f: &Unit| super::knowledge::fact_visible(f, opts.as_of);
        let shown = |out: &[Ranked], f: &Unit| {
            out.iter().any(|o| {
                o.unit.provenance.session_id == f.provenance.session_id
                    && f.provenance
                        .message_ids
                        .iter()
                        .all(|m| o.unit.provenance.message_ids.contains(m))
            })
        };
        let mut out: Vec<Ranked> = Vec::with_capacity(ranked.len() + 2);
        for (i, mut r) in ranked.into_iter().enumerate() {
            let sid = r.unit.provenance.session_id.clone().unwrap_or_default();
            let stated: Vec<&Unit> = if i >= window {
                Vec::new()
            } else if r.unit.kind == UnitKind::Fact {
                index
                    .get(&r.unit.id)
                    .filter(|f| in_view(f))
                    .into_iter()
                    .collect()
            } else {
                r.unit
                    .provenance
                    .message_ids
                    .iter()
                    .flat_map(|m| index.stated_in(&sid, m))
                    .filter(|f| in_view(f))
                    .collect()
            };
            let mut notes: Vec<String> = Vec::new();
            for f in stated {
                let chain = index.chain_of(f, in_view);
                let Some(note) = facts::version_note(f, &chain) else {
                    continue;
                };
                if !notes.contains(&note) {
                    notes.push(note);
                }
                let Some(newest) = chain.last().filter(|n| n.id != f.id && visible(n, opts)) else {
                    continue;
                };
                superseded.insert(r.unit.id.clone(), newest.id.clone());
                if !shown(&out, newest) {
                    out.push(placed_version(&r, newest, &chain));
                }
            }
            if !notes.is_empty() {
                r.unit.text = format!("{}\n{}", r.unit.text, notes.join("\n"));
                if let Some(why) = &mut r.why {
                    why.version_notes = notes;
                }
            }
            out.push(r);
        }
        // A unit met again later in the list keeps its first place only.
        let mut seen = std::collections::HashSet::new();
        out.retain(|r| seen.insert(r.unit.id.clone()));
        Ok((out, superseded))
    }

    /// Whether any of `hits` is or contains a message that states a fact: a point lookup
    /// of the first fact id each message would have, so recall reads the space's facts
    /// only when they matter.
    pub(super) fn any_states_a_fact(
        &self,
        space: &SpaceId,
        hits: &[Ranked],
    ) -> Result<bool, EngineError> {
        let mut ids = Vec::new();
        for r in hits {
            if r.unit.kind == UnitKind::Fact {
                return Ok(true);
            }
            if let Some(sid) = &r.unit.provenance.session_id {
                for m in &r.unit.provenance.message_ids {
                    ids.push(facts::first_fact_id(sid, m));
                    ids.push(super::llm_fact_id(sid, m, 0));
                }
            }
        }
        Ok(!self.b.records.units(space, &ids)?.is_empty())
    }

    /// Profiles of the people a question is about (named in it, or given as `speakers`),
    /// as units for the context; `None` when the question is not about a person.
    pub(super) fn profiles_for(
        &self,
        space: &SpaceId,
        query: &str,
        opts: &RecallOptions,
    ) -> Result<Option<Vec<Unit>>, EngineError> {
        if !profile::asks_about_person(query) {
            return Ok(None);
        }
        let known = self.speakers(space)?;
        let mut named = profile::named_speakers(query, &known);
        if named.is_empty() {
            named = opts.speakers.clone().unwrap_or_default();
        }
        let contributions = self.contributions(space)?;
        let profiles: Vec<_> = if named.is_empty() {
            profile::best_matching_person(query, &contributions)
                .into_iter()
                .collect()
        } else {
            named
                .iter()
                .take(2)
                .filter_map(|name| profile::build_profile(name, &contributions))
                .collect()
        };
        let units: Vec<Unit> = profiles
            .into_iter()
            .map(|p| Unit {
                id: format!("profile:{}", p.speaker),
                space: space.clone(),
                kind: UnitKind::Profile,
                text: p.summary.clone(),
                key: String::new(),
                embed_text: None,
                provenance: cairn_core::Provenance {
                    speakers: vec![p.speaker.clone()],
                    group: None,
                    ..Default::default()
                },
                part_of: None,
                occurred_at: p.last_seen,
                recorded_at: chrono::Utc::now(),
                detail: None,
            })
            .collect();
        Ok((!units.is_empty()).then_some(units))
    }
}

/// In a request for advice, the asker's personal fact closest in meaning to the request
/// (a liking, a diet, a habit, a belonging, a condition, a role: what advice depends on)
/// first, with the best hit's score, unless the first hit already shows its message.
/// Closest by cosine among the dense candidates: a liking may share no word with the
/// request ("recommend a restaurant", "I love spicy Thai food"), and scaled with every
/// other candidate it would rank below the requests worded like this one.
fn with_preference(
    analysis: &QueryAnalysis,
    found: &Candidates,
    loaded: &Loaded,
    opts: &RecallOptions,
    mut top: Vec<Ranked>,
) -> Vec<Ranked> {
    use cairn_core::{FactCategory as C, UnitDetail};
    if analysis.request.is_none()
        || opts
            .kinds
            .as_ref()
            .is_some_and(|k| !k.contains(&UnitKind::Fact))
    {
        return top;
    }
    let depends = |u: &Unit| match &u.detail {
        Some(UnitDetail::Fact(d)) => {
            d.person
                .as_ref()
                .is_some_and(|p| u.provenance.speakers.contains(p))
                && matches!(
                    d.category,
                    Some(
                        C::Preference
                            | C::Diet
                            | C::Habit
                            | C::Possession
                            | C::Health
                            | C::Role
                            | C::Pet
                    )
                )
        }
        _ => false,
    };
    let best = found
        .dense
        .iter()
        .filter_map(|(id, cosine)| Some((loaded.units.get(id)?, *cosine)))
        .filter(|(u, _)| depends(u))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let Some((fact, _)) = best else {
        return top;
    };
    let shows = |r: &Ranked| {
        r.unit.provenance.session_id == fact.provenance.session_id
            && fact
                .provenance
                .message_ids
                .iter()
                .all(|m| r.unit.provenance.message_ids.contains(m))
    };
    if top.first().is_some_and(shows) {
        return top;
    }
    let score = top.first().map_or(1.0, |r| r.score);
    top.retain(|r| r.unit.id != fact.id);
    let mut placed = Ranked {
        unit: fact.clone(),
        score,
        why: opts.explain.then(Box::<HitExplanation>::default),
        parts: Vec::new(),
    };
    placed.record(Step::PreferencePlacement, Op::Set, score, || {
        "the asker's personal fact closest to the request".to_string()
    });
    top.insert(0, placed);
    top.truncate(opts.top_k.max(1));
    top
}

/// The current version of what `r` states, to be ranked just above it with its score
/// (and its note of the earlier values).
fn placed_version(r: &Ranked, newest: &Unit, chain: &[&Unit]) -> Ranked {
    let mut current = newest.clone();
    if let Some(n) = facts::version_note(newest, chain) {
        current.text = format!("{}\n{n}", current.text);
    }
    let mut placed = Ranked {
        unit: current,
        score: r.score,
        why: r.why.as_ref().map(|_| {
            Box::new(HitExplanation {
                placed_above: Some(r.unit.id.clone()),
                ..Default::default()
            })
        }),
        parts: Vec::new(),
    };
    placed.record(Step::VersionPlacement, Op::Set, r.score, || {
        format!("the current version of what {} states", r.unit.id)
    });
    placed
}

/// The ids in `found` that `other` lacks.
fn missing(found: &[(String, f32)], other: &[(String, f32)]) -> Vec<String> {
    let known: HashSet<&str> = other.iter().map(|(id, _)| id.as_str()).collect();
    found
        .iter()
        .filter(|(id, _)| !known.contains(id.as_str()))
        .map(|(id, _)| id.clone())
        .collect()
}

/// The first `top_k` units, taking no more of a kind than its quota allows.
fn take_with_quotas(ranked: Vec<Ranked>, opts: &RecallOptions, trace: &mut Trace) -> Vec<Ranked> {
    let Some(quotas) = &opts.quotas else {
        return ranked.into_iter().take(opts.top_k).collect();
    };
    let mut taken: HashMap<UnitKind, usize> = HashMap::new();
    let mut out = Vec::with_capacity(opts.top_k);
    for r in ranked {
        if out.len() == opts.top_k {
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
    opts: &RecallOptions,
) -> Vec<Ranked> {
    let episodes_as_hits = opts
        .kinds
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
        opts.explain,
    )
    .into_iter()
    .filter(|r| opts.kinds.as_ref().is_none_or(|k| k.contains(&r.unit.kind)))
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
    cosines: &HashMap<&str, f32>,
    via: &super::graph::Via,
) -> Hit {
    Hit {
        via: via.get(&r.unit.id).cloned(),
        relevance: cosines.get(r.unit.id.as_str()).copied(),
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
            .map(|u| HitPart {
                unit_id: u.id,
                turn_ids: u.provenance.message_ids,
            })
            .collect(),
        unit_id: r.unit.id,
    }
}

/// Whether options let a unit be seen. With `as_of`, a unit is seen once it occurred,
/// and an undated one once it was recorded: neither may come from the future.
pub(super) fn visible(u: &Unit, opts: &RecallOptions) -> bool {
    if let Some(as_of) = opts.as_of {
        if u.occurred_at.unwrap_or(u.recorded_at) > as_of {
            return false;
        }
    }
    if let (Some(since), Some(t)) = (opts.since, u.occurred_at) {
        if t < since {
            return false;
        }
    }
    if let Some(kinds) = &opts.kinds {
        // A turn stays visible when rounds are wanted: it credits its round.
        let credits_round = u.kind == UnitKind::Turn && kinds.contains(&UnitKind::Round);
        if !(kinds.contains(&u.kind) || credits_round) {
            return false;
        }
    }
    if let Some(sessions) = &opts.sessions {
        if !u
            .provenance
            .session_id
            .as_ref()
            .is_some_and(|s| sessions.contains(s))
        {
            return false;
        }
    }
    if let Some(speakers) = &opts.speakers {
        if !u.provenance.speakers.iter().any(|s| speakers.contains(s)) {
            return false;
        }
    }
    if let Some(groups) = &opts.groups {
        if !u
            .provenance
            .group
            .as_ref()
            .is_some_and(|g| groups.contains(g))
        {
            return false;
        }
    }
    true
}
