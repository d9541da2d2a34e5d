//! Where a subject lives and works: live, move, work at, get a job, start, leave, stop,
//! take (a course, a job).
use super::copula::role_phrase;
use super::facts::Facts;
use super::having::{condition_after, have};
use super::plans::{frequency, habit, habit_key, is_state_of_mind, plan_phrase};
use crate::personal::clause::{verb_stem, Tense};
use crate::personal::discourse::Context;
use crate::personal::lexicon::BUSINESSES;
use crate::personal::phrase::{canon, list, lows, noun_phrase, phrase, Tok};
use cairn_core::FactCategory as C;

/// "I live in Porto", "we live with my parents", "I lived in Oslo" (over).
pub(super) fn home(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let mut i = r;
    while toks
        .get(i)
        .is_some_and(|t| t.is(&["here", "currently", "now", "still", "right"]))
    {
        i += 1;
    }
    let Some(prep) = toks.get(i) else { return };
    let over = c.tense == Tense::UsedTo || (c.tense == Tense::Past && !c.progressive);
    if c.is_future() && !over {
        return;
    }
    let negated = c.negated || over;
    if prep.is(&["in", "at", "near", "outside", "on"]) {
        let (place, _) = noun_phrase(toks, i + 1);
        f.add(C::Home, "home", "home", &place, negated);
    } else if prep.is(&["with"]) {
        let (who, _) = noun_phrase(toks, i + 1);
        f.add(C::Home, "home", "home", &format!("with {who}"), negated);
    }
    if c.change {
        let n = f.out.len().saturating_sub(1);
        f.changed(n);
    }
}

/// "I moved to Lisbon last month" (a new home), "I'm moving to Denver" (a plan).
pub(super) fn moved(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    let w = lows(toks, r);
    let to = w
        .iter()
        .position(|x| matches!(*x, "to" | "into"))
        .filter(|&p| p <= 3);
    // "we moved the wedding to October": a plan rescheduled, not a home.
    if let (Some(p), true) = (to, moves_an_object(&w)) {
        return rescheduled(f, r, p);
    }
    let Some(p) = to else {
        if w.first() == Some(&"in") && w.get(1) == Some(&"with") {
            let (who, _) = noun_phrase(toks, r + 2);
            f.add(C::Home, "home", "home", &format!("with {who}"), c.negated);
            f.changed(n);
        }
        return;
    };
    let place = place_moved_to(toks, r + p + 1);
    if c.is_future() || c.progressive {
        plan_phrase(f, c.verb);
        return;
    }
    // "moved to Berlin for a job at Spotify"
    if let Some(q) = w
        .iter()
        .position(|x| matches!(*x, "job" | "position" | "role"))
    {
        if w.get(q + 1).is_some_and(|x| matches!(*x, "at" | "with")) {
            let (org, _) = noun_phrase(toks, r + q + 2);
            f.add(C::Work, "workplace", "workplace", &org, false);
        }
    }
    if c.negated {
        return;
    }
    f.add(C::Home, "home", "home", &place, false);
    if let Some(q) = w[..p].iter().position(|x| *x == "from") {
        let (old, _) = noun_phrase(toks, r + q + 1);
        f.add(C::Home, "home", "home", &old, true);
    }
    f.changed(n);
}

/// Whether the words after a moving verb start with its object ("the wedding"), not
/// with a particle or a place word ("to", "back", "home").
fn moves_an_object(w: &[&str]) -> bool {
    w.first().is_some_and(|x| {
        !matches!(
            *x,
            "to" | "into"
                | "back"
                | "out"
                | "in"
                | "away"
                | "over"
                | "here"
                | "there"
                | "home"
                | "abroad"
                | "across"
                | "down"
                | "up"
                | "from"
        )
    })
}

/// "we moved the wedding to October" (`to` at `r + p`): the plan and its new time.
fn rescheduled(f: &mut Facts<'_, '_>, r: usize, p: usize) {
    let toks = f.c.toks;
    let n = f.out.len();
    let (what, _) = noun_phrase(toks, r);
    let (when_, _) = phrase(
        toks,
        r + p + 1,
        &["because", "but", "since", "so", "which", "and"],
        5,
    );
    let key = what.to_lowercase();
    f.add(
        C::Plan,
        &format!("plan: {what}"),
        &key,
        &format!("{what} to {when_}"),
        false,
    );
    f.changed(n);
}

/// The place moved to, at `from`. "our new place in Denver": the place is where it is.
fn place_moved_to(toks: &[Tok], from: usize) -> String {
    let (mut place, end) = noun_phrase(toks, from);
    let generic = [
        "place",
        "house",
        "home",
        "apartment",
        "flat",
        "condo",
        "neighborhood",
        "neighbourhood",
        "city",
        "town",
    ];
    if generic.iter().any(|g| place.to_lowercase().ends_with(g))
        && toks.get(end).is_some_and(|t| t.is(&["in"]))
    {
        place = noun_phrase(toks, end + 1).0;
    }
    place
}

/// "I work at Stripe", "I work as a nurse", "I work night shifts", "I worked at X".
pub(super) fn work(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let over = c.tense == Tense::UsedTo || (c.tense == Tense::Past && !c.progressive);
    let negated = c.negated || over;
    let w = lows(toks, r);
    let n = f.out.len();
    match w.first().copied() {
        Some("as") => role_phrase(f, r + 1, negated, &Context::default()),
        Some("at" | "for") => {
            let (org, end) = noun_phrase(toks, r + 1);
            f.add(C::Work, "workplace", "workplace", &org, negated);
            if toks.get(end).is_some_and(|t| t.is(&["as"])) {
                role_phrase(f, end + 1, negated, &Context::default());
            }
        }
        Some("in") => {
            let (field, _) = noun_phrase(toks, r + 1);
            let place = toks.get(r + 1).is_some_and(|t| t.is(&["a", "an", "the"]))
                || toks.get(r + 1).is_some_and(|t| t.cap());
            if place {
                f.add(C::Work, "workplace", "workplace", &field, negated);
            } else {
                f.add(C::Role, "occupation", "occupation", &field, negated);
            }
        }
        Some("from" | "remotely" | "remote") => {
            let (how, _) = phrase(
                toks,
                c.verb,
                &["because", "but", "since", "so", "and", "which"],
                5,
            );
            f.add(
                C::Habit,
                "work arrangement",
                "work arrangement",
                &how,
                negated,
            );
        }
        Some(_)
            if frequency(&c.low)
                || w.iter().take(3).any(|x| {
                    matches!(
                        *x,
                        "shifts" | "shift" | "part-time" | "full-time" | "nights" | "weekends"
                    )
                }) =>
        {
            let (how, _) = phrase(
                toks,
                c.verb,
                &["because", "but", "since", "so", "which", "as"],
                6,
            );
            f.add(C::Habit, "work schedule", "work schedule", &how, negated);
        }
        _ => {}
    }
    // "I work night shifts at the airport as an air traffic controller"
    if f.out.len() > n && f.out[n].category == C::Habit {
        if let Some(p) = w.iter().position(|x| *x == "at") {
            let (org, end) = noun_phrase(toks, r + p + 1);
            f.add(C::Work, "workplace", "workplace", &org, negated);
            if toks.get(end).is_some_and(|t| t.is(&["as"])) {
                role_phrase(f, end + 1, negated, &Context::default());
            }
        }
    }
    if c.change || c.progressive {
        f.changed(n);
    }
}

/// The words after `r` speak of a job ("a job at", "a new position as", "working at").
pub(super) fn job_words(toks: &[Tok], r: usize) -> bool {
    toks.iter().skip(r).take(5).any(|t| {
        t.is(&[
            "job",
            "position",
            "role",
            "gig",
            "internship",
            "promoted",
            "promotion",
            "hired",
            "working",
            "work",
        ])
    }) || toks.get(r).is_some_and(|t| t.is(&["at", "as"]))
}

/// "I got a job at X as Y", "I started at Google", "I got promoted to manager".
pub(super) fn got_job(f: &mut Facts<'_, '_>, r: usize, ctx: &Context) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    let w = lows(toks, r);
    if c.is_future() || c.negated {
        return;
    }
    if let Some(p) = w.iter().position(|x| *x == "promoted") {
        if w.get(p + 1) == Some(&"to") {
            role_phrase(f, r + p + 2, false, ctx);
        }
        f.changed(n);
        return;
    }
    if let Some(p) = w.iter().position(|x| *x == "at").filter(|&p| p <= 5) {
        let (org, end) = noun_phrase(toks, r + p + 1);
        f.add(C::Work, "workplace", "workplace", &org, false);
        if toks.get(end).is_some_and(|t| t.is(&["as"])) {
            role_phrase(f, end + 1, false, ctx);
        }
    }
    if let Some(p) = w.iter().position(|x| *x == "as").filter(|&p| p <= 5) {
        if !f.out[n..].iter().any(|p| p.category == C::Role) {
            role_phrase(f, r + p + 1, false, ctx);
        }
    }
    f.changed(n);
}

/// "got married", "got a dog", "got diagnosed with", "got laid off", "get migraines".
pub(super) fn got(f: &mut Facts<'_, '_>, r: usize, ctx: &mut Context) {
    let c = f.c;
    let toks = c.toks;
    let w = lows(toks, r);
    let n = f.out.len();
    let first = w.first().copied().unwrap_or("");
    if matches!(first, "married" | "engaged" | "divorced") {
        if c.is_future() || c.progressive {
            plan_phrase(f, c.verb);
        } else if !c.negated {
            f.add(
                C::Family,
                "relationship status",
                "relationship status",
                first,
                false,
            );
            f.changed(n);
        }
        return;
    }
    if matches!(first, "laid" | "fired" | "let") {
        let from = w.iter().position(|x| *x == "from").map(|p| r + p + 1);
        let org = from
            .map(|p| noun_phrase(toks, p).0)
            .unwrap_or_else(|| "job".into());
        f.add(C::Work, "workplace", "workplace", &org, true);
        f.changed(n);
        return;
    }
    if first == "diagnosed" && w.get(1) == Some(&"with") {
        let (cond, _) = noun_phrase(toks, r + 2);
        f.add(C::Health, &cond, &cond, &cond, false);
        f.changed(n);
        return;
    }
    if let Some(cond) = condition_after(toks, r) {
        f.add(C::Health, &cond, &cond, &cond, c.negated);
        return;
    }
    if c.progressive && !c.is_future() {
        return;
    }
    have(f, "get", r, ctx);
}

/// "I started eating fish again", "I started running", "I started a new job".
pub(super) fn started(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    let Some(next) = toks.get(r) else { return };
    if c.is_future() {
        plan_phrase(f, c.verb);
        return;
    }
    if next.is(&["eating", "drinking"]) {
        for item in list(toks, r + 1) {
            f.add(C::Diet, &format!("diet: {item}"), &item, &item, c.negated);
        }
        f.changed(n);
        return;
    }
    if next.low.ends_with("ing") && next.low.len() > 4 && !is_state_of_mind(&next.low) {
        let (what, _) = phrase(
            toks,
            r,
            &[
                "because", "but", "since", "so", "and", "which", "in", "last", "this", "ago",
            ],
            5,
        );
        let key = habit_key(toks, r);
        f.add(C::Habit, &format!("habit: {key}"), &key, &what, c.negated);
        f.changed(n);
    }
}

/// "I left Shopify", "I quit my job at the bank", "I retired".
pub(super) fn left(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    if c.is_future() || c.negated {
        if c.is_future() && !c.negated {
            plan_phrase(f, c.verb);
        }
        return;
    }
    let w = lows(toks, r);
    if verb_stem(c) == canon("retire") && (w.is_empty() || !w[0].starts_with("from")) {
        f.add(C::Role, "occupation", "occupation", "retired", false);
        f.changed(n);
        return;
    }
    let from = if w.first() == Some(&"from") { r + 1 } else { r };
    if toks.get(from).is_some_and(|t| t.low.ends_with("ing")) {
        return stopped(f, r);
    }
    let (what, end) = noun_phrase(toks, from);
    let lw = what.to_lowercase();
    let org = toks.get(from).is_some_and(|t| t.cap())
        || lw.split(' ').any(|x| {
            BUSINESSES.contains(&x) || matches!(x, "job" | "company" | "position" | "role")
        });
    if !org {
        return;
    }
    let at = toks
        .get(end)
        .filter(|t| t.is(&["at"]))
        .map(|_| noun_phrase(toks, end + 1).0);
    let value = at.unwrap_or(what);
    f.add(C::Work, "workplace", "workplace", &value, true);
    // "lost my job as a banker"
    if toks.get(end).is_some_and(|t| t.is(&["as"])) {
        role_phrase(f, end + 1, true, &Context::default());
    }
    f.changed(n);
}

/// "I don't eat pork", "I stopped eating meat", "I quit smoking", "I avoid gluten".
pub(super) fn stopped(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let n = f.out.len();
    let Some(next) = toks.get(r) else { return };
    let mut from = r;
    if next.is(&["up", "out", "down", "on"]) {
        from += 1;
    }
    let first = toks.get(from).map(|t| t.low.as_str()).unwrap_or("");
    if matches!(first, "eating" | "drinking") {
        for item in list(toks, from + 1) {
            f.add(C::Diet, &format!("diet: {item}"), &item, &item, !c.negated);
        }
    } else if first.ends_with("ing") && first.len() > 4 {
        let key = habit_key(toks, from);
        let (what, _) = phrase(
            toks,
            from,
            &[
                "because", "but", "since", "so", "and", "which", "last", "this", "ago", "in",
            ],
            5,
        );
        f.add(C::Habit, &format!("habit: {key}"), &key, &what, !c.negated);
    } else if matches!(
        first,
        "alcohol"
            | "sugar"
            | "meat"
            | "dairy"
            | "gluten"
            | "caffeine"
            | "coffee"
            | "carbs"
            | "red"
            | "junk"
            | "soda"
            | "bread"
            | "fried"
            | "processed"
            | "beer"
            | "wine"
    ) || verb_stem(c) == canon("avoid")
    {
        for item in list(toks, from) {
            f.add(C::Diet, &format!("diet: {item}"), &item, &item, !c.negated);
        }
    }
    if f.out.len() > n {
        f.changed(n);
    }
}

/// Someone takes a medication ("I take metformin twice a day") or a class ("I take a
/// pottery class every Tuesday").
pub(super) fn take(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let Some(next) = toks.get(r) else { return };
    let bare = !next.is(&[
        "a", "an", "the", "my", "our", "some", "care", "time", "it", "that", "this", "place",
        "part", "turns", "off", "over", "up",
    ]);
    let medication = bare
        && !next.cap()
        && (frequency(&c.low)
            || c.low.contains(" for my ")
            || c.low.contains("daily")
            || next.is(&[
                "medication",
                "meds",
                "pills",
                "vitamins",
                "supplements",
                "insulin",
                "antidepressants",
                "painkillers",
            ]));
    if medication {
        let (med, _) = noun_phrase(toks, r);
        let value = phrase(toks, r, &["because", "but", "since", "so", "which"], 7).0;
        f.add(
            C::Health,
            &format!("medication: {med}"),
            &med,
            &value,
            c.negated || c.tense == Tense::UsedTo,
        );
        return;
    }
    if frequency(&c.low) || c.habitual {
        habit(f);
    } else if c.is_future() {
        plan_phrase(f, c.verb);
    }
}
