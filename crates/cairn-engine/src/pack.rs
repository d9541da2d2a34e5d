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
    for (i, k, _) in pool {
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
}
