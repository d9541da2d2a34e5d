//! Packing ranked hits into a context that fits a token budget, choosing what the
//! context holds by the evidence it is likely to carry per token: first each hit's best
//! unit, the hits in rank order sharing the budget (a long unit trimmed to its sentences
//! that best match the query); then, while there is room, the further units of the hits'
//! places (the other units of a place's excerpt and those waiting in `more`), best score
//! first, each where it fits; then the places ranked after the hits. Short places so fill
//! the budget with more of the ranked material, and long units leave room for others. A
//! unit counts for the lines it adds (rounds of a multi-party chat share a line). No
//! message is shown by two entries. `raw` is verbatim and chronological, `synthesized`
//! newest first with long speaker blocks cut to their best sentences. A context is never
//! empty while there are hits: the first is cut to what fits, and every hit not shown whole
//! is named (`Packed::cut_ids`).
use crate::places::{excerpt, GAP};
use crate::rank::Part;
use crate::text::{sentence_overlaps, sentences};
use cairn_core::explain::{PackOutcome, PackedEntry};
use cairn_core::{Format, Unit};
use std::collections::HashMap;

/// Entries smaller than this are not worth trimming a unit into.
const MIN_TRIMMED_TOKENS: usize = 24;
const SEPARATOR: &str = "\n\n";
/// Ends a unit trimmed to some of its sentences, and joins them.
const JOINER: &str = " … ";

/// One hit to pack: its unit (a place's excerpt), its score, and for a place hit
/// (`places.rs`) the units of its excerpt, best first, and its further units.
#[derive(Clone, Copy)]
pub struct PackItem<'a> {
    pub unit: &'a Unit,
    pub score: f32,
    /// The units the hit's excerpt shows, best first (empty for a hit of one unit).
    pub parts: &'a [Part],
    /// Further units of the place in rank order, shown when there is room.
    pub more: &'a [Part],
}

impl<'a> PackItem<'a> {
    pub fn one(unit: &'a Unit) -> Self {
        Self {
            unit,
            score: 0.0,
            parts: &[],
            more: &[],
        }
    }

    /// The units packing may show, best first: the hit's own unit(s), then `more`.
    fn pieces(&self) -> Vec<(&'a Unit, f32)> {
        let own: Vec<(&Unit, f32)> = if self.parts.is_empty() {
            vec![(self.unit, self.score)]
        } else {
            self.parts.iter().map(|p| (&p.unit, p.score)).collect()
        };
        own.into_iter()
            .chain(self.more.iter().map(|p| (&p.unit, p.score)))
            .collect()
    }

    /// How many of [`PackItem::pieces`] the hit's own text shows.
    fn own(&self) -> usize {
        self.parts.len().max(1)
    }
}

pub struct PackInput<'a> {
    /// Hits in rank order, then the places ranked after them that may fill what the
    /// budget has left.
    pub items: &'a [PackItem<'a>],
    /// How many of `items` are hits: each gets its best unit in first.
    pub hits: usize,
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
    /// The hits not shown whole (trimmed, shown in part or left out), in rank order.
    pub cut_ids: Vec<String>,
    /// Ids of units (whole or trimmed) in the context, in context order; a place hit
    /// contributes each of its units the context shows.
    pub unit_ids: Vec<String>,
    /// Per item (in rank order): the ids of the units the context shows of it, its best
    /// first (empty when left out).
    pub shown: Vec<Vec<String>>,
    /// With `explain`: what became of each unit, in rank order (else empty).
    pub entries: Vec<PackedEntry>,
}

/// What the context shows of one hit: the indexes of its pieces, or a trimmed text.
struct Chosen {
    item: usize,
    pieces: Vec<usize>,
    /// Cut to some of its best unit's sentences (it takes no further units).
    trimmed: bool,
    text: String,
    tokens: usize,
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
    body_of(&u.text, &u.provenance.speakers, query_words, format)
}

fn body_of(text: &str, speakers: &[String], query_words: &[String], format: Format) -> String {
    match format {
        Format::Raw => text.to_string(),
        Format::Synthesized => speaker_blocks(text, speakers)
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

/// The entry's header: date and source. A synthesized context names a conversation by its
/// group, if any, rather than its session id (often an opaque id that costs a reader a
/// dozen tokens and tells it nothing; the hits cite the session).
fn header(u: &Unit, format: Format) -> String {
    let p = &u.provenance;
    let source = match (&p.session_id, &p.trajectory_id, p.states) {
        (Some(_), _, _) if format == Format::Synthesized => p
            .group
            .as_ref()
            .map_or_else(String::new, |g| format!(" {g}")),
        (Some(s), _, _) => format!(" session {s}"),
        (None, Some(t), Some([a, b])) if b > a + 1 => {
            format!(" trajectory {t} states {a}-{}", b - 1)
        }
        (None, Some(t), Some([a, _])) => format!(" trajectory {t} state {a}"),
        (None, Some(t), None) => format!(" trajectory {t}"),
        _ => String::new(),
    };
    format!("[{}{}]\n", date_label(u), source)
}

fn entry(u: &Unit, body: &str, format: Format) -> String {
    let p = &u.provenance;
    // A place's excerpt of several messages says who spoke on each line already.
    let prefix = if u.kind == cairn_core::UnitKind::Turn && p.message_ids.len() <= 1 {
        format!(
            "{}: ",
            p.speakers.first().map(String::as_str).unwrap_or("unknown")
        )
    } else {
        String::new()
    };
    format!("{}{}{}", header(u, format), prefix, body)
}

/// A unit's line in an excerpt ([`crate::places`]: a turn says who spoke), as the
/// context writes it: the tokens it adds to its entry.
fn piece_body(u: &Unit, input: &PackInput<'_>) -> String {
    match (u.kind, u.provenance.speakers.first()) {
        (cairn_core::UnitKind::Turn, Some(who)) => body_of(
            &format!("{who}: {}", u.text),
            &u.provenance.speakers,
            input.query_words,
            input.format,
        ),
        _ => body(u, input.query_words, input.format),
    }
}

/// What a unit adds to an entry that shows the messages `shown` says it does: its lines
/// (as the context writes them) of the messages not shown yet; `None` when it adds
/// none. Rounds of a multi-party chat share a message with the next one, which the
/// excerpt shows once.
fn added_text(u: &Unit, input: &PackInput<'_>, shown: impl Fn(&str) -> bool) -> Option<String> {
    let ids = &u.provenance.message_ids;
    let new: Vec<bool> = ids.iter().map(|m| !shown(m)).collect();
    if !new.contains(&true) && !ids.is_empty() {
        return None;
    }
    let text = piece_body(u, input);
    if new.iter().all(|&n| n) {
        return Some(text);
    }
    let blocks = speaker_blocks(&text, &u.provenance.speakers);
    if blocks.len() != ids.len() {
        return Some(text);
    }
    Some(
        blocks
            .into_iter()
            .zip(new)
            .filter(|(_, n)| *n)
            .map(|(b, _)| b)
            .collect::<Vec<_>>()
            .join("\n"),
    )
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
    let spans = sentences(body);
    let piece = |i: usize| body[spans[i].0..spans[i].1].trim();
    let count = |s: &str| (input.count_tokens)(s);
    let joiner_tokens = count(JOINER);
    let mut used = count(&entry(u, JOINER, input.format));
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
        let candidate = entry(u, &format!("{text}{JOINER}"), input.format);
        let tokens = count(&candidate);
        if tokens <= budget {
            return Some((candidate, tokens));
        }
        kept.pop();
    }
    None
}

/// The first words of the unit's best sentence that fit in `budget` tokens, under its
/// header and marked as cut when those fit too: what a context too small for any whole
/// sentence shows.
fn first_words(u: &Unit, body: &str, input: &PackInput<'_>, budget: usize) -> (String, usize) {
    let spans = sentences(body);
    let best = by_overlap(input.query_words, body, &spans)
        .first()
        .map_or(body, |&i| body[spans[i].0..spans[i].1].trim());
    let words: Vec<&str> = best.split_whitespace().collect();
    let count = |s: &str| (input.count_tokens)(s);
    // Under its header, else without; the mark of the cut too when it fits.
    for (with_header, mark) in [(true, JOINER), (false, JOINER), (false, "")] {
        let text = |n: usize| {
            let cut = format!("{}{mark}", words[..n].join(" "));
            if with_header {
                entry(u, &cut, input.format)
            } else {
                cut
            }
        };
        if let Some(fit) = most_words_within(words.len(), budget, text, count) {
            return fit;
        }
    }
    (String::new(), 0)
}

/// The text of the most words (of `n`) that fits in `budget` tokens, and its tokens; `None`
/// when not even one word fits. A text's tokens grow with its words, so this searches by
/// halving: counting one word fewer at a time cost a recall seconds on a long sentence
/// (a count per word of it, each of the whole prefix). No more than `budget` words can
/// fit, as every word is at least one token.
fn most_words_within(
    n: usize,
    budget: usize,
    text: impl Fn(usize) -> String,
    count: impl Fn(&str) -> usize,
) -> Option<(String, usize)> {
    // `lo` words fit (none, to begin with); no more than `hi` do.
    let (mut lo, mut hi) = (0, n.min(budget));
    let mut fit = None;
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let t = text(mid);
        let tokens = count(&t);
        if tokens <= budget {
            lo = mid;
            fit = Some((t, tokens));
        } else {
            hi = mid - 1;
        }
    }
    fit
}

/// Whitespace-separated words: a lower bound of any tokenizer's count.
fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

/// Which entry shows each message `(session, message)` of the context so far.
#[derive(Default)]
struct ShownMessages<'a>(HashMap<(&'a str, &'a str), usize>);

impl<'a> ShownMessages<'a> {
    /// Whether another entry than `item`'s shows a message of `u`.
    fn clashes(&self, u: &'a Unit, item: usize) -> bool {
        let Some(s) = u.provenance.session_id.as_deref() else {
            return false;
        };
        u.provenance
            .message_ids
            .iter()
            .any(|m| self.0.get(&(s, m.as_str())).is_some_and(|&i| i != item))
    }

    /// Whether `item`'s entry shows message `m` of `u`'s session.
    fn shows(&self, u: &Unit, m: &str, item: usize) -> bool {
        u.provenance
            .session_id
            .as_deref()
            .is_some_and(|s| self.0.get(&(s, m)) == Some(&item))
    }

    fn add(&mut self, u: &'a Unit, item: usize) {
        if let Some(s) = u.provenance.session_id.as_deref() {
            for m in &u.provenance.message_ids {
                self.0.insert((s, m.as_str()), item);
            }
        }
    }
}

/// Packs the hits (see the module doc), never over the budget.
pub fn pack(input: &PackInput<'_>) -> Packed {
    let pieces: Vec<Vec<(&Unit, f32)>> = input.items.iter().map(PackItem::pieces).collect();
    let mut shown = ShownMessages::default();
    let mut outcomes: Vec<Option<PackOutcome>> = vec![None; input.items.len()];
    let (mut chosen, used) = seed(input, &pieces, &mut shown, &mut outcomes);
    grow(input, &pieces, &mut chosen, used, &mut shown);
    let mut chosen = render(input, &pieces, chosen);
    if chosen.is_empty() {
        chosen.extend(squeezed(input, &pieces, &outcomes));
    }
    order(&mut chosen, &pieces, input.format);
    let context = chosen
        .iter()
        .map(|c| c.text.as_str())
        .collect::<Vec<_>>()
        .join(SEPARATOR);
    let sum = chosen.iter().map(|c| c.tokens).sum::<usize>()
        + chosen.len().saturating_sub(1) * (input.count_tokens)(SEPARATOR);
    let (context, tokens, dropped) = within_budget(input, &mut chosen, context, sum);
    finish(input, &pieces, chosen, context, tokens, outcomes, dropped)
}

/// Each hit's best unit, in rank order, the hits sharing the budget (`synthesized`) or
/// taking what is left (`raw`): whole when it fits, else trimmed to its best sentences.
/// Returns the entries and the tokens they take (with separators).
fn seed<'a>(
    input: &PackInput<'_>,
    pieces: &'a [Vec<(&'a Unit, f32)>],
    shown: &mut ShownMessages<'a>,
    outcomes: &mut [Option<PackOutcome>],
) -> (Vec<Chosen>, usize) {
    let sep_tokens = (input.count_tokens)(SEPARATOR);
    let mut used = 0usize;
    let mut chosen: Vec<Chosen> = Vec::new();
    let mut seen_bodies: Vec<String> = Vec::new();
    for (i, item) in input.items.iter().enumerate().take(input.hits) {
        let (best, _) = pieces[i][0];
        if input.format == Format::Synthesized {
            let norm = body(item.unit, input.query_words, input.format)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if seen_bodies.contains(&norm) {
                outcomes[i] = Some(PackOutcome::Duplicate);
                continue;
            }
            seen_bodies.push(norm);
        }
        if shown.clashes(best, i) {
            outcomes[i] = Some(PackOutcome::Duplicate);
            continue;
        }
        let overhead = if chosen.is_empty() { 0 } else { sep_tokens };
        let remaining = input.budget.saturating_sub(used + overhead);
        let allowance = match input.format {
            Format::Raw => remaining,
            Format::Synthesized => (remaining / (input.hits - i))
                .max(MIN_TRIMMED_TOKENS)
                .min(remaining),
        };
        let b = body(best, input.query_words, input.format);
        let whole = entry(best, &b, input.format);
        // Every word is at least one token: what has more words than the allowance is
        // not counted (the cost of packing is the tokenizer).
        let tokens = if words(&whole) <= allowance {
            (input.count_tokens)(&whole)
        } else {
            usize::MAX
        };
        let c = if tokens <= allowance {
            Chosen {
                item: i,
                pieces: vec![0],
                trimmed: false,
                text: whole,
                tokens,
            }
        } else {
            let Some((text, tokens)) = (allowance >= MIN_TRIMMED_TOKENS)
                .then(|| trim_to_fit(best, &b, input, allowance))
                .flatten()
            else {
                outcomes[i] = Some(PackOutcome::Cut);
                continue;
            };
            Chosen {
                item: i,
                pieces: vec![0],
                trimmed: true,
                text,
                tokens,
            }
        };
        used += c.tokens + overhead;
        shown.add(best, i);
        chosen.push(c);
    }
    (chosen, used)
}

/// Fills what the budget has left, each unit where it fits: first the hits' further units
/// (of entries shown whole) by score, then the places ranked after the hits (`PackItem`s
/// past `PackInput::hits`), each opened by its best unit, and their units by score.
/// (Measured on the dev sets, a place after the hits holds the evidence less often than
/// more of the hits' places: docs/benchmarks/experiments.md.)
fn grow<'a>(
    input: &PackInput<'_>,
    pieces: &'a [Vec<(&'a Unit, f32)>],
    chosen: &mut Vec<Chosen>,
    mut used: usize,
    shown: &mut ShownMessages<'a>,
) {
    let gap_tokens = (input.count_tokens)(GAP);
    let sep_tokens = (input.count_tokens)(SEPARATOR);
    let mut entry_of: Vec<Option<usize>> = vec![None; pieces.len()];
    for (e, c) in chosen.iter().enumerate() {
        entry_of[c.item] = Some(e);
    }
    for (i, k, _) in growth_pool(input, pieces, chosen, &entry_of) {
        let remaining = input.budget.saturating_sub(used);
        if remaining <= gap_tokens {
            break;
        }
        let (u, _) = pieces[i][k];
        if shown.clashes(u, i) {
            continue;
        }
        match entry_of[i] {
            Some(e) => {
                let Some(text) = added_text(u, input, |m| shown.shows(u, m, i)) else {
                    continue;
                };
                if words(&text) + gap_tokens > remaining {
                    continue;
                }
                let cost = (input.count_tokens)(&text) + gap_tokens;
                if cost <= remaining {
                    used += cost;
                    shown.add(u, i);
                    chosen[e].pieces.push(k);
                }
            }
            // A place after the hits, opened by its best unit whole.
            None if k == 0 => {
                let overhead = if chosen.is_empty() { 0 } else { sep_tokens };
                let text = entry(u, &body(u, input.query_words, input.format), input.format);
                if words(&text) + overhead > remaining {
                    continue;
                }
                let tokens = (input.count_tokens)(&text);
                if tokens + overhead <= remaining {
                    used += tokens + overhead;
                    shown.add(u, i);
                    entry_of[i] = Some(chosen.len());
                    chosen.push(Chosen {
                        item: i,
                        pieces: vec![0],
                        trimmed: false,
                        text,
                        tokens,
                    });
                }
            }
            None => {}
        }
    }
}

/// The units `grow` may add, as (place, unit within it, score), in the order it tries
/// them: further units of the entries shown whole, then every unit of the places after
/// the hits (`entry_of`: each place's entry in `chosen`, if it has one).
fn growth_pool(
    input: &PackInput<'_>,
    pieces: &[Vec<(&Unit, f32)>],
    chosen: &[Chosen],
    entry_of: &[Option<usize>],
) -> Vec<(usize, usize, f32)> {
    let mut pool: Vec<(usize, usize, f32)> = Vec::new();
    for (i, units) in pieces.iter().enumerate() {
        let first = match entry_of[i] {
            Some(e) if !chosen[e].trimmed => 1,
            None if i >= input.hits => 0,
            _ => continue,
        };
        pool.extend(
            units
                .iter()
                .enumerate()
                .skip(first)
                .map(|(k, (_, s))| (i, k, *s)),
        );
    }
    // The hits' own material first, best score first; then the places after them. Stable:
    // among equal scores, places in rank order and their units in theirs.
    pool.sort_by(|a, b| {
        (a.0 >= input.hits)
            .cmp(&(b.0 >= input.hits))
            .then(b.2.total_cmp(&a.2))
    });
    pool
}

/// Writes each entry's text from the units chosen for it, and counts it.
fn render<'a>(
    input: &PackInput<'_>,
    pieces: &'a [Vec<(&'a Unit, f32)>],
    chosen: Vec<Chosen>,
) -> Vec<Chosen> {
    chosen
        .into_iter()
        .map(|mut c| {
            if !c.trimmed && c.pieces.len() > 1 {
                let units = &pieces[c.item];
                let shown = excerpt(
                    units[c.pieces[0]].0,
                    c.pieces[1..].iter().map(|&k| units[k].0),
                );
                c.text = entry(
                    &shown,
                    &body(&shown, input.query_words, input.format),
                    input.format,
                );
                c.tokens = (input.count_tokens)(&c.text);
            }
            c
        })
        .collect()
}

/// A context with hits but nothing chosen (a budget too small for any hit's best
/// sentence): the first hit's best unit cut to what fits.
fn squeezed<'a>(
    input: &PackInput<'_>,
    pieces: &'a [Vec<(&'a Unit, f32)>],
    outcomes: &[Option<PackOutcome>],
) -> Option<Chosen> {
    let i = (0..input.hits).find(|&i| outcomes[i] != Some(PackOutcome::Duplicate))?;
    let (u, _) = pieces[i][0];
    let b = body(u, input.query_words, input.format);
    let (text, tokens) = trim_to_fit(u, &b, input, input.budget)
        .unwrap_or_else(|| first_words(u, &b, input, input.budget));
    (!text.is_empty()).then(|| Chosen {
        item: i,
        pieces: vec![0],
        trimmed: true,
        text,
        tokens,
    })
}

/// Puts the entries in context order: `raw` chronologically, `synthesized` newest first.
fn order(chosen: &mut [Chosen], pieces: &[Vec<(&Unit, f32)>], format: Format) {
    let first = |c: &Chosen| {
        let units = c.pieces.iter().map(|&k| pieces[c.item][k].0);
        let when = units.clone().filter_map(|u| u.occurred_at).min();
        let u = pieces[c.item][c.pieces[0]].0;
        let position = units.map(|u| u.provenance.first_position).min();
        (when, u.provenance.session_id.clone(), position)
    };
    match format {
        Format::Raw => chosen.sort_by_cached_key(first),
        Format::Synthesized => chosen.sort_by_cached_key(|c| std::cmp::Reverse(first(c).0)),
    }
}

/// The joined context and its tokens, within the budget: token counts of joined text can
/// differ from the sum of the parts at the seams, so unless the tokenizer adds up over
/// whitespace (`additive`) the whole is counted again and entries are dropped from the
/// end while it runs over. Returns the items dropped.
fn within_budget(
    input: &PackInput<'_>,
    chosen: &mut Vec<Chosen>,
    mut context: String,
    sum: usize,
) -> (String, usize, Vec<usize>) {
    if input.additive && sum <= input.budget {
        return (context, sum, Vec::new());
    }
    let mut dropped = Vec::new();
    let mut tokens = (input.count_tokens)(&context);
    while tokens > input.budget {
        let Some(c) = chosen.pop() else { break };
        dropped.push(c.item);
        context = chosen
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join(SEPARATOR);
        tokens = (input.count_tokens)(&context);
    }
    (context, tokens, dropped)
}

/// The answer: what each hit became, in rank order.
fn finish(
    input: &PackInput<'_>,
    pieces: &[Vec<(&Unit, f32)>],
    chosen: Vec<Chosen>,
    context: String,
    tokens: usize,
    mut outcomes: Vec<Option<PackOutcome>>,
    dropped: Vec<usize>,
) -> Packed {
    let n = input.items.len();
    let mut shown: Vec<Vec<String>> = vec![Vec::new(); n];
    let mut entry_tokens = vec![0usize; n];
    let mut unit_ids = Vec::new();
    for c in &chosen {
        let ids: Vec<String> = c
            .pieces
            .iter()
            .map(|&k| pieces[c.item][k].0.id.clone())
            .collect();
        unit_ids.extend(ids.iter().cloned());
        let item = &input.items[c.item];
        let all_own = (0..item.own()).all(|k| c.pieces.contains(&k));
        outcomes[c.item] = Some(if !c.trimmed && all_own {
            PackOutcome::Whole
        } else {
            PackOutcome::Trimmed
        });
        entry_tokens[c.item] = c.tokens;
        shown[c.item] = ids;
    }
    for i in dropped {
        outcomes[i] = Some(PackOutcome::Dropped);
    }
    let mut cut_ids = Vec::new();
    let mut entries = Vec::new();
    for (i, item) in input.items.iter().enumerate() {
        let Some(outcome) = outcomes[i].or((i < input.hits).then_some(PackOutcome::Cut)) else {
            continue;
        };
        if i < input.hits && !matches!(outcome, PackOutcome::Whole | PackOutcome::Duplicate) {
            cut_ids.push(item.unit.id.clone());
        }
        if input.explain {
            let full = (input.count_tokens)(&entry(
                item.unit,
                &body(item.unit, input.query_words, input.format),
                input.format,
            ));
            entries.push(PackedEntry {
                unit_id: item.unit.id.clone(),
                outcome,
                full_tokens: full,
                tokens: entry_tokens[i],
            });
        }
    }
    Packed {
        context,
        tokens,
        cut_ids,
        unit_ids,
        shown,
        entries,
    }
}

#[cfg(test)]
mod tests;
