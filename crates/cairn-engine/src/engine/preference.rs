//! Preference placement: a request for advice ("what should I cook tonight?") depends
//! on what the asker said of themself (a diet, a liking, a belonging), which is often
//! worded unlike the request and ranks below earlier requests worded like it. So the
//! asker's personal fact closest in meaning to the request goes first, as its chain's
//! current version, when it is close to the request by the same measure that makes a
//! place "close to the best" for the newest statement and the card (`newest_ratio` of
//! the best place's cosine): the nearest of the asker's facts is not relevant merely for
//! being the nearest.
use crate::query::QueryAnalysis;
use crate::rank::Ranked;
use cairn_core::explain::Step;
use cairn_core::{FactCategory as C, RecallOptions, SpaceId, Unit, UnitDetail, UnitKind};

use super::candidates::{Candidates, Loaded};
use super::error::EngineError;
use super::relevance::{relevance, Cosines};
use super::scope::View;
use super::services::Retrieval;
use super::versions::shows_fact;

impl Retrieval<'_> {
    /// `top` (the hits, best first) with the asker's personal fact that the request
    /// depends on first, taking the best hit's score, unless the first hit already shows
    /// its message (see the module doc). Closest by cosine among the dense candidates: a
    /// liking may share no word with the request ("recommend a restaurant", "I love
    /// spicy Thai food"). A fact a newer statement replaced ("I love jazz", then "I
    /// don't like jazz anymore") is placed as the newer one, which is what holds now.
    pub(super) fn with_preference(
        &self,
        space: &SpaceId,
        view: &View,
        analysis: &QueryAnalysis,
        (found, loaded): (&Candidates, &Loaded),
        (mut top, cosines): (Vec<Ranked>, &mut Cosines),
        opts: &RecallOptions,
    ) -> Result<Vec<Ranked>, EngineError> {
        if analysis.request.is_none() || !view.scope.shows_kind(UnitKind::Fact) {
            return Ok(top);
        }
        let qv = found.query_vector.as_deref();
        self.complete_cosines(space, qv, top.iter(), cosines)?;
        // Measured against the places that state something: an earlier request worded
        // like this one is closest in meaning and says nothing the advice depends on.
        let best_place = top
            .iter()
            .filter(|r| crate::present::states(r))
            .filter_map(|r| relevance(r, cosines))
            .reduce(f32::max);
        let close = best_place.unwrap_or(0.0) * self.cfg.rank.newest_ratio;
        let nearest = found
            .dense
            .iter()
            .filter(|(_, cosine)| *cosine >= close)
            .filter_map(|(id, cosine)| Some((loaded.units.get(id)?, *cosine)))
            .filter(|(u, _)| depends(u))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((nearest, _)) = nearest else {
            return Ok(top);
        };
        let index = self.knowledge().fact_index(space)?;
        let chain = index.chain_of(nearest, |f| view.shows(f));
        let fact = chain.last().copied().unwrap_or(nearest);
        if top.first().is_some_and(|r| shows_fact(r, fact)) {
            return Ok(top);
        }
        let replaced = fact.id != nearest.id;
        let score = top.first().map_or(1.0, |r| r.score);
        top.retain(|r| r.unit.id != fact.id);
        let placed = Ranked::placed(
            fact.clone(),
            score,
            opts.explain,
            Step::PreferencePlacement,
            || match replaced {
                false => "the asker's personal fact closest to the request".into(),
                true => format!(
                    "the current version of the asker's personal fact closest to the request ({})",
                    nearest.id
                ),
            },
        );
        top.insert(0, placed);
        top.truncate(opts.top_k.max(1));
        Ok(top)
    }
}

/// Whether `u` is a fact a speaker stated of themself of a kind advice depends on: a
/// liking, a diet, a habit, a belonging, a condition, a role, a pet.
fn depends(u: &Unit) -> bool {
    let Some(UnitDetail::Fact(d)) = &u.detail else {
        return false;
    };
    d.person
        .as_ref()
        .is_some_and(|p| u.provenance.speakers.contains(p))
        && matches!(
            d.category,
            Some(C::Preference | C::Diet | C::Habit | C::Possession | C::Health | C::Role | C::Pet)
        )
}
