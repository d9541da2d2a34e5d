//! How many of something a subject has (a number with a plural noun), and what to
//! remember of an object for the clauses after it.
use super::facts::Facts;
use super::plans::{frequency, main_part};
use crate::personal::clause::{verb_stem, Clause};
use crate::personal::discourse::Context;
use crate::personal::phrase::{is_pointer, is_verb, noun_phrase, number, phrase, VALUE_STOPS};
use cairn_core::FactCategory as C;

/// A number of things: "I've visited 14 countries", "I just passed 350 records", "I
/// have about 300" (of the thing named before).
pub(super) fn count(f: &mut Facts<'_, '_>, ctx: &Context) {
    let c = f.c;
    let toks = c.toks;
    if c.copula && !c.low.contains(" been to ") || c.is_future() {
        return;
    }
    const COUNTING: &[&str] = &[
        "have", "own", "visit", "read", "watch", "try", "finish", "complete", "collect", "adopt",
        "buy", "get", "make", "run", "attend", "see", "pass", "reach", "hit", "raise", "grow",
        "plant", "take", "do", "write", "bake", "knit", "paint", "publish", "win", "play", "keep",
        "save", "lose", "climb", "hike", "cook", "brew", "build", "sell", "go", "be", "earn",
        "score", "record", "finish", "host", "travel", "fly", "land", "lift", "swim",
    ];
    if !c.copula && !is_verb(&c.verb_tok().low, COUNTING) || frequency(&main_part(c)) {
        return;
    }
    for i in c.verb..toks.len() {
        let Some(k) = number(&toks[i].low).filter(|k| *k >= 2) else {
            continue;
        };
        // Not a time, an age, a price or a measure.
        if toks.get(i + 1).is_some_and(|t| {
            t.low.starts_with("year") && toks.get(i + 2).is_some_and(|t| t.is(&["old"]))
        }) {
            return;
        }
        let (thing, _) = phrase(toks, i + 1, VALUE_STOPS, 4);
        let thing = if thing.is_empty()
            || toks
                .get(i + 1)
                .is_some_and(|t| t.is(&["at", "so", "now", "by", "this", "in"]))
        {
            match &ctx.last_object {
                Some(o) => o.clone(),
                None => return,
            }
        } else {
            thing
        };
        let low = thing.to_lowercase();
        if is_measure(&low)
            || !(low.ends_with('s') || low.ends_with("ren") || low.ends_with("people"))
        {
            return;
        }
        let n = f.out.len();
        f.add(
            C::Count,
            &format!("number of {thing}"),
            head_noun(&low),
            &format!("{k} {thing}"),
            c.negated,
        );
        if c.change || !matches!(verb_stem(c).as_str(), "hav") {
            f.changed(n);
        }
        return;
    }
}

/// The last word of a phrase: what a count counts ("vinyl records" -> "records").
pub(super) fn head_noun(phrase: &str) -> &str {
    phrase.rsplit(' ').next().unwrap_or(phrase)
}

/// Units of measure and of time, which a number counts without them being things had.
pub(super) fn is_measure(thing: &str) -> bool {
    const MEASURES: &[&str] = &[
        "cups",
        "glasses",
        "miles",
        "km",
        "kilometers",
        "kilometres",
        "steps",
        "hours",
        "minutes",
        "seconds",
        "days",
        "weeks",
        "months",
        "years",
        "times",
        "pounds",
        "kilos",
        "kg",
        "lbs",
        "calories",
        "dollars",
        "bucks",
        "euros",
        "percent",
        "reps",
        "sets",
        "laps",
        "pages",
        "grams",
        "liters",
        "litres",
        "meters",
        "metres",
        "feet",
        "inches",
        "degrees",
        "points",
        "mins",
        "hrs",
        "nights",
        "bottles",
        "shots",
        "servings",
        "slices",
        "pieces",
        "words",
        "people",
        "guests",
        "friends",
        "bucks",
        "k",
        "am",
        "pm",
        "o'clock",
        "weekends",
        "decades",
        "semesters",
        "seasons",
        "episodes",
        "rounds",
        "sessions",
    ];
    let first = thing.split(' ').next().unwrap_or("");
    MEASURES.contains(&first) || MEASURES.contains(&thing)
}

/// Keeps the last plural object named, for a number said without one ("I have 300").
pub(super) fn remember_object(c: &Clause<'_>, ctx: &mut Context) {
    if c.verb >= c.toks.len() {
        return;
    }
    let (np, _) = noun_phrase(c.toks, c.verb + 1);
    let low = np.to_lowercase();
    if low.ends_with('s')
        && !is_pointer(&np)
        && number(low.split(' ').next().unwrap_or("")).is_none()
    {
        ctx.last_object = Some(np);
    }
}
