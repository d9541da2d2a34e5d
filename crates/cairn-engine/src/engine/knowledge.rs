//! What a space knows beyond its lines: fact histories and subjects, speaker profiles.
use crate::{facts, profile};
use cairn_core::{
    FactHistory, FactSubject, InputError, SpaceId, SpeakerProfile, Timestamp, Unit, UnitDetail,
};
use std::collections::HashSet;
use std::sync::Arc;

use super::{Engine, EngineError};

impl Engine {
    /// Every fact of a space stated at or before `as_of`.
    pub(super) fn facts(
        &self,
        space: &SpaceId,
        as_of: Option<Timestamp>,
    ) -> Result<Vec<Unit>, EngineError> {
        let all = self.all_facts(space)?;
        Ok(all
            .iter()
            .filter(|f| fact_visible(f, as_of))
            .cloned()
            .collect())
    }

    /// Every fact of a space (see [`Engine::topic_units_cached`]).
    pub(super) fn all_facts(&self, space: &SpaceId) -> Result<Arc<Vec<Unit>>, EngineError> {
        self.topic_units_cached(space, "fact:")
    }

    /// The space's facts indexed for recall, rebuilt when the store generation moves.
    pub(super) fn fact_index(&self, space: &SpaceId) -> Result<Arc<facts::FactIndex>, EngineError> {
        let facts = self.all_facts(space)?;
        let mut cache = self.fact_index.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(index) = cache.get(space).filter(|i| i.is_of(&facts)) {
            return Ok(index.clone());
        }
        let index = Arc::new(facts::FactIndex::new(facts));
        if cache.len() >= 64 {
            cache.clear();
        }
        cache.insert(space.clone(), index.clone());
        Ok(index)
    }

    /// The space's fact index if one is built for the store's current state, reading
    /// nothing to build it (`None` otherwise).
    pub(super) fn built_fact_index(
        &self,
        space: &SpaceId,
    ) -> Result<Option<Arc<facts::FactIndex>>, EngineError> {
        let generation = self.b.records.generation()?;
        let facts = self
            .topic_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(space.clone(), "fact:"))
            .filter(|(g, _)| *g == generation)
            .map(|(_, u)| u.clone());
        let Some(facts) = facts else {
            return Ok(None);
        };
        let cache = self.fact_index.lock().unwrap_or_else(|p| p.into_inner());
        Ok(cache.get(space).filter(|i| i.is_of(&facts)).cloned())
    }

    /// Every profile contribution of a space (see [`Engine::topic_units_cached`]).
    pub(super) fn contributions(&self, space: &SpaceId) -> Result<Arc<Vec<Unit>>, EngineError> {
        self.topic_units_cached(space, "speaker:")
    }

    /// The units filed under a topic prefix, read from the store once per store
    /// generation: recall consults fact chains and profiles on every call, and a large
    /// space holds tens of thousands of each.
    fn topic_units_cached(
        &self,
        space: &SpaceId,
        prefix: &'static str,
    ) -> Result<Arc<Vec<Unit>>, EngineError> {
        /// Entries kept; beyond it the cache starts over.
        const KEPT: usize = 128;
        let generation = self.b.records.generation()?;
        let key = (space.clone(), prefix);
        let cached = self
            .topic_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .filter(|(g, _)| *g == generation)
            .map(|(_, u)| u.clone());
        if let Some(units) = cached {
            return Ok(units);
        }
        // Read after the generation: a write landing meanwhile moves it, so this copy is
        // replaced on the next call rather than kept stale.
        let units = Arc::new(self.b.records.topic_units(space, prefix)?);
        let mut cache = self.topic_cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= KEPT {
            cache.clear();
        }
        cache.insert(key, (generation, units.clone()));
        Ok(units)
    }

    /// The version chain of the subject best matching `subject`, as of a time.
    pub fn history(
        &self,
        space: &SpaceId,
        subject: &str,
        as_of: Option<Timestamp>,
    ) -> Result<Option<FactHistory>, EngineError> {
        self.require_space(space)?;
        if subject.trim().is_empty() {
            return Err(InputError::new("history", "`subject` is empty").into());
        }
        Ok(facts::history(subject, &self.facts(space, as_of)?))
    }

    /// What is known about a speaker of the space.
    pub fn profile(
        &self,
        space: &SpaceId,
        speaker: &str,
    ) -> Result<Option<SpeakerProfile>, EngineError> {
        self.require_space(space)?;
        Ok(profile::build_profile(speaker, &self.contributions(space)?))
    }

    /// Everyone who wrote in, or was described in, the space.
    pub fn speakers(&self, space: &SpaceId) -> Result<Vec<String>, EngineError> {
        self.require_space(space)?;
        let mut names: Vec<String> = self
            .contributions(space)?
            .iter()
            .filter_map(|u| u.topic()?.strip_prefix("speaker:").map(String::from))
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// Every subject the space holds facts about as of `as_of` (`None`: now): one entry
    /// per version chain, as recall builds chains (statements whose subject keys contain
    /// one another are one subject), named as its newest statement wrote it, in subject
    /// order.
    pub fn fact_subjects(
        &self,
        space: &SpaceId,
        as_of: Option<Timestamp>,
    ) -> Result<Vec<FactSubject>, EngineError> {
        self.require_space(space)?;
        let index = self.fact_index(space)?;
        let facts = self.all_facts(space)?;
        let in_view = |f: &Unit| fact_visible(f, as_of);
        let mut listed: HashSet<&str> = HashSet::new();
        let mut out: Vec<FactSubject> = Vec::new();
        for f in facts.iter().filter(|f| in_view(f)) {
            if listed.contains(f.id.as_str()) {
                continue;
            }
            let chain = index.chain_of(f, in_view);
            listed.extend(chain.iter().map(|c| c.id.as_str()));
            let Some(newest) = chain.last() else { continue };
            let Some(UnitDetail::Fact(d)) = &newest.detail else {
                continue;
            };
            out.push(FactSubject {
                subject: d.subject.clone(),
                versions: chain.len(),
                current_value: d.value.clone(),
                last_stated: newest.occurred_at,
                person: d.person.clone(),
                category: d.category,
                negated: d.negated,
            });
        }
        out.sort_by(|a, b| {
            a.subject
                .to_lowercase()
                .cmp(&b.subject.to_lowercase())
                .then(a.subject.cmp(&b.subject))
        });
        Ok(out)
    }
}

/// Whether a fact is visible at `as_of` (every fact when `None`).
pub(super) fn fact_visible(f: &Unit, as_of: Option<Timestamp>) -> bool {
    as_of.is_none_or(|a| f.occurred_at.is_none_or(|t| t <= a))
}
