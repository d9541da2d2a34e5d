use super::*;
use cairn_core::{Provenance, SpaceId, UnitKind};

fn unit(id: &str, text: &str, day: &str, pos: u32) -> Unit {
    Unit {
        id: id.into(),
        space: SpaceId::new("t").unwrap(),
        kind: UnitKind::Round,
        text: text.into(),
        key: text.into(),
        embed_text: None,
        provenance: Provenance {
            session_id: Some("s".into()),
            message_ids: vec![id.into()],
            first_position: pos,
            speakers: vec!["user".into()],
            group: None,
            ..Default::default()
        },
        part_of: None,
        occurred_at: Some(cairn_core::time::parse_timestamp(day).unwrap()),
        recorded_at: chrono::Utc::now(),
        detail: None,
    }
}

/// A context too small for a hit's one long sentence shows its first words, found
/// with a few counts (by halving), not one count per word of the sentence: the most
/// words that fit, as counting down from all of them finds.
#[test]
fn the_first_words_of_a_long_sentence_take_a_few_counts() {
    let sentence: Vec<String> = (0..5000).map(|i| format!("w{i}")).collect();
    let u = unit(
        "a",
        &format!("user: {}", sentence.join(" ")),
        "2023-05-02",
        0,
    );
    let items = [PackItem::one(&u)];
    let counts = std::cell::Cell::new(0usize);
    let counted = |t: &str| {
        counts.set(counts.get() + 1);
        words(t)
    };
    for budget in [3, 40, 300] {
        counts.set(0);
        let p = pack(&PackInput {
            items: &items,
            hits: 1,
            query_words: &[],
            budget,
            format: Format::Raw,
            count_tokens: &counted,
            additive: false,
            explain: false,
        });
        assert!(
            counts.get() < 60,
            "{} counts for a budget of {budget}",
            counts.get()
        );
        assert!(
            p.tokens <= budget && p.tokens + 3 >= budget,
            "{} of {budget}",
            p.tokens
        );
        assert!(p.context.contains("w0"), "{}", p.context);
    }
    for n in [0, 1, 2, 7, 64] {
        for budget in [0, 1, 5, 6, 100] {
            let text = |k: usize| sentence[..k].join(" ");
            let linear = (1..=n)
                .rev()
                .map(|k| (text(k), words(&text(k))))
                .find(|(_, t)| *t <= budget);
            assert_eq!(
                most_words_within(n, budget, text, words),
                linear,
                "{n} words, {budget}"
            );
        }
    }
}

#[test]
fn raw_is_chronological_and_within_budget() {
    let a = unit("a", "user: late fact about pizza", "2023-05-02", 0);
    let b = unit("b", "user: early fact about pasta", "2023-05-01", 0);
    let items = [PackItem::one(&a), PackItem::one(&b)];
    let p = pack(&PackInput {
        items: &items,
        hits: items.len(),
        query_words: &[],
        budget: 100,
        format: Format::Raw,
        count_tokens: &words,
        additive: false,
        explain: false,
    });
    assert!(p.context.find("pasta").unwrap() < p.context.find("pizza").unwrap());
    assert_eq!(p.unit_ids, ["b", "a"]);
    assert!(p.tokens <= 100);
    assert_eq!(p.cut_ids.len(), 0);
}

/// With a tokenizer that adds up over whitespace, the entries' counts are the
/// context's: the same context and count as counting it again, for whole, trimmed
/// and left-out entries.
#[test]
fn an_additive_count_is_the_recounted_one() {
    let filler = "Nothing to see here at all. ".repeat(20);
    let a = unit("a", "user: late fact about pizza", "2023-05-02", 0);
    let b = unit(
        "b",
        &format!("user: {filler} pasta {filler}"),
        "2023-05-01",
        0,
    );
    let c = unit("c", "user: a third fact, pasta again", "2023-05-03", 0);
    let items = [PackItem::one(&a), PackItem::one(&b), PackItem::one(&c)];
    let q = vec!["pasta".to_string()];
    for format in [Format::Raw, Format::Synthesized] {
        for budget in [10, 40, 120, 1000] {
            let with = |additive| {
                pack(&PackInput {
                    items: &items,
                    hits: items.len(),
                    query_words: &q,
                    budget,
                    format,
                    count_tokens: &words,
                    additive,
                    explain: false,
                })
            };
            let (summed, counted) = (with(true), with(false));
            assert_eq!(summed, counted, "{format:?} {budget}");
            assert_eq!(summed.tokens, words(&summed.context));
            assert!(summed.tokens <= budget);
        }
    }
}

#[test]
fn long_units_are_trimmed_to_matching_sentences_never_over_budget() {
    let filler = "Nothing to see here at all. ".repeat(40);
    let text = format!("user: {filler} The budget is 40k dollars. {filler}");
    let a = unit("a", &text, "2023-05-02", 0);
    let items = [PackItem::one(&a)];
    let q = vec!["budget".to_string()];
    for budget in [30, 60, 200] {
        let p = pack(&PackInput {
            items: &items,
            hits: items.len(),
            query_words: &q,
            budget,
            format: Format::Raw,
            count_tokens: &words,
            additive: false,
            explain: false,
        });
        assert!(p.tokens <= budget, "{} > {budget}", p.tokens);
        assert!(p.context.contains("budget is 40k"), "{}", p.context);
        assert_eq!(p.cut_ids.len(), 1);
    }
}

#[test]
fn synthesized_compacts_multi_line_replies_per_speaker() {
    let reply = format!(
        "assistant: Here are tips.\n{}\nFor chains, wax lube works best in dry weather.\n{}",
        "1. Clean the frame with soap and water every week.\n".repeat(10),
        "Ride safe and have fun out there on the road.\n".repeat(5)
    );
    let text = format!("user: Which chain lube should I use?\n{reply}");
    let mut a = unit("a", &text, "2023-05-02", 0);
    a.provenance.speakers = vec!["user".into(), "assistant".into()];
    let b = body(
        &a,
        &["chain".to_string(), "lube".to_string()],
        Format::Synthesized,
    );
    assert!(
        b.starts_with("user: Which chain lube should I use?\n"),
        "{b}"
    );
    assert!(b.contains("wax lube works best"), "{b}");
    assert!(b.len() < 300, "long reply kept whole: {b}");
    assert_eq!(body(&a, &[], Format::Raw), text);
}

#[test]
fn synthesized_is_newest_first_and_deduplicated() {
    let a = unit("a", "user: same words", "2023-05-01", 0);
    let b = unit("b", "user: same  words", "2023-05-03", 1);
    let c = unit("c", "user: other words", "2023-05-02", 2);
    let items = [PackItem::one(&a), PackItem::one(&b), PackItem::one(&c)];
    let p = pack(&PackInput {
        items: &items,
        hits: items.len(),
        query_words: &[],
        budget: 100,
        format: Format::Synthesized,
        count_tokens: &words,
        additive: false,
        explain: false,
    });
    assert_eq!(p.unit_ids, ["c", "a"]);
}

#[test]
fn a_place_that_does_not_fit_keeps_its_best_units_and_says_which() {
    let best = unit("b", "user: the gate code is 4417", "2023-05-02", 4);
    let near = unit("n", "user: it opens the side gate", "2023-05-02", 5);
    let far = unit(
        "f",
        &format!("user: {}", "words ".repeat(30)),
        "2023-05-02",
        9,
    );
    let parts: Vec<Part> = [(&best, 1.0), (&near, 0.9), (&far, 0.8)]
        .into_iter()
        .map(|(u, score)| Part {
            unit: u.clone(),
            score,
        })
        .collect();
    let place = crate::places::excerpt(&best, [&near, &far]);
    let items = [PackItem {
        unit: &place,
        score: 1.0,
        parts: &parts,
        more: &[],
    }];
    let pack_in = |budget| {
        pack(&PackInput {
            items: &items,
            hits: items.len(),
            query_words: &[],
            budget,
            format: Format::Raw,
            count_tokens: &words,
            additive: false,
            explain: false,
        })
    };
    let whole = pack_in(200);
    assert_eq!(whole.unit_ids, ["b", "n", "f"]);
    assert_eq!(whole.cut_ids.len(), 0);
    // Room for two of the three: the weakest unit goes, the two left stay whole.
    let two = pack_in(20);
    assert_eq!(two.unit_ids, ["b", "n"]);
    assert!(two.context.contains("gate code is 4417"), "{}", two.context);
    assert!(two.context.contains("side gate"), "{}", two.context);
    assert!(!two.context.contains("words"), "{}", two.context);
    assert!(two.tokens <= 20);
}

fn part(u: &Unit, score: f32) -> Part {
    Part {
        unit: u.clone(),
        score,
    }
}

fn packed(items: &[PackItem<'_>], hits: usize, budget: usize, format: Format) -> Packed {
    pack(&PackInput {
        items,
        hits,
        query_words: &[],
        budget,
        format,
        count_tokens: &words,
        additive: false,
        explain: false,
    })
}

/// Once every hit's best unit is in, the budget goes to the hits' further units, best
/// score first (the strong hit's before the weak hit's), then to a place after the hits.
#[test]
fn what_is_left_goes_to_the_hits_units_by_score_then_to_places_after_the_hits() {
    let a1 = unit("a1", "user: alpha one", "2023-05-01", 0);
    let a2 = unit("a2", "user: alpha two", "2023-05-01", 4);
    let b1 = unit("b1", "user: beta one", "2023-05-02", 0);
    let b2 = unit("b2", "user: beta two", "2023-05-02", 4);
    let c1 = unit("c1", "user: gamma one", "2023-05-03", 0);
    let a = [part(&a1, 1.0), part(&a2, 0.9)];
    let b = [part(&b1, 0.5), part(&b2, 0.2)];
    let c = [part(&c1, 0.3)];
    // b2 is part of b's excerpt; a place's further units wait in `more`.
    let items = [
        PackItem {
            unit: &a1,
            score: 1.0,
            parts: &a,
            more: &[],
        },
        PackItem {
            unit: &b1,
            score: 0.5,
            parts: &b,
            more: &[],
        },
        PackItem {
            unit: &c1,
            score: 0.3,
            parts: &c,
            more: &[],
        },
    ];
    // Entries of 7 words (header 4, text 3), a further unit 3 and its gap 1: room for
    // both seeds and a2 (0.9), not b2 (0.2).
    let p = packed(&items, 2, 7 + 7 + 4 + 3, Format::Raw);
    assert_eq!(p.shown[0], ["a1", "a2"]);
    assert_eq!(p.shown[1], ["b1"]);
    assert!(p.shown[2].is_empty());
    assert_eq!(p.cut_ids, ["b1"], "b is shown without b2");
    assert_eq!(p.unit_ids, ["a1", "a2", "b1"]);
    // Room for b2 too: the hits' own units (b2, 0.2) go before the place after the
    // hits (c, 0.3), which then no longer fits.
    let p = packed(&items, 2, 7 + 7 + 4 + 4 + 3, Format::Raw);
    assert_eq!(p.shown[1], ["b1", "b2"]);
    assert!(p.shown[2].is_empty());
    assert!(p.tokens <= 25, "{}", p.tokens);
    assert_eq!(p.unit_ids, ["a1", "a2", "b1", "b2"]);
    // All of it fits: nothing cut.
    let p = packed(&items, 2, 200, Format::Raw);
    assert_eq!(p.shown[1], ["b1", "b2"]);
    assert!(p.cut_ids.is_empty());
}

#[test]
fn no_message_is_shown_by_two_entries() {
    let round = unit("r", "user: the gate code is 4417", "2023-05-02", 4);
    let mut episode = unit(
        "e",
        "user: the gate code is 4417\nuser: thanks",
        "2023-05-02",
        4,
    );
    episode.kind = cairn_core::UnitKind::Episode;
    episode.provenance.message_ids = vec!["r".into(), "t".into()];
    let items = [PackItem::one(&round), PackItem::one(&episode)];
    for format in [Format::Raw, Format::Synthesized] {
        let p = packed(&items, 2, 200, format);
        assert_eq!(p.unit_ids, ["r"], "{format:?}");
        assert_eq!(p.context.matches("4417").count(), 1, "{}", p.context);
    }
}

/// A budget too small for any whole sentence still shows the first hit, cut to what
/// fits, and names every hit not shown whole.
#[test]
fn a_tiny_budget_shows_the_first_hit_cut_and_names_the_cuts() {
    let a = unit(
        "a",
        "user: the quarterly budget for the Atlas project is forty thousand dollars",
        "2023-05-02",
        0,
    );
    let b = unit(
        "b",
        "user: another rather long sentence about something else entirely",
        "2023-05-01",
        0,
    );
    let items = [PackItem::one(&a), PackItem::one(&b)];
    for format in [Format::Raw, Format::Synthesized] {
        let p = packed(&items, 2, 1, format);
        assert_eq!((p.context.as_str(), p.tokens), ("user:", 1));
        // No hit fits whole in these (b's shortest entry takes 11): the first is cut.
        for budget in [2, 3, 8, 10] {
            let p = packed(&items, 2, budget, format);
            assert!(!p.context.is_empty(), "{format:?} {budget}");
            assert!(p.tokens <= budget, "{} > {budget}", p.tokens);
            assert_eq!(words(&p.context), p.tokens);
            assert_eq!(p.unit_ids, ["a"]);
            assert_eq!(p.cut_ids, ["a", "b"], "{format:?} {budget}");
            assert!(p.context.trim_end().ends_with('…'), "{}", p.context);
        }
    }
}
