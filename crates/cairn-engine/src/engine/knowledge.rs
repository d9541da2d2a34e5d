//! What a space knows beyond its lines: fact histories and subjects, speaker profiles,
//! each computed from what the request's view sees and within one end-user partition.
use crate::{facts, profile};
use cairn_core::{
    FactHistory, FactSubject, InputError, ProfileFact, Scope, SessionInput, SpaceId,
    SpeakerProfile, Unit, UnitDetail,
};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use super::cache::{unit_weight, Key, Weigh};
use super::error::EngineError;
use super::scope::View;
use super::services::Knowledge;

/// The topic prefixes whose units are cached whole per space: facts and profile
/// contributions.
pub(super) const TOPICS: [&str; 2] = ["fact:", "speaker:"];

/// The derived cache's key of a space's units under a topic prefix (`fact:`, `speaker:`).
pub(super) fn topic_key(space: &SpaceId, prefix: &str) -> Key {
    Key::new(space, "topic", &prefix)
}

/// The derived cache's key of a space's profiles (the sums of its contributions).
pub(super) fn profiles_key(space: &SpaceId) -> Key {
    Key::new(space, "profiles", &())
}

/// The derived cache's key of a space's fact index.
pub(super) fn fact_index_key(space: &SpaceId) -> Key {
    Key::new(space, "fact_index", &())
}

impl Weigh for Vec<Unit> {
    /// Each unit by its struct and strings ([`unit_weight`]).
    fn weight(&self) -> usize {
        self.iter().map(unit_weight).sum()
    }
}

impl Weigh for facts::FactIndex {
    /// Its own maps and the facts it holds: counted again though the cached list shares
    /// them, so the budget still holds when that list is evicted and the index keeps it.
    fn weight(&self) -> usize {
        self.approx_bytes() + self.facts().weight()
    }
}
impl Weigh for profile::Profiles {
    fn weight(&self) -> usize {
        self.approx_bytes()
    }
}
use crate::derive::partitions;

impl Knowledge<'_> {
    /// Every fact of a space the view sees: the cached read itself when it sees them
    /// all, rather than a copy of every fact per request.
    pub(super) fn facts_in(
        &self,
        space: &SpaceId,
        view: &View,
    ) -> Result<Arc<Vec<Unit>>, EngineError> {
        let all = self.all_facts(space)?;
        if all.iter().all(|f| view.sees(f)) {
            return Ok(all);
        }
        Ok(Arc::new(
            all.iter().filter(|f| view.sees(f)).cloned().collect(),
        ))
    }

    /// Every fact of a space (see [`Knowledge::topic_units_cached`]).
    pub(super) fn all_facts(&self, space: &SpaceId) -> Result<Arc<Vec<Unit>>, EngineError> {
        Ok(self.topic_units_cached(space, "fact:")?.1)
    }

    /// The space's facts indexed for recall, rebuilt when the space's generation moves.
    pub(super) fn fact_index(&self, space: &SpaceId) -> Result<Arc<facts::FactIndex>, EngineError> {
        let (generation, facts) = self.topic_units_cached(space, "fact:")?;
        // An index of another read of the facts (the list was evicted and read again)
        // is not this one's.
        let of_these = |i: &facts::FactIndex| i.is_of(&facts);
        self.derived
            .get_or_build(&fact_index_key(space), generation, of_these, || {
                let (started, n) = (std::time::Instant::now(), facts.len());
                let index = facts::FactIndex::new(facts.clone());
                tracing::debug!(
                    space = %space,
                    facts = n,
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "built the fact index"
                );
                Ok(index)
            })
    }

    /// The space's fact index if one is built for the store's current state, reading
    /// nothing to build it (`None` otherwise).
    pub(super) fn built_fact_index(
        &self,
        space: &SpaceId,
    ) -> Result<Option<Arc<facts::FactIndex>>, EngineError> {
        let generation = self.b.records.generation(space)?;
        let Some(facts) = self
            .derived
            .get::<Vec<Unit>>(&topic_key(space, "fact:"), generation)
        else {
            return Ok(None);
        };
        Ok(self
            .derived
            .get::<facts::FactIndex>(&fact_index_key(space), generation)
            .filter(|i| i.is_of(&facts)))
    }

    /// Every profile contribution of a space (see [`Knowledge::topic_units_cached`]).
    pub(super) fn contributions(&self, space: &SpaceId) -> Result<Arc<Vec<Unit>>, EngineError> {
        Ok(self.topic_units_cached(space, "speaker:")?.1)
    }

    /// The profiles of what the view sees: the space's, kept at its generation (and
    /// moved by each write, see `advance.rs`) when the view sees every contribution,
    /// else summed from the contributions the view sees.
    pub(super) fn profiles_in(
        &self,
        space: &SpaceId,
        view: &View,
    ) -> Result<Arc<profile::Profiles>, EngineError> {
        if view.scope.narrows_records() {
            let seen = self.contributions_in(space, view)?;
            return Ok(Arc::new(profile::Profiles::new(&seen)));
        }
        let (generation, contributions) = self.topic_units_cached(space, "speaker:")?;
        // Sums of another read of the list (it was evicted and read again) are not its.
        let of_these = |p: &profile::Profiles| p.follows(&contributions);
        self.derived
            .get_or_build(&profiles_key(space), generation, of_these, || {
                Ok(profile::Profiles::of(&contributions))
            })
    }

    /// The units filed under a topic prefix, read from the store once per store
    /// generation (returned with it): recall consults fact chains and profiles on every
    /// call, and a large space holds tens of thousands of each.
    pub(super) fn topic_units_cached(
        &self,
        space: &SpaceId,
        prefix: &'static str,
    ) -> Result<(u64, Arc<Vec<Unit>>), EngineError> {
        // Read before the units: a write landing meanwhile moves it, so this copy is
        // replaced on the next call rather than kept stale.
        let generation = self.b.records.generation(space)?;
        let units = self.derived.get_or_build(
            &topic_key(space, prefix),
            generation,
            |_| true,
            || {
                let started = std::time::Instant::now();
                let units = self.b.records.topic_units(space, prefix)?;
                // How long the cold read of every fact or contribution takes is what a
                // large space's first knowledge request after a write pays
                // (docs/reliability.md).
                tracing::debug!(
                    space = %space,
                    topic = prefix,
                    units = units.len(),
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "read a topic's units"
                );
                Ok::<_, EngineError>(units)
            },
        )?;
        Ok((generation, units))
    }

    /// The profile contributions the view sees: the stored ones of the blocks it sees
    /// whole, and for each session it cuts into (a time window inside a block, a
    /// `speakers` scope) the contributions of the messages it sees, derived again from
    /// the record.
    pub(super) fn contributions_in(
        &self,
        space: &SpaceId,
        view: &View,
    ) -> Result<Arc<Vec<Unit>>, EngineError> {
        let all = self.contributions(space)?;
        let scope = &view.scope;
        if !scope.narrows_records() {
            return Ok(all);
        }
        let mut out = Vec::new();
        let mut cut: BTreeSet<&str> = BTreeSet::new();
        for u in all.iter() {
            let sid = u.provenance.session_id.as_deref();
            let admitted = view.admits(sid)
                && sid.is_some_and(|s| scope.admits_session(s, u.provenance.group.as_deref()));
            if !admitted {
                continue;
            }
            match block_in_time(scope, u) {
                _ if scope.speakers.is_some() => {
                    cut.extend(sid);
                }
                Some(true) => out.push(u.clone()),
                Some(false) => {}
                None => {
                    cut.extend(sid);
                }
            }
        }
        for sid in cut {
            out.retain(|u| u.provenance.session_id.as_deref() != Some(sid));
            if let Some(rec) = self.b.records.get_session(space, sid)? {
                let s = &rec.session;
                let messages = s
                    .messages
                    .iter()
                    .filter(|m| {
                        scope.sees_message(m.speaker_name(), s.message_time(m), rec.recorded_at)
                    })
                    .cloned()
                    .collect();
                let seen = SessionInput {
                    messages,
                    ..s.clone()
                };
                let mut units = profile::profile_units(space, &seen, rec.recorded_at, 0);
                crate::derive::stamp_partition(&mut units, &s.metadata);
                out.extend(units);
            }
        }
        Ok(Arc::new(out))
    }

    /// The version chain of the subject best matching `subject`, among the facts the
    /// scope sees. A subject with chains in several partitions of the scope is refused:
    /// the request must name whose.
    pub fn history(
        &self,
        space: &SpaceId,
        subject: &str,
        scope: &Scope,
    ) -> Result<Option<FactHistory>, EngineError> {
        self.require_space(space)?;
        if subject.trim().is_empty() {
            return Err(InputError::new("history", "`subject` is empty").into());
        }
        let view = self.view(space, scope)?;
        let facts = self.facts_in(space, &view)?;
        in_one_partition(&partitions(&facts), subject, |f| facts::history(subject, f))
    }

    /// What the scope shows about a speaker (refused when the speaker is known in several
    /// partitions of the scope).
    pub fn profile(
        &self,
        space: &SpaceId,
        speaker: &str,
        scope: &Scope,
    ) -> Result<Option<SpeakerProfile>, EngineError> {
        self.require_space(space)?;
        let view = self.view(space, scope)?;
        let profiles = self.profiles_in(space, &view)?;
        only_one(profiles.profiles(speaker), speaker)?
            .map(|(p, partition)| self.with_facts(space, &view, p, partition))
            .transpose()
    }

    /// `p` with the personal facts the view shows about its speaker in `partition`: the
    /// current value of each of their chains, with the message that states it.
    pub(super) fn with_facts(
        &self,
        space: &SpaceId,
        view: &View,
        mut p: SpeakerProfile,
        partition: Option<&str>,
    ) -> Result<SpeakerProfile, EngineError> {
        let index = self.fact_index(space)?;
        let in_view = |f: &Unit| view.sees(f);
        let theirs = |f: &&Unit| matches!(&f.detail, Some(UnitDetail::Fact(d)) if d.person.as_deref() == Some(p.speaker.as_str()));
        let mut listed: HashSet<&str> = HashSet::new();
        let mut out: Vec<ProfileFact> = Vec::new();
        let about = index.of_person(partition, &p.speaker);
        for f in about.into_iter().filter(theirs).filter(|f| in_view(f)) {
            if listed.contains(f.id.as_str()) {
                continue;
            }
            let chain = index.chain_of(f, in_view);
            listed.extend(chain.iter().map(|c| c.id.as_str()));
            out.extend(
                chain
                    .last()
                    .and_then(|newest| profile_fact(newest, chain.len() - 1)),
            );
        }
        out.sort_by(|a, b| {
            (a.category, std::cmp::Reverse(a.stated_at), &a.attribute).cmp(&(
                b.category,
                std::cmp::Reverse(b.stated_at),
                &b.attribute,
            ))
        });
        profile::add_facts(&mut p, out);
        Ok(p)
    }

    /// Everyone who wrote in, or was described in, what the scope sees.
    pub fn speakers(&self, space: &SpaceId, scope: &Scope) -> Result<Vec<String>, EngineError> {
        self.require_space(space)?;
        let view = self.view(space, scope)?;
        Ok(self.profiles_in(space, &view)?.speakers())
    }

    /// Every subject the scope's facts are about: one entry per version chain (of one
    /// partition), as recall builds chains (statements whose subject keys contain one
    /// another are one subject), named as its newest statement wrote it, in subject
    /// order.
    pub fn fact_subjects(
        &self,
        space: &SpaceId,
        scope: &Scope,
    ) -> Result<Vec<FactSubject>, EngineError> {
        self.require_space(space)?;
        let view = self.view(space, scope)?;
        let index = self.fact_index(space)?;
        let facts = self.all_facts(space)?;
        let in_view = |f: &Unit| view.sees(f);
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
                versions: facts::stated_versions(&chain).len(),
                current_value: d.value.clone(),
                statement: facts::shown_value(d),
                last_stated: newest.occurred_at,
                person: d.person.clone(),
                category: d.category,
                negated: d.negated,
            });
        }
        // Each subject lowercased once, not once per comparison (n log n allocations).
        out.sort_by_cached_key(|s| (s.subject.to_lowercase(), s.subject.clone()));
        Ok(out)
    }
}

/// Whether a profile contribution's block lies in the scope's time window: wholly
/// (`Some(true)`), not at all (`Some(false)`), or cut by it (`None`), by the times of its
/// first and last dated messages (an undated block by when it was recorded).
fn block_in_time(scope: &Scope, u: &Unit) -> Option<bool> {
    let (first, last) = match &u.detail {
        Some(UnitDetail::Speaker(s)) => (s.first.or(u.occurred_at), s.last.or(u.occurred_at)),
        _ => (u.occurred_at, u.occurred_at),
    };
    match (
        scope.in_time(first, u.recorded_at),
        scope.in_time(last, u.recorded_at),
    ) {
        (true, true) => Some(true),
        (false, false) if first.is_some() == last.is_some() => Some(false),
        _ => None,
    }
}

/// A personal fact's newest version as a profile lists it (`earlier`: the versions it
/// supersedes); `None` for a fact about a thing.
fn profile_fact(f: &Unit, earlier: usize) -> Option<ProfileFact> {
    let Some(UnitDetail::Fact(d)) = &f.detail else {
        return None;
    };
    let person = d.person.as_deref()?;
    let attribute = d
        .subject
        .strip_prefix(person)
        .and_then(|s| s.strip_prefix("'s "))
        .unwrap_or(&d.subject);
    Some(ProfileFact {
        category: d.category?,
        attribute: attribute.to_string(),
        value: d.value.clone(),
        negated: d.negated,
        stated_at: f.occurred_at,
        earlier,
        session_id: f.provenance.session_id.clone().unwrap_or_default(),
        message_id: f
            .provenance
            .message_ids
            .first()
            .cloned()
            .unwrap_or_default(),
    })
}

/// What `find` finds in the one partition that has it; an error naming `what` when
/// several partitions do (the request must say whose).
fn in_one_partition<T>(
    parts: &[Cow<'_, [Unit]>],
    what: &str,
    find: impl Fn(&[Unit]) -> Option<T>,
) -> Result<Option<T>, EngineError> {
    let found: Vec<(T, Option<&str>)> = parts
        .iter()
        .filter_map(|p| Some((find(p)?, p.first()?.provenance.partition.as_deref())))
        .collect();
    Ok(only_one(found, what)?.map(|(t, _)| t))
}

/// The one find among `found` (each with its partition), with its partition; an error
/// naming `what` when several partitions found one (the request must say whose).
fn only_one<'p, T>(
    mut found: Vec<(T, Option<&'p str>)>,
    what: &str,
) -> Result<Option<(T, Option<&'p str>)>, EngineError> {
    if found.len() > 1 {
        let names: Vec<&str> = found.iter().map(|(_, p)| p.unwrap_or("(none)")).collect();
        return Err(super::scope::ambiguous(what, &names));
    }
    Ok(found.pop())
}
