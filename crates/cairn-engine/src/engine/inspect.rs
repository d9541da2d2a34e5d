//! Reads for people looking at a space (the inspector): what it holds facts about, and
//! the units derived from one trajectory. Reads only; they run beside recall.
use cairn_core::{FactSubject, SpaceId, Timestamp, Unit, UnitDetail};
use std::collections::HashSet;

use super::{Engine, EngineError};

impl Engine {
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
        let in_view = |f: &Unit| super::knowledge::fact_visible(f, as_of);
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

    /// The units derived from one trajectory (slices, events, its note), oldest first.
    pub fn trajectory_units(
        &self,
        space: &SpaceId,
        trajectory: &str,
    ) -> Result<Vec<Unit>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.trajectory_units(space, trajectory)?)
    }
}
