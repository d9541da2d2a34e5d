//! Reads for people looking at a space (the inspector): what it holds facts about, and
//! the units derived from one trajectory. Reads only; they run beside recall.
use cairn_core::{FactSubject, SpaceId, Timestamp, Unit, UnitDetail};
use std::collections::BTreeMap;

use super::{Engine, EngineError};

impl Engine {
    /// Every subject the space holds facts about as of `as_of` (`None`: now), one entry
    /// per subject key, in subject order.
    pub fn fact_subjects(
        &self,
        space: &SpaceId,
        as_of: Option<Timestamp>,
    ) -> Result<Vec<FactSubject>, EngineError> {
        self.require_space(space)?;
        let mut by_key: BTreeMap<&[String], Vec<&Unit>> = BTreeMap::new();
        let facts = self.all_facts(space)?;
        for f in facts
            .iter()
            .filter(|f| super::knowledge::fact_visible(f, as_of))
        {
            if let Some(UnitDetail::Fact(d)) = &f.detail {
                by_key.entry(&d.subject_key).or_default().push(f);
            }
        }
        let mut out: Vec<FactSubject> = by_key
            .into_values()
            .filter_map(|units| {
                let newest = units
                    .iter()
                    .max_by(|a, b| (a.occurred_at, &a.id).cmp(&(b.occurred_at, &b.id)))?;
                let Some(UnitDetail::Fact(d)) = &newest.detail else {
                    return None;
                };
                Some(FactSubject {
                    subject: d.subject.clone(),
                    versions: units.len(),
                    current_value: d.value.clone(),
                    last_stated: newest.occurred_at,
                })
            })
            .collect();
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
