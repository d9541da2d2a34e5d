//! Derived state advanced by the write that changed it (issue 52): a session write knows
//! what it wrote and what it removed, so, still under the write lock, it brings the
//! space's cached fact and profile-contribution lists, its fact index and its session
//! catalog from the generation before the write to the one after, instead of leaving
//! the next request to read and index the whole space again. A recall right after a
//! write then costs what a recall costs.
//!
//! Only an entry cached at exactly the generation read before the write is advanced:
//! under the write lock (which spans processes, see `lock_writers`) nothing else writes
//! the space between the two reads, so the delta is the whole difference. Everything
//! else a write leaves stale as before, rebuilt on demand by the next request that needs
//! it: entries of another generation, the caches built per scope (admitted sessions,
//! metadata keys, entity graphs: computed from the catalog in memory), and every cache
//! after a write of another kind (trajectories, enrichment), or on another server of the
//! same database. Session writes are ingests, appends, group messages and forgets
//! (`Written` says what each changed).
//!
//! Advancing is idempotent, so an entry a request read after the write committed (and
//! cached under the earlier generation) is advanced correctly too: units the write
//! rewrote or removed are dropped by id, then what it wrote is added in write order, the
//! order the store reads them back in.
use cairn_core::{SessionRecord, SpaceId, Unit};
use std::collections::HashSet;
use std::sync::Arc;

use super::cache::{Key, Weigh};
use super::error::EngineError;
use super::knowledge::{fact_index_key, profiles_key, topic_key, TOPICS};
use super::scope::{catalog_key, Catalog};
use super::services::Writes;
use crate::facts::FactIndex;
use crate::profile::Profiles;

/// Each space a write touches, with its generation before the write.
pub(super) struct Before(Vec<(SpaceId, u64)>);

/// One session's write, as the store took it.
pub(super) struct Written<'a> {
    pub space: &'a SpaceId,
    pub session: &'a str,
    /// The session as stored now; `None` when the write deleted it.
    pub record: Option<&'a SessionRecord>,
    /// Units written (new or rewritten), in write order.
    pub units: &'a [Unit],
    /// Ids of the units removed.
    pub removed: &'a [String],
}

impl Writes<'_> {
    /// Under the write lock, right before a session write: the generation of every space
    /// in `spaces`.
    pub(super) fn before_write<'a>(
        &self,
        spaces: impl IntoIterator<Item = &'a SpaceId>,
    ) -> Result<Before, EngineError> {
        let mut spaces: Vec<&SpaceId> = spaces.into_iter().collect();
        spaces.sort_unstable();
        spaces.dedup();
        let generations = spaces
            .into_iter()
            .map(|s| Ok((s.clone(), self.b.records.generation(s)?)))
            .collect::<Result<_, EngineError>>()?;
        Ok(Before(generations))
    }

    /// Right after the session writes `written` committed, still under the write lock:
    /// advances the entries cached at the generation before them. A failure to read a
    /// generation advances nothing (the entries go stale, as they would without this).
    pub(super) fn advance_derived(&self, before: Before, written: &[Written<'_>]) {
        for (space, from) in before.0 {
            let Ok(to) = self.b.records.generation(&space) else {
                continue;
            };
            if to == from {
                continue;
            }
            let delta = Delta::of(&space, written);
            // Taken out and detached from its facts first, so the fact list is held by
            // the cache alone and is changed in place.
            let index = self
                .derived
                .take::<FactIndex>(&fact_index_key(&space), from)
                .map(FactIndex::detach);
            // The profiles are moved by what the contributions' list removes, so only
            // sums of the very list cached at `from` are (the flag is read before the
            // list is advanced: holding it would make that advance copy it).
            let profiles_follow = self
                .derived
                .get::<Vec<Unit>>(&topic_key(&space, "speaker:"), from)
                .zip(self.derived.get::<Profiles>(&profiles_key(&space), from))
                .is_some_and(|(list, p)| p.follows(&list));
            let (mut facts, mut removed_facts) = (None, Vec::new());
            let (mut contributions, mut removed_contributions) = (None, Vec::new());
            for prefix in TOPICS {
                let mut removed = Vec::new();
                let list = self.advance(
                    topic_key(&space, prefix),
                    (from, to),
                    |list: &Vec<Unit>| delta.changes(prefix, list),
                    |list| removed = delta.apply(prefix, list),
                );
                match prefix {
                    "fact:" => (facts, removed_facts) = (list, removed),
                    "speaker:" => (contributions, removed_contributions) = (list, removed),
                    _ => {}
                }
            }
            if let (Some(index), Some(facts)) = (index, facts) {
                let followed = index.followed(facts.clone(), &removed_facts);
                let index = followed.unwrap_or_else(|| FactIndex::new(facts));
                self.derived
                    .insert(fact_index_key(&space), to, Arc::new(index));
            }
            // The profiles follow the contributions' list, which says what was removed.
            if let Some(list) = contributions.filter(|_| profiles_follow) {
                let added: Vec<&Unit> = delta.written_in("speaker:").collect();
                // Else the list did not change either.
                let changes = !added.is_empty() || !removed_contributions.is_empty();
                self.advance(
                    profiles_key(&space),
                    (from, to),
                    |_: &Profiles| changes,
                    |p| {
                        for (_, u) in &removed_contributions {
                            p.remove(u);
                        }
                        for u in added {
                            p.add(u);
                        }
                        p.now_of(&list);
                    },
                );
            }
            self.advance(
                catalog_key(&space),
                (from, to),
                |_: &Catalog| true,
                |c| {
                    for w in &delta.sessions {
                        match w.record {
                            Some(r) => c.put(r.header()),
                            None => c.remove(w.session),
                        }
                    }
                },
            );
        }
    }

    /// Moves the entry under `key` from generation `from` to `to`: the same value when
    /// `changes` says the write leaves it as it is, else the value `apply` makes of it
    /// (in place when no request holds it, else of a copy). Returns the value now cached
    /// at `to`, or `None` when none was cached at `from`.
    fn advance<V: Weigh + Clone + Send + Sync + 'static>(
        &self,
        key: Key,
        (from, to): (u64, u64),
        changes: impl FnOnce(&V) -> bool,
        apply: impl FnOnce(&mut V),
    ) -> Option<Arc<V>> {
        let old = self.derived.take::<V>(&key, from)?;
        let new = match changes(&old) {
            false => old,
            true => {
                let mut v = Arc::try_unwrap(old).unwrap_or_else(|shared| (*shared).clone());
                apply(&mut v);
                Arc::new(v)
            }
        };
        self.derived.insert(key, to, new.clone());
        Some(new)
    }
}

/// What one write changed in one space.
struct Delta<'a> {
    /// Units written (new or rewritten), in write order.
    written: Vec<&'a Unit>,
    /// Ids of the units written or removed: an entry's copies of them are replaced.
    touched: HashSet<&'a str>,
    sessions: Vec<&'a Written<'a>>,
}

impl<'a> Delta<'a> {
    fn of(space: &SpaceId, written: &'a [Written<'a>]) -> Self {
        let mine: Vec<&Written> = written.iter().filter(|w| w.space == space).collect();
        let units: Vec<&Unit> = mine.iter().flat_map(|w| w.units).collect();
        let touched = units
            .iter()
            .map(|u| u.id.as_str())
            .chain(
                mine.iter()
                    .flat_map(|w| w.removed.iter().map(String::as_str)),
            )
            .collect();
        Self {
            written: units,
            touched,
            sessions: mine,
        }
    }

    /// The units written under a topic, in write order.
    fn written_in<'b>(&'b self, prefix: &'b str) -> impl Iterator<Item = &'a Unit> + 'b {
        self.written
            .iter()
            .copied()
            .filter(move |u| in_topic(u, prefix))
    }

    /// Whether the write changes a topic's list: it wrote units of the topic, or holds
    /// units the write rewrote or removed.
    fn changes(&self, prefix: &str, list: &[Unit]) -> bool {
        self.written_in(prefix).next().is_some() || list.iter().any(|u| self.touches(u))
    }

    /// Whether the write rewrote or removed `u`. A unit of another session is not
    /// looked up: every list of a large space is walked by every write, and comparing a
    /// session id costs a fraction of hashing a unit id (a unit's id is unique in its
    /// space, so a touched id's stored copy is of the session that wrote it).
    fn touches(&self, u: &Unit) -> bool {
        match u.provenance.session_id.as_deref() {
            Some(s) if !self.sessions.iter().any(|w| w.session == s) => false,
            _ => self.touched.contains(u.id.as_str()),
        }
    }

    /// A topic's list after the write: its units the write did not touch, in their
    /// order, then the topic's units the write wrote. Returns the units it no longer
    /// holds (rewritten or removed), each with its position before the write.
    fn apply(&self, prefix: &str, list: &mut Vec<Unit>) -> Vec<(usize, Unit)> {
        let mut removed = Vec::new();
        let mut at = 0;
        list.retain(|u| {
            let touched = self.touches(u);
            if touched {
                removed.push((at, u.clone()));
            }
            at += 1;
            !touched
        });
        list.extend(self.written_in(prefix).cloned());
        removed
    }
}

fn in_topic(u: &Unit, prefix: &str) -> bool {
    u.topic().is_some_and(|t| t.starts_with(prefix))
}
