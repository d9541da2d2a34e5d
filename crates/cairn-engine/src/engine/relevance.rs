//! The relevance floor: how close each place's meaning is to the query, on the one scale
//! every query shares (the cosine of query and unit embeddings); a recall none of whose
//! places reaches `RecallOptions::min_relevance` has no hits and says
//! `no_relevant_memory`, instead of returning the least bad guesses.
use crate::derive::turn_id;
use crate::rank::Ranked;
use cairn_core::{RecallOptions, SpaceId, Unit, UnitKind};
use std::collections::HashMap;

use super::error::EngineError;
use super::services::Retrieval;
use crate::personal::USER;

/// Cosines of units with the query: those the candidate lists found, and those asked
/// for since.
pub(super) type Cosines = HashMap<String, f32>;

/// The unit whose vector stands for `u`: a fact has none, and is as relevant as the
/// message that states it (its turn).
fn stands_for(u: &Unit) -> Option<String> {
    if u.kind != UnitKind::Fact {
        return Some(u.id.clone());
    }
    let p = &u.provenance;
    match (&p.session_id, p.message_ids.as_slice()) {
        (Some(s), [m]) => Some(turn_id(s, m)),
        _ => None,
    }
}

/// The units a place's relevance is read from: its excerpt's units, or itself.
fn units_of(r: &Ranked) -> impl Iterator<Item = &Unit> {
    let own = r.parts.is_empty().then_some(&r.unit);
    own.into_iter().chain(r.parts.iter().map(|p| &p.unit))
}

/// A place's relevance: the best of its units' (`None` when none has a vector).
pub(super) fn relevance(r: &Ranked, cosines: &Cosines) -> Option<f32> {
    units_of(r)
        .filter_map(|u| stands_for(u).and_then(|id| cosines.get(&id).copied()))
        .reduce(f32::max)
}

/// The ids whose cosines `places` need and `cosines` lacks.
fn missing<'a>(places: impl IntoIterator<Item = &'a Ranked>, cosines: &Cosines) -> Vec<String> {
    let mut ids: Vec<String> = places
        .into_iter()
        .flat_map(units_of)
        .filter(|u| u.kind != UnitKind::Profile)
        .filter_map(stands_for)
        .filter(|id| !cosines.contains_key(id))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

impl Retrieval<'_> {
    /// Computes the cosines `places` need that `cosines` lacks (one vector read for all).
    pub(super) fn complete_cosines<'a>(
        &self,
        space: &SpaceId,
        query_vector: Option<&[f32]>,
        places: impl IntoIterator<Item = &'a Ranked>,
        cosines: &mut Cosines,
    ) -> Result<(), EngineError> {
        let Some(v) = query_vector else {
            return Ok(());
        };
        let ids = missing(places, cosines);
        if !ids.is_empty() {
            cosines.extend(self.b.vectors.similarities(space, v, &ids)?);
        }
        Ok(())
    }

    /// The places, unless none reaches `opts.min_relevance` (then none: nothing stored
    /// bears on the question). Places of unknown relevance (no vector) do not pass, but
    /// when no place has a vector to judge by, all stay. A place below the floor stays
    /// beside one above it: on the dev sets such places held evidence more often than
    /// they cost it (docs/benchmarks/relevance-floor.md). Cosines not at hand are computed
    /// only when those at hand do not pass.
    ///
    /// A question `about_person` (the asker, or someone they name) asked of the asker's
    /// own conversations (places the user speaks in) is about what they told there, and
    /// its words need not be theirs ("which company pays my salary?" is .06 from "the
    /// most junior developer at Monzo" with MiniLM): no floor refuses it. In a chat
    /// between named people nobody is "the user", and the floor holds.
    pub(super) fn above_floor(
        &self,
        space: &SpaceId,
        query_vector: Option<&[f32]>,
        places: Vec<Ranked>,
        cosines: &mut Cosines,
        (opts, about_person): (&RecallOptions, bool),
    ) -> Result<Vec<Ranked>, EngineError> {
        let floor = opts.min_relevance;
        let users = |r: &Ranked| r.unit.provenance.speakers.iter().any(|s| s == USER);
        if floor <= -1.0 || query_vector.is_none() || (about_person && places.iter().any(users)) {
            return Ok(places);
        }
        let best = |c: &Cosines| {
            places
                .iter()
                .filter_map(|r| relevance(r, c))
                .reduce(f32::max)
        };
        if best(cosines).is_some_and(|x| x >= floor) {
            return Ok(places);
        }
        self.complete_cosines(space, query_vector, &places, cosines)?;
        Ok(match best(cosines) {
            Some(x) if x < floor => Vec::new(),
            _ => places,
        })
    }

    /// [`crate::present::newest_first`] over `places`, judged by their cosines with the
    /// query (those of its window not at hand are computed: one vector read) and with
    /// the place closest to the query (its anchor: what the question is about).
    pub(super) fn newest_first(
        &self,
        space: &SpaceId,
        query_vector: Option<&[f32]>,
        places: Vec<Ranked>,
        cosines: &mut Cosines,
        present: bool,
    ) -> Result<Vec<Ranked>, EngineError> {
        let rank = &self.cfg.rank;
        if !present || rank.newest_ratio <= 0.0 {
            return Ok(places);
        }
        let (near, anchor_cosine) = {
            let window: Vec<&Ranked> = places.iter().take(crate::present::WINDOW).collect();
            self.complete_cosines(space, query_vector, window.iter().copied(), cosines)?;
            let anchor = window
                .iter()
                .filter_map(|r| Some((relevance(r, cosines)?, *r)))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            let Some((anchor_cosine, anchor)) = anchor else {
                return Ok(places);
            };
            (self.near_anchor(space, anchor, &window)?, anchor_cosine)
        };
        Ok(crate::present::newest_first(
            places,
            present,
            rank,
            |r| relevance(r, cosines),
            // As close to the anchor as the question is: about what the question is
            // about, not merely worded like it.
            |r| relevance(r, &near).is_some_and(|c| c >= anchor_cosine),
        ))
    }

    /// Cosines of the units of `window`'s places with the anchor place's best unit (its
    /// vector from the embedding cache under the unit's own key, where its ingest left
    /// it; a unit without one, a fact, is embedded).
    fn near_anchor(
        &self,
        space: &SpaceId,
        anchor: &Ranked,
        window: &[&Ranked],
    ) -> Result<Cosines, EngineError> {
        let best = anchor.parts.first().map_or(&anchor.unit, |p| &p.unit);
        let text = best.embed_text.as_deref().unwrap_or(&best.text);
        let (mut vectors, _) = crate::embedding::embed_cached(
            self.b.embedder.as_ref(),
            self.b.cache.as_ref(),
            |t| self.unit_cache_key(best, t),
            &[text],
        )?;
        let Some(v) = vectors.pop() else {
            return Ok(Cosines::new());
        };
        let mut near = Cosines::new();
        self.complete_cosines(space, Some(&v), window.iter().copied(), &mut near)?;
        Ok(near)
    }
}
