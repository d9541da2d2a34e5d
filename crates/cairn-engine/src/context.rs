//! Spans in, context out: a note and chosen trajectory spans written into a context of at
//! most `budget` tokens (counted with the embedding model's tokenizer, like `pack`).
//!
//! Order is importance: the note first, then each span (header, then each state's URL,
//! title, thought and action, then its page). The budget left after the note is shared
//! among the spans still to come and, within a span, among its pages still to come, so
//! every span keeps its most telling lines: lines holding the query's words, then error
//! lines, then the page from the top. Whatever is left out is said (`… [12 more page
//! lines not shown]`). The finished context is counted again and cut from the end if
//! seams counted differently: the budget is a promise.
use crate::inspect::{annotate, outcome_text, Annotations};
use crate::text::words;
use cairn_core::inspect::{one_line, ContextSpan, RenderedContext, RenderedSpan, URL_CHARS};
use cairn_core::TrajectoryInput;
use regex::Regex;
use std::collections::HashSet;
use std::sync::LazyLock;

/// A line that reports something: an error, a warning, a confirmation (`alert`,
/// `status` roles, or their usual words).
static MESSAGE_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(alert|status|dialog|error|invalid|failed|not found|required|denied|unable|cannot|already exists|must be|not allowed|please|warning|success|successfully|saved|updated|created|deleted|has been|have been)\b")
        .expect("valid regex")
});

/// The most of a note: a quarter of the budget when spans follow.
const NOTE_SHARE: usize = 4;

struct Out<'a> {
    lines: Vec<String>,
    used: usize,
    count: &'a dyn Fn(&str) -> usize,
    /// Tokens per character of the pages being rendered (one count of them all), to
    /// size page lines without a tokenizer call per line.
    per_char: f64,
}

impl Out<'_> {
    /// Adds `line` if it fits within `limit` tokens in all; true when added.
    fn push(&mut self, line: String, limit: usize) -> bool {
        let t = (self.count)(&line);
        if self.used + t > limit {
            return false;
        }
        self.used += t;
        self.lines.push(line);
        true
    }
}

/// The longest start of `text` (whole lines, else a cut first line) within `allowance`
/// tokens, and whether it was cut.
fn fit_text(text: &str, allowance: usize, count: &dyn Fn(&str) -> usize) -> (String, bool) {
    if count(text) <= allowance {
        return (text.to_string(), false);
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut used = count("…");
    for l in text.lines() {
        let c = count(l);
        if used + c > allowance {
            break;
        }
        used += c;
        kept.push(l);
    }
    if kept.is_empty() {
        // Not even the first line: the longest prefix of it that fits (binary search on
        // characters; token counts grow with length).
        let first: Vec<char> = text.lines().next().unwrap_or("").chars().collect();
        let (mut lo, mut hi) = (0usize, first.len());
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            let s: String = first[..mid].iter().collect();
            if count(&format!("{s}…")) <= allowance {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        if lo == 0 {
            return (String::new(), true);
        }
        let s: String = first[..lo].iter().collect();
        return (format!("{s}…"), true);
    }
    (format!("{}\n…", kept.join("\n")), true)
}

/// A message line of a page; a form's `required: True` attribute is not one.
fn is_message(line: &str) -> bool {
    if line.contains("required: ") {
        let plain = line
            .replace("required: True", "")
            .replace("required: False", "");
        return MESSAGE_LINE.is_match(&plain);
    }
    MESSAGE_LINE.is_match(line)
}

/// Which page lines to keep within `allowance` tokens: lines holding the query's words,
/// then new message lines (errors, confirmations), then lines new since the previous page, then the rest from the
/// top. Returns them in page order, the number left out, and the tokens of the block
/// (`Page:`, the lines, the note of what was cut), counted exactly.
///
/// Counting every line with the tokenizer would cost a call per line, so lines are sized
/// by their characters (`per_char`, rounded up), and the chosen block is then counted
/// whole and thinned until it fits.
fn page_block(
    page: &str,
    before: &HashSet<&str>,
    query: &HashSet<String>,
    allowance: usize,
    per_char: f64,
    count: &dyn Fn(&str) -> usize,
) -> Option<(String, usize, usize)> {
    let lines: Vec<&str> = page.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return None;
    }
    let estimate = |l: &str| (l.chars().count() as f64 * per_char * 1.15).ceil() as usize + 1;
    let score = |l: &str| -> usize {
        let q = words(l).iter().filter(|w| query.contains(*w)).count();
        let new = !before.contains(l.trim());
        4 * q.min(4) + 3 * usize::from(new && is_message(l)) + usize::from(new)
    };
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(score(lines[i])), i));
    let marker = |cut: usize| format!("\n… [{cut} more page lines not shown]");
    let mut budget = allowance.saturating_sub(estimate(&marker(9999)) + 2);
    let mut kept: Vec<usize> = Vec::new();
    for i in order {
        let t = estimate(lines[i]);
        if t <= budget {
            budget -= t;
            kept.push(i);
        }
    }
    // `kept` is in priority order: thin from its end until the block really fits.
    while !kept.is_empty() {
        let mut in_order = kept.clone();
        in_order.sort_unstable();
        let cut = lines.len() - kept.len();
        let mut block = format!(
            "Page:\n{}",
            in_order
                .iter()
                .map(|&i| lines[i])
                .collect::<Vec<_>>()
                .join("\n")
        );
        if cut > 0 {
            block += &marker(cut);
        }
        let tokens = count(&block);
        if tokens <= allowance {
            return Some((block, cut, tokens));
        }
        let drop = (kept.len() / 8).max(1);
        kept.truncate(kept.len() - drop);
    }
    None
}

/// One span's lines within `allowance` tokens (header and state heads first, then pages
/// sharing what is left).
fn render_span(
    out: &mut Out<'_>,
    span: &ContextSpan,
    t: &TrajectoryInput,
    query: &HashSet<String>,
    limit: usize,
    shown: &mut HashSet<(String, usize)>,
) -> RenderedSpan {
    let mut r = RenderedSpan {
        trajectory_id: span.trajectory_id.clone(),
        start_state: span.start_state,
        end_state: span.end_state,
        states_shown: 0,
        lines_cut: 0,
    };
    let ann = annotate(t);
    if !out.push(span_header(span, t), limit) {
        return r;
    }
    // Heads of every state first, then the pages sharing what is left; written out in
    // state order (head, page).
    let heads = state_heads(out, span, t, &ann, limit, shown);
    r.states_shown = heads.len();
    let fresh: Vec<usize> = heads.iter().filter(|h| h.2).map(|h| h.0).collect();
    let mut pages = state_pages(out, t, &fresh, query, limit, &mut r.lines_cut);
    for (i, head, _) in heads {
        out.lines.push(head);
        if let Some(p) = pages.iter().position(|(j, _)| *j == i) {
            out.lines.push(pages.swap_remove(p).1);
        }
    }
    r
}

/// A span's header: its trajectory, states, goal, outcome and start URL.
fn span_header(span: &ContextSpan, t: &TrajectoryInput) -> String {
    let mut header = format!(
        "\n## Trajectory {}, states {}-{}\nGoal: {}\nOutcome: {}",
        t.id,
        span.start_state,
        span.end_state,
        one_line(&t.goal, 400),
        outcome_text(&t.outcome)
    );
    if let Some(u) = &t.start_url {
        header += &format!("; start {}", one_line(u, URL_CHARS));
    }
    header
}

/// The heads of the span's states (title; URL, thought and action unless shown above)
/// that fit within `limit`, counted into `out.used` but not yet written: each with its
/// state and whether it is new (its page still to come).
fn state_heads(
    out: &mut Out<'_>,
    span: &ContextSpan,
    t: &TrajectoryInput,
    ann: &Annotations,
    limit: usize,
    shown: &mut HashSet<(String, usize)>,
) -> Vec<(usize, String, bool)> {
    let mut heads: Vec<(usize, String, bool)> = Vec::new();
    for i in span.start_state..=span.end_state {
        let s = &t.states[i];
        let seen = !shown.insert((t.id.clone(), i));
        let mut head = format!("### State {i}");
        if let Some(title) = &ann.titles[i] {
            head += &format!(" [{title}]");
        }
        if seen {
            head += " (shown above)";
        } else {
            if let Some(u) = &s.url {
                head += &format!("\nURL: {}", one_line(u, URL_CHARS));
            }
            if let Some(th) = &s.thought {
                head += &format!("\nThought: {}", one_line(th, 400));
            }
            if let Some(a) = &ann.actions[i] {
                head += &format!("\nAction: {}", one_line(a, 400));
            }
        }
        let tokens = (out.count)(&head);
        if out.used + tokens > limit {
            shown.remove(&(t.id.clone(), i));
            break;
        }
        out.used += tokens;
        heads.push((i, head, !seen));
    }
    heads
}

/// The page blocks of the `fresh` states, each sharing what is left of `limit` with
/// the pages still to come; counted into `out.used`, the lines left out into
/// `lines_cut`.
fn state_pages(
    out: &mut Out<'_>,
    t: &TrajectoryInput,
    fresh: &[usize],
    query: &HashSet<String>,
    limit: usize,
    lines_cut: &mut usize,
) -> Vec<(usize, String)> {
    let mut pages: Vec<(usize, String)> = Vec::new();
    for (k, &i) in fresh.iter().enumerate() {
        let page = t.states[i].observation.as_deref().unwrap_or("");
        if page.trim().is_empty() {
            continue;
        }
        let allowance = limit.saturating_sub(out.used) / (fresh.len() - k);
        let before: HashSet<&str> = i
            .checked_sub(1)
            .and_then(|p| t.states[p].observation.as_deref())
            .map(|o| o.lines().map(str::trim).collect())
            .unwrap_or_default();
        let Some((block, cut, tokens)) =
            page_block(page, &before, query, allowance, out.per_char, out.count)
        else {
            *lines_cut += page.lines().filter(|l| !l.trim().is_empty()).count();
            continue;
        };
        *lines_cut += cut;
        out.used += tokens;
        pages.push((i, block));
    }
    pages
}

/// Renders `note` and `spans` (each with its trajectory, spans already checked against
/// it) within `budget` tokens.
pub fn render_context(
    note: &str,
    spans: &[(ContextSpan, &TrajectoryInput)],
    budget: usize,
    query: Option<&str>,
    count: &dyn Fn(&str) -> usize,
) -> RenderedContext {
    let query: HashSet<String> = query.map(words).unwrap_or_default().into_iter().collect();
    // One count of every page to be rendered gives tokens per character.
    let mut sample = String::new();
    for (span, t) in spans {
        for s in &t.states[span.start_state..=span.end_state] {
            if sample.len() > 24_000 {
                break;
            }
            sample.push_str(s.observation.as_deref().unwrap_or(""));
            sample.push('\n');
        }
    }
    let per_char = if sample.trim().is_empty() {
        0.5
    } else {
        count(&sample) as f64 / sample.chars().count() as f64
    };
    let mut out = Out {
        lines: Vec::new(),
        used: 0,
        count,
        per_char,
    };
    let mut note_cut = false;
    let note = note.trim();
    if !note.is_empty() {
        let share = if spans.is_empty() {
            budget
        } else {
            budget / NOTE_SHARE
        };
        let label = count("## Memory note");
        let (text, cut) = fit_text(note, share.saturating_sub(label), count);
        note_cut = cut;
        if !text.is_empty() {
            out.push(format!("## Memory note\n{text}"), budget);
        }
    }
    let mut shown = HashSet::new();
    let mut rendered = Vec::new();
    for (k, (span, t)) in spans.iter().enumerate() {
        let left = budget.saturating_sub(out.used);
        let limit = out.used + left / (spans.len() - k);
        rendered.push(render_span(&mut out, span, t, &query, limit, &mut shown));
    }
    let mut context = out.lines.join("\n").trim().to_string();
    let mut tokens = count(&context);
    while tokens > budget && !out.lines.is_empty() {
        out.lines.pop();
        context = out.lines.join("\n").trim().to_string();
        tokens = count(&context);
    }
    RenderedContext {
        context,
        tokens,
        token_budget: budget,
        note_cut,
        spans: rendered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn words_count(s: &str) -> usize {
        s.split_whitespace().count()
    }

    fn t() -> TrajectoryInput {
        let page: String = (0..80)
            .map(|i| format!("[{i}] row 'filler item number {i}'\n"))
            .collect::<String>()
            + "[99] alert 'The coupon code SPRING10 already exists.'\n";
        serde_json::from_value(json!({
            "id": "t1", "goal": "Create coupon SPRING10", "outcome": "failure",
            "states": [
                {"url": "http://a/new", "action": "click [63]", "accessibility_tree": "[63] button 'Save'"},
                {"url": "http://a/new", "thought": "taken", "accessibility_tree": page}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn the_budget_is_kept_and_the_telling_lines_survive() {
        let tr = t();
        let span = ContextSpan {
            trajectory_id: "t1".into(),
            start_state: 0,
            end_state: 1,
        };
        for budget in [5, 30, 60, 120, 400, 5000] {
            let r = render_context(
                "The code SPRING10 was taken.",
                &[(span.clone(), &tr)],
                budget,
                Some("does the coupon code already exist"),
                &words_count,
            );
            assert!(r.tokens <= budget, "{} > {budget}", r.tokens);
            assert_eq!(r.tokens, words_count(&r.context));
            if budget >= 120 {
                assert!(
                    r.context.contains("already exists"),
                    "{budget}: {}",
                    r.context
                );
                assert!(r.context.starts_with("## Memory note\nThe code SPRING10"));
            }
            if (120..5000).contains(&budget) {
                assert!(r.spans[0].lines_cut > 0);
                assert!(r.context.contains("more page lines not shown"));
            }
        }
        let whole = render_context("", &[(span.clone(), &tr)], 5000, None, &words_count);
        assert_eq!(whole.spans[0].lines_cut, 0);
        assert!(whole.context.contains("[79] row 'filler item number 79'"));
        // A state in two spans is written once.
        let twice = render_context(
            "",
            &[(span.clone(), &tr), (span, &tr)],
            5000,
            None,
            &words_count,
        );
        assert_eq!(twice.context.matches("Page:").count(), 2);
        assert!(twice.context.contains("(shown above)"));
    }

    #[test]
    fn a_long_note_is_cut_to_its_share() {
        let note = "word ".repeat(500);
        let r = render_context(&note, &[], 50, None, &words_count);
        assert!(r.note_cut && r.tokens <= 50);
        let (s, cut) = fit_text("abcdefghij", 1, &|s: &str| s.chars().count().div_ceil(4));
        assert!(cut && s.ends_with('…'));
    }
}
