//! What a subject has: have, own, adopt, buy, sell, give up (pets, cars, things,
//! businesses, conditions).
use super::counts::{head_noun, is_measure};
use super::facts::Facts;
use super::plans::plan_phrase;
use crate::personal::clause::Tense;
use crate::personal::discourse::Context;
use crate::personal::lexicon::{BUSINESSES, CONDITIONS, PETS, RELATIONS, THINGS};
use crate::personal::phrase::{canon, is_pointer, lows, noun_phrase, number, phrase, Tok};
use cairn_core::FactCategory as C;

/// Possessions, pets, relations, conditions and counts after have/own/buy/adopt/get,
/// each of a list ("a MacBook Pro for work and an old ThinkPad at home").
pub(super) fn have(f: &mut Facts<'_, '_>, v: &str, r: usize, ctx: &mut Context) {
    have_one(f, v, r, ctx);
    let toks = f.c.toks;
    let and = (r + 1..toks.len().min(r + 9)).find(|&i| {
        toks[i].is(&["and"])
            && toks
                .get(i + 1)
                .is_some_and(|t| t.is(&["a", "an", "my", "our", "the", "some"]))
    });
    if let Some(i) = and {
        have_one(f, v, i + 1, ctx);
    }
}

/// How a have-verb reads what follows it.
struct Having<'v> {
    /// The verb's stem.
    v: &'v str,
    /// Where its object starts.
    r: usize,
    /// How many facts the clause had before (for `Facts::changed`).
    n: usize,
    /// Denied, or had once ("used to have").
    negated: bool,
    /// The verb says the thing is new (bought, adopted), not only had.
    change: bool,
}

pub(super) fn have_one(f: &mut Facts<'_, '_>, v: &str, r: usize, ctx: &mut Context) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    let w = lows(toks, r);
    let Some(&first) = w.first() else { return };
    if c.is_future() && v != canon("have") {
        if !c.negated {
            plan_phrase(f, c.verb);
        }
        return;
    }
    let over = c.tense == Tense::UsedTo;
    let negated = c.negated || over;
    let change =
        v != canon("have") && v != canon("own") && v != canon("drive") && v != canon("ride");
    let h = Having {
        v,
        r,
        n,
        negated,
        change,
    };
    if v == canon("replace") {
        if let Some(p) = w.iter().position(|x| *x == "with") {
            return have(f, &canon("buy"), r + p + 1, ctx);
        }
        return;
    }
    // A count: "two cats", "three kids" (and the pets or relations counted).
    if let Some(k) = number(first).filter(|k| *k >= 2 || first == "one") {
        if counted(f, &h, k) {
            return;
        }
    }
    let (np, end) = noun_phrase(toks, r);
    if np.is_empty() {
        return;
    }
    let low = np.to_lowercase();
    let words: Vec<&str> = low.split(' ').collect();
    // Allergies: "a peanut allergy", "allergies to cats".
    if words.iter().any(|w| w.starts_with("allerg")) {
        return allergy(f, &words, end, negated);
    }
    if let Some(cond) = condition_after(toks, r).filter(|_| v == canon("have") || v == canon("get"))
    {
        f.add(C::Health, &cond, &cond, &cond, negated);
        return;
    }
    let head = words.last().copied().unwrap_or("");
    if RELATIONS.contains(&head) && v == canon("have") {
        let label = words
            .iter()
            .filter(|w| RELATIONS.contains(w))
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        f.add(C::Family, &label, &label, &np, negated);
        return;
    }
    match kind_of(&words) {
        Some((C::Pet, animal)) => pet_had(f, &h, &np, end, &animal, ctx),
        Some((C::Possession, kind)) => {
            let model = brand_words(toks, r, end);
            let key = if model.is_empty() {
                kind.clone()
            } else {
                model.clone()
            };
            f.add(C::Possession, &kind, &key, &np, negated);
            if change {
                f.changed(n);
            }
        }
        _ => brand_or_bought(f, &h, &np, end, &words),
    }
}

/// "two cats", "three kids": a count of the `k` things after the number (and the pets
/// counted, by name). Whether there was such a thing to count.
fn counted(f: &mut Facts<'_, '_>, h: &Having<'_>, k: u32) -> bool {
    let c = f.c;
    let toks = c.toks;
    let (thing, _) = noun_phrase(toks, h.r + 1);
    if thing.is_empty() || is_measure(&thing) {
        return false;
    }
    let key = thing.to_lowercase();
    f.add(
        C::Count,
        &format!("number of {thing}"),
        head_noun(&key),
        &format!("{k} {thing}"),
        h.negated,
    );
    let words: Vec<&str> = key.split(' ').collect();
    if let Some((C::Pet, animal)) = kind_of(&words) {
        for name in names_after(toks, h.r + 1).0 {
            f.add(
                C::Pet,
                &format!("{animal} {name}"),
                &format!("{animal} {name}"),
                &name,
                h.negated,
            );
        }
    }
    if h.change || c.change {
        f.changed(h.n);
    }
    true
}

/// "a peanut allergy", "allergies to cats": what the allergy is to, from the phrase's
/// own words or else from the word after "to".
fn allergy(f: &mut Facts<'_, '_>, words: &[&str], end: usize, negated: bool) {
    let item = words
        .iter()
        .filter(|w| {
            !w.starts_with("allerg") && !matches!(**w, "severe" | "mild" | "bad" | "slight")
        })
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let item = if item.is_empty() {
        f.c.toks
            .iter()
            .skip(end)
            .skip_while(|t| !t.is(&["to"]))
            .nth(1)
            .map(|t| t.orig.clone())
            .unwrap_or_default()
    } else {
        item
    };
    f.add(C::Diet, &format!("allergy: {item}"), &item, &item, negated);
}

/// A pet (`np`, an `animal`), with the names given after it; each name is, for later
/// clauses, that pet.
fn pet_had(
    f: &mut Facts<'_, '_>,
    h: &Having<'_>,
    np: &str,
    end: usize,
    animal: &str,
    ctx: &mut Context,
) {
    let c = f.c;
    let (names, desc) = names_after(c.toks, end);
    if names.is_empty() {
        f.add(C::Pet, animal, animal, np, h.negated);
    }
    let described = if desc.is_empty() {
        np.to_string()
    } else {
        format!("{np}, {desc}")
    };
    for name in names {
        f.add(
            C::Pet,
            &format!("{animal} {name}"),
            &format!("{animal} {name}"),
            &format!("{described} {name}"),
            h.negated,
        );
        ctx.aliases
            .push((name.clone(), format!("{}'s {animal} {name}", c.who.person)));
    }
    if h.change {
        f.changed(h.n);
    }
}

/// A thing of no known kind: a brand or model, or something bought.
fn brand_or_bought(f: &mut Facts<'_, '_>, h: &Having<'_>, np: &str, end: usize, words: &[&str]) {
    let c = f.c;
    let toks = c.toks;
    let v = h.v;
    // A brand or model with a capital ("a Tesla Model 3", "my Gibson ES-335").
    let model = brand_words(toks, h.r, end);
    let buys = v != canon("have")
        || toks.get(h.r).is_some_and(|t| t.is(&["a", "an"])) && !model.is_empty();
    let drives = v == canon("drive") || v == canon("ride");
    if !model.is_empty() && (buys || drives) && !c.negated {
        let kind = if drives {
            "car".to_string()
        } else {
            model.clone()
        };
        f.add(C::Possession, &kind, &model, np, h.negated);
        if h.change {
            f.changed(h.n);
        }
    } else if (v == canon("buy")
        || v == canon("purchase")
        || (v == canon("get") && words.contains(&"new")))
        && matches!(c.tense, Tense::Past | Tense::Perfect)
    {
        bought(f, h, np, words);
    }
}

/// Something bought: its kind is its head ("a new phone case").
fn bought(f: &mut Facts<'_, '_>, h: &Having<'_>, np: &str, words: &[&str]) {
    if BUSINESSES.iter().any(|b| words.contains(b)) {
        f.add(C::Work, "workplace", "workplace", np, false);
    } else if !is_pointer(np)
        && !words.iter().any(|w| {
            matches!(
                *w,
                "job"
                    | "idea"
                    | "perspective"
                    | "appreciation"
                    | "understanding"
                    | "opportunity"
                    | "chance"
                    | "feeling"
                    | "friend"
                    | "friends"
                    | "hobby"
            )
        })
    {
        let kind = words
            .iter()
            .filter(|w| !matches!(**w, "new" | "used" | "old" | "brand"))
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        f.add(C::Possession, &kind, &kind, np, h.negated);
        if h.change {
            f.changed(h.n);
        }
    }
}

/// Capitalized words (a brand, a model) of `toks[from..end]`, or a word with a digit
/// beside them ("Model 3", "ES-335").
pub(super) fn brand_words(toks: &[Tok], from: usize, end: usize) -> String {
    let words: Vec<&str> = toks[from..end]
        .iter()
        .filter(|t| {
            t.cap() && !t.is(&["i"])
                || (t.low.chars().any(|c| c.is_ascii_digit())
                    && t.low.len() <= 6
                    && !t.low.starts_with("20")
                    && !t.low.starts_with("19"))
        })
        .map(|t| t.orig.as_str())
        .collect();
    if words.iter().all(|w| w.chars().any(|c| c.is_ascii_digit())) {
        return String::new();
    }
    words.join(" ")
}

/// Names given right after a phrase: "called Biscuit", "named Skye", ", Pepper and Salt",
/// ", a tabby named Ginger". Returns the names, and the words that describe the named
/// one when they differ from the phrase ("tabby").
pub(super) fn names_after(toks: &[Tok], from: usize) -> (Vec<String>, String) {
    let mut i = from;
    let mut out = Vec::new();
    let mut desc = Vec::new();
    let limit = (from + 8).min(toks.len());
    // Up to "named"/"called", or to a capitalized name right after a pause.
    let mut found = false;
    while i < limit {
        let t = &toks[i];
        if t.is(&["named", "called"]) {
            i += 1;
            found = true;
            break;
        }
        if t.cap() && i > from && toks[i - 1].pause {
            found = true;
            break;
        }
        if t.is(&[
            "and", "but", "because", "so", "who", "which", "that", "i", "we", "she", "he", "to",
            "for",
        ]) {
            return (out, String::new());
        }
        if toks[i].pause {
            desc.clear();
        } else if !t.is(crate::personal::phrase::DETERMINERS)
            && !t.is(&["last", "week", "month", "ago", "yesterday", "year"])
        {
            desc.push(t.orig.clone());
        }
        i += 1;
    }
    if !(found || i == from && toks.get(i).is_some_and(|t| t.cap())) {
        return (out, String::new());
    }
    while let Some(t) = toks.get(i) {
        if t.cap() && !t.is(&["i"]) && t.orig.chars().all(|c| c.is_alphabetic()) {
            out.push(t.orig.clone());
        } else if !t.is(&["and", "&"]) {
            break;
        }
        i += 1;
    }
    (out, desc.join(" "))
}

/// "called Crumb" after a phrase.
pub(super) fn named_after(toks: &[Tok], end: usize) -> Option<String> {
    toks.iter()
        .skip(end)
        .take(4)
        .position(|t| t.is(&["called", "named"]))
        .and_then(|p| toks.get(end + p + 1))
        .map(|t| t.orig.clone())
}

pub(super) fn business(toks: &[Tok], r: usize) -> bool {
    toks.iter().skip(r).take(5).any(|t| t.is(BUSINESSES))
}

/// Sold, traded in, gave away, lost: a possession no longer had.
pub(super) fn gave_up_thing(f: &mut Facts<'_, '_>, v: &str, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    let mut from = r;
    if toks.get(from).is_some_and(|t| t.is(&["in", "away"])) {
        from += 1;
    }
    if c.is_future() || c.negated {
        return;
    }
    let (np, end) = noun_phrase(toks, from);
    let low = np.to_lowercase();
    let words: Vec<&str> = low.split(' ').collect();
    if v == canon("lose") && kind_of(&words).is_none() {
        return;
    }
    if words.iter().any(|w| BUSINESSES.contains(w)) {
        f.add(C::Work, "workplace", "workplace", &np, true);
    } else {
        let model = brand_words(toks, from, end);
        let kind = kind_of(&words).map(|(_, k)| k);
        let key = if model.is_empty() {
            kind.clone().unwrap_or_else(|| low.clone())
        } else {
            model
        };
        if kind.is_none()
            && key == low
            && !toks
                .get(from)
                .is_some_and(|t| t.cap() || t.is(&["my", "the", "our"]))
        {
            return;
        }
        f.add(
            C::Possession,
            kind.as_deref().unwrap_or(&key),
            &key,
            &np,
            true,
        );
    }
    // "traded in the Outback for a VW California camper"
    if let Some(p) = toks.iter().skip(end).position(|t| t.is(&["for"])) {
        have(f, &canon("buy"), end + p + 1, &mut Context::default());
    }
    f.changed(n);
}

/// What kind of thing a phrase (lowercased words) names: a pet (its animal) or a
/// belonging (its kind). Read from its head, the last word, or from the word before a
/// brand or model at the end ("MacBook Pro", "Fitbit Charge 5"); "cat food" and "a
/// stuffed animal dog" are neither.
pub(super) fn kind_of(words: &[&str]) -> Option<(C, String)> {
    const NOT_ALIVE: &[&str] = &[
        "toy", "stuffed", "plush", "figurine", "statue", "painting", "photo", "picture", "drawing",
        "food", "treats", "bed", "leash", "collar", "bowl", "crate", "costume", "mug", "shirt",
        "poster", "sticker", "video", "videos", "show", "movie",
    ];
    if words.iter().any(|w| NOT_ALIVE.contains(w)) {
        return None;
    }
    let lookup = |w: &str| {
        let w = w.trim_end_matches("'s");
        if let Some((_, animal)) = PETS.iter().find(|(p, _)| *p == w) {
            return Some((C::Pet, animal.to_string()));
        }
        THINGS
            .iter()
            .find(|(t, _)| *t == w)
            .map(|(_, kind)| (C::Possession, kind.to_string()))
    };
    let head = *words.last()?;
    if let Some(k) = lookup(head) {
        return Some(k);
    }
    // A model after the kind: "macbook pro", "charge 5"; the head is then a short word
    // or a number.
    let model_tail = head.len() <= 4 || head.chars().any(|c| c.is_ascii_digit());
    if model_tail && words.len() >= 2 {
        return lookup(words[words.len() - 2]);
    }
    None
}

/// What follows `r` names a condition of health ("migraines", "type 2 diabetes").
pub(super) fn condition_after(toks: &[Tok], r: usize) -> Option<String> {
    let (np, _) = phrase(
        toks,
        r,
        &[
            "because", "but", "since", "so", "and", "which", "when", "last", "ago", "for", "after",
            "from", "a", "every", "in", "on",
        ],
        5,
    );
    let low = np.to_lowercase();
    let hit = CONDITIONS
        .iter()
        .any(|c| low.split(' ').any(|w| w == *c) || (c.contains(' ') && low.contains(c)))
        || low
            .split(' ')
            .any(|w| w.ends_with("itis") || w.ends_with("osis") || w.ends_with("emia"));
    hit.then_some(np)
}
