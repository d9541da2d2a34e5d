//! Packing ranked units into a context that fits a token budget.
use crate::text::{overlap, sentences};
use cairn_core::explain::{PackOutcome, PackedEntry};
use cairn_core::{Format, Unit};

/// Entries smaller than this are not worth trimming a unit into.
const MIN_TRIMMED_TOKENS: usize = 24;
const SEPARATOR: &str = "\n\n";

pub struct PackInput<'a> {
    /// Units in rank order.
    pub units: &'a [&'a Unit],
    /// Content words of the query, to choose what to keep when trimming.
    pub query_words: &'a [String],
    pub budget: usize,
    pub format: Format,
    pub count_tokens: &'a dyn Fn(&str) -> usize,
    /// Say what became of each unit (`Packed::entries`).
    pub explain: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Packed {
    pub context: String,
    pub tokens: usize,
    /// Units left out or trimmed.
    pub cut: usize,
    /// Ids of units (whole or trimmed) in the context, in context order.
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
    let mut scored: Vec<(usize, usize)> = spans
        .iter()
        .enumerate()
        .map(|(i, &(a, b))| (overlap(query_words, &text[a..b]), i))
        .collect();
    scored.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    let mut keep: Vec<usize> = scored.iter().take(n).map(|&(_, i)| i).collect();
    keep.sort_unstable();
    keep.iter()
        .map(|&i| text[spans[i].0..spans[i].1].trim())
        .collect()
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
    let prefix = if u.kind == cairn_core::UnitKind::Turn {
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
/// the finished entry. `None` if not even one sentence fits. Sentences are counted once;
/// the finished entry is counted again, since counts of joined text can differ at seams.
fn trim_to_fit(u: &Unit, body: &str, input: &PackInput<'_>, budget: usize) -> Option<String> {
    const JOINER: &str = " … ";
    let spans = sentences(body);
    let piece = |i: usize| body[spans[i].0..spans[i].1].trim();
    let count = |s: &str| (input.count_tokens)(s);
    let joiner_tokens = count(JOINER);
    let mut used = count(&entry(u, JOINER));
    let mut priority: Vec<usize> = (0..spans.len()).collect();
    priority.sort_by_key(|&i| std::cmp::Reverse(overlap(input.query_words, piece(i))));
    let mut kept: Vec<usize> = Vec::new();
    for i in priority {
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
        if count(&candidate) <= budget {
            return Some(candidate);
        }
        kept.pop();
    }
    None
}

/// Greedy by rank: whole entries while they fit, a trimmed entry when a unit is too long,
/// never over the budget. `raw` is written chronologically, `synthesized` newest first
/// without repeated entries.
pub fn pack(input: &PackInput<'_>) -> Packed {
    let sep_tokens = (input.count_tokens)(SEPARATOR);
    let mut used = 0usize;
    let mut cut = 0usize;
    let mut chosen: Vec<(&Unit, String)> = Vec::new();
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
    for (i, &u) in input.units.iter().enumerate() {
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
        // Synthesized context shares the budget among the hits still to come, so every
        // hit keeps its best sentences; raw context fills greedily by rank.
        let allowance = match input.format {
            Format::Raw => remaining,
            Format::Synthesized => (remaining / (input.units.len() - i))
                .max(MIN_TRIMMED_TOKENS)
                .min(remaining),
        };
        let full = entry(u, &b);
        let tokens = (input.count_tokens)(&full);
        if tokens <= allowance {
            used += tokens + overhead;
            note(u, PackOutcome::Whole, tokens, tokens);
            chosen.push((u, full));
            continue;
        }
        cut += 1;
        let trimmed = if allowance >= MIN_TRIMMED_TOKENS {
            trim_to_fit(u, &b, input, allowance)
        } else {
            None
        };
        match trimmed {
            Some(t) => {
                let n = (input.count_tokens)(&t);
                used += n + overhead;
                note(u, PackOutcome::Trimmed, tokens, n);
                chosen.push((u, t));
            }
            None => note(u, PackOutcome::Cut, tokens, 0),
        }
    }
    order(&mut chosen, input.format);
    let (context, tokens) = within_budget(&mut chosen, &mut entries, &mut cut, input);
    Packed {
        context,
        tokens,
        cut,
        unit_ids: chosen.iter().map(|(u, _)| u.id.clone()).collect(),
        entries,
    }
}

/// Puts the chosen entries in context order: `raw` chronologically, `synthesized`
/// newest first.
fn order(chosen: &mut [(&Unit, String)], format: Format) {
    match format {
        Format::Raw => chosen.sort_by(|a, b| {
            (
                a.0.occurred_at,
                &a.0.provenance.session_id,
                a.0.provenance.first_position,
            )
                .cmp(&(
                    b.0.occurred_at,
                    &b.0.provenance.session_id,
                    b.0.provenance.first_position,
                ))
        }),
        Format::Synthesized => chosen.sort_by_key(|c| std::cmp::Reverse(c.0.occurred_at)),
    }
}

/// Joins the entries into the context and its token count. Token counts of joined text
/// can differ from the sum of the parts at the seams; the budget is a promise, so the
/// whole is checked and entries are dropped from the end (marked `Dropped`) if needed.
fn within_budget(
    chosen: &mut Vec<(&Unit, String)>,
    entries: &mut [PackedEntry],
    cut: &mut usize,
    input: &PackInput<'_>,
) -> (String, usize) {
    let join = |chosen: &[(&Unit, String)]| {
        chosen
            .iter()
            .map(|(_, e)| e.as_str())
            .collect::<Vec<_>>()
            .join(SEPARATOR)
    };
    let mut context = join(chosen);
    let mut tokens = (input.count_tokens)(&context);
    while tokens > input.budget && !chosen.is_empty() {
        if let Some((u, _)) = chosen.pop() {
            if let Some(e) = entries.iter_mut().find(|e| e.unit_id == u.id) {
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

    fn words(s: &str) -> usize {
        s.split_whitespace().count()
    }

    #[test]
    fn raw_is_chronological_and_within_budget() {
        let a = unit("a", "user: late fact about pizza", "2023-05-02", 0);
        let b = unit("b", "user: early fact about pasta", "2023-05-01", 0);
        let units = [&a, &b];
        let p = pack(&PackInput {
            units: &units,
            query_words: &[],
            budget: 100,
            format: Format::Raw,
            count_tokens: &words,
            explain: false,
        });
        assert!(p.context.find("pasta").unwrap() < p.context.find("pizza").unwrap());
        assert_eq!(p.unit_ids, ["b", "a"]);
        assert!(p.tokens <= 100);
        assert_eq!(p.cut, 0);
    }

    #[test]
    fn long_units_are_trimmed_to_matching_sentences_never_over_budget() {
        let filler = "Nothing to see here at all. ".repeat(40);
        let text = format!("user: {filler} The budget is 40k dollars. {filler}");
        let a = unit("a", &text, "2023-05-02", 0);
        let units = [&a];
        let q = vec!["budget".to_string()];
        for budget in [30, 60, 200] {
            let p = pack(&PackInput {
                units: &units,
                query_words: &q,
                budget,
                format: Format::Raw,
                count_tokens: &words,
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
        let units = [&a, &b, &c];
        let p = pack(&PackInput {
            units: &units,
            query_words: &[],
            budget: 100,
            format: Format::Synthesized,
            count_tokens: &words,
            explain: false,
        });
        assert_eq!(p.unit_ids, ["c", "a"]);
    }
}
