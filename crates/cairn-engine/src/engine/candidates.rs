//! The candidates stage of recall: what the lexical and dense indexes find for a query
//! within the request's view (pushed into the searches where that is cheaper), loaded
//! and checked against the view as they are found.
use crate::embedding::embed_cached;
use crate::places;
use crate::query_embed::QueryEmbedder;
use crate::rank::{Fusion, Ranked};
use cairn_core::{SpaceId, TextQuery, Timings, Unit, UnitKind};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

use super::error::EngineError;
use super::scope::View;
use super::services::Retrieval;
use super::state::{ms, Engine};

/// What the two indexes found for a query.
pub(super) struct Candidates {
    /// `(unit id, BM25)`, best first.
    pub(super) lexical: Vec<(String, f32)>,
    /// `(unit id, cosine)`: the vector search's results best first, then the cosines
    /// of lexical candidates it missed (score completion).
    pub(super) dense: Vec<(String, f32)>,
    /// How many of `dense` the vector search found (the rest are completions).
    pub(super) searched: usize,
    /// The query's embedding (the graph stage scores the units it reaches by it).
    pub(super) query_vector: Option<Vec<f32>>,
    /// The units of the candidates, as loaded to check them against the view (lean:
    /// see [`Retrieval::text_read_last`]).
    pub(super) units: HashMap<String, Unit>,
}

/// Most sessions a lexical query names; a scope of more sessions is checked on the
/// candidates (a query of thousands of terms costs more than the check).
const MAX_PUSHED_SESSIONS: usize = 1024;
/// Most units of a scope (its sessions, or the kinds it asks for) searched exactly among
/// their own vectors; a scope of more is searched through the space's index, deepened
/// until enough candidates are seen.
const EXACT_SCOPE: usize = 10_000;
/// How deep a search through the space's indexes is taken to find enough candidates the
/// view sees, in multiples of the pool: a scope that sees almost nothing of a large space
/// must not turn a recall into a scan of it.
const MAX_DEEPENING: usize = 64;

/// The dense candidates the view shows, with every cosine of the scope (by unit id) when
/// it was searched exactly.
type DenseCandidates = (Vec<(String, f32)>, Option<HashMap<String, f32>>);

/// The candidates' units as loaded to check them against the view; `None` for an id
/// the store no longer holds or the view does not show.
struct Seen<'a> {
    pub(super) engine: &'a Engine,
    pub(super) space: &'a SpaceId,
    pub(super) view: &'a View,
    pub(super) units: HashMap<String, Option<Unit>>,
}

impl<'a> Seen<'a> {
    pub(super) fn new(engine: &'a Engine, space: &'a SpaceId, view: &'a View) -> Self {
        Seen {
            engine,
            space,
            view,
            units: HashMap::new(),
        }
    }

    /// Loads the units of `found` not loaded yet.
    pub(super) fn load(&mut self, found: &[(String, f32)]) -> Result<(), EngineError> {
        let todo: Vec<String> = found
            .iter()
            .filter(|(id, _)| !self.units.contains_key(id))
            .map(|(id, _)| id.clone())
            .collect();
        if todo.is_empty() {
            return Ok(());
        }
        crate::work::steps(crate::work::steps::CANDIDATES_CHECKED, todo.len());
        let lean = self.engine.retrieval().text_read_last();
        let got = self
            .engine
            .b
            .records
            .units_without_text(self.space, &todo, lean)?;
        self.units.extend(todo.into_iter().map(|id| (id, None)));
        for u in got.into_iter().filter(|u| self.view.shows(u)) {
            self.units.insert(u.id.clone(), Some(u));
        }
        Ok(())
    }

    /// The first `pool` of a search's results the view shows. `first` is the search for
    /// `pool`; while fewer are shown and the search gave all it was asked for, `search`
    /// asks again for four times as many, up to `MAX_DEEPENING` pools: so a scope finds
    /// what a space holding only its records would, and an unscoped recall searches once.
    pub(super) fn deepen(
        &mut self,
        first: Vec<(String, f32)>,
        pool: usize,
        mut search: impl FnMut(usize) -> Result<Vec<(String, f32)>, cairn_core::StoreError>,
    ) -> Result<Vec<(String, f32)>, EngineError> {
        let mut found = first;
        let mut limit = pool;
        loop {
            self.load(&found)?;
            let kept: Vec<(String, f32)> = found
                .iter()
                .filter(|(id, _)| matches!(self.units.get(id), Some(Some(_))))
                .take(pool)
                .cloned()
                .collect();
            if kept.len() >= pool || found.len() < limit || limit >= pool * MAX_DEEPENING {
                return Ok(kept);
            }
            limit *= 4;
            found = search(limit)?;
        }
    }

    pub(super) fn into_units(self) -> HashMap<String, Unit> {
        self.units
            .into_iter()
            .filter_map(|(id, u)| Some((id, u?)))
            .collect()
    }
}

/// Units the fused candidates name that the options let be seen, and the containers
/// (rounds) their parts credit.
pub(super) struct Loaded {
    pub(super) units: HashMap<String, Unit>,
    pub(super) containers: HashMap<String, Unit>,
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

impl Retrieval<'_> {
    /// Lexical (BM25) and dense (cosine) candidates the view shows, the best `pool` of
    /// each list among them, as a space holding only what the view sees would give them;
    /// under convex fusion a lexical candidate the dense list lacks gets its exact cosine
    /// there.
    pub(super) fn candidates(
        &self,
        space: &SpaceId,
        query: &str,
        view: &View,
        timings: &mut Timings,
    ) -> Result<Candidates, EngineError> {
        let rc = &self.cfg.rank;
        let pool = if view.scope.narrows() {
            rc.candidates * 4
        } else {
            rc.candidates
        };
        let mut seen = Seen::new(self, space, view);
        // Stop words are searched for by no one, yet their postings were most of what
        // the search read (a 1M-unit space: "i" in half the units).
        let words = crate::text::without_stop_words(query);
        let kinds = view.searched_kinds();
        // A long list of sessions is checked on the candidates instead of in the query.
        let sessions = view.sessions().filter(|s| s.len() <= MAX_PUSHED_SESSIONS);
        let lexical_search = |limit: usize| {
            self.b.text.search(&TextQuery {
                space,
                text: &words,
                kinds: kinds.as_deref(),
                sessions,
                text_weight: rc.text_weight,
                limit,
            })
        };
        // The query's embedding (a few milliseconds of model time when not cached) is
        // computed while the lexical index is searched, so recall waits for the slower of
        // the two rather than their sum.
        let ((first, lexical_ms), (embedded, embed_ms)) = std::thread::scope(|scope| {
            let embedding = scope.spawn(|| self.embed_query(space, view, query));
            let t = Instant::now();
            let first = lexical_search(pool);
            let first = (first, ms(t));
            let embedded = embedding
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (first, embedded)
        });
        let t = Instant::now();
        let lexical = seen.deepen(first?, pool, lexical_search)?;
        timings.lexical_ms = lexical_ms + ms(t);
        let qv = embedded?;
        timings.embed_ms = embed_ms;
        let t = Instant::now();
        let (mut dense, scope_cosines) = match qv.first() {
            Some(v) => self.dense_candidates(space, v, view, pool, &mut seen)?,
            None => (Vec::new(), None),
        };
        timings.dense_ms = ms(t);
        let searched = dense.len();
        // A candidate found by words only keeps what it means, too: its exact cosine
        // joins the dense list, which is then scaled over all candidates.
        if let (Some(v), Fusion::Convex, true) = (qv.first(), rc.fusion, rc.complete_dense) {
            let t = Instant::now();
            let lacking = missing(&lexical, &dense);
            dense.extend(self.cosines_of(space, v, lacking, scope_cosines.as_ref())?);
            timings.dense_ms += ms(t);
        }
        Ok(Candidates {
            lexical,
            dense,
            searched,
            query_vector: qv.into_iter().next(),
            units: seen.into_units(),
        })
    }

    /// The query's embedding (cached) and the milliseconds it took. A scoped query's
    /// cache entry is its scope's own: how fast it embeds must not tell one user that
    /// another asked it.
    fn embed_query(
        &self,
        space: &SpaceId,
        view: &View,
        query: &str,
    ) -> (Result<Vec<Vec<f32>>, EngineError>, f64) {
        let t = Instant::now();
        let within = view.scope.narrows().then(|| view.scope.fingerprint());
        let r = embed_cached(
            &QueryEmbedder::new(self.b.embedder.as_ref()),
            self.b.cache.as_ref(),
            |t| self.cache_key(space, within.as_deref(), t),
            &[query],
        );
        (
            r.map(|(vectors, _)| vectors).map_err(EngineError::from),
            ms(t),
        )
    }

    /// The cosines of `ids` to the query: from the scope's own when the dense search
    /// computed them all, else from the vector index.
    fn cosines_of(
        &self,
        space: &SpaceId,
        qv: &[f32],
        ids: Vec<String>,
        scope_cosines: Option<&HashMap<String, f32>>,
    ) -> Result<Vec<(String, f32)>, EngineError> {
        Ok(match scope_cosines {
            Some(all) => ids
                .into_iter()
                .filter_map(|id| all.get(&id).map(|c| (id, *c)))
                .collect(),
            None => self.b.vectors.similarities(space, qv, &ids)?,
        })
    }

    /// The best `pool` dense candidates the view shows: over a scope of few units (few
    /// sessions, or kinds the space holds few of), an exact search among their vectors
    /// (with every cosine of the scope, so the lexical candidates' are at hand);
    /// otherwise the space's vector search, deepened until `pool` of what it finds are
    /// seen.
    fn dense_candidates(
        &self,
        space: &SpaceId,
        query: &[f32],
        view: &View,
        pool: usize,
        seen: &mut Seen<'_>,
    ) -> Result<DenseCandidates, EngineError> {
        if let Some(ids) = self.few_scoped_units(space, view)? {
            let mut all = self.b.vectors.similarities(space, query, &ids)?;
            all.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let first: Vec<(String, f32)> = all.iter().take(pool).cloned().collect();
            let dense = seen.deepen(first, pool, |limit| {
                Ok(all.iter().take(limit).cloned().collect())
            })?;
            return Ok((dense, Some(all.into_iter().collect())));
        }
        let first = self.b.vectors.search(space, query, pool)?;
        let dense = seen.deepen(first, pool, |limit| {
            self.b.vectors.search(space, query, limit)
        })?;
        Ok((dense, None))
    }

    /// The ids of the units the view's sessions or kinds narrow it to, when they are at
    /// most [`EXACT_SCOPE`]; `None` when the view narrows neither or to more than that.
    fn few_scoped_units(
        &self,
        space: &SpaceId,
        view: &View,
    ) -> Result<Option<Vec<String>>, EngineError> {
        let records = &self.b.records;
        if let Some(sessions) = view.sessions() {
            if let Some(ids) = records.unit_ids_of_sessions(space, sessions, EXACT_SCOPE)? {
                return Ok(Some(ids));
            }
        }
        match view.searched_kinds() {
            Some(kinds) => Ok(records.unit_ids_of_kinds(space, &kinds, EXACT_SCOPE)?),
            None => Ok(None),
        }
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
    pub(super) fn with_texts(
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

    /// The fused candidates' units (loaded and checked against the view by
    /// [`Retrieval::candidates`]), and the containers their parts credit (unless the kinds
    /// asked for leave rounds out), without the text of conversation units (read for the
    /// hits only, [`Retrieval::with_texts`]).
    pub(super) fn load_visible(
        &self,
        space: &SpaceId,
        fused: &[(String, f32)],
        found: &mut Candidates,
        view: &View,
    ) -> Result<Loaded, EngineError> {
        let units: HashMap<String, Unit> = fused
            .iter()
            .filter_map(|(id, _)| found.units.remove_entry(id))
            .collect();
        let want_containers = view.scope.shows_kind(UnitKind::Round);
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
            .units_without_text(space, &container_ids, self.text_read_last())?
            .into_iter()
            .filter(|u| view.shows(u))
            .map(|u| (u.id.clone(), u))
            .collect();
        Ok(Loaded { units, containers })
    }
}
