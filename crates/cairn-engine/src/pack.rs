//! Packing ranked units into a context that fits a token budget.
use crate::text::{sentence_overlaps, sentences};
use cairn_core::explain::{PackOutcome, PackedEntry};
use cairn_core::{Format, Unit};

/// Entries smaller than this are not worth trimming a unit into.
const MIN_TRIMMED_TOKENS: usize = 24;
const SEPARATOR: &str = "\n\n";

/// One hit to pack: its unit, and for a place hit (`places.rs`) the units its excerpt
/// shows, best first (empty for a hit of one unit).
#[derive(Clone, Copy)]
pub struct PackItem<'a> {
    pub unit: &'a Unit,
    pub parts: &'a [Unit],
}

impl<'a> PackItem<'a> {
    pub fn one(unit: &'a Unit) -> Self {
        Self { unit, parts: &[] }
    }

    /// The ids of the units the whole entry shows.
    fn ids(&self) -> Vec<String> {
        if self.parts.is_empty() {
            vec![self.unit.id.clone()]
        } else {
            self.parts.iter().map(|p| p.id.clone()).collect()
        }
    }
}

/// An entry of the context: the hit's unit, its text, and the units it shows.
struct Chosen<'a> {
    unit: &'a Unit,
    text: String,
    shows: Vec<String>,
}

pub struct PackInput<'a> {
    /// Hits in rank order.
    pub items: &'a [PackItem<'a>],
    /// Content words of the query, to choose what to keep when trimming.
    pub query_words: &'a [String],
    pub budget: usize,
    pub format: Format,
    pub count_tokens: &'a dyn Fn(&str) -> usize,
    /// `count_tokens` of texts joined by whitespace is the sum of their counts
    /// ([`cairn_core::Embedder::whitespace_additive`]): the joined context is not counted
    /// again.
    pub additive: bool,
    /// Say what became of each unit (`Packed::entries`).
    pub explain: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Packed {
    pub context: String,
    pub tokens: usize,
    /// Units left out or trimmed.
    pub cut: usize,
    /// Ids of units (whole or trimmed) in the context, in context order; a place hit
    /// contributes each of its parts the context shows.
    pub unit_ids: Vec<String>,
    /// With `explain`: what became of each unit, in rank order (else empty).
    pub entries: Vec<PackedEntry>,
}

fn date_label(u: &Unit) -> String {
    u.occurred_at
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| "undated".to_string())
}

/// The body of an entry: verbatim for `raw`; for `synthesized`, each speaker's block
/// (a turn may span several lines) cut to the sentences that bear on the query when it
/// is long.
fn body(u: &Unit, query_words: &[String], format: Format) -> String {
    match format {
        Format::Raw => u.text.clone(),
        Format::Synthesized => speaker_blocks(&u.text, &u.provenance.speakers)
            .into_iter()
            .map(|block| compact_block(block, query_words))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// Splits a unit's text at lines that start with one of its speakers (`name: `).
fn speaker_blocks<'t>(text: &'t str, speakers: &[String]) -> Vec<&'t str> {
    let starts_block = |line: &str| {
        speakers.iter().any(|s| {
            line.strip_prefix(s.as_str())
                .is_some_and(|r| r.starts_with(": "))
        })
    };
    let mut blocks = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if offset > start && starts_block(line) {
            blocks.push(text[start..offset].trim_end());
            start = offset;
        }
        offset += line.len();
    }
    blocks.push(text[start..].trim_end());
    blocks
}

fn compact_block(block: &str, query_words: &[String]) -> String {
    const LONG_BLOCK: usize = 400;
    if block.len() <= LONG_BLOCK {
        return block.to_string();
    }
    let best = best_sentences(block, query_words, 2);
    format!("{} …", best.join(" … "))
}

/// The `n` sentences of `text` sharing most words with the query, in text order
/// (the first sentence when nothing matches).
fn best_sentences<'t>(text: &'t str, query_words: &[String], n: usize) -> Vec<&'t str> {
    let spans = sentences(text);
    let mut keep: Vec<usize> = by_overlap(query_words, text, &spans)
        .into_iter()
        .take(n)
        .collect();
    keep.sort_unstable();
    keep.iter()
        .map(|&i| text[spans[i].0..spans[i].1].trim())
        .collect()
}

/// The indexes of `spans` (sentences of `text`), most words shared with the query first,
/// in text order among equals.
fn by_overlap(query_words: &[String], text: &str, spans: &[(usize, usize)]) -> Vec<usize> {
    let overlaps = sentence_overlaps(query_words, text, spans);
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(overlaps[i]));
    order
}

fn entry(u: &Unit, body: &str) -> String {
    let p = &u.provenance;
    let session = match (&p.session_id, &p.trajectory_id, p.states) {
        (Some(s), _, _) => format!(" session {s}"),
        (None, Some(t), Some([a, b])) if b > a + 1 => {
            format!(" trajectory {t} states {a}-{}", b - 1)
        }
        (None, Some(t), Some([a, _])) => format!(" trajectory {t} state {a}"),
        (None, Some(t), None) => format!(" trajectory {t}"),
        _ => String::new(),
    };
    // A place's excerpt of several messages says who spoke on each line already.
    let prefix = if u.kind == cairn_core::UnitKind::Turn && p.message_ids.len() <= 1 {
        format!(
            "{}: ",
            u.provenance
                .speakers
                .first()
                .map(String::as_str)
                .unwrap_or("unknown")
        )
    } else {
        String::new()
    };
    format!("[{}{}]\n{}{}", date_label(u), session, prefix, body)
}

/// Trims `body` to the sentences that best match the query and fit in `budget` tokens of
/// the finished entry, with its tokens. `None` if not even one sentence fits. Sentences
/// are counted once; the finished entry is counted again, since counts of joined text can
/// differ at seams.
fn trim_to_fit(
    u: &Unit,
    body: &str,
    input: &PackInput<'_>,
    budget: usize,
) -> Option<(String, usize)> {
    const JOINER: &str = " … ";
    let spans = sentences(body);
    let piece = |i: usize| body[spans[i].0..spans[i].1].trim();
    let count = |s: &str| (input.count_tokens)(s);
    let joiner_tokens = count(JOINER);
    let mut used = count(&entry(u, JOINER));
    let mut kept: Vec<usize> = Vec::new();
    for i in by_overlap(input.query_words, body, &spans) {
        let c = count(piece(i)) + joiner_tokens;
        if used + c <= budget {
            used += c;
            kept.push(i);
        }
    }
    while !kept.is_empty() {
        let mut in_order = kept.clone();
        in_order.sort_unstable();
        let text = in_order
            .iter()
            .map(|&k| piece(k))
            .collect::<Vec<_>>()
            .join(JOINER);
        let candidate = entry(u, &format!("{text}{JOINER}"));
        let tokens = count(&candidate);
        if tokens <= budget {
            return Some((candidate, tokens));
        }
        kept.pop();
    }
    None
}

/// Greedy by rank: whole entries while they fit, a shorter entry when a hit is too long
/// (a place hit first loses its weakest units, then a unit its weakest sentences), never
/// over the budget. `raw` is written chronologically, `synthesized` newest first without
/// repeated entries.
pub fn pack(input: &PackInput<'_>) -> Packed {
    let sep_tokens = (input.count_tokens)(SEPARATOR);
    let mut used = 0usize;
    let mut cut = 0usize;
    let mut chosen: Vec<Chosen<'_>> = Vec::new();
    let mut seen_bodies: Vec<String> = Vec::new();
    let mut entries: Vec<PackedEntry> = Vec::new();
    let mut note = |u: &Unit, outcome, full_tokens, tokens| {
        if input.explain {
            entries.push(PackedEntry {
                unit_id: u.id.clone(),
                outcome,
                full_tokens,
                tokens,
            });
        }
    };
    let weight = |item: &PackItem<'_>| item.parts.len().max(1);
    // Units of the hits from each one on.
    let mut units_left: Vec<usize> = input.items.iter().map(weight).collect();
    for i in (0..units_left.len().saturating_sub(1)).rev() {
        units_left[i] += units_left[i + 1];
    }
    for (i, item) in input.items.iter().enumerate() {
        let u = item.unit;
        let b = body(u, input.query_words, input.format);
        if input.format == Format::Synthesized {
            let norm = b.split_whitespace().collect::<Vec<_>>().join(" ");
            if seen_bodies.contains(&norm) {
                if input.explain {
                    let full = (input.count_tokens)(&entry(u, &b));
                    note(u, PackOutcome::Duplicate, full, 0);
                }
                continue;
            }
            seen_bodies.push(norm);
        }
        let overhead = if chosen.is_empty() { 0 } else { sep_tokens };
        let remaining = input.budget.saturating_sub(used + overhead);
        // Synthesized context shares the budget among the units still to come (a place
        // hit holds several), so every hit keeps its best sentences and a place its best
        // units; raw context fills greedily by rank.
        let allowance = match input.format {
            Format::Raw => remaining,
            Format::Synthesized => (remaining * weight(item) / units_left[i])
                .max(MIN_TRIMMED_TOKENS)
                .min(remaining),
        };
        let full = entry(u, &b);
        // Every word is at least one token: when even the smallest entry the hit could
        // become (its best unit whole) has more words than the allowance, and the
        // allowance is below `MIN_TRIMMED_TOKENS`, nothing of it can make it, and the
        // tokenizer (the cost of packing) is spared.
        if allowance < MIN_TRIMMED_TOKENS && !input.explain {
            let smallest = item.parts.first().map_or_else(
                || words(&full),
                |best| words(&entry(best, &body(best, input.query_words, input.format))),
            );
            if smallest > allowance {
                cut += 1;
                continue;
            }
        }
        // Counted only when it may fit, or to explain.
        let tokens = if input.explain || words(&full) <= allowance {
            (input.count_tokens)(&full)
        } else {
            usize::MAX
        };
        if tokens <= allowance {
            used += tokens + overhead;
            note(u, PackOutcome::Whole, tokens, tokens);
            chosen.push(Chosen {
                unit: u,
                text: full,
                shows: item.ids(),
            });
            continue;
        }
        cut += 1;
        match shortened(item, input, allowance) {
            Some((text, n, shows)) => {
                used += n + overhead;
                note(u, PackOutcome::Trimmed, tokens, n);
                chosen.push(Chosen {
                    unit: u,
                    text,
                    shows,
                });
            }
            None => note(u, PackOutcome::Cut, tokens, 0),
        }
    }
    order(&mut chosen, input.format);
    let (context, tokens) = within_budget(&mut chosen, used, &mut entries, &mut cut, input);
    Packed {
        context,
        tokens,
        cut,
        unit_ids: chosen.into_iter().flat_map(|c| c.shows).collect(),
        entries,
    }
}

/// A hit's entry cut to `allowance` tokens, with its tokens and the units it still shows:
/// a place hit keeps as many of its units as fit whole (best first, in rank order);
/// failing that, its best unit is trimmed to the sentences that best match the query.
fn shortened(
    item: &PackItem<'_>,
    input: &PackInput<'_>,
    allowance: usize,
) -> Option<(String, usize, Vec<String>)> {
    if let Some((best, others)) = item.parts.split_first() {
        // Growing from the best unit alone: usually few fit, so few are counted.
        let mut fits = None;
        for n in 0..others.len() {
            let part = crate::places::excerpt(best, &others[..n]);
            let text = entry(&part, &body(&part, input.query_words, input.format));
            if words(&text) > allowance {
                break;
            }
            let tokens = (input.count_tokens)(&text);
            if tokens > allowance {
                break;
            }
            fits = Some((text, tokens, n + 1));
        }
        if let Some((text, tokens, n)) = fits {
            let shows = item.parts[..n].iter().map(|p| p.id.clone()).collect();
            return Some((text, tokens, shows));
        }
    }
    let u = item.parts.first().unwrap_or(item.unit);
    if allowance < MIN_TRIMMED_TOKENS {
        return None;
    }
    let b = body(u, input.query_words, input.format);
    trim_to_fit(u, &b, input, allowance).map(|(t, n)| (t, n, vec![u.id.clone()]))
}

/// Whitespace-separated words: a lower bound of any tokenizer's count.
fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

/// Puts the chosen entries in context order: `raw` chronologically, `synthesized`
/// newest first.
fn order(chosen: &mut [Chosen<'_>], format: Format) {
    match format {
        Format::Raw => chosen.sort_by(|a, b| {
            (
                a.unit.occurred_at,
                &a.unit.provenance.session_id,
                a.unit.provenance.first_position,
            )
                .cmp(&(
                    b.unit.occurred_at,
                    &b.unit.provenance.session_id,
                    b.unit.provenance.first_position,
                ))
        }),
        Format::Synthesized => chosen.sort_by_key(|c| std::cmp::Reverse(c.unit.occurred_at)),
    }
}

/// Joins the entries into the context and its token count. Token counts of joined text
/// can differ from the sum of the parts at the seams; the budget is a promise, so the
/// whole is checked and entries are dropped from the end (marked `Dropped`) if needed,
/// unless the tokenizer adds up over whitespace (`additive`), when the sum of the entries'
/// counts and separators (`used`) is the count.
fn within_budget(
    chosen: &mut Vec<Chosen<'_>>,
    used: usize,
    entries: &mut [PackedEntry],
    cut: &mut usize,
    input: &PackInput<'_>,
) -> (String, usize) {
    let join = |chosen: &[Chosen<'_>]| {
        chosen
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join(SEPARATOR)
    };
    let mut context = join(chosen);
    if input.additive && used <= input.budget {
        return (context, used);
    }
    let mut tokens = (input.count_tokens)(&context);
    while tokens > input.budget && !chosen.is_empty() {
        if let Some(c) = chosen.pop() {
            if let Some(e) = entries.iter_mut().find(|e| e.unit_id == c.unit.id) {
                e.outcome = PackOutcome::Dropped;
                e.tokens = 0;
            }
        }
        *cut += 1;
        context = join(chosen);
        tokens = (input.count_tokens)(&context);
    }
    (context, tokens)
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn raw_is_chronological_and_within_budget() {
        let a = unit("a", "user: late fact about pizza", "2023-05-02", 0);
        let b = unit("b", "user: early fact about pasta", "2023-05-01", 0);
        let items = [PackItem::one(&a), PackItem::one(&b)];
        let p = pack(&PackInput {
            items: &items,
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
        assert_eq!(p.cut, 0);
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
                query_words: &q,
                budget,
                format: Format::Raw,
                count_tokens: &words,
                additive: false,
                explain: false,
            });
            assert!(p.tokens <= budget, "{} > {budget}", p.tokens);
            assert!(p.context.contains("budget is 40k"), "{}", p.context);
            assert_eq!(p.cut, 1);
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
        let parts = vec![best.clone(), near.clone(), far.clone()];
        let place = crate::places::excerpt(&best, &parts[1..]);
        let items = [PackItem {
            unit: &place,
            parts: &parts,
        }];
        let pack_in = |budget| {
            pack(&PackInput {
                items: &items,
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
        assert_eq!(whole.cut, 0);
        // Room for two of the three: the weakest unit goes, the two left stay whole.
        let two = pack_in(20);
        assert_eq!(two.unit_ids, ["b", "n"]);
        assert!(two.context.contains("gate code is 4417"), "{}", two.context);
        assert!(two.context.contains("side gate"), "{}", two.context);
        assert!(!two.context.contains("words"), "{}", two.context);
        assert!(two.tokens <= 20);
    }
}
