use super::*;

fn facts(text: &str) -> Vec<(String, String, String, bool)> {
    let s = Speaking {
        speaker: "user",
        at: cairn_core::time::parse_timestamp("2024-06-15").ok(),
        with_assistant: true,
    };
    read(text, &s)
        .into_iter()
        .map(|(_, p)| {
            (
                p.category.as_str().to_string(),
                p.subject(),
                p.value,
                p.negated,
            )
        })
        .collect()
}

/// The module doc's examples, read as it says.
#[test]
fn the_module_docs_examples_read_as_documented() {
    let f = |c: &str, subject: &str, value: &str, negated: bool| {
        (
            c.to_string(),
            subject.to_string(),
            value.to_string(),
            negated,
        )
    };
    let cases = [
        (
            "I live in Porto with my partner Ana, and I work as a nurse.",
            vec![
                f("family", "user's partner", "Ana", false),
                f("home", "user's home", "Porto", false),
                f("role", "user's occupation", "nurse", false),
            ],
        ),
        (
            "My sister lives in Rome and she works as a lawyer.",
            vec![
                f("home", "user's sister's home", "Rome", false),
                f("role", "user's sister's occupation", "lawyer", false),
            ],
        ),
        (
            "I moved to Lisbon last month, and I switched jobs, I am a paramedic now.",
            vec![
                f("home", "user's home", "Lisbon", false),
                f("role", "user's occupation", "paramedic", false),
            ],
        ),
        (
            "I love spicy Thai food but I really dislike olives.",
            vec![
                f(
                    "preference",
                    "user's taste: spicy Thai food",
                    "spicy Thai food",
                    false,
                ),
                f("preference", "user's taste: olives", "olives", true),
            ],
        ),
        (
            "If I moved to Paris, would I need to learn French first?",
            vec![],
        ),
    ];
    for (text, want) in cases {
        assert_eq!(facts(text), want, "{text}");
    }
}

/// The personal-memory suite's expected facts against what [`read`] finds, per
/// category (a development aid; the suite's own test runs through the public API in
/// cairn-bench): `cargo test -p cairn-engine --lib personal::tests::suite -- --ignored
/// --nocapture`.
/// A line of the suite and the facts it expects (category, about, value words, negated).
type Pending = Option<(String, Vec<(String, Vec<String>, Vec<String>, bool)>)>;

#[test]
#[ignore]
fn suite() {
    let file = std::env::var("SUITE").unwrap_or_else(|_| "dev".into());
    let path = cairn_testkit::fixtures::workspace_root()
        .join(format!("crates/cairn-bench/fixtures/personal/{file}.txt"));
    let text = std::fs::read_to_string(path).unwrap();
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric() && c != ':')
            .filter(|w| !w.is_empty())
            .map(|w| {
                let w = w.to_lowercase();
                match number(&w) {
                    Some(n) => n.to_string(),
                    None => crate::text::stem(&w),
                }
            })
            .filter(|w| !crate::text::STOP_WORDS.contains(&w.as_str()))
            .collect()
    };
    let mut at = None;
    let mut pending: Pending = None;
    let mut stats: std::collections::BTreeMap<String, [usize; 4]> = Default::default();
    let mut flush = |p: Pending, at: Option<cairn_core::Timestamp>| {
        let Some((line, expected)) = p else { return };
        let s = Speaking {
            speaker: "user",
            at,
            with_assistant: true,
        };
        let got = read(&line, &s);
        let matches = |e: &(String, Vec<String>, Vec<String>, bool), p: &Personal| {
            let have = words(&format!("{} {}", p.subject(), p.value));
            e.0 == p.category.as_str()
                && e.1.iter().any(|a| a.eq_ignore_ascii_case(&p.person))
                && e.3 == p.negated
                && e.2.iter().all(|w| have.contains(w))
        };
        for e in &expected {
            let hit = got.iter().any(|(_, p)| matches(e, p));
            let st = stats.entry(e.0.clone()).or_default();
            st[2] += 1;
            if hit {
                st[3] += 1;
            } else {
                println!("MISS {} {:?} {:?} neg={} | {line}", e.0, e.1, e.2, e.3);
            }
        }
        for (_, p) in &got {
            let ok = expected.iter().any(|e| matches(e, p));
            let st = stats.entry(p.category.as_str().to_string()).or_default();
            st[0] += 1;
            if ok {
                st[1] += 1;
            } else {
                println!(
                    "FP   {} {} = {:?} neg={} | {line}",
                    p.category.as_str(),
                    p.subject(),
                    p.value,
                    p.negated
                );
            }
        }
    };
    for l in text.lines() {
        if let Some(d) = l.strip_prefix("--- ") {
            flush(pending.take(), at);
            at = cairn_core::time::parse_timestamp(d.trim()).ok();
        } else if let Some(u) = l.strip_prefix("U: ") {
            flush(pending.take(), at);
            pending = Some((u.to_string(), Vec::new()));
        } else if let Some(f) = l.trim_start().strip_prefix("+ ") {
            let (head, value) = f.split_once(": ").unwrap();
            let (cat, about) = head.split_once(' ').unwrap();
            let (neg, value) = match value.strip_prefix('!') {
                Some(v) => (true, v),
                None => (false, value),
            };
            let about: Vec<String> = about.split('|').map(str::to_string).collect();
            pending
                .as_mut()
                .unwrap()
                .1
                .push((cat.into(), about, words(value), neg));
        } else {
            flush(pending.take(), at);
        }
    }
    flush(pending.take(), at);
    let (mut tp, mut n, mut hit, mut exp) = (0, 0, 0, 0);
    for (cat, [got, ok, expected, found]) in &stats {
        println!(
            "{cat:11} precision {:.2} ({ok}/{got})  recall {:.2} ({found}/{expected})",
            *ok as f64 / (*got).max(1) as f64,
            *found as f64 / (*expected).max(1) as f64
        );
        tp += ok;
        n += got;
        hit += found;
        exp += expected;
    }
    println!(
        "ALL         precision {:.2} ({tp}/{n})  recall {:.2} ({hit}/{exp})",
        tp as f64 / n.max(1) as f64,
        hit as f64 / exp.max(1) as f64
    );
}

/// Prints what [`read`] finds in each line of the file `SAMPLE` (a development aid for
/// reading precision on real conversations).
#[test]
#[ignore]
fn sample() {
    let path = std::env::var("SAMPLE").unwrap();
    let s = Speaking {
        speaker: "user",
        at: cairn_core::time::parse_timestamp("2024-06-15").ok(),
        with_assistant: std::env::var("ROLES").is_ok(),
    };
    for line in std::fs::read_to_string(path).unwrap().lines() {
        for (sentence, p) in read(line, &s) {
            println!(
                "{:10} {} = {:?}{} | {}",
                p.category.as_str(),
                p.subject(),
                p.value,
                if p.negated { " (neg)" } else { "" },
                sentence
            );
        }
    }
}

/// "The user" is the one speaking in a note or a chat with an assistant, not in a chat
/// of named speakers, where it is more often a product's user.
#[test]
fn the_user_is_the_speaker_only_in_notes_and_assistant_chats() {
    let read_as = |speaker: &str, with_assistant: bool| {
        let s = Speaking {
            speaker,
            at: cairn_core::time::parse_timestamp("2024-06-15").ok(),
            with_assistant,
        };
        read("The user lives in Oslo.", &s)
            .into_iter()
            .map(|(_, p)| (p.person, p.value))
            .collect::<Vec<_>>()
    };
    let mine = vec![("user".to_string(), "Oslo".to_string())];
    assert_eq!(read_as(crate::NOTE_SPEAKER, false), mine);
    assert_eq!(read_as("user", true), mine);
    assert_eq!(read_as("maya", false), vec![]);
}
