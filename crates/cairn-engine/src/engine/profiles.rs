//! Profiles in recall: a question about a person ("who is Maya?", "what does Ana do?")
//! gets the profiles of the people it names, computed from what the view sees, first.
use crate::profile;
use crate::rank::Ranked;
use cairn_core::explain::Step;
use cairn_core::{RecallOptions, SpaceId, Unit, UnitKind};

use super::error::EngineError;
use super::scope::View;
use super::services::Retrieval;

impl Retrieval<'_> {
    /// Puts the profiles of the people a question is about first, with the best hit's
    /// score, keeping `top_k`.
    pub(super) fn with_profiles(
        &self,
        space: &SpaceId,
        query: &str,
        view: &View,
        opts: &RecallOptions,
        mut top: Vec<Ranked>,
    ) -> Result<Vec<Ranked>, EngineError> {
        let Some(profiles) = self.profiles_for(space, query, view)? else {
            return Ok(top);
        };
        let best = top.first().map_or(1.0, |r| r.score);
        for p in profiles.into_iter().rev() {
            let r = Ranked::placed(p, best, opts.explain, Step::ProfilePlacement, || {
                "a profile of the person asked about, placed first".to_string()
            });
            top.insert(0, r);
        }
        top.truncate(opts.top_k.max(1));
        Ok(top)
    }

    /// Profiles of the people a question is about (named in it, or given as `speakers`),
    /// computed from what the view sees, as units for the context; `None` when the
    /// question is not about a person. A name known in several partitions of the view
    /// gets no profile: a profile never joins two end users.
    pub(super) fn profiles_for(
        &self,
        space: &SpaceId,
        query: &str,
        view: &View,
    ) -> Result<Option<Vec<Unit>>, EngineError> {
        if !profile::asks_about_person(query) {
            return Ok(None);
        }
        let sums = self.knowledge().profiles_in(space, view)?;
        let known = sums.speakers();
        let mut named = profile::named_speakers(query, &known);
        if named.is_empty() {
            named = view.scope.speakers.clone().unwrap_or_default();
        }
        let profiles: Vec<_> = if named.is_empty() {
            // The best match of each partition would be two people of two users; only
            // a view of one partition looks for one.
            let mut partitions = sums.partitions();
            match (partitions.next(), partitions.next()) {
                (Some(one), None) => sums
                    .best_matching_person(query, one)?
                    .map(|p| (p, one))
                    .into_iter()
                    .collect(),
                _ => Vec::new(),
            }
        } else {
            named
                .iter()
                .take(2)
                .filter_map(|name| {
                    let mut found = sums.profiles(name);
                    (found.len() == 1).then(|| found.pop()).flatten()
                })
                .collect()
        };
        let profiles = profiles
            .into_iter()
            .map(|(p, partition)| self.knowledge().with_facts(space, view, p, partition))
            .collect::<Result<Vec<_>, _>>()?;
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
