//! Fact versions in recall: what each hit states is put into its version chain, as of
//! the recall time and as far as the view sees, so a hit stating a value that was later
//! replaced brings the current version with it and every versioned hit says whether it
//! is current.
use crate::facts::{self, FactIndex};
use crate::rank::Ranked;
use cairn_core::explain::{HitExplanation, Op, Step};
use cairn_core::{SpaceId, Unit, UnitKind};
use std::collections::HashMap;

use super::error::EngineError;
use super::scope::View;
use super::services::Retrieval;

/// The facts in view that `u` states: itself when it is a fact, else those stated in its
/// messages.
fn stated_by<'i>(index: &'i FactIndex, u: &Unit, in_view: impl Fn(&Unit) -> bool) -> Vec<&'i Unit> {
    if u.kind == UnitKind::Fact {
        return index
            .get(&u.id)
            .filter(|f| in_view(f))
            .into_iter()
            .collect();
    }
    let sid = u.provenance.session_id.clone().unwrap_or_default();
    u.provenance
        .message_ids
        .iter()
        .flat_map(|m| index.stated_in(&sid, m))
        .filter(|f| in_view(f))
        .collect()
}

/// Whether a unit of `out` already shows fact `f`.
fn shown(out: &[Ranked], f: &Unit) -> bool {
    out.iter().any(|o| shows_fact(o, f))
}

/// Whether `r`'s unit shows fact `f`: its session and every message `f` cites.
pub(super) fn shows_fact(r: &Ranked, f: &Unit) -> bool {
    r.unit.provenance.session_id == f.provenance.session_id
        && f.provenance
            .message_ids
            .iter()
            .all(|m| r.unit.provenance.message_ids.contains(m))
}

impl Retrieval<'_> {
    /// Puts what each hit states into its version chain (as of the recall time): a hit
    /// stating a value that was later replaced gets the current version ranked just
    /// above it (unless a better hit already shows it), and every hit stating a
    /// versioned value gets a note saying whether it is current or superseded. Returns
    /// the superseded hits with the fact unit that replaced them.
    pub(super) fn resolve_versions(
        &self,
        space: &SpaceId,
        ranked: Vec<Ranked>,
        view: &View,
        top_k: usize,
    ) -> Result<(Vec<Ranked>, HashMap<String, String>), EngineError> {
        let mut superseded = HashMap::new();
        // Hits far below the cut cannot reach the context; only the window that can is
        // resolved.
        let window = top_k * 2;
        // An index already built answers which hits state facts by itself; otherwise
        // the store is asked first, so the space's facts are read only when they matter.
        let index = match self.knowledge().built_fact_index(space)? {
            Some(index) => index,
            None if self.any_states_a_fact(space, &ranked[..window.min(ranked.len())])? => {
                self.knowledge().fact_index(space)?
            }
            None => return Ok((ranked, superseded)),
        };
        // A chain is made of the facts this recall sees (and of one partition: the
        // index's rule), so its notes say nothing the scope does not see.
        let in_view = |f: &Unit| view.sees(f);
        let mut out: Vec<Ranked> = Vec::with_capacity(ranked.len() + 2);
        for (i, mut r) in ranked.into_iter().enumerate() {
            let stated = if i >= window {
                Vec::new()
            } else {
                stated_by(&index, &r.unit, in_view)
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
                let Some(newest) = chain.last().filter(|n| n.id != f.id && view.shows(n)) else {
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
                    ids.push(super::enrich::llm_fact_id(sid, m, 0));
                }
            }
        }
        Ok(!self.b.records.units(space, &ids)?.is_empty())
    }
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
        more: Vec::new(),
    };
    placed.record(Step::VersionPlacement, Op::Set, r.score, || {
        format!("the current version of what {} states", r.unit.id)
    });
    placed
}
