//! A space's profiles as sums of its contributions (issue 52): per end-user partition,
//! each speaker's contributions summed, and how widely each word is used, kept so that
//! a contribution can be added or taken out again. A write then moves the space's
//! profiles by what it wrote and removed (`engine/advance.rs`), and a profile costs its
//! speaker's sums, not a pass over every contribution of the space.
//!
//! Built from scratch ([`Profiles::new`]) or kept by writes, the sums are the same: a
//! contribution's place is an increasing number (its position when built, the next
//! number when added), and what a profile lists in order (groups, evidence) is read in
//! that order, the order of the contributions in the space's list.
use crate::budget::{OutOfTime, Ticker};
use cairn_core::{Evidence, SpeakerProfile, SpeakerStats, Style, Timestamp, Unit, UnitDetail};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Weak};

/// The sums of a space's (or a view's) profile contributions, per end-user partition.
#[derive(Clone, Default)]
pub struct Profiles {
    /// The list these sums follow, when summed from a shared one ([`Profiles::of`]):
    /// sums kept by writes are moved by what the list's own advance removed, which only
    /// holds for sums of that list.
    list: Weak<Vec<Unit>>,
    partitions: BTreeMap<Option<String>, Partition>,
    /// Each contribution's place, by unit id.
    places: HashMap<String, u64>,
    next: u64,
}

/// One partition's contributions: summed per speaker, and each word's spread.
#[derive(Clone, Default)]
struct Partition {
    speakers: HashMap<String, Speaker>,
    words: HashMap<String, WordUse>,
    contributions: u32,
    /// Lowercased parts of the speakers' names -> how many speakers' names hold it.
    names: HashMap<String, u32>,
}

/// How widely a word is used in a partition.
#[derive(Clone, Copy, Default)]
struct WordUse {
    speakers: u32,
    contributions: u32,
}

/// One speaker's contributions: all of them, and those made of what others said of
/// them (no message of their own), which a longer name's profile collects too.
#[derive(Clone, Default)]
struct Speaker {
    all: Tally,
    described: Tally,
}

/// Contributions summed so that one can be taken out again.
#[derive(Clone, Default)]
struct Tally {
    contributions: u32,
    messages: u32,
    words: u64,
    questions: u32,
    exclamations: u32,
    emoji: u32,
    informal: u32,
    formal: u32,
    directive: u32,
    collaborative: u32,
    /// Whole seconds, so sums and differences are exact.
    reply_seconds: f64,
    replies: u32,
    firsts: BTreeMap<Timestamp, u32>,
    lasts: BTreeMap<Timestamp, u32>,
    /// Group -> the places of the contributions in it.
    groups: HashMap<String, BTreeSet<u64>>,
    /// Word -> (uses, contributions using it).
    terms: HashMap<String, (u32, u32)>,
    /// Place -> the roles and skills a contribution gives (only those giving any).
    evidence: BTreeMap<u64, (Vec<Evidence>, Vec<Evidence>)>,
}

fn stats_of(u: &Unit) -> Option<&SpeakerStats> {
    crate::work::step(crate::work::steps::CONTRIBUTIONS_READ);
    match &u.detail {
        Some(UnitDetail::Speaker(s)) => Some(s),
        _ => None,
    }
}

/// The value of `key`, made when absent: the key is copied only then (most additions
/// find their word or speaker already there).
fn slot<'m, V: Default>(map: &'m mut HashMap<String, V>, key: &str) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.to_string(), V::default());
    }
    map.get_mut(key).expect("inserted above")
}

fn count(multiset: &mut BTreeMap<Timestamp, u32>, at: Option<Timestamp>, add: bool) {
    let Some(at) = at else { return };
    let n = multiset.entry(at).or_default();
    match add {
        true => *n += 1,
        false => {
            *n = n.saturating_sub(1);
            if *n == 0 {
                multiset.remove(&at);
            }
        }
    }
}

impl Tally {
    /// Adds (or, `add == false`, takes out) the contribution `s` at `place`. Returns
    /// the words whose count of contributions went from 0 to 1 (or 1 to 0).
    fn apply<'s>(&mut self, s: &'s SpeakerStats, place: u64, add: bool) -> Vec<&'s str> {
        fn step<T: std::ops::AddAssign + std::ops::SubAssign>(v: &mut T, by: T, add: bool) {
            match add {
                true => *v += by,
                false => *v -= by,
            }
        }
        step(&mut self.contributions, 1, add);
        step(&mut self.messages, s.messages, add);
        step(&mut self.words, s.words, add);
        step(&mut self.questions, s.questions, add);
        step(&mut self.exclamations, s.exclamations, add);
        step(&mut self.emoji, s.emoji, add);
        step(&mut self.informal, s.informal, add);
        step(&mut self.formal, s.formal, add);
        step(&mut self.directive, s.directive, add);
        step(&mut self.collaborative, s.collaborative, add);
        step(&mut self.reply_seconds, s.reply_seconds, add);
        step(&mut self.replies, s.replies, add);
        count(&mut self.firsts, s.first, add);
        count(&mut self.lasts, s.last, add);
        for g in &s.groups {
            let places = self.groups.entry(g.clone()).or_default();
            match add {
                true => places.insert(place),
                false => places.remove(&place),
            };
            if places.is_empty() {
                self.groups.remove(g);
            }
        }
        let mut edges = Vec::new();
        for (w, &n) in &s.terms {
            let t = slot(&mut self.terms, w);
            step(&mut t.0, n, add);
            step(&mut t.1, 1, add);
            if t.1 == u32::from(add) {
                edges.push(w.as_str());
            }
            if t.1 == 0 {
                self.terms.remove(w);
            }
        }
        if !s.roles.is_empty() || !s.skills.is_empty() {
            match add {
                true => self
                    .evidence
                    .insert(place, (s.roles.clone(), s.skills.clone())),
                false => self.evidence.remove(&place),
            };
        }
        edges
    }
}

impl Partition {
    fn apply(&mut self, s: &SpeakerStats, place: u64, add: bool) {
        let speaker = slot(&mut self.speakers, &s.speaker);
        if s.messages == 0 {
            speaker.described.apply(s, place, add);
        }
        for w in speaker.all.apply(s, place, add) {
            let u = slot(&mut self.words, w);
            match add {
                true => u.speakers += 1,
                false => u.speakers -= 1,
            }
        }
        let (joined, left) = (
            add && speaker.all.contributions == 1,
            speaker.all.contributions == 0,
        );
        if left {
            self.speakers.remove(&s.speaker);
        }
        for w in &s.terms {
            let u = slot(&mut self.words, w.0);
            match add {
                true => u.contributions += 1,
                false => u.contributions -= 1,
            }
            if u.contributions == 0 {
                self.words.remove(w.0);
            }
        }
        match add {
            true => self.contributions += 1,
            false => self.contributions -= 1,
        }
        if joined || left {
            for part in s.speaker.split_whitespace() {
                let n = self.names.entry(part.to_lowercase()).or_default();
                match joined {
                    true => *n += 1,
                    false => *n -= 1,
                }
                if *n == 0 {
                    self.names.remove(&part.to_lowercase());
                }
            }
        }
    }

    /// The profile of `speaker`; a speaker named "Ana Diaz" also collects what was said
    /// of "Ana". `None` when nothing is known.
    fn profile(&self, speaker: &str) -> Option<SpeakerProfile> {
        let first_name = speaker.split_whitespace().next().unwrap_or(speaker);
        let own = self.speakers.get(speaker).map(|s| &s.all);
        let described = (first_name != speaker)
            .then(|| self.speakers.get(first_name).map(|s| &s.described))
            .flatten()
            .filter(|d| d.contributions > 0);
        let tallies: Vec<&Tally> = own.into_iter().chain(described).collect();
        if tallies.is_empty() {
            return None;
        }
        let t = summed(speaker, &tallies);
        let style = style(&t);
        let roles = rank_evidence(&t.roles, 3);
        let skills = rank_evidence(&t.skills, 6);
        let topics = self.topics(&tallies);
        let summary = summarize(&t, &style, &roles, &skills, &topics);
        Some(SpeakerProfile {
            speaker: speaker.to_string(),
            messages: t.messages,
            groups: t.groups,
            first_seen: t.first,
            last_seen: t.last,
            style,
            roles,
            skills,
            topics,
            facts: Vec::new(),
            summary,
        })
    }

    /// Words these tallies (one speaker's) use far more than others and in few of the
    /// partition's conversations: frequency times inverse speaker frequency times
    /// inverse frequency over the contributions (a speaker's words in one session). A
    /// word said in every session ("thanks", "great") or by everyone is no topic, and
    /// neither is the name of someone the speaker talks to.
    fn topics(&self, tallies: &[&Tally]) -> Vec<String> {
        let idf = |n: u32, df: u32| ((1 + n) as f32 / df.max(1) as f32).ln();
        let speakers = self.speakers.len() as u32;
        let score = |w: &str, n: u32| {
            let u = self.words.get(w).copied().unwrap_or(WordUse {
                speakers: 1,
                contributions: 1,
            });
            n as f32 * idf(speakers, u.speakers) * idf(self.contributions, u.contributions)
        };
        let uses = |w: &str| {
            tallies
                .iter()
                .filter_map(|t| t.terms.get(w))
                .map(|t| t.0)
                .sum()
        };
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut scored: Vec<(f32, &str)> = Vec::new();
        for t in tallies {
            for w in t.terms.keys() {
                if !seen.insert(w) || self.names.contains_key(w.as_str()) {
                    continue;
                }
                let n: u32 = match tallies.len() {
                    1 => t.terms[w].0,
                    _ => uses(w),
                };
                let s = score(w, n);
                if n >= 2 && s > 0.0 {
                    scored.push((s, w));
                }
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored
            .into_iter()
            .take(8)
            .map(|(_, w)| w.to_string())
            .collect()
    }

    /// Everyone who wrote a message, in name order.
    fn writers(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .speakers
            .iter()
            .filter(|(_, s)| s.all.messages > 0)
            .map(|(name, _)| name.as_str())
            .collect();
        names.sort_unstable();
        names
    }
}

/// One profile's tallies summed into the stats a profile is read from (without terms:
/// topics are read from the tallies).
fn summed(speaker: &str, tallies: &[&Tally]) -> SpeakerStats {
    let mut t = SpeakerStats {
        speaker: speaker.to_string(),
        ..Default::default()
    };
    let mut groups: BTreeSet<(u64, &str)> = BTreeSet::new();
    let mut evidence: BTreeMap<u64, &(Vec<Evidence>, Vec<Evidence>)> = BTreeMap::new();
    for p in tallies {
        t.messages += p.messages;
        t.words += p.words;
        t.questions += p.questions;
        t.exclamations += p.exclamations;
        t.emoji += p.emoji;
        t.informal += p.informal;
        t.formal += p.formal;
        t.directive += p.directive;
        t.collaborative += p.collaborative;
        t.reply_seconds += p.reply_seconds;
        t.replies += p.replies;
        t.first = [t.first, p.firsts.keys().next().copied()]
            .into_iter()
            .flatten()
            .min();
        t.last = t.last.max(p.lasts.keys().next_back().copied());
        for (g, places) in &p.groups {
            if let Some(&first) = places.first() {
                groups.insert((first, g));
            }
        }
        evidence.extend(p.evidence.iter().map(|(place, e)| (*place, e)));
    }
    for (_, g) in groups {
        if !t.groups.iter().any(|h| h == g) {
            t.groups.push(g.to_string());
        }
    }
    for (roles, skills) in evidence.into_values() {
        t.roles.extend(roles.iter().cloned());
        t.skills.extend(skills.iter().cloned());
    }
    t
}

impl Profiles {
    /// The sums of `units`' profile contributions (other units are passed over).
    pub fn new(units: &[Unit]) -> Self {
        let mut p = Self::default();
        for u in units {
            p.add(u);
        }
        p
    }

    /// The sums of a shared list, which they follow (see [`Profiles::follows`]).
    pub fn of(list: &Arc<Vec<Unit>>) -> Self {
        let mut p = Self::new(list);
        p.list = Arc::downgrade(list);
        p
    }

    /// Whether these are the sums of `list` (not of another read of it).
    pub fn follows(&self, list: &Arc<Vec<Unit>>) -> bool {
        std::ptr::eq(self.list.as_ptr(), Arc::as_ptr(list))
    }

    /// Marks these sums as those of `list`: the list they followed after a write moved
    /// both by the same units.
    pub fn now_of(&mut self, list: &Arc<Vec<Unit>>) {
        self.list = Arc::downgrade(list);
    }

    /// Adds a contribution, placed after every one held (one held already is passed
    /// over).
    pub fn add(&mut self, u: &Unit) {
        let Some(s) = stats_of(u) else { return };
        // A unit is held once: a write that rewrites one takes its old copy out first.
        if self.places.contains_key(&u.id) {
            return;
        }
        let place = self.next;
        self.next += 1;
        self.places.insert(u.id.clone(), place);
        self.partition(u).apply(s, place, true);
    }

    /// Takes a contribution out (one not held is passed over).
    pub fn remove(&mut self, u: &Unit) {
        let Some(s) = stats_of(u) else { return };
        let Some(place) = self.places.remove(&u.id) else {
            return;
        };
        let key = &u.provenance.partition;
        if let Some(p) = self.partitions.get_mut(key) {
            p.apply(s, place, false);
            if p.contributions == 0 {
                self.partitions.remove(key);
            }
        }
    }

    fn partition(&mut self, u: &Unit) -> &mut Partition {
        self.partitions
            .entry(u.provenance.partition.clone())
            .or_default()
    }

    /// The profile of `speaker` in each partition that knows them, with the partition.
    pub fn profiles(&self, speaker: &str) -> Vec<(SpeakerProfile, Option<&str>)> {
        self.partitions
            .iter()
            .filter_map(|(key, p)| Some((p.profile(speaker)?, key.as_deref())))
            .collect()
    }

    /// The partitions held, in order (`None` is the space's own).
    pub fn partitions(&self) -> impl Iterator<Item = Option<&str>> {
        self.partitions.keys().map(Option::as_deref)
    }

    /// Everyone who wrote in or was described in any partition, sorted, once each.
    pub fn speakers(&self) -> Vec<String> {
        let names: BTreeSet<&str> = self
            .partitions
            .values()
            .flat_map(|p| p.speakers.keys().map(String::as_str))
            .collect();
        names.into_iter().map(String::from).collect()
    }

    /// For a "who ..." question that names nobody: the speaker of `partition` whose
    /// roles, skills and topics share the most words with the question (`None` when
    /// none shares any).
    pub fn best_matching_person(
        &self,
        query: &str,
        partition: Option<&str>,
    ) -> Result<Option<SpeakerProfile>, OutOfTime> {
        let asks_who = query
            .split_whitespace()
            .next()
            .is_some_and(|w| matches!(w.to_lowercase().as_str(), "who" | "whom" | "whose"));
        let Some(p) = self.partitions.get(&partition.map(str::to_string)) else {
            return Ok(None);
        };
        if !asks_who {
            return Ok(None);
        }
        let wanted = crate::text::content_words(query);
        let mut best: Option<(usize, SpeakerProfile)> = None;
        let mut tick = Ticker::new("profiles");
        for name in p.writers() {
            tick.tick()?;
            let Some(p) = p.profile(name) else {
                continue;
            };
            let said: Vec<&str> = p
                .roles
                .iter()
                .chain(&p.skills)
                .map(|e| e.what.as_str())
                .chain(p.topics.iter().map(String::as_str))
                .collect();
            let words = crate::text::words(&said.join(" "));
            let score = wanted.iter().filter(|w| words.contains(w)).count();
            if score > 0 && best.as_ref().is_none_or(|(b, _)| score > *b) {
                best = Some((score, p));
            }
        }
        Ok(best.map(|(_, p)| p))
    }

    /// About how many bytes the sums hold (for the derived cache's budget).
    pub fn approx_bytes(&self) -> usize {
        const ENTRY: usize = 64;
        let tally = |t: &Tally| {
            (t.terms.len() + t.groups.len() + t.firsts.len() + t.lasts.len() + t.evidence.len())
                * ENTRY
        };
        self.places.len() * ENTRY
            + self
                .partitions
                .values()
                .map(|p| {
                    (p.words.len() + p.names.len()) * ENTRY
                        + p.speakers
                            .values()
                            .map(|s| tally(&s.all) + tally(&s.described))
                            .sum::<usize>()
                })
                .sum::<usize>()
    }
}

fn rank_evidence(items: &[Evidence], n: usize) -> Vec<Evidence> {
    let mut counts: Vec<(usize, &Evidence)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for e in items {
        match at.entry(e.what.to_lowercase()) {
            std::collections::hash_map::Entry::Occupied(i) => counts[*i.get()].0 += 1,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(counts.len());
                counts.push((1, e));
            }
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.0));
    counts.into_iter().take(n).map(|c| c.1.clone()).collect()
}

fn rate(n: u32, of: u32) -> f32 {
    if of == 0 {
        0.0
    } else {
        n as f32 / of as f32
    }
}

fn style(t: &SpeakerStats) -> Style {
    let m = t.messages;
    let mut s = Style {
        avg_words: if m == 0 {
            0.0
        } else {
            t.words as f32 / m as f32
        },
        question_rate: rate(t.questions, m),
        exclamation_rate: rate(t.exclamations, m),
        emoji_rate: rate(t.emoji, m),
        formality: rate(t.formal, m) - rate(t.informal, m),
        directive_rate: rate(t.directive, m),
        collaborative_rate: rate(t.collaborative, m),
        avg_reply_seconds: (t.replies > 0).then(|| (t.reply_seconds / t.replies as f64) as f32),
        traits: Vec::new(),
    };
    if m == 0 {
        return s;
    }
    let mut traits = Vec::new();
    if s.avg_words < 8.0 {
        traits.push("brief (short messages)");
    } else if s.avg_words > 25.0 {
        traits.push("detailed (long messages)");
    }
    if s.formality > 0.15 {
        traits.push("formal");
    } else if s.formality < -0.15 {
        traits.push("casual");
    }
    if s.directive_rate > 0.15 && s.directive_rate > s.collaborative_rate {
        traits.push("directive (gives instructions)");
    } else if s.collaborative_rate > 0.15 && s.collaborative_rate >= s.directive_rate {
        traits.push("collaborative (invites input)");
    }
    if s.question_rate > 0.3 {
        traits.push("asks many questions");
    }
    if s.exclamation_rate > 0.3 {
        traits.push("enthusiastic (exclamation marks)");
    }
    if s.emoji_rate > 0.2 {
        traits.push("uses emoji");
    }
    match s.avg_reply_seconds {
        Some(r) if r < 120.0 => traits.push("quick to reply"),
        Some(r) if r > 1800.0 => traits.push("slow to reply"),
        _ => {}
    }
    s.traits = traits.into_iter().map(String::from).collect();
    s
}

fn summarize(
    t: &SpeakerStats,
    style: &Style,
    roles: &[Evidence],
    skills: &[Evidence],
    topics: &[String],
) -> String {
    let list = |e: &[Evidence]| {
        e.iter()
            .map(|e| e.what.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let day = |t: Option<Timestamp>| t.map(|t| t.format("%Y-%m-%d").to_string());
    let mut out = format!("Profile of {}", t.speaker);
    if !roles.is_empty() {
        out += &format!(" — role: {}", list(roles));
    }
    out += ".";
    if t.messages > 0 {
        out += &format!(" {} messages", t.messages);
        if let (Some(a), Some(b)) = (day(t.first), day(t.last)) {
            out += &format!(" from {a} to {b}");
        }
        if !t.groups.is_empty() {
            out += &format!(" in {}", t.groups.join(", "));
        }
        out += ".";
        out += &format!(
            " Style: {}; about {:.0} words per message",
            if style.traits.is_empty() {
                "neutral".to_string()
            } else {
                style.traits.join(", ")
            },
            style.avg_words
        );
        if let Some(r) = style.avg_reply_seconds {
            out += &format!(", replies after about {:.0} min", r / 60.0);
        }
        out += ".";
    }
    if !skills.is_empty() {
        out += &format!(" Skills: {}.", list(skills));
    }
    if !topics.is_empty() {
        out += &format!(" Often talks about: {}.", topics.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::profile_units;
    use cairn_core::{Message, SessionInput, SpaceId};
    use proptest::prelude::*;

    const SPEAKERS: &[&str] = &["Ana Diaz", "Ana", "Rui", "Mei Lin"];
    const LINES: &[&str] = &[
        "I'm the lead designer here, pottery on weekends!",
        "Ana is our go-to person for pricing. Thanks!",
        "Ask Rui about load testing, he knows pottery too?",
        "I specialize in database migrations 😅 lol",
        "Please review the pottery pricing deck, kindly.",
        "Mei, the QA lead, says hi. Let's meet?",
    ];

    /// A session of `lines` (speaker, line) pairs, in group `group`.
    fn session(id: usize, group: u8, lines: &[(u8, u8)]) -> SessionInput {
        SessionInput {
            id: format!("s{id}"),
            occurred_at: None,
            group: Some(format!("g{group}")),
            messages: lines
                .iter()
                .enumerate()
                .map(|(i, &(who, line))| Message {
                    id: i.to_string(),
                    role: None,
                    speaker: Some(SPEAKERS[who as usize].to_string()),
                    text: LINES[line as usize].to_string(),
                    occurred_at: cairn_core::time::parse_timestamp(&format!(
                        "2025-03-{:02} 09:{:02}",
                        1 + id % 28,
                        i % 60
                    ))
                    .ok(),
                    metadata: serde_json::Value::Null,
                })
                .collect(),
            metadata: serde_json::Value::Null,
        }
    }

    /// Each speaker with their profile in each partition.
    type Everyone = Vec<(String, Vec<(SpeakerProfile, Option<String>)>)>;

    fn all_profiles(p: &Profiles) -> Everyone {
        p.speakers()
            .into_iter()
            .map(|s| {
                let found = p.profiles(&s);
                let found = found.into_iter().map(|(p, k)| (p, k.map(String::from)));
                (s.clone(), found.collect())
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Sums kept through additions and removals (a removed contribution added again
        /// goes to the end of the list, as a rewritten one does) answer as sums of the
        /// list built afresh: every profile, field by field, and every speaker.
        #[test]
        fn kept_sums_answer_as_sums_built_afresh(
            sessions in proptest::collection::vec(
                (0..3u8, proptest::collection::vec((0..4u8, 0..6u8), 1..6)), 1..8),
            steps in proptest::collection::vec((any::<bool>(), any::<prop::sample::Index>()), 0..24),
        ) {
            let space = SpaceId::new("t").expect("space");
            let at = chrono::Utc::now();
            let mut list: Vec<Unit> = sessions
                .iter()
                .enumerate()
                .flat_map(|(i, (g, lines))| profile_units(&space, &session(i, *g, lines), at, 0))
                .collect();
            let mut out: Vec<Unit> = Vec::new();
            let mut kept = Profiles::new(&list);
            for (remove, pick) in steps {
                match (remove, list.is_empty(), out.is_empty()) {
                    (true, false, _) | (false, false, true) => {
                        let u = list.remove(pick.index(list.len()));
                        kept.remove(&u);
                        out.push(u);
                    }
                    (_, _, false) => {
                        let u = out.remove(pick.index(out.len()));
                        kept.add(&u);
                        list.push(u);
                    }
                    _ => {}
                }
                prop_assert_eq!(all_profiles(&kept), all_profiles(&Profiles::new(&list)));
            }
        }
    }
}
