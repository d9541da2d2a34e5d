//! A space's facts indexed for recall, which asks two things of every hit: which facts
//! its messages state, and each one's version chain.
//!
//! The index is a core built from every fact (maps by id, message and subject, the chain
//! order) and a short tail of facts appended since (issue 52): a write that adds facts
//! extends the tail, and one that removes facts (a forget, a rewrite) marks the core's
//! copies removed ([`Detached::followed`]), instead of building the core again, so a
//! write costs its own facts, not the space's. A chain scans the tail; past [`MAX_TAIL`]
//! facts appended or removed (or when a write adds or removes a name that aliases a
//! person) the core is built again from the whole list.
use super::{
    aliases, chain_order, detail, is_about, subject_match, Aliases, Subject, SubjectMatch,
};
use cairn_core::{FactCategory, Unit};
use std::collections::{HashMap, HashSet};
use std::mem::size_of;
use std::sync::Arc;

/// Facts a tail holds at most before the core is built again: a chain request scans
/// them, so this bounds what an unbuilt append costs each later request. It bounds the
/// core's removed facts too (each is a step of every position's lookup).
pub const MAX_TAIL: usize = 512;

/// The facts of a space, indexed (see the module's documentation).
pub struct FactIndex {
    facts: Arc<Vec<Unit>>,
    core: Arc<Core>,
    /// The core's positions (as it was built) of the facts removed since, ascending: the
    /// list no longer holds them, and the core's other positions moved down past them.
    removed: Vec<usize>,
    /// `facts[live core len..]` by id and by message; by subject, they are scanned.
    tail_by_id: HashMap<String, usize>,
    tail_by_message: HashMap<(String, String), Vec<usize>>,
}

/// A [`FactIndex`] without its facts: what it knew of them.
pub struct Detached {
    len: usize,
    first: Option<String>,
    last: Option<String>,
    core: Arc<Core>,
    removed: Vec<usize>,
    tail_by_id: HashMap<String, usize>,
    tail_by_message: HashMap<(String, String), Vec<usize>>,
}

impl Detached {
    /// The index of `facts`, which must be the detached index's facts in order, without
    /// the ones at `removed` (their positions in the detached list, ascending, with the
    /// facts themselves), with more appended after them (or none): the core kept, its
    /// removed facts marked, the tail following the list. `None` when the core must be
    /// built again instead: the tail or the removed facts would pass [`MAX_TAIL`], a fact
    /// added or removed names a person's relative (it changes the aliases every subject
    /// is read with), or `facts` does not start as the index's did.
    pub fn followed(self, facts: Arc<Vec<Unit>>, removed: &[(usize, Unit)]) -> Option<FactIndex> {
        let kept = self.len.checked_sub(removed.len())?;
        let gone = |at: usize| removed.iter().any(|(p, _)| *p == at);
        let ends_alike = |at: usize, id: &Option<String>, now: Option<&Unit>| {
            gone(at) || now.map(|u| &u.id) == id.as_ref()
        };
        let starts_alike = facts.len() >= kept
            && (self.len == 0
                || (ends_alike(0, &self.first, facts.first())
                    && ends_alike(self.len - 1, &self.last, facts[..kept].last())));
        if !starts_alike {
            return None;
        }
        let removed_units = removed.iter().map(|(_, u)| u);
        if !aliases(&facts[kept..]).is_empty() || !aliases(removed_units).is_empty() {
            return None;
        }
        let mut index = FactIndex {
            facts,
            core: self.core,
            removed: self.removed,
            tail_by_id: self.tail_by_id,
            tail_by_message: self.tail_by_message,
        };
        if removed.is_empty() {
            if index.tail_len() > MAX_TAIL {
                return None;
            }
            for (i, f) in index.facts[kept..].iter().enumerate() {
                index.tail_by_id.insert(f.id.clone(), kept + i);
                if let Some(key) = message_of(f) {
                    index.tail_by_message.entry(key).or_default().push(kept + i);
                }
            }
            return Some(index);
        }
        // Removed core facts are marked at the core's own positions; the tail is small
        // and indexed again.
        let live = index.live_core_len();
        let built: Vec<usize> = removed
            .iter()
            .filter(|(at, _)| *at < live)
            .map(|(at, _)| index.built_position(*at))
            .collect();
        for b in built {
            let place = index.removed.partition_point(|&r| r < b);
            index.removed.insert(place, b);
        }
        if index.removed.len() > MAX_TAIL || index.tail_len() > MAX_TAIL {
            return None;
        }
        index.index_tail();
        Some(index)
    }
}
/// The index of the first `len` facts of a list.
struct Core {
    len: usize,
    by_id: HashMap<String, usize>,
    by_message: HashMap<(String, String), Vec<usize>>,
    /// Per end-user partition, its distinct subjects with the facts filed under each (a
    /// chain never leaves its partition, so finding one reads only its partition's
    /// subjects, however many users the space holds).
    by_subject: HashMap<Option<String>, SubjectIndex>,
    /// Each fact's place in chain order (time, then id), so a chain of thousands is
    /// put in order by integers.
    place: Vec<usize>,
    aliases: Aliases,
    /// Person (lowercased, as facts name them) -> the partitions holding facts about
    /// them, with the positions of those facts (a partition is known as long as one of
    /// them is not removed).
    persons: HashMap<String, HashMap<Option<String>, Vec<usize>>>,
    /// What its maps hold, about (see [`FactIndex::approx_bytes`]), counted once built.
    bytes: usize,
}

/// The message a fact is stated in, the key of `by_message`.
fn message_of(f: &Unit) -> Option<(String, String)> {
    let (s, m) = (&f.provenance.session_id, f.provenance.message_ids.first());
    Some((s.clone()?, m?.clone()))
}

impl Core {
    fn new(facts: &[Unit]) -> Self {
        let mut by_id = HashMap::new();
        let mut by_message: HashMap<(String, String), Vec<usize>> = HashMap::new();
        let mut subjects: HashMap<(Option<String>, Subject), Vec<usize>> = HashMap::new();
        let aliases = aliases(facts);
        let mut persons: HashMap<String, HashMap<Option<String>, Vec<usize>>> = HashMap::new();
        for (i, f) in facts.iter().enumerate() {
            by_id.insert(f.id.clone(), i);
            if let Some(p) = detail(f).and_then(|d| d.person.as_deref()) {
                let partitions = persons.entry(p.to_lowercase()).or_default();
                match partitions.get_mut(&f.provenance.partition) {
                    Some(at) => at.push(i),
                    None => {
                        partitions.insert(f.provenance.partition.clone(), vec![i]);
                    }
                }
            }
            if let Some(key) = message_of(f) {
                by_message.entry(key).or_default().push(i);
            }
            if let Some(d) = detail(f) {
                let partition = f.provenance.partition.as_deref();
                let key = (
                    f.provenance.partition.clone(),
                    Subject::of_in(d, partition, &aliases),
                );
                subjects.entry(key).or_default().push(i);
            }
        }
        let place = chain_places(facts);
        let mut per_partition: HashMap<Option<String>, Vec<(Subject, Vec<usize>)>> = HashMap::new();
        for ((partition, subject), ids) in subjects {
            per_partition
                .entry(partition)
                .or_default()
                .push((subject, ids));
        }
        let by_subject = per_partition
            .into_iter()
            .map(|(partition, subjects)| (partition, SubjectIndex::new(subjects)))
            .collect();
        // Subjects and aliases: a subject, its key words and a few list slots per fact,
        // counted by its text rather than walked.
        let subjects: usize = facts
            .iter()
            .map(|f| 4 * size_of::<String>() + 4 * size_of::<usize>() + f.key.len())
            .sum();
        let bytes = id_bytes(&by_id)
            + message_bytes(&by_message)
            + subjects
            + person_bytes(&persons)
            + place.len() * size_of::<usize>();
        Self {
            len: facts.len(),
            by_id,
            by_message,
            by_subject,
            place,
            aliases,
            persons,
            bytes,
        }
    }
}

/// Each fact's place in chain order (time, then id).
fn chain_places(facts: &[Unit]) -> Vec<usize> {
    let mut in_order: Vec<usize> = (0..facts.len()).collect();
    in_order.sort_by(|&a, &b| chain_order(&facts[a], &facts[b]));
    let mut place = vec![0; facts.len()];
    for (p, &i) in in_order.iter().enumerate() {
        place[i] = p;
    }
    place
}

fn person_bytes(persons: &HashMap<String, HashMap<Option<String>, Vec<usize>>>) -> usize {
    persons
        .iter()
        .map(|(p, ps)| {
            p.len()
                + ps.iter()
                    .map(|(x, at)| {
                        size_of::<(Option<String>, Vec<usize>)>()
                            + x.as_ref().map_or(0, String::len)
                            + at.len() * size_of::<usize>()
                    })
                    .sum::<usize>()
        })
        .sum()
}

fn id_bytes(m: &HashMap<String, usize>) -> usize {
    m.keys()
        .map(|k| size_of::<(String, usize)>() + k.len())
        .sum()
}

fn message_bytes(m: &HashMap<(String, String), Vec<usize>>) -> usize {
    m.iter()
        .map(|((s, m), v)| {
            size_of::<((String, String), Vec<usize>)>()
                + s.len()
                + m.len()
                + v.len() * size_of::<usize>()
        })
        .sum()
}

impl FactIndex {
    pub fn new(facts: Arc<Vec<Unit>>) -> Self {
        Self {
            core: Arc::new(Core::new(&facts)),
            facts,
            removed: Vec::new(),
            tail_by_id: HashMap::new(),
            tail_by_message: HashMap::new(),
        }
    }

    /// The index without its fact list, to follow the list when a write changes it in
    /// place (the list is then held by the cache alone): see [`Detached::followed`].
    pub fn detach(index: Arc<FactIndex>) -> Detached {
        let FactIndex {
            facts,
            core,
            removed,
            tail_by_id,
            tail_by_message,
        } = Arc::try_unwrap(index).unwrap_or_else(|shared| FactIndex {
            facts: shared.facts.clone(),
            core: shared.core.clone(),
            removed: shared.removed.clone(),
            tail_by_id: shared.tail_by_id.clone(),
            tail_by_message: shared.tail_by_message.clone(),
        });
        Detached {
            len: facts.len(),
            first: facts.first().map(|u| u.id.clone()),
            last: facts.last().map(|u| u.id.clone()),
            core,
            removed,
            tail_by_id,
            tail_by_message,
        }
    }

    /// The core's facts the list still holds: they come first in it, the tail after.
    fn live_core_len(&self) -> usize {
        self.core.len - self.removed.len()
    }

    fn tail_len(&self) -> usize {
        self.facts.len() - self.live_core_len()
    }

    /// Where the core's fact built at `built` is in the list now; `None`: removed.
    fn core_at(&self, built: usize) -> Option<usize> {
        match self.removed.binary_search(&built) {
            Ok(_) => None,
            Err(before) => Some(built - before),
        }
    }

    /// The core's position (as built) of the list's fact at `at`, a core fact.
    fn built_position(&self, at: usize) -> usize {
        let mut built = at;
        for &r in &self.removed {
            if r > built {
                break;
            }
            built += 1;
        }
        built
    }

    /// The core's fact built at `built`, unless removed.
    fn core_fact(&self, built: usize) -> Option<&Unit> {
        self.core_at(built).map(|at| &self.facts[at])
    }

    /// Indexes the tail again, whole (it moved: facts before it were removed).
    fn index_tail(&mut self) {
        let from = self.live_core_len();
        self.tail_by_id.clear();
        self.tail_by_message.clear();
        for (i, f) in self.facts[from..].iter().enumerate() {
            self.tail_by_id.insert(f.id.clone(), from + i);
            if let Some(key) = message_of(f) {
                self.tail_by_message.entry(key).or_default().push(from + i);
            }
        }
    }

    /// About how many bytes the index holds beyond the facts it shares with the cached
    /// fact list (ids, messages and subjects by fact, their slots), what the engine's
    /// derived cache counts it as (`engine/cache.rs`).
    pub fn approx_bytes(&self) -> usize {
        size_of::<Self>()
            + self.core.bytes
            + self.removed.len() * size_of::<usize>()
            + id_bytes(&self.tail_by_id)
            + message_bytes(&self.tail_by_message)
    }

    /// The facts it indexes.
    pub fn facts(&self) -> &Arc<Vec<Unit>> {
        &self.facts
    }

    /// Whether this index was built from `facts` (the same read of the store).
    pub fn is_of(&self, facts: &Arc<Vec<Unit>>) -> bool {
        Arc::ptr_eq(&self.facts, facts)
    }

    /// The fact with this id: the core's copy unless it was removed, else the tail's (a
    /// session deleted and written again reuses its facts' ids).
    pub fn get(&self, id: &str) -> Option<&Unit> {
        let core = self
            .core
            .by_id
            .get(id)
            .and_then(|&built| self.core_fact(built));
        core.or_else(|| self.tail_by_id.get(id).map(|&i| &self.facts[i]))
    }

    /// Facts stated by one message.
    pub fn stated_in<'a>(&'a self, session: &str, message: &str) -> impl Iterator<Item = &'a Unit> {
        let key = (session.to_string(), message.to_string());
        let core = self.core.by_message.get(&key).into_iter().flatten();
        let tail = self.tail_by_message.get(&key).into_iter().flatten();
        core.filter_map(|&built| self.core_fact(built))
            .chain(tail.map(|&i| &self.facts[i]))
    }

    /// Up to two of the end-user partitions holding a fact about `person` (as a fact
    /// names them, any case): enough to tell none, one (which) and several apart, read
    /// without walking them.
    pub fn partitions_of(&self, person: &str) -> Vec<Option<&str>> {
        let person = person.to_lowercase();
        let mut out: Vec<Option<&str>> = Vec::new();
        let core = self
            .core
            .persons
            .get(&person)
            .into_iter()
            .flatten()
            .filter(|(_, at)| at.iter().any(|&built| self.core_at(built).is_some()))
            .map(|(p, _)| p);
        let tail = self.facts[self.live_core_len()..]
            .iter()
            .filter(|f| is_about(f, &person))
            .map(|f| &f.provenance.partition);
        for p in core.chain(tail).map(Option::as_deref) {
            if !out.contains(&p) {
                out.push(p);
                if out.len() == 2 {
                    break;
                }
            }
        }
        out
    }

    /// Every fact about `person` (as facts name them, any case) in `partition`, in
    /// the list's order, found without reading other persons' facts.
    pub fn of_person(&self, partition: Option<&str>, person: &str) -> Vec<&Unit> {
        let person = person.to_lowercase();
        let core = self
            .core
            .persons
            .get(&person)
            .and_then(|p| p.get(&partition.map(str::to_string)))
            .into_iter()
            .flatten()
            .filter_map(|&built| self.core_fact(built));
        let tail = self.facts[self.live_core_len()..]
            .iter()
            .filter(|f| f.provenance.partition.as_deref() == partition && is_about(f, &person));
        core.chain(tail).collect()
    }

    /// One fact of each subject of `category` about `person` in `partition`, then each
    /// such fact appended since the core was built: what [`FactIndex::chain_of`] needs
    /// to list those chains, found without reading other subjects.
    pub fn about_in(
        &self,
        partition: Option<&str>,
        person: &str,
        category: FactCategory,
    ) -> Vec<&Unit> {
        let person = person.to_lowercase();
        let key = Some((person.clone(), category));
        let mut out: Vec<&Unit> = Vec::new();
        if let Some(subjects) = self.core.by_subject.get(&partition.map(str::to_string)) {
            if let Some(p) = subjects.by_person.get(&key) {
                out.extend(p.all.iter().filter_map(|&i| {
                    let facts = &subjects.subjects[i].1;
                    facts.iter().find_map(|&built| self.core_fact(built))
                }));
            }
        }
        out.extend(self.facts[self.live_core_len()..].iter().filter(|f| {
            f.provenance.partition.as_deref() == partition
                && is_about(f, &person)
                && detail(f).and_then(|d| d.category) == Some(category)
        }));
        out
    }

    /// The chain `fact` belongs to, oldest first, among the facts `visible` keeps (those
    /// the request sees): every fact of `fact`'s end-user partition about the same
    /// subject (see [`subject_match`]; a subject that only matches within a group joins
    /// facts of `fact`'s group). A chain never joins two partitions: one user's value
    /// never supersedes another's.
    pub fn chain_of(&self, fact: &Unit, visible: impl Fn(&Unit) -> bool) -> Vec<&Unit> {
        let Some(d) = detail(fact) else {
            return Vec::new();
        };
        let core = &self.core;
        let partition = fact.provenance.partition.as_deref();
        let subject = Subject::of_in(d, partition, &core.aliases);
        let joins = |m: SubjectMatch, f: &Unit| {
            m != SubjectMatch::No
                && (m == SubjectMatch::Same || f.provenance.group == fact.provenance.group)
                && visible(f)
        };
        // Each fact's place in the list now, with its place in chain order when a core fact.
        let mut chain: Vec<(usize, usize)> = Vec::new();
        if let Some(subjects) = core.by_subject.get(&fact.provenance.partition) {
            for (other, ids) in subjects.candidates(&subject) {
                let m = subject_match(&subject, other);
                chain.extend(ids.iter().filter_map(|&built| {
                    let at = self.core_at(built)?;
                    joins(m, &self.facts[at]).then_some((at, core.place[built]))
                }));
            }
        }
        let in_core = chain.len();
        let from = self.live_core_len();
        for (i, f) in self.facts.iter().enumerate().skip(from) {
            let Some(d) = detail(f).filter(|_| f.provenance.partition.as_deref() == partition)
            else {
                continue;
            };
            let other = Subject::of_in(d, partition, &core.aliases);
            if joins(subject_match(&subject, &other), f) {
                chain.push((i, 0));
            }
        }
        if chain.len() == in_core {
            chain.sort_unstable_by_key(|&(_, place)| place);
        } else {
            chain.sort_by(|&(a, _), &(b, _)| chain_order(&self.facts[a], &self.facts[b]));
        }
        chain.into_iter().map(|(i, _)| &self.facts[i]).collect()
    }
}

/// One partition's distinct subjects, indexed so that the subjects that may match one
/// (see [`subject_match`]: the same person, and one key holding every word of the other,
/// or both keys empty) are found in a few lists: listing every subject's chain then
/// costs what the subjects cost, not their square (issue 38: 3x CPU per doubling of a
/// space's speakers, each with a personal fact).
pub(super) struct SubjectIndex {
    subjects: Vec<(Subject, Vec<usize>)>,
    by_person: HashMap<Option<(String, FactCategory)>, PersonSubjects>,
}

/// The subjects of one person (or of things, `None`) by their key words.
#[derive(Default)]
struct PersonSubjects {
    /// Key word -> the subjects whose key holds it: a key holding every word of another
    /// is in the list of each of those words.
    with_word: HashMap<String, Vec<usize>>,
    /// Key word -> the subjects whose rarest key word it is: a key whose words all lie
    /// in another key is in the list of one of that key's words.
    by_rarest: HashMap<String, Vec<usize>>,
    /// The subjects with an empty key.
    empty: Vec<usize>,
    /// Every subject of the person and category.
    all: Vec<usize>,
}

impl SubjectIndex {
    pub(super) fn new(subjects: Vec<(Subject, Vec<usize>)>) -> Self {
        let mut by_person: HashMap<Option<(String, FactCategory)>, PersonSubjects> = HashMap::new();
        for (i, (s, _)) in subjects.iter().enumerate() {
            let p = by_person.entry(s.person.clone()).or_default();
            p.all.push(i);
            if s.key.is_empty() {
                p.empty.push(i);
            }
            let words: HashSet<&String> = s.key.iter().collect();
            for w in words {
                p.with_word.entry(w.clone()).or_default().push(i);
            }
        }
        for (i, (s, _)) in subjects.iter().enumerate() {
            let Some(p) = by_person.get_mut(&s.person) else {
                continue;
            };
            let holding = |w: &String| p.with_word.get(w).map_or(0, Vec::len);
            let rarest = s
                .key
                .iter()
                .min_by_key(|w| (holding(w), w.as_str()))
                .cloned();
            if let Some(w) = rarest {
                p.by_rarest.entry(w).or_default().push(i);
            }
        }
        Self {
            subjects,
            by_person,
        }
    }

    /// Every subject that may match `s` (all that [`subject_match`] accepts, and a few
    /// it refuses), each once.
    pub(super) fn candidates(&self, s: &Subject) -> impl Iterator<Item = &(Subject, Vec<usize>)> {
        let mut found: Vec<usize> = Vec::new();
        if let Some(p) = self.by_person.get(&s.person) {
            if s.key.is_empty() {
                found.extend(&p.empty);
            } else {
                // Keys holding all of `s`'s words: the shortest list of one of them (none
                // when a word is in no key).
                let lists: Option<Vec<&Vec<usize>>> =
                    s.key.iter().map(|w| p.with_word.get(w)).collect();
                if let Some(shortest) = lists.into_iter().flatten().min_by_key(|l| l.len()) {
                    found.extend(shortest);
                }
                // Keys whose words all lie in `s`'s key.
                for w in &s.key {
                    found.extend(p.by_rarest.get(w).into_iter().flatten());
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        found.into_iter().map(|i| &self.subjects[i])
    }
}
