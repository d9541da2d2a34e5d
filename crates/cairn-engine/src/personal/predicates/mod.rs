//! What a clause says of its subject, by the kind of its verb: where they live (live,
//! move), work (work at, join, leave), what they are (the copula with a role, a diet, a
//! status), what they have (have, own, adopt, buy, sell), like (love, hate, prefer), do
//! regularly (a verb with a frequency), plan (plan to, will, a progressive with a future
//! time), and how many of something (a number with a plural noun).
use super::clause::Clause;
use super::discourse::{Context, Speaking};
use super::fact::Personal;
use super::lexicon::{BODY, RELATIONS};
use super::phrase::{is_pointer, phrase, Tok};
use cairn_core::FactCategory as C;

mod copula;
mod counts;
mod facts;
mod having;
mod likes;
mod places;
mod plans;
mod verbs;
use copula::*;
use counts::*;
use facts::Facts;
use having::*;
use plans::*;
use verbs::*;

/// "her name is Rosie", "his name's Max": the name.
pub fn naming(toks: &[Tok]) -> Option<String> {
    let i = toks.iter().position(|t| !t.is(&["and", "so", "oh"]))?;
    if !toks[i].is(&["her", "his", "its", "their"]) {
        return None;
    }
    let rest = toks.get(i + 1..i + 4)?;
    (rest[0].is(&["name", "name's"]) && rest[1].is(&["is", "was"]) && rest[2].cap())
        .then(|| rest[2].orig.clone())
        .or_else(|| (rest[0].is(&["name's"]) && rest[1].cap()).then(|| rest[1].orig.clone()))
}

/// Statements whose subject is not a person but which say something of the speaker:
/// "Coffee is my thing", "reading isn't really my thing", "the ThinkPad finally died".
pub fn without_subject(toks: &[Tok], speaking: &Speaking<'_>) -> Option<Personal> {
    let be = toks
        .iter()
        .position(|t| t.is(&["is", "are", "was", "has", "died", "broke"]))?;
    if be == 0
        || toks[..be]
            .iter()
            .any(|t| t.is(&["i", "we", "you", "he", "she", "they", "it"]))
    {
        return None;
    }
    let mut start = 0;
    while toks[start].is(&[
        "honestly", "so", "well", "oh", "and", "but", "also", "the", "my", "our", "actually",
    ]) && start + 1 < be
    {
        start += 1;
    }
    let thing: Vec<&str> = toks[start..be].iter().map(|t| t.orig.as_str()).collect();
    let thing = thing.join(" ");
    let person = speaking.speaker.to_string();
    let fact = |category, label: String, key: &str, value: &str, negated| Personal {
        person: person.clone(),
        category,
        label,
        key: key.to_lowercase(),
        value: value.to_string(),
        negated,
        revision: false,
        since: None,
    };
    if let Some(negated) = called_my_taste(&toks[be + 1..]).filter(|_| !is_pointer(&thing)) {
        return Some(fact(
            C::Preference,
            format!("taste: {thing}"),
            &thing,
            &thing,
            negated,
        ));
    }
    // "the ThinkPad finally died", "my old car broke down"
    let (kind, key, thing) = gone_belonging(toks, start, be)?;
    Some(fact(C::Possession, kind, &key, &thing, true))
}

/// "(not) my thing", "really my jam", "my go-to": the words after the verb call the
/// subject the speaker's taste; whether they deny it.
fn called_my_taste(after_verb: &[Tok]) -> Option<bool> {
    let after: Vec<&str> = after_verb
        .iter()
        .map(|t| t.low.as_str())
        .filter(|w| {
            !matches!(
                *w,
                "really"
                    | "just"
                    | "totally"
                    | "definitely"
                    | "always"
                    | "been"
                    | "honestly"
                    | "kind"
                    | "of"
            )
        })
        .collect();
    let negated = after.first() == Some(&"not");
    let after = if negated { &after[1..] } else { &after[..] };
    let mine = after.first() == Some(&"my")
        && after.get(1).is_some_and(|w| {
            matches!(
                *w,
                "thing"
                    | "jam"
                    | "favorite"
                    | "favourite"
                    | "passion"
                    | "weakness"
                    | "obsession"
                    | "go-to"
            )
        });
    mine.then_some(negated)
}

/// "the ThinkPad finally died", "my old car broke down": a belonging (the subject,
/// `toks[start..be]`) no longer had. Its kind, its key (the model, else the kind), and
/// the words naming it.
fn gone_belonging(toks: &[Tok], start: usize, be: usize) -> Option<(String, String, String)> {
    let words: Vec<&str> = toks[start..be]
        .iter()
        .map(|t| t.low.as_str())
        .filter(|w| !w.ends_with("ly") && !matches!(*w, "just" | "now" | "also" | "still"))
        .collect();
    let gone = toks[be..]
        .iter()
        .take(3)
        .any(|t| t.is(&["died", "broke", "stolen", "totaled"]));
    if !gone || !toks.first().is_some_and(|t| t.is(&["the", "my", "our"])) {
        return None;
    }
    let Some((C::Possession, kind)) = kind_of(&words) else {
        return None;
    };
    let model = brand_words(toks, start, be);
    let key = if model.is_empty() {
        kind.clone()
    } else {
        model
    };
    let thing = toks[start..be]
        .iter()
        .filter(|t| !t.low.ends_with("ly"))
        .map(|t| t.orig.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    Some((kind, key, thing))
}

/// The personal facts of one clause.
pub fn read(c: &Clause<'_>, speaking: &Speaking<'_>, ctx: &mut Context) -> Vec<Personal> {
    let mut f = Facts {
        c,
        out: Vec::new(),
        at: speaking.at,
        speaker: speaking.speaker.to_string(),
    };
    let before = f.out.len();
    if c.verb >= c.toks.len() {
        return f.out;
    }
    if c.verb_tok().is(&["my", "our"]) {
        possessive_statement(&mut f);
    } else if c.copula {
        copula(&mut f, ctx);
    } else {
        verb(&mut f, ctx);
    }
    if f.out.len() == before {
        count(&mut f, ctx);
    }
    if f.out.len() == before && !c.copula {
        habit(&mut f);
    }
    remember_object(c, ctx);
    if c.who.bare_name {
        f.out.retain(|p| {
            matches!(
                p.category,
                C::Home | C::Work | C::Role | C::Family | C::Plan
            )
        });
    }
    f.out
}

/// "my partner Ana", "my brother Kenji" anywhere in a sentence: a relation with a name
/// (and the name, for later clauses, is that relation).
pub fn named_relations(toks: &[Tok], speaking: &Speaking<'_>, ctx: &mut Context) -> Vec<Personal> {
    let mut out = Vec::new();
    for i in 0..toks.len() {
        if !toks[i].is(&["my", "our"]) {
            continue;
        }
        let mut j = i + 1;
        let best = toks.get(j).is_some_and(|t| t.is(&["best"]));
        if best {
            j += 1;
        }
        let Some(rel) = toks.get(j).filter(|t| t.is(RELATIONS)) else {
            continue;
        };
        let name = toks
            .get(j + 1)
            .filter(|t| t.cap() && t.orig.chars().all(|c| c.is_alphabetic()));
        let Some(name) = name else { continue };
        let label = if best {
            format!("best {}", rel.low)
        } else {
            rel.low.clone()
        };
        let person = format!("{}'s {label}", speaking.speaker);
        if !ctx.aliases.iter().any(|(n, _)| *n == name.orig) {
            ctx.aliases.push((name.orig.clone(), person));
        }
        out.push(Personal {
            person: speaking.speaker.to_string(),
            category: C::Family,
            label: label.clone(),
            key: label,
            value: name.orig.clone(),
            negated: false,
            revision: false,
            since: None,
        });
    }
    out
}

/// "my favorite food is sushi", "my goal is to run a marathon", "my knee has been bad".
fn possessive_statement(f: &mut Facts<'_, '_>) {
    let toks = f.c.toks;
    let i = f.c.verb;
    let Some(be) = (i + 1..toks.len().min(i + 6)).find(|&k| {
        toks[k].is(&["is", "are", "was", "has", "have", "keeps"])
            || (toks[k].is(&["died", "broke", "passed"]) && k > i + 1)
    }) else {
        return;
    };
    let head: Vec<&str> = toks[i + 1..be].iter().map(|t| t.low.as_str()).collect();
    let named: Vec<&str> = toks[i + 1..be].iter().map(|t| t.orig.as_str()).collect();
    let after = complement_start(toks, be);
    let negated = toks[be..after].iter().any(|t| t.is(&["not"]));
    let favorite = head
        .first()
        .is_some_and(|w| matches!(*w, "favorite" | "favourite" | "fave" | "fav"));
    let (value, _) = phrase(toks, after, &["because", "but", "since", "so", "which"], 6);
    if favorite {
        let label = named.join(" ");
        f.add(C::Preference, &label, &label, &value, negated);
        return;
    }
    if head.len() <= 3
        && head.iter().any(|w| {
            matches!(
                *w,
                "goal" | "plan" | "dream" | "resolution" | "aim" | "hope" | "intention"
            )
        })
    {
        let (value, _) = phrase(toks, after, &["because", "but", "since", "so"], 8);
        f.add(C::Plan, &format!("plan: {value}"), &value, &value, false);
        return;
    }
    if head.len() == 1
        && matches!(
            head[0],
            "job" | "role" | "title" | "profession" | "occupation"
        )
    {
        f.add(C::Role, "occupation", "occupation", &value, negated);
        return;
    }
    if head.len() == 1 && BODY.contains(&head[0]) {
        let (state, _) = phrase(toks, be, &["because", "but", "since", "so", "which"], 6);
        f.add(
            C::Health,
            head[0],
            head[0],
            &format!("{} {state}", head[0]),
            false,
        );
        return;
    }
    // "my dog died", "my laptop broke"
    if toks[be].is(&["died", "broke", "passed"]) {
        let thing = named.join(" ");
        let kind = kind_of(&head);
        match kind {
            Some((C::Pet, _)) => f.add(C::Pet, &thing, &thing, &thing, true),
            Some((C::Possession, k)) => f.add(C::Possession, &k, &thing, &thing, true),
            _ if head.iter().any(|w| RELATIONS.contains(w)) => {
                f.add(C::Family, &thing, &thing, &thing, true)
            }
            _ => {}
        }
    }
}

/// Where the complement starts after the verb at `be`: past the auxiliaries, adverbs and
/// "not" that follow it ("has always been", "is not going to be").
fn complement_start(toks: &[Tok], be: usize) -> usize {
    let mut after = be + 1;
    while toks.get(after).is_some_and(|t| {
        t.is(&[
            "been",
            "to",
            "be",
            "always",
            "definitely",
            "probably",
            "really",
            "still",
            "now",
            "got",
            "going",
            "gonna",
            "has",
            "have",
            "just",
            "not",
        ])
    }) {
        after += 1;
    }
    after
}
