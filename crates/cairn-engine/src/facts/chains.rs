//! Version chains: which facts are about the same subject (of the same person and
//! partition), in what order, and what a chain says (history, versions, notes).
use super::*;

/// A subject as chains compare it: its key and the key words naming the thing itself;
/// for a personal fact also whom it is about and its category (its key is then the
/// attribute's words alone).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Subject {
    pub(super) key: Vec<String>,
    pub(super) own: Vec<String>,
    pub(super) person: Option<(String, FactCategory)>,
}

/// Names that stand for someone a speaker named by their relation ("my husband Tom"):
/// a later fact about "Tom" is about "user's husband". (End-user partition, lowercased
/// name) -> person: one user's "Tom" is nobody else's.
pub(super) type Aliases = HashMap<(Option<String>, String), String>;

pub(super) fn aliases<'a>(facts: impl IntoIterator<Item = &'a Unit>) -> Aliases {
    facts
        .into_iter()
        .filter_map(|u| Some((u.provenance.partition.clone(), detail(u)?)))
        .filter(|(_, d)| d.category == Some(FactCategory::Family) && !d.negated)
        .filter_map(|(partition, d)| {
            let speaker = d.person.as_ref()?;
            let relation = d.subject.strip_prefix(&format!("{speaker}'s "))?;
            let name = d.value.trim();
            let one_name = !name.contains(' ') && name.chars().next()?.is_uppercase();
            one_name.then(|| {
                (
                    (partition, name.to_lowercase()),
                    format!("{speaker}'s {relation}").to_lowercase(),
                )
            })
        })
        .collect()
}

impl Subject {
    pub(super) fn of(d: &FactDetail) -> Self {
        Self::of_in(d, None, &Aliases::new())
    }

    /// The subject with its person named as `aliases` name it in `partition`.
    pub(super) fn of_in(d: &FactDetail, partition: Option<&str>, aliases: &Aliases) -> Self {
        let person = d.person.as_ref().map(|p| {
            let p = p.to_lowercase();
            let key = (partition.map(str::to_string), p);
            let p = aliases.get(&key).cloned().unwrap_or(key.1);
            (p, d.category.unwrap_or(FactCategory::Plan))
        });
        Self {
            key: d.subject_key.clone(),
            own: match person {
                Some(_) => d.subject_key.clone(),
                None => subject_own_words(&d.subject),
            },
            person,
        }
    }

    pub(super) fn asked(subject: &str) -> Self {
        Self {
            key: subject_key(subject),
            own: subject_own_words(subject),
            person: None,
        }
    }

    /// The subject as written, person included: what an asked subject is compared with.
    pub(super) fn written(d: &FactDetail) -> Self {
        Self::asked(&d.subject)
    }
}

/// How two subjects relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SubjectMatch {
    No,
    Same,
    /// Only within one group: a one-word subject ("the budget") is too vague to join
    /// another conversation's chain.
    SameInGroup,
}

/// Two subjects are the same when their keys are equal, or when one key contains the
/// other and the smaller names the larger's thing, not only its owner ("my brother"
/// is not "my brother's locker combination"; "the budget" may be "the Atlas budget").
pub(super) fn subject_match(a: &Subject, b: &Subject) -> SubjectMatch {
    crate::work::step(crate::work::steps::SUBJECTS_COMPARED);
    if a.person != b.person {
        return SubjectMatch::No;
    }
    if let Some((_, category)) = &a.person {
        // Attributes read by the grammar are named the same way each time, so one
        // attribute has one key: a habit, a liking, a plan is restated with the same
        // words or is another one. A belonging or a pet may be named by less of its
        // name later ("Honda Civic", then "the Civic").
        if a.key == b.key && !a.key.is_empty() {
            return SubjectMatch::Same;
        }
        let (small, big) = if a.key.len() <= b.key.len() {
            (a, b)
        } else {
            (b, a)
        };
        let named = matches!(category, FactCategory::Possession | FactCategory::Pet);
        let contained = !small.key.is_empty() && small.key.iter().all(|w| big.key.contains(w));
        return match named && contained {
            true => SubjectMatch::Same,
            false => SubjectMatch::No,
        };
    }
    if a.key == b.key {
        return SubjectMatch::Same;
    }
    let (small, big) = if a.key.len() <= b.key.len() {
        (a, b)
    } else {
        (b, a)
    };
    let contained = !small.key.is_empty() && small.key.iter().all(|w| big.key.contains(w));
    if !contained || !small.key.iter().any(|w| big.own.contains(w)) {
        SubjectMatch::No
    } else if small.key.len() >= 2 {
        SubjectMatch::Same
    } else {
        SubjectMatch::SameInGroup
    }
}

/// Whether one key equals the other or holds every word of it (non-empty): what
/// [`subject_match`] needs of two subjects' keys before it can call them the same.
pub(super) fn keys_nest(a: &[String], b: &[String]) -> bool {
    let (small, big) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    a == b || (!small.is_empty() && small.iter().all(|w| big.contains(w)))
}

/// Oldest first (see [`chain_order`]).
pub(super) fn sort_chain(chain: &mut [&Unit]) {
    chain.sort_by(|a, b| chain_order(a, b));
}

/// Oldest first. Of facts stated at one time (one message), a denied value comes before
/// a stated one: "I started at Globex today, left Acme on Friday" leaves Globex current,
/// not "no longer Acme", whichever the sentence said first. Further ties keep id order.
pub(super) fn chain_order(a: &Unit, b: &Unit) -> std::cmp::Ordering {
    let affirmed = |u: &Unit| detail(u).is_some_and(|d| !d.negated);
    a.occurred_at
        .cmp(&b.occurred_at)
        .then(affirmed(a).cmp(&affirmed(b)))
        .then(a.id.cmp(&b.id))
}

/// The history of the subject best matching `subject` among `facts`: every fact about
/// a thing whose key equals or contains the asked key's words (or is contained in it);
/// or, when a personal fact matches at least as closely (its subject written with its
/// person, "user's home", has no more words beyond the asked ones), that fact's chain.
pub fn history(subject: &str, facts: &[Unit]) -> Option<FactHistory> {
    let asked = Subject::asked(subject);
    if asked.key.is_empty() {
        return None;
    }
    let extra = |d: &FactDetail| {
        let written = Subject::written(d);
        // One person's attribute may be asked by one word of it ("workplace", "jazz"):
        // the vagueness that keeps a one-word subject within one group is across
        // conversations, and a person's chain is theirs in every one.
        let same = match subject_match(&asked, &written) {
            SubjectMatch::Same => true,
            SubjectMatch::SameInGroup => d.person.is_some(),
            SubjectMatch::No => false,
        };
        same.then(|| written.key.len().abs_diff(asked.key.len()))
    };
    // A stored key that neither holds nor lies in the other rules a fact out before its
    // subject is built (which allocates): most facts of a large space are about
    // something else.
    let same = |of: &Subject, d: &FactDetail| {
        keys_nest(&of.key, &d.subject_key)
            && subject_match(of, &Subject::of(d)) == SubjectMatch::Same
    };
    let things: Vec<&Unit> = facts
        .iter()
        .filter(|f| detail(f).is_some_and(|d| d.person.is_none() && same(&asked, d)))
        .collect();
    let closest_thing = things
        .iter()
        .filter_map(|f| extra(detail(f)?))
        .min()
        .unwrap_or(usize::MAX);
    let personal = facts
        .iter()
        .filter(|f| detail(f).is_some_and(|d| d.person.is_some()))
        .filter_map(|f| Some((extra(detail(f)?)?, f)))
        .min_by(|a, b| a.0.cmp(&b.0).then(chain_order(b.1, a.1)));
    let mut chain: Vec<&Unit> = match personal {
        Some((closeness, best)) if closeness < closest_thing || things.is_empty() => {
            let of = Subject::of(detail(best)?);
            facts
                .iter()
                .filter(|f| detail(f).is_some_and(|d| same(&of, d)))
                .collect()
        }
        _ => things,
    };
    if chain.is_empty() {
        return None;
    }
    sort_chain(&mut chain);
    let versions = versions(&chain);
    let subject = versions.last()?.subject.clone();
    Some(FactHistory { subject, versions })
}

/// The facts of a chain (oldest first) that are versions of their own: a fact the next
/// one's message also states ("left Acme" beside "started at Globex") is part of that
/// statement, not a value that held for no time.
pub fn stated_versions<'a>(chain: &[&'a Unit]) -> Vec<&'a Unit> {
    chain
        .iter()
        .enumerate()
        .filter(|&(i, u)| chain.get(i + 1).is_none_or(|next| !same_message(u, next)))
        .map(|(_, u)| *u)
        .collect()
}

/// Versions of a chain (oldest first) with their validity intervals.
pub fn versions(chain: &[&Unit]) -> Vec<FactVersion> {
    let chain = stated_versions(chain);
    chain
        .iter()
        .enumerate()
        .filter_map(|(i, u)| {
            let d = detail(u)?;
            let next = chain.get(i + 1);
            Some(FactVersion {
                unit_id: u.id.clone(),
                subject: d.subject.clone(),
                value: d.value.clone(),
                statement: shown_value(d),
                valid_from: u.occurred_at,
                valid_to: next.and_then(|n| n.occurred_at),
                superseded_by: next.map(|n| n.id.clone()),
                session_id: u.provenance.session_id.clone(),
                message_id: u.provenance.message_ids.first().cloned(),
                speaker: u.provenance.speakers.first().cloned(),
                group: u.provenance.group.clone(),
                text: u.text.clone(),
                person: d.person.clone(),
                category: d.category,
                negated: d.negated,
                since: d.since,
            })
        })
        .collect()
}

pub(super) const SUPERSEDED_NOTE: &str = "[superseded: changed to ";
pub(super) const CURRENT_NOTE: &str = "[current value; earlier: ";

/// Whether a line of a hit's text is a note [`version_note`] wrote.
pub fn is_version_note(line: &str) -> bool {
    line.starts_with(SUPERSEDED_NOTE) || line.starts_with(CURRENT_NOTE)
}

/// The note of a statement a newer one replaced without being of its chain (a standing
/// instruction the card judged replaced by meaning): the newer sentence and its day.
pub fn replaced_note(newer: &Unit) -> String {
    let day = day(newer.occurred_at);
    format!("{SUPERSEDED_NOTE}\"{}\" on {day}]", stated(newer))
}

/// The day a note or a card line gives a statement: `2024-03-01`, or `undated`.
pub fn day(t: Option<Timestamp>) -> String {
    t.map(|t| t.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| "undated".into())
}

/// Whether a hit's text carries a note that a newer value replaced what it states.
pub fn is_marked_superseded(text: &str) -> bool {
    text.lines().any(|l| l.starts_with(SUPERSEDED_NOTE))
}

/// A note for a fact in a context: superseded by what, or current since when and what
/// came before. What one message states together is one statement ("I started at
/// Globex today, left Acme on Friday"): a fact the current one's own message states is
/// neither superseded by it nor an earlier value beside it; it has no note of its own.
pub fn version_note(fact: &Unit, chain: &[&Unit]) -> Option<String> {
    let newest = chain.last()?;
    if chain.len() < 2 || (newest.id != fact.id && same_message(fact, newest)) {
        return None;
    }
    let pos = chain.iter().position(|u| u.id == fact.id)?;
    let day = |u: &Unit| day(u.occurred_at);
    let value = |u: &Unit| detail(u).map(shown_value).unwrap_or_default();
    if pos + 1 < chain.len() {
        return Some(format!(
            "{SUPERSEDED_NOTE}{} on {}]",
            value(newest),
            day(newest)
        ));
    }
    let before: Vec<&Unit> = chain[..pos]
        .iter()
        .copied()
        .filter(|u| !same_message(u, fact))
        .collect();
    if before.is_empty() {
        return None;
    }
    // The latest few earlier values; a long chain would otherwise grow the note (and the
    // packed context) with every version ever stated. `history` has them all.
    const SHOWN: usize = 3;
    let older = before.len().saturating_sub(SHOWN);
    let earlier: Vec<String> = before[older..]
        .iter()
        .map(|u| format!("{} ({})", value(u), day(u)))
        .collect();
    let more = if older > 0 {
        format!(" (and {older} older)")
    } else {
        String::new()
    };
    Some(format!("{CURRENT_NOTE}{}{more}]", earlier.join(", ")))
}

/// Whether two facts were stated by one message.
fn same_message(a: &Unit, b: &Unit) -> bool {
    a.provenance.session_id == b.provenance.session_id
        && a.provenance
            .message_ids
            .iter()
            .any(|m| b.provenance.message_ids.contains(m))
}

/// A fact's value as a note shows it: a denied one as such ("no longer Porto",
/// "dislikes olives").
pub fn shown_value(d: &FactDetail) -> String {
    match (d.negated, d.category) {
        (false, _) => d.value.clone(),
        (true, Some(FactCategory::Preference)) => format!("dislikes {}", d.value),
        (true, _) => format!("no longer {}", d.value),
    }
}
