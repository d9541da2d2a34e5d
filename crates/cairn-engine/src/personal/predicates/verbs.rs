//! A clause's verb sent to the reader of its kind (live, move, work, have, like, ...).
use super::copula::role_phrase;
use super::facts::Facts;
use super::having::{business, condition_after, gave_up_thing, have, named_after};
use super::likes::liking;
use super::places::{got, got_job, home, job_words, left, moved, started, stopped, take, work};
use super::plans::{frequency, habit, intend, plan_phrase};
use crate::personal::clause::{verb_stem, Tense};
use crate::personal::discourse::Context;
use crate::personal::lexicon::BODY;
use crate::personal::phrase::{canon, is_pointer, list, lows, noun_phrase, phrase};
use cairn_core::FactCategory as C;

/// The main verb as each family of verbs reads it.
struct Verb<'t> {
    /// Its canonical stem.
    stem: String,
    /// Where the words after it start.
    r: usize,
    /// The word right after it ("up" in "grew up").
    next: &'t str,
    /// How many facts the clause had before the verb was read (for `Facts::changed`).
    n: usize,
}

impl Verb<'_> {
    /// The verb is one of `bases`.
    fn is(&self, bases: &[&str]) -> bool {
        bases.iter().any(|b| canon(b) == self.stem)
    }
}

/// A main verb's statement. The families are tried in this order, and the first whose
/// verb it is reads it.
pub(super) fn verb(f: &mut Facts<'_, '_>, ctx: &mut Context) {
    let c = f.c;
    if c.rather && !c.negated {
        return rather(f);
    }
    let r = c.rest();
    let v = Verb {
        stem: verb_stem(c),
        r,
        next: c.toks.get(r).map(|t| t.low.as_str()).unwrap_or(""),
        n: f.out.len(),
    };
    let read = home_or_job(f, &v, ctx)
        || school_or_business(f, &v)
        || belongings_and_tastes(f, &v, ctx)
        || health(f, &v)
        || plans(f, &v)
        || partner_or_routine(f, &v);
    if !read
        && c.is_future()
        && !c.negated
        && v.is(&[
            "visit", "travel", "fly", "go", "head", "attend", "start", "move", "take", "get",
            "spend", "host", "throw",
        ])
    {
        plan_phrase(f, c.verb);
    }
}

/// "I'd rather have something salty (than sweet)"
fn rather(f: &mut Facts<'_, '_>) {
    let toks = f.c.toks;
    let r = f.c.rest();
    let (thing, end) = noun_phrase(toks, r);
    if !thing.is_empty() && !is_pointer(&thing) {
        f.add(
            C::Preference,
            &format!("taste: {thing}"),
            &thing,
            &thing,
            false,
        );
        if toks.get(end).is_some_and(|t| t.is(&["than"])) {
            let (other, _) = noun_phrase(toks, end + 1);
            f.add(
                C::Preference,
                &format!("taste: {other}"),
                &other,
                &other,
                true,
            );
        }
    }
}

/// Where the subject lives and works: live, move, grow up, work, join, become, get a
/// job, get, start, switch, leave. Whether the verb was one of them.
fn home_or_job(f: &mut Facts<'_, '_>, v: &Verb<'_>, ctx: &mut Context) -> bool {
    let c = f.c;
    let toks = c.toks;
    let r = v.r;
    if v.is(&["live", "reside"]) {
        home(f, r);
    } else if v.is(&["move", "relocate", "settle"]) {
        moved(f, r);
    } else if v.is(&["grow"]) && v.next == "up" {
        grew_up(f, r);
    } else if v.is(&["work"]) {
        work(f, r);
    } else if v.is(&["join"]) {
        joined(f, v, ctx);
    } else if v.is(&["become"]) {
        role_phrase(f, r, c.negated, ctx);
        f.changed(v.n);
    } else if v.is(&["get", "land", "accept", "take", "start", "begin", "find"])
        && job_words(toks, r)
    {
        got_job(f, r, ctx);
    } else if v.is(&["get"]) {
        got(f, r, ctx);
    } else if v.is(&["start", "begin"]) {
        started(f, r);
    } else if v.is(&["switch", "change"]) {
        switched(f, v, ctx);
    } else if v.is(&["leave", "quit", "resign", "retire"]) || v.is(&["lose"]) && job_words(toks, r)
    {
        left(f, r);
    } else {
        return false;
    }
    true
}

/// "I grew up in Ohio": a home, over.
fn grew_up(f: &mut Facts<'_, '_>, r: usize) {
    let toks = f.c.toks;
    if let Some(p) = toks.iter().skip(r).position(|t| t.is(&["in"])) {
        let (place, _) = noun_phrase(toks, r + p + 1);
        f.add(C::Home, "home", "home", &place, true);
    }
}

/// "I joined Stripe as an engineer", "I'm joining a startup" (a plan).
fn joined(f: &mut Facts<'_, '_>, v: &Verb<'_>, ctx: &mut Context) {
    let c = f.c;
    let toks = c.toks;
    let r = v.r;
    let (org, end) = noun_phrase(toks, r);
    let named = toks.get(r).is_some_and(|t| t.cap())
        || org
            .to_lowercase()
            .split(' ')
            .any(|w| matches!(w, "company" | "startup" | "firm" | "team"));
    if named && !c.is_future() {
        f.add(C::Work, "workplace", "workplace", &org, c.negated);
        if toks.get(end).is_some_and(|t| t.is(&["as"])) {
            role_phrase(f, end + 1, c.negated, ctx);
        }
        f.changed(v.n);
    } else if named {
        plan_phrase(f, c.verb);
    }
}

/// "I switched majors to biology", "I changed careers to nursing".
fn switched(f: &mut Facts<'_, '_>, v: &Verb<'_>, ctx: &mut Context) {
    let toks = f.c.toks;
    let r = v.r;
    if let Some(p) = toks.iter().skip(r).position(|t| t.is(&["to"])) {
        let what = lows(toks, r)[..p].join(" ");
        let (to, _) = noun_phrase(toks, r + p + 1);
        if what.contains("major") || what.contains("degree") {
            f.add(C::Role, "studies", "studies", &to, false);
            f.changed(v.n);
        } else if what.contains("job") || what.contains("career") {
            role_phrase(f, r + p + 1, false, ctx);
            f.changed(v.n);
        }
    }
}

/// What the subject teaches or studies, and a business they own or run. Whether the
/// verb was one of them.
fn school_or_business(f: &mut Facts<'_, '_>, v: &Verb<'_>) -> bool {
    let toks = f.c.toks;
    if v.is(&["teach"]) {
        teaching(f, v.r);
    } else if v.is(&["study", "major"]) {
        studying(f, v);
    } else if v.is(&[
        "own", "run", "manage", "found", "open", "co-own", "co-found",
    ]) && business(toks, v.r)
    {
        runs_business(f, v);
    } else {
        return false;
    }
    true
}

/// "I teach math": an occupation.
fn teaching(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let (what, _) = noun_phrase(c.toks, r);
    f.add(
        C::Role,
        "occupation",
        "occupation",
        &format!("teaching {what}"),
        c.negated || c.is_over(),
    );
}

/// "I study biology at McGill", "I majored in history": studies, and the school.
fn studying(f: &mut Facts<'_, '_>, v: &Verb<'_>) {
    let c = f.c;
    let toks = c.toks;
    let from = if v.next == "in" { v.r + 1 } else { v.r };
    let (field, end) = noun_phrase(toks, from);
    if matches!(
        field.to_lowercase().as_str(),
        "hard" | "a lot" | "late" | "all" | "together" | "there" | "it" | "for"
    ) {
        return;
    }
    f.add(
        C::Role,
        "studies",
        "studies",
        &field,
        c.negated || c.is_over(),
    );
    if let Some(t) = toks.get(end).filter(|t| t.is(&["at"])) {
        let _ = t;
        let (school, _) = noun_phrase(toks, end + 1);
        f.add(
            C::Work,
            "school",
            "school",
            &school,
            c.negated || c.is_over(),
        );
    }
}

/// "I own a bakery called Crumb", "we opened a cafe": a workplace.
fn runs_business(f: &mut Facts<'_, '_>, v: &Verb<'_>) {
    let c = f.c;
    let toks = c.toks;
    let (biz, end) = noun_phrase(toks, v.r);
    let named = named_after(toks, end);
    let value = match named {
        Some(name) => format!("{biz} {name}"),
        None => biz,
    };
    // Owning or running a business is over once said in the past; opening or
    // founding one is how it started.
    let over = c.is_over() && v.is(&["own", "run", "manage", "co-own"]);
    f.add(C::Work, "workplace", "workplace", &value, c.negated || over);
    if !over {
        f.changed(v.n);
    }
}

/// What the subject has, gave up, likes, no longer eats or drinks, avoids, watches.
/// Whether the verb was one of them.
fn belongings_and_tastes(f: &mut Facts<'_, '_>, v: &Verb<'_>, ctx: &mut Context) -> bool {
    let c = f.c;
    let (toks, r) = (c.toks, v.r);
    if v.is(&[
        "have", "own", "adopt", "rescue", "buy", "purchase", "upgrade", "drive", "ride", "replace",
        "pick", "order", "bring",
    ]) {
        have(f, &v.stem, r, ctx);
    } else if v.is(&["sell", "trade", "give", "lose"]) {
        gave_up_thing(f, &v.stem, r);
    } else if v.is(&[
        "love", "like", "enjoy", "adore", "prefer", "hate", "dislike", "detest", "loathe",
        "despise", "stand", "bear",
    ]) {
        liking(f, &v.stem, r);
    } else if v.is(&["eat", "drink"]) && (c.negated || c.tense == Tense::UsedTo) {
        for item in list(toks, r) {
            f.add(C::Diet, &format!("diet: {item}"), &item, &item, true);
        }
    } else if v.is(&["avoid", "cut", "stop", "give", "quit"]) {
        stopped(f, r);
    } else if v.is(&["watch"]) && toks.get(r).is_some_and(|t| t.is(&["my", "our"])) {
        let (what, _) = noun_phrase(toks, r);
        f.add(C::Diet, &format!("diet: {what}"), &what, &what, false);
    } else {
        return false;
    }
    true
}

/// A condition, an injury, a medicine or course taken, a medical aid used. Whether the
/// verb was one of them.
fn health(f: &mut Facts<'_, '_>, v: &Verb<'_>) -> bool {
    let c = f.c;
    let (toks, r) = (c.toks, v.r);
    if v.is(&["suffer", "struggle", "battle", "recover", "deal", "fight"])
        && condition_after(toks, r).is_some()
    {
        if let Some(cond) = condition_after(toks, r) {
            f.add(C::Health, &cond, &cond, &cond, c.negated);
        }
    } else if v.is(&[
        "break",
        "sprain",
        "injure",
        "hurt",
        "pull",
        "tear",
        "twist",
        "fracture",
        "dislocate",
        "strain",
        "bruise",
    ]) {
        injury(f, v);
    } else if v.is(&["take"]) {
        take(f, r);
    } else if v.is(&["use"]) {
        medical_aid(f, r);
    } else {
        return false;
    }
    true
}

/// "I sprained my ankle": the body part, hurt.
fn injury(f: &mut Facts<'_, '_>, v: &Verb<'_>) {
    let c = f.c;
    let body = c
        .toks
        .iter()
        .skip(v.r)
        .take(4)
        .find(|t| BODY.contains(&t.low.as_str()));
    if let Some(b) = body {
        let value = format!("{} {}", c.verb_tok().orig, b.orig);
        f.add(C::Health, &b.low, &b.low, &value, false);
        f.changed(v.n);
    }
}

/// "I use an inhaler every day": a medical aid (and a habit, said with a frequency).
fn medical_aid(f: &mut Facts<'_, '_>, r: usize) {
    let c = f.c;
    let (thing, _) = noun_phrase(c.toks, r);
    let medical = [
        "inhaler",
        "insulin",
        "cpap",
        "hearing aid",
        "wheelchair",
        "crutches",
        "cane",
        "epipen",
        "glasses",
        "contacts",
    ];
    if medical.iter().any(|m| thing.to_lowercase().contains(m)) {
        f.add(C::Health, &thing, &thing, &thing, c.negated);
        if frequency(&c.low) {
            habit(f);
        }
    }
}

/// Plans: intended, rescheduled, thought of, being learned, saved or trained for,
/// signed up for. Whether the verb was one of them.
fn plans(f: &mut Facts<'_, '_>, v: &Verb<'_>) -> bool {
    let c = f.c;
    let (toks, r) = (c.toks, v.r);
    if v.is(&[
        "plan", "intend", "aim", "hope", "want", "decide", "expect", "mean", "try",
    ]) {
        intend(f, r);
    } else if v.is(&["push", "postpone", "reschedule", "delay", "bump", "shift"])
        && toks.iter().skip(r).any(|t| t.is(&["to", "until", "till"]))
    {
        moved(f, r);
    } else if v.is(&["think", "consider"]) && c.progressive {
        thinking_of(f, v);
    } else if v.is(&["learn"]) && c.progressive && c.tense == Tense::Present && !c.negated {
        if !toks
            .get(r)
            .is_some_and(|t| t.is(&["about", "more", "that", "how", "what", "to"]))
            || toks.get(r).is_some_and(|t| t.is(&["to"]))
        {
            plan_phrase(f, c.verb);
        }
    } else if v.is(&["save"]) || (v.is(&["train", "prepare"]) && v.next == "for") {
        plan_phrase(f, c.verb);
    } else if v.is(&["enroll", "register", "sign"]) {
        let mut from = r;
        while toks
            .get(from)
            .is_some_and(|t| t.is(&["up", "in", "for", "on", "to"]))
        {
            from += 1;
        }
        plan_phrase(f, from);
    } else {
        return false;
    }
    true
}

/// "I'm thinking of/about moving": a plan, when what is thought of is an act.
fn thinking_of(f: &mut Facts<'_, '_>, v: &Verb<'_>) {
    let toks = f.c.toks;
    let from = if matches!(v.next, "of" | "about") {
        v.r + 1
    } else {
        v.r
    };
    if toks.get(from).is_some_and(|t| {
        t.low.ends_with("ing") && !t.is(&["nothing", "something", "anything", "everything"])
    }) {
        plan_phrase(f, from);
    }
}

/// Marrying, dating, waking up or setting an alarm, a relation who died. Whether the
/// verb was one of them.
fn partner_or_routine(f: &mut Facts<'_, '_>, v: &Verb<'_>) -> bool {
    let c = f.c;
    let (toks, r) = (c.toks, v.r);
    if v.is(&["marry"]) {
        marrying(f, v);
    } else if v.is(&["date", "see"]) && c.progressive {
        let (who, _) = noun_phrase(toks, r);
        if who.eq_ignore_ascii_case("someone") || toks.get(r).is_some_and(|t| t.cap()) {
            f.add(
                C::Family,
                "relationship status",
                "relationship status",
                &format!("dating {who}"),
                c.negated,
            );
        }
    } else if v.is(&["wake", "get"]) && v.next == "up"
        || v.is(&["set"]) && toks.iter().skip(r).any(|t| t.is(&["alarm"]))
    {
        wake_up_time(f, v);
    } else if v.is(&["die", "pass"]) && !c.who.speaker {
        // "my grandmother passed away": the speaker has one no longer.
        let me = f.speaker.clone();
        if let Some(rel) = c.who.person.strip_prefix(&format!("{me}'s ")) {
            f.add_about(&me, C::Family, rel, rel, rel, true);
        }
    } else {
        return false;
    }
    true
}

/// "we're getting married in June" (a plan), "I got married" (a status).
fn marrying(f: &mut Facts<'_, '_>, v: &Verb<'_>) {
    let c = f.c;
    if c.is_future() {
        plan_phrase(f, c.verb);
    } else {
        f.add(
            C::Family,
            "relationship status",
            "relationship status",
            "married",
            c.negated,
        );
        f.changed(v.n);
    }
}

/// "I wake up at 6", "I set my alarm for 5:30": a habit's time.
fn wake_up_time(f: &mut Facts<'_, '_>, v: &Verb<'_>) {
    let c = f.c;
    let label = if v.is(&["set"]) {
        "alarm"
    } else {
        "wake-up time"
    };
    let (when_, _) = phrase(
        c.toks,
        c.verb,
        &["because", "but", "since", "so", "and", "which"],
        8,
    );
    f.add(
        C::Habit,
        label,
        label,
        &when_,
        c.negated || c.tense == Tense::UsedTo,
    );
    if c.change {
        f.changed(v.n);
    }
}
