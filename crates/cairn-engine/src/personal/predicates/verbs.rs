//! A clause's verb sent to the reader of its kind (live, move, work, have, like, ...).
use super::*;

/// A main verb's statement.
pub(super) fn verb(f: &mut Facts<'_, '_>, ctx: &mut Context) {
    let c = f.c;
    let v = verb_stem(c);
    let r = c.rest();
    let toks = c.toks;
    let next = toks.get(r).map(|t| t.low.as_str()).unwrap_or("");
    let n = f.out.len();
    let is = |bases: &[&str]| bases.iter().any(|b| canon(b) == v);
    if c.rather && !c.negated {
        // "I'd rather have something salty (than sweet)"
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
        return;
    }
    if is(&["live", "reside"]) {
        return home(f, r);
    }
    if is(&["move", "relocate", "settle"]) {
        return moved(f, r);
    }
    if is(&["grow"]) && next == "up" {
        if let Some(p) = toks.iter().skip(r).position(|t| t.is(&["in"])) {
            let (place, _) = noun_phrase(toks, r + p + 1);
            f.add(C::Home, "home", "home", &place, true);
        }
        return;
    }
    if is(&["work"]) {
        return work(f, r);
    }
    if is(&["join"]) {
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
            f.changed(n);
        } else if named {
            plan_phrase(f, c.verb);
        }
        return;
    }
    if is(&["become"]) {
        role_phrase(f, r, c.negated, ctx);
        f.changed(n);
        return;
    }
    if is(&["get", "land", "accept", "take", "start", "begin", "find"]) && job_words(toks, r) {
        return got_job(f, r, ctx);
    }
    if is(&["get"]) {
        return got(f, r, ctx);
    }
    if is(&["start", "begin"]) {
        return started(f, r);
    }
    if is(&["switch", "change"]) {
        if let Some(p) = toks.iter().skip(r).position(|t| t.is(&["to"])) {
            let what = lows(toks, r)[..p].join(" ");
            let (to, _) = noun_phrase(toks, r + p + 1);
            if what.contains("major") || what.contains("degree") {
                f.add(C::Role, "studies", "studies", &to, false);
                f.changed(n);
            } else if what.contains("job") || what.contains("career") {
                role_phrase(f, r + p + 1, false, ctx);
                f.changed(n);
            }
        }
        return;
    }
    if is(&["leave", "quit", "resign", "retire"]) || is(&["lose"]) && job_words(toks, r) {
        return left(f, r);
    }
    if is(&["teach"]) {
        let (what, _) = noun_phrase(toks, r);
        f.add(
            C::Role,
            "occupation",
            "occupation",
            &format!("teaching {what}"),
            c.negated || c.is_over(),
        );
        return;
    }
    if is(&["study", "major"]) {
        let from = if next == "in" { r + 1 } else { r };
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
        return;
    }
    if is(&[
        "own", "run", "manage", "found", "open", "co-own", "co-found",
    ]) && business(toks, r)
    {
        let (biz, end) = noun_phrase(toks, r);
        let named = named_after(toks, end);
        let value = match named {
            Some(name) => format!("{biz} {name}"),
            None => biz,
        };
        // Owning or running a business is over once said in the past; opening or
        // founding one is how it started.
        let over = c.is_over() && is(&["own", "run", "manage", "co-own"]);
        f.add(C::Work, "workplace", "workplace", &value, c.negated || over);
        if !over {
            f.changed(n);
        }
        return;
    }
    if is(&[
        "have", "own", "adopt", "rescue", "buy", "purchase", "upgrade", "drive", "ride", "replace",
        "pick", "order", "bring",
    ]) {
        return have(f, &v, r, ctx);
    }
    if is(&["sell", "trade", "give", "lose"]) {
        return gave_up_thing(f, &v, r);
    }
    if is(&[
        "love", "like", "enjoy", "adore", "prefer", "hate", "dislike", "detest", "loathe",
        "despise", "stand", "bear",
    ]) {
        return liking(f, &v, r);
    }
    if is(&["eat", "drink"]) && (c.negated || c.tense == Tense::UsedTo) {
        for item in list(toks, r) {
            f.add(C::Diet, &format!("diet: {item}"), &item, &item, true);
        }
        return;
    }
    if is(&["avoid", "cut", "stop", "give", "quit"]) {
        return stopped(f, r);
    }
    if is(&["watch"]) && toks.get(r).is_some_and(|t| t.is(&["my", "our"])) {
        let (what, _) = noun_phrase(toks, r);
        f.add(C::Diet, &format!("diet: {what}"), &what, &what, false);
        return;
    }
    if is(&["suffer", "struggle", "battle", "recover", "deal", "fight"])
        && condition_after(toks, r).is_some()
    {
        if let Some(cond) = condition_after(toks, r) {
            f.add(C::Health, &cond, &cond, &cond, c.negated);
        }
        return;
    }
    if is(&[
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
        let body = toks
            .iter()
            .skip(r)
            .take(4)
            .find(|t| BODY.contains(&t.low.as_str()));
        if let Some(b) = body {
            let value = format!("{} {}", c.verb_tok().orig, b.orig);
            f.add(C::Health, &b.low, &b.low, &value, false);
            f.changed(n);
        }
        return;
    }
    if is(&["take"]) {
        return take(f, r);
    }
    if is(&["use"]) {
        let (thing, _) = noun_phrase(toks, r);
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
        return;
    }
    if is(&[
        "plan", "intend", "aim", "hope", "want", "decide", "expect", "mean", "try",
    ]) {
        return intend(f, r);
    }
    if is(&["push", "postpone", "reschedule", "delay", "bump", "shift"])
        && toks.iter().skip(r).any(|t| t.is(&["to", "until", "till"]))
    {
        return moved(f, r);
    }
    if is(&["think", "consider"]) && c.progressive {
        let from = if matches!(next, "of" | "about") {
            r + 1
        } else {
            r
        };
        if toks.get(from).is_some_and(|t| {
            t.low.ends_with("ing") && !t.is(&["nothing", "something", "anything", "everything"])
        }) {
            plan_phrase(f, from);
        }
        return;
    }
    if is(&["learn"]) && c.progressive && c.tense == Tense::Present && !c.negated {
        if !toks
            .get(r)
            .is_some_and(|t| t.is(&["about", "more", "that", "how", "what", "to"]))
            || toks.get(r).is_some_and(|t| t.is(&["to"]))
        {
            plan_phrase(f, c.verb);
        }
        return;
    }
    if is(&["save"]) || (is(&["train", "prepare"]) && next == "for") {
        plan_phrase(f, c.verb);
        return;
    }
    if is(&["enroll", "register", "sign"]) {
        let mut from = r;
        while toks
            .get(from)
            .is_some_and(|t| t.is(&["up", "in", "for", "on", "to"]))
        {
            from += 1;
        }
        plan_phrase(f, from);
        return;
    }
    if is(&["marry"]) {
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
            f.changed(n);
        }
        return;
    }
    if is(&["date", "see"]) && c.progressive {
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
        return;
    }
    if is(&["wake", "get"]) && next == "up"
        || is(&["set"]) && toks.iter().skip(r).any(|t| t.is(&["alarm"]))
    {
        let label = if is(&["set"]) {
            "alarm"
        } else {
            "wake-up time"
        };
        let (when_, _) = phrase(
            toks,
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
            f.changed(n);
        }
        return;
    }
    if is(&["die", "pass"]) && !c.who.speaker {
        // "my grandmother passed away": the speaker has one no longer.
        let me = f.speaker.clone();
        if let Some(rel) = c.who.person.strip_prefix(&format!("{me}'s ")) {
            f.add_about(&me, C::Family, rel, rel, rel, true);
        }
        return;
    }
    if c.is_future()
        && !c.negated
        && is(&[
            "visit", "travel", "fly", "go", "head", "attend", "start", "move", "take", "get",
            "spend", "host", "throw",
        ])
    {
        plan_phrase(f, c.verb);
    }
}
