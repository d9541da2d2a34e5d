//! The entity graph, LLM-free: who and what a space's messages name, linked to the units
//! that name them. Built from the units (turns and facts) when recall or a listing asks,
//! so it is derived state: it changes with the units (re-derivation, forgetting) and is
//! never stored. Rules, all general (no list of names):
//! - a speaker is a person;
//! - a capitalized word (or run of them, "New York", "Stanford University") inside a
//!   sentence is a name; at a sentence start only when the same word is capitalized
//!   inside a sentence elsewhere in the space, or is a speaker (so "Yesterday" is not);
//! - a short name that starts a longer one ("Mel", "Melanie"; "John", "John Smith") or
//!   ends one of several words ("Atlas", "Project Atlas") is an alias of it when exactly
//!   one longer name qualifies and they share a session or a group chat (the contexts
//!   agree);
//! - a name after "in", "at", "from", "to", "near", "visited" is a place, one with an
//!   organization word is an organization, a speaker or a name that speaks is a person.
use crate::budget::{OutOfTime, Ticker};
use cairn_core::{
    EdgeKind, EntityDetail, EntityKind, EntityMention, EntityRelation, EntitySummary,
    TimelineEntry, Timestamp, Unit, UnitDetail, UnitKind,
};
use std::collections::{BTreeMap, HashMap, HashSet};

mod names;
use names::*;

/// Role names that say who wrote a message without naming anyone.
const ROLES: &[&str] = &["user", "assistant", "system", "tool", "unknown"];

/// One linked unit, as the graph keeps it.
#[derive(Debug, Clone)]
pub struct Link {
    pub unit_id: String,
    pub edge: EdgeKind,
    pub session_id: Option<String>,
    /// The group chat of the session, when it has one.
    pub group: Option<String>,
    pub message_ids: Vec<String>,
    /// The round a turn belongs to.
    pub part_of: Option<String>,
    pub surface: String,
    pub occurred_at: Option<Timestamp>,
    pub recorded_at: Timestamp,
}

#[derive(Debug, Clone)]
pub struct Entity {
    /// The end-user partition of the units it was built from.
    pub partition: Option<String>,
    pub name: String,
    pub kind: EntityKind,
    pub aliases: Vec<String>,
    pub links: Vec<Link>,
}

/// A space's entities and their links.
#[derive(Debug, Default)]
pub struct EntityGraph {
    pub entities: Vec<Entity>,
    /// Lowercased name or alias -> entity (one per partition that knows the name).
    by_name: HashMap<String, Vec<usize>>,
    /// (session, message) -> entities linked through that message.
    by_message: HashMap<(String, String), Vec<(usize, EdgeKind)>>,
}

impl EntityGraph {
    /// Builds the graph of a space from its units (turns name people and things; facts
    /// link their subjects). Other kinds repeat what turns say. Each end-user partition
    /// is a graph of its own: "Maya" of one user is not "Maya" of another, and no name
    /// or alias of one partition shapes another's entities.
    pub fn build(units: &[Unit]) -> Result<Self, OutOfTime> {
        let mut tick = Ticker::new("entity graph");
        let mut g = EntityGraph::default();
        for part in crate::derive::partitions(units) {
            let mut one = Self::build_partition(&part, &mut tick)?;
            let partition = part.first().and_then(|u| u.provenance.partition.clone());
            for e in &mut one.entities {
                e.partition.clone_from(&partition);
            }
            g.absorb(one);
        }
        Ok(g)
    }

    /// About how many bytes the graph holds (its strings and collection slots), what
    /// the engine's derived cache counts it as (`engine/cache.rs`).
    pub fn approx_bytes(&self) -> usize {
        use std::mem::size_of;
        let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        let link = |l: &Link| {
            size_of::<Link>()
                + l.unit_id.len()
                + opt(&l.session_id)
                + opt(&l.group)
                + opt(&l.part_of)
                + l.surface.len()
                + l.message_ids
                    .iter()
                    .map(|m| size_of::<String>() + m.len())
                    .sum::<usize>()
        };
        let entities: usize = self
            .entities
            .iter()
            .map(|e| {
                size_of::<Entity>()
                    + opt(&e.partition)
                    + e.name.len()
                    + e.aliases
                        .iter()
                        .map(|a| size_of::<String>() + a.len())
                        .sum::<usize>()
                    + e.links.iter().map(link).sum::<usize>()
            })
            .sum();
        let by_name: usize = self
            .by_name
            .iter()
            .map(|(k, v)| {
                size_of::<(String, Vec<usize>)>() + k.len() + v.len() * size_of::<usize>()
            })
            .sum();
        let by_message: usize = self
            .by_message
            .iter()
            .map(|((s, m), v)| {
                size_of::<((String, String), Vec<(usize, EdgeKind)>)>()
                    + s.len()
                    + m.len()
                    + v.len() * size_of::<(usize, EdgeKind)>()
            })
            .sum();
        size_of::<Self>() + entities + by_name + by_message
    }

    /// The partition of entity `e`.
    pub fn partition_of(&self, e: usize) -> Option<&str> {
        self.entities.get(e)?.partition.as_deref()
    }

    /// Adds a graph of another partition (its entities after these).
    fn absorb(&mut self, other: EntityGraph) {
        let offset = self.entities.len();
        self.entities.extend(other.entities);
        for (name, ids) in other.by_name {
            self.by_name
                .entry(name)
                .or_default()
                .extend(ids.into_iter().map(|i| i + offset));
        }
        for (at, linked) in other.by_message {
            self.by_message
                .entry(at)
                .or_default()
                .extend(linked.into_iter().map(|(i, e)| (i + offset, e)));
        }
    }

    fn build_partition(units: &[Unit], tick: &mut Ticker) -> Result<Self, OutOfTime> {
        let turns: Vec<&Unit> = units
            .iter()
            .filter(|u| matches!(u.kind, UnitKind::Turn | UnitKind::Fact))
            .collect();
        let speakers: HashSet<String> = turns
            .iter()
            .filter(|u| u.kind == UnitKind::Turn)
            .flat_map(|u| u.provenance.speakers.iter())
            .filter(|s| !ROLES.contains(&s.to_lowercase().as_str()))
            .cloned()
            .collect();
        let found: Vec<(&Unit, Vec<Found>)> = turns
            .iter()
            .map(|u| tick.tick().map(|()| (*u, names_in(&mention_text(u)))))
            .collect::<Result<_, _>>()?;
        // Words capitalized inside a sentence somewhere: names at a sentence start too.
        let mid: HashSet<String> = found
            .iter()
            .flat_map(|(_, f)| f.iter().filter(|n| !n.at_start))
            .map(|n| n.name.to_lowercase())
            .chain(speakers.iter().map(|s| s.to_lowercase()))
            .collect();
        let mut g = EntityGraph::default();
        for s in &speakers {
            g.entity(s, EntityKind::Person);
        }
        for (u, names) in &found {
            tick.tick()?;
            if u.kind == UnitKind::Turn {
                for s in &u.provenance.speakers {
                    if speakers.contains(s) {
                        let e = g.entity(s, EntityKind::Person);
                        g.link(e, u, EdgeKind::SpeakerOf, s);
                    }
                }
            }
            let edge = if u.kind == UnitKind::Fact {
                EdgeKind::FactSubject
            } else {
                EdgeKind::Mention
            };
            let mut seen = HashSet::new();
            for n in names {
                let key = n.name.to_lowercase();
                if (n.at_start && !mid.contains(&key)) || !seen.insert(key) {
                    continue;
                }
                let e = g.entity(&n.name, kind_of(n));
                g.link(e, u, edge, &n.name);
            }
        }
        g.merge_aliases(tick)?;
        Ok(g)
    }

    fn entity(&mut self, name: &str, kind: EntityKind) -> usize {
        let key = name.to_lowercase();
        if let Some(&i) = self.by_name.get(&key).and_then(|v| v.first()) {
            // A name once seen as a place or thing that speaks is a person.
            if kind == EntityKind::Person {
                self.entities[i].kind = EntityKind::Person;
            }
            return i;
        }
        self.entities.push(Entity {
            partition: None,
            name: name.to_string(),
            kind,
            aliases: Vec::new(),
            links: Vec::new(),
        });
        self.by_name.insert(key, vec![self.entities.len() - 1]);
        self.entities.len() - 1
    }

    fn link(&mut self, e: usize, u: &Unit, edge: EdgeKind, surface: &str) {
        self.entities[e].links.push(Link {
            unit_id: u.id.clone(),
            edge,
            session_id: u.provenance.session_id.clone(),
            group: u.provenance.group.clone(),
            message_ids: u.provenance.message_ids.clone(),
            part_of: u.part_of.clone(),
            surface: surface.to_string(),
            occurred_at: u.occurred_at,
            recorded_at: u.recorded_at,
        });
    }

    /// Merges each short name into the one longer name it starts, when exactly one
    /// qualifies and both appear in a common context (a session, or a group chat, whose
    /// days are sessions of their own); then indexes the links by message.
    fn merge_aliases(&mut self, tick: &mut Ticker) -> Result<(), OutOfTime> {
        let into = self.alias_targets(tick)?;
        let mut merged = self.merged(&into);
        self.by_name.clear();
        self.by_message.clear();
        for (i, e) in merged.iter_mut().enumerate() {
            tick.tick()?;
            e.aliases.sort();
            e.aliases.dedup();
            e.links
                .sort_by(|a, b| a.unit_id.cmp(&b.unit_id).then(a.edge.cmp(&b.edge)));
            e.links
                .dedup_by(|a, b| a.unit_id == b.unit_id && a.edge == b.edge);
            e.links
                .sort_by_key(|l| (l.occurred_at.unwrap_or(l.recorded_at), l.unit_id.clone()));
            self.by_name.insert(e.name.to_lowercase(), vec![i]);
            for a in &e.aliases {
                self.by_name.insert(a.clone(), vec![i]);
            }
            for l in &e.links {
                let Some(sid) = &l.session_id else { continue };
                for m in &l.message_ids {
                    let v = self.by_message.entry((sid.clone(), m.clone())).or_default();
                    if !v.iter().any(|&(x, k)| x == i && k == l.edge) {
                        v.push((i, l.edge));
                    }
                }
            }
        }
        self.entities = merged;
        Ok(())
    }

    /// Which entity each short name merges into: the one longer name it starts, when
    /// exactly one qualifies and the two share a session or group.
    fn alias_targets(&self, tick: &mut Ticker) -> Result<HashMap<usize, usize>, OutOfTime> {
        let sessions: Vec<HashSet<String>> = self
            .entities
            .iter()
            .map(|e| {
                e.links
                    .iter()
                    .flat_map(|l| {
                        let s = l.session_id.as_ref().map(|s| format!("s:{s}"));
                        let g = l.group.as_ref().map(|g| format!("g:{g}"));
                        s.into_iter().chain(g)
                    })
                    .collect()
            })
            .collect();
        let lower: Vec<String> = self
            .entities
            .iter()
            .map(|e| e.name.to_lowercase())
            .collect();
        let longer = LongerNames::new(&lower);
        let mut into: HashMap<usize, usize> = HashMap::new();
        for (i, short) in lower.iter().enumerate() {
            tick.tick()?;
            if short.chars().count() < 3 || short.contains(' ') {
                continue;
            }
            let Some(j) = longer.only_one(i, short) else {
                continue;
            };
            if sessions[i].is_disjoint(&sessions[j]) {
                continue;
            }
            into.insert(i, j);
        }
        Ok(into)
    }

    /// The entities once each name of `into` is merged into its target: the target takes
    /// its name as an alias, its links, and its being a person.
    fn merged(&self, into: &HashMap<usize, usize>) -> Vec<Entity> {
        let mut merged: Vec<Entity> = Vec::new();
        let mut new_index: HashMap<usize, usize> = HashMap::new();
        for (i, e) in self.entities.iter().enumerate() {
            if !into.contains_key(&i) {
                new_index.insert(i, merged.len());
                merged.push(e.clone());
            }
        }
        for (&i, &j) in into {
            // A chain (a -> b -> c) ends at the name that is merged into nothing.
            let mut target = j;
            while let Some(&next) = into.get(&target) {
                if next == i {
                    break;
                }
                target = next;
            }
            let Some(&t) = new_index.get(&target) else {
                continue;
            };
            let e = &self.entities[i];
            merged[t].aliases.push(e.name.to_lowercase());
            merged[t].links.extend(e.links.iter().cloned());
            if e.kind == EntityKind::Person {
                merged[t].kind = EntityKind::Person;
            }
        }
        merged
    }

    /// The entity a name or alias denotes (case-insensitive), when one partition knows
    /// it.
    #[cfg(test)]
    pub fn find(&self, name: &str) -> Option<usize> {
        match self.find_all(name) {
            [one] => Some(*one),
            _ => None,
        }
    }

    /// Every entity a name or alias denotes: one per partition that knows it.
    pub fn find_all(&self, name: &str) -> &[usize] {
        self.by_name
            .get(&name.trim().to_lowercase())
            .map_or(&[], Vec::as_slice)
    }

    /// The entities a question names: its words and word pairs matched against the
    /// space's names and aliases, possessives dropped ("Melanie's" is Melanie).
    pub fn named_in(&self, query: &str) -> Vec<usize> {
        let words: Vec<String> = query
            .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
            .filter(|w| !w.is_empty())
            .map(|w| strip_possessive(w).to_lowercase())
            .collect();
        let mut out = Vec::new();
        let mut push = |i: usize| {
            if !out.contains(&i) {
                out.push(i);
            }
        };
        for n in (1..=3).rev() {
            for w in words.windows(n) {
                let phrase = w.join(" ");
                if n == 1 && (not_a_name(&phrase) || phrase.len() < 3) {
                    continue;
                }
                for &i in self.find_all(&phrase) {
                    push(i);
                }
            }
        }
        out
    }

    /// The entities linked through a message (its speaker, the names it holds).
    pub fn at_message(&self, session: &str, message: &str) -> &[(usize, EdgeKind)] {
        self.by_message
            .get(&(session.to_string(), message.to_string()))
            .map_or(&[], |v| v.as_slice())
    }

    /// Entities other than `e` linked through the same messages as `e`'s links, with how
    /// many such messages, strongest first (the second hop of recall).
    pub fn co_mentioned(&self, e: usize) -> Vec<(usize, usize)> {
        let mut n: HashMap<usize, usize> = HashMap::new();
        for l in &self.entities[e].links {
            let Some(sid) = &l.session_id else { continue };
            for m in &l.message_ids {
                let mut here: HashSet<usize> = HashSet::new();
                for &(o, _) in self.at_message(sid, m) {
                    if o != e && here.insert(o) {
                        *n.entry(o).or_default() += 1;
                    }
                }
            }
        }
        let mut v: Vec<(usize, usize)> = n.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    /// What a listing says of entity `e` (`None` when it has no link). A graph is built
    /// from what its request's view sees, so every link is visible.
    pub fn summary(&self, e: usize) -> Option<EntitySummary> {
        let en = &self.entities[e];
        let links: Vec<&Link> = en.links.iter().collect();
        if links.is_empty() {
            return None;
        }
        let sessions: HashSet<&str> = links
            .iter()
            .filter_map(|l| l.session_id.as_deref())
            .collect();
        let times: Vec<Timestamp> = links.iter().filter_map(|l| l.occurred_at).collect();
        Some(EntitySummary {
            name: en.name.clone(),
            kind: en.kind,
            aliases: en.aliases.clone(),
            mention_count: links.len(),
            sessions: sessions.len(),
            first_seen: times.iter().min().copied(),
            last_seen: times.iter().max().copied(),
        })
    }

    /// Entity `e` with its mentions, relations (co-occurrence within a session, and
    /// links through one message) and timeline.
    pub fn detail(&self, e: usize) -> Option<EntityDetail> {
        let summary = self.summary(e)?;
        let links: Vec<&Link> = self.entities[e].links.iter().collect();
        let mentions = links
            .iter()
            .map(|l| EntityMention {
                unit_id: l.unit_id.clone(),
                edge: l.edge,
                session_id: l.session_id.clone(),
                message_ids: l.message_ids.clone(),
                surface: l.surface.clone(),
                occurred_at: l.occurred_at,
                recorded_at: l.recorded_at,
            })
            .collect();
        let mut timeline: BTreeMap<String, TimelineEntry> = BTreeMap::new();
        for l in &links {
            let Some(sid) = &l.session_id else { continue };
            let t = timeline.entry(sid.clone()).or_insert(TimelineEntry {
                session_id: sid.clone(),
                first: l.occurred_at,
                mentions: 0,
            });
            t.mentions += 1;
            t.first = match (t.first, l.occurred_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        let mut timeline: Vec<TimelineEntry> = timeline.into_values().collect();
        timeline.sort_by(|a, b| a.first.cmp(&b.first).then(a.session_id.cmp(&b.session_id)));
        Some(EntityDetail {
            summary,
            mentions,
            relations: self.relations(e),
            timeline,
        })
    }

    fn relations(&self, e: usize) -> Vec<EntityRelation> {
        let mine: HashSet<&str> = self.entities[e]
            .links
            .iter()
            .filter_map(|l| l.session_id.as_deref())
            .collect();
        let through: HashMap<usize, usize> = self.co_mentioned(e).into_iter().collect();
        let mut out: Vec<EntityRelation> = Vec::new();
        for (o, other) in self.entities.iter().enumerate() {
            if o == e {
                continue;
            }
            let shared: Vec<&Link> = other
                .links
                .iter()
                .filter(|l| l.session_id.as_deref().is_some_and(|s| mine.contains(s)))
                .collect();
            let sessions: HashSet<&str> = shared
                .iter()
                .filter_map(|l| l.session_id.as_deref())
                .collect();
            if sessions.is_empty() {
                continue;
            }
            let times: Vec<Timestamp> = shared.iter().filter_map(|l| l.occurred_at).collect();
            out.push(EntityRelation {
                name: other.name.clone(),
                kind: other.kind,
                sessions: sessions.len(),
                messages: through.get(&o).copied().unwrap_or(0),
                first_seen: times.iter().min().copied(),
                last_seen: times.iter().max().copied(),
            });
        }
        out.sort_by(|a, b| {
            (b.messages, b.sessions)
                .cmp(&(a.messages, a.sessions))
                .then(a.name.cmp(&b.name))
        });
        out
    }
}

/// The text of a unit names are read from: a fact's subject (what it is about), a
/// turn's text.
fn mention_text(u: &Unit) -> String {
    match &u.detail {
        Some(UnitDetail::Fact(f)) => f.subject.clone(),
        _ => u.text.clone(),
    }
}

/// The names of a space indexed by how a shorter one can start or end them (see
/// [`starts_name`]): by first word and by last word (names of several words), and in
/// order (single words, whose prefixes are runs of that order). Finding the longer names
/// of a short one then costs a lookup, not a pass over every name.
struct LongerNames<'a> {
    lower: &'a [String],
    by_first: HashMap<&'a str, Vec<usize>>,
    by_last: HashMap<&'a str, Vec<usize>>,
    /// Single-word names, sorted.
    words: Vec<(&'a str, usize)>,
}

impl<'a> LongerNames<'a> {
    fn new(lower: &'a [String]) -> Self {
        let mut by_first: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut by_last: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut words = Vec::new();
        for (j, name) in lower.iter().enumerate() {
            match (name.split_once(' '), name.rsplit_once(' ')) {
                (Some((first, _)), Some((_, last))) => {
                    by_first.entry(first).or_default().push(j);
                    by_last.entry(last).or_default().push(j);
                }
                _ => words.push((name.as_str(), j)),
            }
        }
        words.sort_unstable();
        Self {
            lower,
            by_first,
            by_last,
            words,
        }
    }

    /// The one name that `short` (one word, name `i`) starts or ends, if exactly one
    /// does: what `starts_name` decides over every other name.
    fn only_one(&self, i: usize, short: &str) -> Option<usize> {
        let mut found: Option<usize> = None;
        let lists = [self.by_first.get(short), self.by_last.get(short)];
        let several = lists.into_iter().flatten().flatten().copied();
        let start = self.words.partition_point(|(w, _)| *w < short);
        let single = self.words[start..]
            .iter()
            .take_while(|(w, _)| w.starts_with(short))
            .map(|(_, j)| *j);
        for j in several.chain(single) {
            if j == i || !starts_name(&self.lower[j], short) || found == Some(j) {
                continue;
            }
            if found.is_some() {
                return None;
            }
            found = Some(j);
        }
        found
    }
}

/// Whether `long` is a longer name that `short` starts ("melanie" for "mel", "john
/// smith" for "john") or, among several words, ends.
fn starts_name(long: &str, short: &str) -> bool {
    crate::work::step(crate::work::steps::NAMES_COMPARED);
    // A single name closing a longer one: a surname, a project's own name ("Smith" of
    // "John Smith", "Atlas" of "Project Atlas").
    if long.contains(' ') && !short.contains(' ') && long.ends_with(&format!(" {short}")) {
        return true;
    }
    long.len() > short.len()
        && long.starts_with(short)
        && (long.contains(' ') || !short.contains(' '))
        && (long.as_bytes().get(short.len()) == Some(&b' ') || !long.contains(' '))
}

#[cfg(test)]
mod tests;
