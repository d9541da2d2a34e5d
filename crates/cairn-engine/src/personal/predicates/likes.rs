//! What a subject likes or dislikes: love, hate, prefer, enjoy.
use super::facts::Facts;
use crate::personal::phrase::{canon, is_known_verb, is_pointer, phrase, Tok, VALUE_STOPS};
use cairn_core::FactCategory as C;

/// Likes and dislikes: "I love X", "I can't stand X", "I prefer X over Y".
pub(super) fn liking(f: &mut Facts<'_, '_>, v: &str, r: usize) {
    let c = f.c;
    let toks = c.toks;
    let dislike = [
        "hate", "dislike", "detest", "loathe", "despise", "stand", "bear",
    ]
    .iter()
    .any(|b| canon(b) == v);
    // "can't stand", "can't bear" are dislikes said with a negation.
    let stand = v == canon("stand") || v == canon("bear");
    if stand && !c.negated {
        return;
    }
    let negated = if stand { true } else { dislike != c.negated };
    let mut from = r;
    if toks.get(from).is_some_and(|t| t.is(&["to"])) {
        from += 1;
    }
    if toks.get(from).is_some_and(|t| {
        t.is(&[
            "it", "that", "this", "them", "you", "how", "what", "when", "the idea", "your",
        ])
    }) {
        return;
    }
    let stops: Vec<&str> = VALUE_STOPS
        .iter()
        .copied()
        .filter(|w| !matches!(*w, "to" | "of" | "in" | "on" | "at"))
        .collect();
    let (thing, end) = phrase(toks, from, &stops, 6);
    let thing = thing.trim_end_matches(" so much").to_string();
    if thing.is_empty() || is_pointer(&thing) || about_something_said(toks, from, end) {
        return;
    }
    f.add(
        C::Preference,
        &format!("taste: {thing}"),
        &thing,
        &thing,
        negated,
    );
    if v == canon("prefer") {
        if let Some(p) = toks
            .iter()
            .skip(end)
            .take(2)
            .position(|t| t.is(&["over", "to", "than"]))
        {
            let (other, _) = phrase(toks, end + p + 1, &stops, 5);
            f.add(
                C::Preference,
                &format!("taste: {other}"),
                &other,
                &other,
                true,
            );
        }
    }
    // "I love spicy Thai food but I really dislike olives" is two clauses; "I love
    // cycling and hiking" one liking of each.
    if toks.get(end).is_some_and(|t| t.is(&["and"]))
        && !toks.get(end + 1).is_some_and(|t| t.is(&["i", "we", "my"]))
    {
        let (other, _) = phrase(toks, end + 1, &stops, 5);
        if !other.is_empty()
            && !is_known_verb(&other.split(' ').next().unwrap_or("").to_lowercase())
        {
            f.add(
                C::Preference,
                &format!("taste: {other}"),
                &other,
                &other,
                negated,
            );
        }
    }
}

/// Whether a liked phrase is about what was just said ("the idea of ...", "the sound of
/// that") or a bare -ing form of something pointed at ("watching them play").
pub(super) fn about_something_said(toks: &[Tok], from: usize, end: usize) -> bool {
    let words: Vec<&str> = toks[from..end]
        .iter()
        .map(|t| t.low.as_str())
        .filter(|w| !crate::personal::phrase::DETERMINERS.contains(w))
        .collect();
    let first = words.first().copied().unwrap_or("");
    let talk = [
        "idea",
        "ideas",
        "sound",
        "look",
        "thought",
        "way",
        "fact",
        "concept",
        "suggestion",
        "suggestions",
        "recommendation",
        "recommendations",
        "tip",
        "tips",
        "option",
        "options",
        "plan",
        "approach",
        "list",
        "advice",
        "help",
        "resources",
        "info",
        "information",
        "answer",
        "response",
        "feedback",
        "question",
        "point",
        "part",
    ];
    talk.contains(&first)
        || (words.len() == 1
            && first.ends_with("ing")
            && toks.get(end).is_some_and(|t| {
                t.is(&[
                    "them", "it", "that", "this", "him", "her", "those", "these", "you",
                ])
            }))
}
