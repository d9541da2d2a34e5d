//! The text index made to hold exactly the record's searchable units, where counting
//! says it does not (issue 54, finding 4). The removal log heals what a crash cut off
//! between a record's commit and the index's; this is the check behind it, whatever
//! left an entry behind (a crash run left one forgotten unit's entry in the index with
//! its removal already pruned) or lost one. It costs a count per space when the index
//! agrees; a space whose counts differ is read whole, once, and mended.
use cairn_core::{SpaceId, Unit, UnitKind, UnitQuery};
use std::collections::HashSet;

use super::error::EngineError;
use super::state::Engine;

impl Engine {
    /// Mends every space whose text-index count differs from its searchable units:
    /// entries of units the record does not hold are removed, units it holds and the
    /// index lacks are indexed, and the index is committed at its own watermark. Returns
    /// the entries removed and added. The caller holds the write lock and has healed the
    /// indexes from their watermarks.
    pub(super) fn reconcile_text(&self) -> Result<(usize, usize), EngineError> {
        let mut changed = (0, 0);
        for space in self.b.records.list_spaces()? {
            let Some(held) = self.b.text.count(&space)? else {
                return Ok(changed); // a backend that cannot count cannot be checked
            };
            if held == self.searchable_units(&space)? {
                continue;
            }
            let (removed, added) = self.mend_text(&space)?;
            tracing::warn!(
                space = %space,
                removed,
                added,
                "the text index disagreed with the record; mended"
            );
            changed.0 += removed;
            changed.1 += added;
        }
        if changed != (0, 0) {
            self.b.text.commit(self.b.text.watermark()?)?;
        }
        Ok(changed)
    }

    /// How many units of `space` the text index should hold: a count, not a read.
    fn searchable_units(&self, space: &SpaceId) -> Result<usize, EngineError> {
        let kinds = UnitKind::ALL
            .into_iter()
            .filter(|k| k.is_searchable())
            .collect();
        let query = UnitQuery {
            kinds: Some(kinds),
            limit: 1,
            ..Default::default()
        };
        Ok(self.b.records.list_units(space, &query)?.total)
    }

    /// Removes the entries of `space` the record does not hold and indexes the units it
    /// lacks; the numbers of each.
    fn mend_text(&self, space: &SpaceId) -> Result<(usize, usize), EngineError> {
        let Some(entries) = self.b.text.ids(space)? else {
            return Ok((0, 0));
        };
        let units: Vec<Unit> = self
            .b
            .records
            .space_units(space)?
            .into_iter()
            .filter(Unit::is_searchable)
            .collect();
        let stored: HashSet<&str> = units.iter().map(|u| u.id.as_str()).collect();
        let indexed: HashSet<&str> = entries.iter().map(String::as_str).collect();
        let orphans: Vec<String> = indexed
            .iter()
            .filter(|id| !stored.contains(*id))
            .map(|id| id.to_string())
            .collect();
        let missing: Vec<Unit> = units
            .iter()
            .filter(|u| !indexed.contains(u.id.as_str()))
            .cloned()
            .collect();
        // Forgotten, as a forget's removals are: an orphan is most likely a forgotten
        // unit, whose words must leave the index's files too.
        self.b.text.remove_forgotten(space, &orphans)?;
        self.b.text.upsert(&missing)?;
        Ok((orphans.len(), missing.len()))
    }
}
