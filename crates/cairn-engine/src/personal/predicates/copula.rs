//! The copula: what a subject is ("I'm a nurse", "I'm vegan", "my sister is a teacher"), and
//! what they like when it is said with one ("I'm a big fan of jazz").
use super::facts::Facts;
use super::plans::plan_phrase;
use crate::personal::clause::Tense;
use crate::personal::discourse::Context;
use crate::personal::lexicon::{DIETS, ROLES, ROLE_SUFFIXES};
use crate::personal::phrase::{list, lows, noun_phrase, phrase, VALUE_STOPS};
use cairn_core::FactCategory as C;

/// The copula's complement as each reader takes it.
struct Complement<'w> {
    /// Where it starts (the clause's `verb`).
    i: usize,
    /// Its words, lowercased, to the clause's end.
    w: Vec<&'w str>,
    first: &'w str,
    second: &'w str,
    /// A state said in the past ("I was vegan"), not the perfect.
    over: bool,
    /// Denied, or over.
    negated: bool,
    /// How many facts the clause had before (for `Facts::changed`).
    n: usize,
}

/// The copula's complement: a role, a diet, a status, a liking, a place.
pub(super) fn copula(f: &mut Facts<'_, '_>, ctx: &Context) {
    let c = f.c;
    let i = c.verb;
    let w = lows(c.toks, i);
    let first = w[0];
    let second = w.get(1).copied().unwrap_or("");
    let over = c.is_over() && c.tense != Tense::Perfect;
    let k = Complement {
        i,
        w,
        first,
        second,
        over,
        negated: c.negated || over,
        n: f.out.len(),
    };
    let read = lives_in(f, &k)
        || job_hunting(f, &k)
        || diet_or_allergy(f, &k)
        || relationship_status(f, &k)
        || health_or_work_status(f, &k)
        || liking_said(f, &k)
        || kind_of_person(f, &k);
    if read {
        return;
    }
    // Plans said with the copula: "I'm saving up for a house", "I'm about to".
    if first == "about" && second == "to" {
        plan_phrase(f, i + 2);
        return;
    }
    // "the X person"? no. "a nurse", "the vice principal", "a student at McGill".
    role_phrase(f, i, k.negated, ctx);
    if !f.out[k.n..].is_empty() && (c.change || over) {
        f.changed(k.n);
    }
    // "I'm from Ohio", "I'm in Lisbon" and the like say where someone is, not lives.
    let _ = ctx;
}

/// Where someone lives. Whether the complement said it.
fn lives_in(f: &mut Facts<'_, '_>, k: &Complement<'_>) -> bool {
    let c = f.c;
    let (toks, i) = (c.toks, k.i);
    if matches!(k.first, "based" | "located" | "settled" | "living") && k.second == "in" {
        let (place, _) = noun_phrase(toks, i + 2);
        f.add(C::Home, "home", "home", &place, k.negated);
        return true;
    }
    // "I've been in London since 2015": lived there.
    if k.first == "in"
        && c.tense == Tense::Perfect
        && toks.get(i + 1).is_some_and(|t| t.cap())
        && (c.low.contains(" since ") || c.low.contains(" for "))
    {
        let (place, _) = noun_phrase(toks, i + 1);
        f.add(C::Home, "home", "home", &place, c.negated);
        return true;
    }
    false
}

/// "I'm job hunting": a plan. Whether the complement said it.
fn job_hunting(f: &mut Facts<'_, '_>, k: &Complement<'_>) -> bool {
    if matches!(k.first, "job") && matches!(k.second, "hunting" | "searching" | "seeking") {
        f.add(
            C::Plan,
            "plan: job hunting",
            "job hunting",
            "job hunting",
            f.c.negated,
        );
        return true;
    }
    false
}

/// Allergies and diets. Whether the complement said one.
fn diet_or_allergy(f: &mut Facts<'_, '_>, k: &Complement<'_>) -> bool {
    let c = f.c;
    let (toks, i, first, w) = (c.toks, k.i, k.first, &k.w);
    if first == "allergic" || (first == "intolerant" && k.second == "to") {
        let from = i + 1 + usize::from(k.second == "to");
        for item in list(toks, from) {
            f.add(
                C::Diet,
                &format!("allergy: {item}"),
                &item,
                &item,
                c.negated,
            );
        }
        return true;
    }
    // A diet ("vegetarian", "on a keto diet", "lactose intolerant").
    let start = if matches!(first, "a" | "an") { 1 } else { 0 };
    let rest = w[start..].join(" ");
    if let Some(d) = DIETS.iter().find(|d| rest.starts_with(*d)) {
        f.add(C::Diet, "diet", "diet", d, k.negated);
        if c.change || k.over {
            f.changed(k.n);
        }
        return true;
    }
    if first == "on" && w.contains(&"diet") {
        let (d, _) = phrase(toks, i + 1, &["diet"], 4);
        f.add(C::Diet, "diet", "diet", &format!("{d} diet"), k.negated);
        return true;
    }
    false
}

/// Relationship status. Whether the complement said one.
fn relationship_status(f: &mut Facts<'_, '_>, k: &Complement<'_>) -> bool {
    const STATUS: &[&str] = &[
        "married",
        "engaged",
        "single",
        "divorced",
        "widowed",
        "separated",
        "dating",
        "seeing",
        "taken",
    ];
    let c = f.c;
    if STATUS.contains(&k.first)
        || (k.first == "in" && k.second == "a" && k.w.get(2) == Some(&"relationship"))
    {
        let (status, _) = phrase(
            c.toks,
            k.i,
            &["because", "but", "since", "so", "and", "for"],
            5,
        );
        f.add(
            C::Family,
            "relationship status",
            "relationship status",
            &status,
            k.negated,
        );
        if c.change || k.over {
            f.changed(k.n);
        }
        return true;
    }
    false
}

/// A condition ("diabetic", "diagnosed with"), no occupation ("retired"), a job lost
/// ("laid off from"). Whether the complement said one.
fn health_or_work_status(f: &mut Facts<'_, '_>, k: &Complement<'_>) -> bool {
    let c = f.c;
    let (toks, i, first, second) = (c.toks, k.i, k.first, k.second);
    if matches!(
        first,
        "pregnant" | "diabetic" | "asthmatic" | "epileptic" | "anemic"
    ) {
        f.add(C::Health, first, first, first, k.negated);
    } else if first == "diagnosed" && second == "with" {
        let (cond, _) = noun_phrase(toks, i + 2);
        f.add(C::Health, &cond, &cond, &cond, c.negated);
        f.changed(k.n);
    } else if matches!(first, "retired" | "unemployed") || (first == "between" && second == "jobs")
    {
        f.add(C::Role, "occupation", "occupation", first, c.negated);
        f.changed(k.n);
    } else if matches!(first, "laid" | "fired" | "let") {
        let from = k.w.iter().position(|x| *x == "from").map(|p| i + p + 1);
        let org = from
            .map(|p| noun_phrase(toks, p).0)
            .unwrap_or_else(|| "job".into());
        f.add(C::Work, "workplace", "workplace", &org, true);
        f.changed(k.n);
    } else {
        return false;
    }
    true
}

/// Likings said with the copula ("I'm a big fan of jazz"). Whether the complement said
/// one.
fn liking_said(f: &mut Facts<'_, '_>, k: &Complement<'_>) -> bool {
    let Some(skip) = liking_copula(&k.w) else {
        return false;
    };
    let c = f.c;
    let stops: Vec<&str> = VALUE_STOPS
        .iter()
        .copied()
        .filter(|w| !matches!(*w, "of" | "in" | "on" | "at"))
        .collect();
    let (thing, _) = phrase(c.toks, k.i + skip, &stops, 6);
    let neg = c.negated || k.w.first() == Some(&"not");
    f.add(
        C::Preference,
        &format!("taste: {thing}"),
        &thing,
        &thing,
        neg,
    );
    true
}

/// "a morning person" (a habit), "a cat person" (a liking), "a night owl". Whether the
/// complement said one.
fn kind_of_person(f: &mut Facts<'_, '_>, k: &Complement<'_>) -> bool {
    let c = f.c;
    let w = &k.w;
    if (k.first == "a" || k.first == "an") && w.contains(&"person") {
        let p = w.iter().position(|x| *x == "person").unwrap_or(1);
        let kind = w[1..p].join(" ");
        if matches!(kind.as_str(), "morning" | "night" | "early" | "evening") {
            f.add(
                C::Habit,
                &format!("{kind} person"),
                &format!("{kind} person"),
                &format!("{kind} person"),
                c.negated,
            );
        } else if !kind.is_empty() {
            f.add(
                C::Preference,
                &format!("taste: {kind}"),
                &kind,
                &kind,
                c.negated,
            );
        }
        return true;
    }
    if w.starts_with(&["a", "night", "owl"]) || w.starts_with(&["an", "early", "bird"]) {
        let v = w[1..3].join(" ");
        f.add(C::Habit, &v, &v, &v, c.negated);
        return true;
    }
    false
}

/// How many words a copula liking takes before its object ("a big fan of" = 4).
pub(super) fn liking_copula(w: &[&str]) -> Option<usize> {
    let w: Vec<&str> = w.iter().copied().filter(|x| *x != "really").collect();
    let s = w.join(" ");
    for (p, n) in [
        ("not a fan of ", 4),
        ("a huge fan of ", 4),
        ("a big fan of ", 4),
        ("a massive fan of ", 4),
        ("a fan of ", 3),
        ("huge fan of ", 3),
        ("big fan of ", 3),
        ("fan of ", 2),
        ("not into ", 2),
        ("into ", 1),
        ("obsessed with ", 2),
        ("passionate about ", 2),
        ("crazy about ", 2),
        ("hooked on ", 2),
        ("addicted to ", 2),
        ("in love with ", 3),
        ("keen on ", 2),
        ("fond of ", 2),
        ("a sucker for ", 3),
        ("tired of ", 2),
        ("sick of ", 2),
        ("not a big fan of ", 5),
    ] {
        if s.starts_with(p) {
            let extra = usize::from(w.len() < s.split(' ').count());
            return Some(n + extra);
        }
    }
    None
}

/// "a software engineer at Shopify", "the vice principal": an occupation, and where.
pub(super) fn role_phrase(f: &mut Facts<'_, '_>, i: usize, negated: bool, _ctx: &Context) {
    let toks = f.c.toks;
    let mut j = i;
    let mut negated = negated;
    if toks.get(j).is_some_and(|t| t.is(&["no"])) {
        negated = true;
    }
    if toks
        .get(j)
        .is_some_and(|t| t.is(&["a", "an", "the", "now", "currently", "no"]))
    {
        j += 1;
    }
    let start = j;
    let mut end = j;
    let mut head: Option<usize> = None;
    while end < toks.len() && end - start < 6 {
        let t = &toks[end];
        if t.is(&[
            "at", "for", "in", "with", "and", "but", "so", "because", "who", "since", "by", "from",
            "on",
        ]) {
            break;
        }
        if is_role(&t.low) {
            head = Some(end);
        }
        end += 1;
        if t.pause {
            break;
        }
    }
    let Some(h) = head else { return };
    // "a fan", "a morning person" are not occupations; the head must end the phrase
    // or be followed by a place.
    if DIETS.contains(&toks[h].low.as_str()) {
        return;
    }
    let words: Vec<&str> = toks[start..=h].iter().map(|t| t.orig.as_str()).collect();
    let role = words.join(" ");
    let studies = toks[h].is(&["student", "undergrad", "grad", "phd"]);
    f.add(C::Role, "occupation", "occupation", &role, negated);
    if let Some(p) = toks.get(h + 1).filter(|t| t.is(&["at", "for", "with"])) {
        let _ = p;
        let (org, _) = noun_phrase(toks, h + 2);
        if !org.is_empty() {
            let label = if studies { "school" } else { "workplace" };
            f.add(C::Work, label, label, &org, negated);
        }
    }
}

pub(super) fn is_role(w: &str) -> bool {
    let w = w.trim_end_matches("'s");
    ROLES.contains(&w)
        || (w.len() > 5
            && ROLE_SUFFIXES.iter().any(|s| w.ends_with(s))
            && !DIETS.contains(&w)
            && !matches!(
                w,
                "vegetarian" | "pescatarian" | "list" | "interest" | "exist"
            ))
}
