//! Two-level results: hits are places (the sessions the evidence lives in), each one an
//! excerpt of its best units. Ranked units of one session used to follow each other
//! down the list, so ten hits were often several rounds of one session and covered
//! fewer places than ten session-ranked results; capping a session to one unit covered
//! more places but lost the session's other evidence. Here the list is ranked by place
//! (a place scores as its best unit), and a place's hit carries, besides its best unit,
//! the place's other units that were among the first `top_k` units (so the first
//! `top_k` hits hold every unit the first `top_k` unit hits held, up to `place_units` a
//! place: the places they came from all rank among the first `top_k`) or that score
//! close to its best (`place_ratio` of it), at most `place_units` in all, shown in
//! conversation order. Units
//! without a session (trajectory slices, notes, events; profiles) are places of their
//! own, and so are facts, events and episodes of a session: only its turns and rounds
//! (verbatim stretches of the conversation) are joined into an excerpt.
use crate::facts;
use crate::rank::{Part, RankConfig, Ranked};
use cairn_core::explain::{Op, Step};
use cairn_core::{Unit, UnitKind};
use std::collections::HashMap;

/// Separates two units of one place that are not next to each other in the
/// conversation.
pub(crate) const GAP: &str = "\n…\n";

/// At most this many further units of a place wait in [`Ranked::more`] for room in the
/// context (beyond the `place_units` of its excerpt).
pub const MORE_UNITS: usize = 12;

/// Groups ranked units into place hits (see the module doc), best place first, for a
/// recall of `top_k` hits. A list where every place has one unit comes back unchanged,
/// but for the further units each place keeps in `more`.
pub fn by_place(ranked: Vec<Ranked>, cfg: &RankConfig, top_k: usize) -> Vec<Ranked> {
    if !cfg.places {
        return ranked;
    }
    // Each place's best unit, then its other units in rank order with their rank in the
    // unit list.
    let mut order: Vec<(Ranked, Vec<(usize, Ranked)>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (rank, r) in ranked.into_iter().enumerate() {
        let Some(sid) = r
            .unit
            .provenance
            .session_id
            .clone()
            .filter(|_| is_conversation(&r.unit))
        else {
            order.push((r, Vec::new()));
            continue;
        };
        match index.get(&sid) {
            Some(&i) => order[i].1.push((rank, r)),
            None => {
                index.insert(sid, order.len());
                order.push((r, Vec::new()));
            }
        }
    }
    let mut out: Vec<Ranked> = order
        .into_iter()
        .map(|(best, rest)| place_hit(best, rest, cfg, top_k))
        .collect();
    // Stable: places of equal score keep the order of their best units.
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out
}

/// Turns and rounds: the verbatim stretches of a conversation that a place joins.
fn is_conversation(u: &Unit) -> bool {
    matches!(u.kind, UnitKind::Turn | UnitKind::Round)
}

/// One place's hit from its best unit and its other units in rank order (with their
/// rank in the unit list): the best one, joined by those ranked within `top_k` or
/// scoring at least `place_ratio` of it (up to `place_units` units), in conversation
/// order; the rest (up to [`MORE_UNITS`]) in `more`.
fn place_hit(best: Ranked, rest: Vec<(usize, Ranked)>, cfg: &RankConfig, top_k: usize) -> Ranked {
    let floor = best.score * cfg.place_ratio;
    let mut parts: Vec<Part> = vec![Part {
        unit: best.unit.clone(),
        score: best.score,
    }];
    let mut more: Vec<Part> = Vec::new();
    for (rank, r) in rest {
        let part = Part {
            unit: r.unit,
            score: r.score,
        };
        let joins = rank < top_k || (r.score >= floor && r.score > 0.0);
        if joins && parts.len() < cfg.place_units {
            parts.push(part);
        } else if more.len() < MORE_UNITS {
            more.push(part);
        } else {
            break;
        }
    }
    let mut r = best;
    r.more = more;
    if parts.len() > 1 {
        r.unit = excerpt(&parts[0].unit, parts[1..].iter().map(|p| &p.unit));
        r.parts = parts;
    }
    r
}

/// Folds each fact into a unit of the conversation that shows the message stating it,
/// when the list holds one (ranked below the fact: one ranked above has already dropped
/// the fact as covered): that unit takes the fact's place and score, and the fact's
/// version notes it lacks, so the context shows the message once, with its note.
pub fn fold_facts(mut ranked: Vec<Ranked>) -> Vec<Ranked> {
    let mut i = 0;
    while i < ranked.len() {
        let Some(j) = (ranked[i].unit.kind == UnitKind::Fact)
            .then(|| carrier(&ranked, i))
            .flatten()
        else {
            i += 1;
            continue;
        };
        let fact = ranked.remove(i);
        // The carrier was below the fact, so one place nearer now.
        let mut c = ranked.remove(j - 1);
        let notes: Vec<&str> = fact
            .unit
            .text
            .lines()
            .filter(|l| facts::is_version_note(l) && !c.unit.text.contains(*l))
            .collect();
        for n in &notes {
            c.unit.text.push('\n');
            c.unit.text.push_str(n);
        }
        if let Some(why) = &mut c.why {
            why.version_notes
                .extend(notes.iter().map(|n| n.to_string()));
        }
        if fact.score > c.score {
            c.score = fact.score;
        }
        let score = c.score;
        c.record(Step::FactFolded, Op::Set, score, || {
            format!("shows the message of {}, ranked here", fact.unit.id)
        });
        ranked.insert(i, c);
        i += 1;
    }
    ranked
}

/// The place in `ranked` below `i` of the first turn or round of the fact at `i`'s
/// session that shows every message of it.
fn carrier(ranked: &[Ranked], i: usize) -> Option<usize> {
    let fact = &ranked[i].unit.provenance;
    fact.session_id.as_ref()?;
    (i + 1..ranked.len()).find(|&j| {
        let u = &ranked[j].unit;
        is_conversation(u)
            && u.provenance.session_id == fact.session_id
            && fact
                .message_ids
                .iter()
                .all(|m| u.provenance.message_ids.contains(m))
    })
}

/// Kinds whose text recall reads only for the hits it returns: the verbatim stretches of
/// a conversation, whose messages may run to kilobytes each (pasted code, documents),
/// while ranking needs only their keys, provenance and times. Read for every candidate,
/// their text made recall cost grow with message length.
pub const TEXT_READ_LAST: &[UnitKind] = &[UnitKind::Turn, UnitKind::Round, UnitKind::Episode];

/// The ids of the units of `kinds` in `top` (hits, their parts and further units), for
/// the text read.
pub fn text_ids(top: &[Ranked], kinds: &[UnitKind]) -> Vec<String> {
    let mut ids: Vec<String> = top
        .iter()
        .flat_map(|r| {
            std::iter::once(&r.unit).chain(r.parts.iter().chain(&r.more).map(|p| &p.unit))
        })
        .filter(|u| kinds.contains(&u.kind))
        .map(|u| u.id.clone())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Puts the stored `texts` into the hits' units of `kinds`, loaded without it: before
/// whatever recall appended since (version notes); a place hit's excerpt is joined again
/// from its parts.
pub fn fill_texts(top: &mut [Ranked], texts: &HashMap<String, String>, kinds: &[UnitKind]) {
    let fill = |u: &mut Unit| {
        if let Some(t) = texts.get(&u.id).filter(|_| kinds.contains(&u.kind)) {
            u.text.insert_str(0, t);
        }
    };
    for r in top {
        r.more.iter_mut().for_each(|p| fill(&mut p.unit));
        if r.parts.is_empty() {
            fill(&mut r.unit);
            continue;
        }
        r.parts.iter_mut().for_each(|p| fill(&mut p.unit));
        r.unit.text = excerpt(&r.parts[0].unit, r.parts[1..].iter().map(|p| &p.unit)).text;
    }
}

/// The hits with the further units the context shows of them (`shown`: per hit, the ids
/// of the units packing showed) moved from `more` into their parts, and their excerpts
/// joined again: a hit cites what the context shows of it.
pub fn with_shown(mut top: Vec<Ranked>, shown: &[Vec<String>]) -> Vec<Ranked> {
    for (r, ids) in top.iter_mut().zip(shown) {
        let (taken, rest): (Vec<Part>, Vec<Part>) = std::mem::take(&mut r.more)
            .into_iter()
            .partition(|p| ids.contains(&p.unit.id));
        r.more = rest;
        if taken.is_empty() {
            continue;
        }
        if r.parts.is_empty() {
            r.parts.push(Part {
                unit: r.unit.clone(),
                score: r.score,
            });
        }
        r.parts.extend(taken);
        r.unit = excerpt(&r.parts[0].unit, r.parts[1..].iter().map(|p| &p.unit));
    }
    top
}

/// The place's excerpt: `best` and `others` in conversation order as one unit, which
/// keeps `best`'s id, kind and key and covers the messages of all of them. Packing calls
/// it with the units it shows.
pub fn excerpt<'a>(best: &'a Unit, others: impl IntoIterator<Item = &'a Unit>) -> Unit {
    let mut parts: Vec<&Unit> = std::iter::once(best).chain(others).collect();
    if parts.len() == 1 {
        return best.clone();
    }
    // A round before the turn it starts with, so the turn is seen as inside it.
    parts.sort_by_key(|u| {
        let p = &u.provenance;
        (p.first_position, std::cmp::Reverse(p.message_ids.len()))
    });
    let mut text = String::new();
    let mut messages: Vec<String> = Vec::new();
    let mut speakers: Vec<String> = Vec::new();
    let mut next_position: Option<u32> = None;
    for u in &parts {
        let p = &u.provenance;
        let adjacent = next_position.is_some_and(|n| p.first_position <= n);
        append_lines(&mut text, &shown(u), if adjacent { "\n" } else { GAP });
        for m in &p.message_ids {
            if !messages.contains(m) {
                messages.push(m.clone());
            }
        }
        for s in &p.speakers {
            if !speakers.contains(s) {
                speakers.push(s.clone());
            }
        }
        let end = p.first_position + p.message_ids.len().max(1) as u32;
        next_position = Some(next_position.map_or(end, |n| n.max(end)));
    }
    let mut unit = best.clone();
    unit.text = text;
    unit.provenance.message_ids = messages;
    unit.provenance.speakers = speakers;
    unit.provenance.first_position = parts[0].provenance.first_position;
    unit.occurred_at = parts.iter().filter_map(|u| u.occurred_at).min();
    unit.embed_text = None;
    unit
}

/// A unit's text as a line of the excerpt: a turn says who spoke, as each line of a round
/// does, so the two read alike and a turn inside its round is seen as shown.
fn shown(u: &Unit) -> String {
    match (u.kind, u.provenance.speakers.first()) {
        (UnitKind::Turn, Some(who)) => format!("{who}: {}", u.text),
        _ => u.text.clone(),
    }
}

/// Appends `next` after `sep`, showing each line once: units of one place can share
/// messages (a turn inside its round, two rounds sharing the message between them), so
/// lines `text` already holds or ends with are left out.
fn append_lines(text: &mut String, next: &str, sep: &str) {
    if text.is_empty() {
        text.push_str(next);
        return;
    }
    let holds = text == next
        || text.starts_with(&format!("{next}\n"))
        || text.ends_with(&format!("\n{next}"))
        || text.contains(&format!("\n{next}\n"));
    if holds {
        return;
    }
    // Version notes ending `text` ride with the lines above them: `next` continues those.
    let body = &text[..without_trailing_notes(text)];
    let lines: Vec<&str> = next.split('\n').collect();
    for k in (1..lines.len()).rev() {
        let head = lines[..k].join("\n");
        let at_line_start = body.len() == head.len()
            || body.as_bytes().get(body.len().wrapping_sub(head.len() + 1)) == Some(&b'\n');
        if body.ends_with(&head) && at_line_start {
            text.push('\n');
            text.push_str(&lines[k..].join("\n"));
            return;
        }
    }
    text.push_str(sep);
    text.push_str(next);
}

/// The length of `text` without the version notes on its last lines.
fn without_trailing_notes(text: &str) -> usize {
    let mut end = text.len();
    while let Some(i) = text[..end].rfind('\n') {
        if !facts::is_version_note(&text[i + 1..end]) {
            break;
        }
        end = i;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_core::{Provenance, SpaceId, UnitKind};

    fn ranked(id: &str, session: Option<&str>, pos: u32, score: f32) -> Ranked {
        Ranked {
            unit: Unit {
                id: id.into(),
                space: SpaceId::new("t").unwrap(),
                kind: UnitKind::Round,
                text: format!("text of {id}"),
                key: id.into(),
                embed_text: None,
                provenance: Provenance {
                    session_id: session.map(str::to_string),
                    message_ids: vec![format!("{pos}"), format!("{}", pos + 1)],
                    first_position: pos,
                    speakers: vec!["user".into()],
                    ..Default::default()
                },
                part_of: None,
                occurred_at: None,
                recorded_at: chrono::Utc::now(),
                detail: None,
            },
            score,
            why: None,
            parts: Vec::new(),
            more: Vec::new(),
        }
    }

    fn cfg(units: usize, ratio: f32) -> RankConfig {
        RankConfig {
            places: true,
            place_units: units,
            place_ratio: ratio,
            ..RankConfig::default()
        }
    }

    #[test]
    fn each_place_is_one_hit_of_its_close_units_in_order() {
        let list = vec![
            ranked("a1", Some("a"), 4, 1.0),
            ranked("a2", Some("a"), 0, 0.9),
            ranked("b1", Some("b"), 0, 0.8),
            ranked("a3", Some("a"), 2, 0.85),
            ranked("a4", Some("a"), 8, 0.3),
            ranked("t", None, 0, 0.7),
        ];
        let out = by_place(list, &cfg(3, 0.8), 2);
        let ids: Vec<&str> = out.iter().map(|r| r.unit.id.as_str()).collect();
        assert_eq!(ids, ["a1", "b1", "t"]);
        let a = &out[0].unit;
        // a2 (0..2), a3 (2..4) and a1 (4..6) are adjacent; a4 is below the ratio.
        assert_eq!(a.text, "text of a2\ntext of a3\ntext of a1");
        assert_eq!(a.provenance.message_ids, ["0", "1", "2", "3", "4", "5"]);
        assert_eq!(a.provenance.first_position, 0);
        assert_eq!(out[0].score, 1.0);
        let parts: Vec<&str> = out[0].parts.iter().map(|p| p.unit.id.as_str()).collect();
        assert_eq!(parts, ["a1", "a2", "a3"]);
        // a4 waits for room in the context.
        let more: Vec<&str> = out[0].more.iter().map(|p| p.unit.id.as_str()).collect();
        assert_eq!(more, ["a4"]);
    }

    #[test]
    fn facts_and_episodes_of_a_session_are_places_of_their_own() {
        let mut fact = ranked("f", Some("a"), 2, 0.9);
        fact.unit.kind = UnitKind::Fact;
        let mut episode = ranked("e", Some("a"), 0, 0.85);
        episode.unit.kind = UnitKind::Episode;
        let list = vec![ranked("a1", Some("a"), 0, 1.0), fact, episode];
        let out = by_place(list, &cfg(3, 0.5), 10);
        let ids: Vec<&str> = out.iter().map(|r| r.unit.id.as_str()).collect();
        assert_eq!(ids, ["a1", "f", "e"]);
        assert!(out.iter().all(|r| r.parts.is_empty()));
    }

    #[test]
    fn shared_messages_are_shown_once() {
        let mut r1 = ranked("r1", Some("a"), 4, 1.0);
        r1.unit.text = "ann: where to?\nbob: the lake".into();
        let mut r2 = ranked("r2", Some("a"), 5, 0.9);
        r2.unit.text = "bob: the lake\nann: with Mel?".into();
        // A turn inside the round it starts: its text has no speaker, the round's has.
        let mut t = ranked("t", Some("a"), 4, 0.85);
        t.unit.kind = UnitKind::Turn;
        t.unit.text = "where to?".into();
        t.unit.provenance.speakers = vec!["ann".into()];
        t.unit.provenance.message_ids = vec!["4".into()];
        let out = by_place(vec![r1, r2, t], &cfg(3, 0.5), 10);
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0].unit.text,
            "ann: where to?\nbob: the lake\nann: with Mel?"
        );
        assert_eq!(out[0].unit.provenance.message_ids, ["4", "5", "6"]);
    }

    /// A round's version note does not hide the line it shares with the next round.
    #[test]
    fn a_line_shared_after_a_note_is_shown_once() {
        let mut r1 = ranked("r1", Some("a"), 0, 1.0);
        r1.unit.text =
            "priya: the budget is now $95,000\nmaya: confirmed\n[current value; earlier: $1 (x)]"
                .into();
        let mut r2 = ranked("r2", Some("a"), 1, 0.9);
        r2.unit.text = "maya: confirmed\ntom: booked the stage".into();
        let out = by_place(vec![r1, r2], &cfg(3, 0.5), 10);
        assert_eq!(
            out[0].unit.text,
            "priya: the budget is now $95,000\nmaya: confirmed\n[current value; earlier: $1 (x)]\ntom: booked the stage"
        );
    }

    #[test]
    fn distant_units_are_marked_as_a_gap_and_capped() {
        let list = vec![
            ranked("a1", Some("a"), 0, 1.0),
            ranked("a2", Some("a"), 10, 0.95),
            ranked("a3", Some("a"), 20, 0.95),
        ];
        let out = by_place(list, &cfg(2, 0.5), 1);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].unit.text, "text of a1\n…\ntext of a2");
    }

    #[test]
    fn units_among_the_first_top_k_stay_in_their_place() {
        // a2 is far below a1's score but was the second unit hit: it stays.
        let list = vec![
            ranked("a1", Some("a"), 0, 1.0),
            ranked("a2", Some("a"), 6, 0.2),
            ranked("b1", Some("b"), 0, 0.1),
            ranked("a3", Some("a"), 10, 0.05),
        ];
        let out = by_place(list, &cfg(10, 1.0), 2);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].unit.text, "text of a1\n…\ntext of a2");
        assert_eq!(out[1].unit.id, "b1");
    }

    #[test]
    fn texts_read_last_give_the_hits_and_excerpts_they_would_have_had() {
        let list = || {
            let a1 = ranked("a1", Some("a"), 0, 1.0);
            let mut fact = ranked("f", Some("a"), 4, 0.9);
            fact.unit.kind = UnitKind::Fact;
            vec![a1, ranked("a2", Some("a"), 1, 0.95), fact]
        };
        let whole = by_place(list(), &cfg(3, 0.5), 10);
        // The same units loaded without their text, a version note appended since.
        let kinds = TEXT_READ_LAST;
        let mut lean = list();
        let mut texts = HashMap::new();
        for r in lean.iter_mut().filter(|r| kinds.contains(&r.unit.kind)) {
            texts.insert(r.unit.id.clone(), std::mem::take(&mut r.unit.text));
        }
        lean[0].unit.text.push_str(
            "
(note)",
        );
        let mut lean = by_place(lean, &cfg(3, 0.5), 10);
        assert_eq!(text_ids(&lean, kinds), ["a1", "a2"]);
        fill_texts(&mut lean, &texts, kinds);
        assert_eq!(
            lean[0].unit.text,
            "text of a1
(note)
text of a2"
        );
        assert_eq!(
            lean[0].parts[0].unit.text,
            "text of a1
(note)"
        );
        assert_eq!(
            lean[1].unit.text, whole[1].unit.text,
            "a fact keeps its text"
        );
        assert_eq!(lean[1].unit.id, "f");
    }

    #[test]
    fn off_or_one_unit_per_place_leaves_the_list() {
        let list = vec![
            ranked("a1", Some("a"), 0, 1.0),
            ranked("a2", Some("a"), 2, 0.9),
        ];
        let off = RankConfig {
            places: false,
            ..RankConfig::default()
        };
        assert_eq!(by_place(list.clone(), &off, 10).len(), 2);
        let one = by_place(list, &cfg(1, 0.5), 10);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].unit.text, "text of a1");
    }

    #[test]
    fn a_fact_folds_into_the_unit_showing_its_message_with_its_note() {
        let mut fact = ranked("f", Some("a"), 5, 0.9);
        fact.unit.kind = UnitKind::Fact;
        fact.unit.provenance.message_ids = vec!["5".into()];
        fact.unit.text =
            "maya: my salary is $95,000\n[current value; earlier: $80,000 (2023-01-02)]".into();
        // The round showing the fact's message, loaded without its text: a note at most.
        let mut round = ranked("r", Some("a"), 4, 0.5);
        round.unit.text = String::new();
        let other = ranked("o", Some("b"), 0, 0.7);
        let out = fold_facts(vec![fact, other, round]);
        let ids: Vec<&str> = out.iter().map(|r| r.unit.id.as_str()).collect();
        assert_eq!(ids, ["r", "o"], "the round takes the fact's place");
        assert_eq!(out[0].score, 0.9);
        assert_eq!(
            out[0].unit.text,
            "\n[current value; earlier: $80,000 (2023-01-02)]"
        );
        // Its own note already there: not twice.
        let mut again = out[0].clone();
        let mut fact = ranked("f2", Some("a"), 5, 1.0);
        fact.unit.kind = UnitKind::Fact;
        fact.unit.provenance.message_ids = vec!["5".into()];
        fact.unit.text = format!("maya: my salary is $95,000{}", again.unit.text);
        again.score = 0.2;
        let out = fold_facts(vec![fact, again]);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].unit.text.matches("[current value").count(), 1);
        // A fact of a message no unit in the list shows stays.
        let mut lone = ranked("f3", Some("c"), 2, 1.0);
        lone.unit.kind = UnitKind::Fact;
        let out = fold_facts(vec![lone, ranked("x", Some("c"), 7, 0.5)]);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn units_the_context_shows_join_their_hit() {
        let list = vec![
            ranked("a1", Some("a"), 0, 1.0),
            ranked("b1", Some("b"), 0, 0.9),
            ranked("a2", Some("a"), 8, 0.1),
        ];
        let out = by_place(list, &cfg(3, 0.5), 1);
        assert!(out[0].parts.is_empty(), "one unit in its excerpt");
        assert_eq!(out[0].more.len(), 1);
        let shown = vec![vec!["a1".to_string(), "a2".to_string()], vec![]];
        let out = with_shown(out, &shown);
        let parts: Vec<&str> = out[0].parts.iter().map(|p| p.unit.id.as_str()).collect();
        assert_eq!(parts, ["a1", "a2"]);
        assert!(out[0].more.is_empty());
        assert_eq!(out[0].unit.id, "a1");
        assert_eq!(out[0].unit.text, "text of a1\n…\ntext of a2");
        assert_eq!(out[0].unit.provenance.message_ids, ["0", "1", "8", "9"]);
        assert!(out[1].parts.is_empty());
    }
}
