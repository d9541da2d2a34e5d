//! Notes about the user written in the third person, as agents save them ("The user is
//! allergic to peanuts", "Note: as of June the user works in Kinsale", "the user's
//! partner is a teacher"), read as the user's own statements: "the user" becomes "I",
//! "the user's" "my", and the verb after agrees ("works" -> "work", "is" -> "am"). The
//! clause grammar then reads them as it reads the user, so a note and a message stating
//! the same thing make one chain.

/// Whom "the user" names: the speaker a one-to-one chat's user messages are stored as.
pub const USER: &str = "user";

/// `sentence` with the user in the first person; `None` when it does not name them.
pub fn in_first_person(sentence: &str) -> Option<String> {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let bare = |w: &str| {
        w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\''))
            .replace('\u{2019}', "'")
            .to_lowercase()
    };
    let at = (0..words.len().saturating_sub(1)).find(|&i| {
        bare(words[i]) == "the" && matches!(bare(words[i + 1]).as_str(), "user" | "user's")
    })?;
    let mut out: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    let noun = words[at + 1];
    // The punctuation after "user" stays ("the user, who ..." -> "I, who ...").
    let tail: String = noun
        .chars()
        .skip_while(|c| c.is_alphanumeric() || *c == '\'' || *c == '\u{2019}')
        .collect();
    let possessive = bare(noun) == "user's";
    let lead = words[at]
        .chars()
        .take_while(|c| !c.is_alphanumeric())
        .collect::<String>();
    out[at] = format!("{lead}{}{tail}", if possessive { "my" } else { "I" });
    out.remove(at + 1);
    if !possessive {
        agree(&mut out[at + 1..]);
    }
    Some(out.join(" "))
}

/// Makes the verb after "I" agree with it: "is" -> "am", "has" -> "have", "does" ->
/// "do", "works" -> "work", "studies" -> "study", "watches" -> "watch", with adverbs
/// between them ("the user no longer lives", "still works"). A past form agrees already;
/// the first other word ends the search, so an object ("bought 3 bikes") is left as it
/// is.
fn agree(words: &mut [String]) {
    const BETWEEN: &[&str] = &[
        "no", "longer", "also", "still", "now", "just", "never", "always", "often",
    ];
    for w in words.iter_mut() {
        let low = w.to_lowercase();
        let fixed = match low.as_str() {
            "is" => Some("am".to_string()),
            "isn't" => Some("am not".to_string()),
            "has" => Some("have".to_string()),
            "hasn't" => Some("haven't".to_string()),
            "does" => Some("do".to_string()),
            "doesn't" => Some("don't".to_string()),
            _ => third_person_stem(&low),
        };
        if let Some(f) = fixed {
            *w = f;
            return;
        }
        if !(BETWEEN.contains(&low.as_str()) || low.ends_with("ly")) {
            return;
        }
    }
}

/// The plain form of a verb in the third person singular ("lives" -> "live"); `None`
/// for a word that is not one by its form.
fn third_person_stem(w: &str) -> Option<String> {
    if w.len() < 4 || !w.chars().all(|c| c.is_ascii_lowercase()) || w.ends_with("ss") {
        return None;
    }
    if let Some(s) = w.strip_suffix("ies") {
        return Some(format!("{s}y"));
    }
    for end in ["ches", "shes", "xes", "zes", "oes"] {
        if w.ends_with(end) {
            return Some(w[..w.len() - 2].to_string());
        }
    }
    w.strip_suffix('s').map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::in_first_person;

    #[test]
    fn the_user_in_a_note_becomes_the_first_person() {
        let cases = [
            (
                "The user is allergic to peanuts.",
                "I am allergic to peanuts.",
            ),
            (
                "Note: the user works as a pharmacist in Cork.",
                "Note: I work as a pharmacist in Cork.",
            ),
            (
                "Note: as of June the user has left the hospital.",
                "Note: as of June I have left the hospital.",
            ),
            (
                "The user no longer lives in Oslo.",
                "I no longer live in Oslo.",
            ),
            (
                "The user's partner, Sunniva, is a teacher.",
                "my partner, Sunniva, is a teacher.",
            ),
            (
                "The user moved to Bergen in June.",
                "I moved to Bergen in June.",
            ),
            ("The user studies law.", "I study law."),
            ("The user still works in Bergen.", "I still work in Bergen."),
            ("The user bought 3 bikes.", "I bought 3 bikes."),
        ];
        for (note, first) in cases {
            assert_eq!(in_first_person(note).as_deref(), Some(first), "{note}");
        }
        assert_eq!(in_first_person("I live in Oslo."), None);
        assert_eq!(in_first_person("Ask the users what they think."), None);
    }
}
