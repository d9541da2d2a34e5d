//! The inspection verbs over stored trajectories, as pure functions of the record: what
//! an agent reads when it works through experience (a compact summary, one state, a
//! span, the states matching a pattern, a search across a space, the manifest). Every
//! answer is bounded and says what it left out (see `cairn_core::inspect`).
//!
//! Actions name the element they acted on, looked up in the page (`click [107]  #
//! [107] button 'Sign in'`), so a summary reads without opening the pages.
use crate::budget::OutOfTime;
use crate::text::{content_words, stem};
use cairn_core::bounds::*;
use cairn_core::inspect::*;
use cairn_core::{InputError, TrajectoryInput, TrajectoryRecord, TrajectorySummary};
use regex::{Regex, RegexBuilder};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// A node line of an accessibility tree: `[107] button 'Sign in'`.
static NODE_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*\[([A-Za-z0-9_-]+)\]\s*(.+)$").expect("valid regex"));
/// An element an action names: `click [107]`, `type [101] "x"`, `click('a51')`.
static ACTION_REF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"\[([A-Za-z0-9_-]+)\]|\(\s*['"]([A-Za-z]*\d+[A-Za-z0-9_-]*)['"]"#)
        .expect("valid regex")
});
/// The page title of an accessibility tree: `RootWebArea 'Orders'`, else a heading.
static ROOT_TITLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"RootWebArea\s+(?:'([^']*)'|"([^"]*)")"#).expect("valid regex"));
static HEADING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\bheading\s+(?:'([^']*)'|"([^"]*)")"#).expect("valid regex"));
const TITLE_CHARS: usize = 120;

/// The outcome as a short text (`success`, `false`, compact JSON).
pub fn outcome_text(v: &Value) -> String {
    match v {
        Value::Null => "unknown".into(),
        Value::String(s) => one_line(s, 80),
        other => one_line(&other.to_string(), 80),
    }
}

fn start_url(t: &TrajectoryInput) -> Option<String> {
    t.start_url
        .clone()
        .or_else(|| t.states.iter().find_map(|s| s.url.clone()))
}

/// The title of a page, from its accessibility tree.
pub fn page_title(observation: Option<&str>) -> Option<String> {
    let obs = observation?;
    let first = obs.lines().map(str::trim).find(|l| !l.is_empty())?;
    let capture = |re: &Regex, l: &str| {
        re.captures(l)
            .and_then(|c| c.get(1).or_else(|| c.get(2)))
            .map(|m| one_line(m.as_str(), TITLE_CHARS))
            .filter(|t| !t.is_empty())
    };
    capture(&ROOT_TITLE, first).or_else(|| obs.lines().take(40).find_map(|l| capture(&HEADING, l)))
}

fn node_lines(obs: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for line in obs.lines() {
        if let Some(c) = NODE_LINE.captures(line) {
            out.entry(c[1].to_string())
                .or_insert_with(|| line.trim().to_string());
        }
    }
    out
}

/// Per state: its action with the elements it names, and its page title.
pub struct Annotations {
    pub actions: Vec<Option<String>>,
    pub titles: Vec<Option<String>>,
}

/// Elements are looked up in the state's own page first, then in earlier pages (an
/// action may name what an earlier page showed).
pub fn annotate(t: &TrajectoryInput) -> Annotations {
    let mut known: HashMap<String, String> = HashMap::new();
    let mut actions = Vec::with_capacity(t.states.len());
    let mut titles = Vec::with_capacity(t.states.len());
    for s in &t.states {
        let current = s.observation.as_deref().map(node_lines).unwrap_or_default();
        titles.push(page_title(s.observation.as_deref()));
        actions.push(s.action.as_ref().map(|a| {
            let mut seen = HashSet::new();
            let details: Vec<&str> = ACTION_REF
                .captures_iter(a)
                .filter_map(|c| c.get(1).or_else(|| c.get(2)))
                .map(|m| m.as_str())
                .filter(|id| seen.insert(*id))
                .filter_map(|id| current.get(id).or_else(|| known.get(id)))
                .map(String::as_str)
                .collect();
            if details.is_empty() {
                a.trim().to_string()
            } else {
                format!("{}  # {}", a.trim(), details.join(" | "))
            }
        }));
        known.extend(current);
    }
    Annotations { actions, titles }
}

fn step_line(t: &TrajectoryInput, ann: &Annotations, i: usize) -> StepLine {
    let s = &t.states[i];
    StepLine {
        state: i,
        url: s.url.clone(),
        title: ann.titles[i].clone(),
        thought: s.thought.clone(),
        action: ann.actions[i].clone(),
        screenshot: s.screenshot.clone(),
    }
}

/// The concise manifest entry of a stored summary.
pub fn concise_entry(s: &TrajectorySummary) -> ManifestEntry {
    ManifestEntry {
        id: s.id.clone(),
        domain: s.domain.clone(),
        goal: s.goal.clone(),
        start_url: s.urls.first().cloned(),
        outcome: outcome_text(&s.outcome),
        succeeded: s.succeeded,
        states: s.steps,
        steps: None,
        truncated: None,
    }
}

/// The full manifest entry of a trajectory: the concise one and its steps.
pub fn full_entry(t: &TrajectoryInput) -> ManifestEntry {
    let ann = annotate(t);
    let n = t.states.len();
    let shown = n.min(MANIFEST_STEPS);
    ManifestEntry {
        id: t.id.clone(),
        domain: t.domain.clone(),
        goal: t.goal.clone(),
        start_url: start_url(t),
        outcome: outcome_text(&t.outcome),
        succeeded: t.succeeded(),
        states: n,
        steps: Some(
            (0..shown)
                .map(|i| {
                    let mut s = step_line(t, &ann, i);
                    s.screenshot = None;
                    s
                })
                .collect(),
        ),
        truncated: (n > shown).then(|| {
            format!(
                "... [truncated: {} more states ({shown}-{}); use the trajectory's summary for all]",
                n - shown,
                n - 1
            )
        }),
    }
}

/// A compact summary of one trajectory.
pub fn overview(t: &TrajectoryInput) -> TrajectoryOverview {
    let ann = annotate(t);
    let n = t.states.len();
    let shown = n.min(SUMMARY_MAX_STATES);
    TrajectoryOverview {
        id: t.id.clone(),
        domain: t.domain.clone(),
        goal: t.goal.clone(),
        start_url: start_url(t),
        outcome: outcome_text(&t.outcome),
        succeeded: t.succeeded(),
        states: n,
        steps: (0..shown).map(|i| step_line(t, &ann, i)).collect(),
        truncated: (n > shown).then(|| {
            format!(
                "... [truncated: {} more states ({shown}-{}); use span {shown}:{} or match]",
                n - shown,
                n - 1,
                (shown + MAX_SPAN_STATES - 1).min(n - 1)
            )
        }),
    }
}

/// Cuts `text` to about `max` characters, keeping whole lines from its head (three
/// fifths) and its tail. Returns head, tail and the characters left out (0: whole).
pub fn cut_middle(text: &str, max: usize) -> (String, String, usize) {
    let total = text.chars().count();
    if total <= max {
        return (text.to_string(), String::new(), 0);
    }
    let lines: Vec<&str> = text.lines().collect();
    let head_budget = max * 3 / 5;
    let mut head: Vec<String> = Vec::new();
    let mut used = 0;
    let mut h = 0;
    while h < lines.len() {
        let c = lines[h].chars().count() + 1;
        if used + c > head_budget {
            if head.is_empty() {
                // One line longer than the whole allowance: keep its start.
                head.push(lines[h].chars().take(head_budget).collect());
                used = head_budget;
                h += 1;
            }
            break;
        }
        head.push(lines[h].to_string());
        used += c;
        h += 1;
    }
    let tail_budget = max.saturating_sub(used);
    let mut tail: Vec<&str> = Vec::new();
    let mut tail_used = 0;
    let mut k = lines.len();
    while k > h {
        let c = lines[k - 1].chars().count() + 1;
        if tail_used + c > tail_budget {
            break;
        }
        tail.push(lines[k - 1]);
        tail_used += c;
        k -= 1;
    }
    tail.reverse();
    let omitted = total.saturating_sub(used + tail_used).max(1);
    (head.join("\n"), tail.join("\n"), omitted)
}

/// One state in full, its page cut to `max_chars` characters (marked where cut).
pub fn state_view(t: &TrajectoryInput, ann: &Annotations, i: usize, max_chars: usize) -> StateView {
    let s = &t.states[i];
    let obs = s.observation.as_deref().unwrap_or("");
    let total = obs.chars().count();
    let (head, tail, omitted) = cut_middle(obs, max_chars);
    let truncated = (omitted > 0).then(|| {
        let how = if total <= MAX_STATE_CHARS {
            format!("use state {i} with max_chars={total} for all")
        } else {
            format!("use match on {} to find its lines", t.id)
        };
        format!(
            "... [truncated: {} more characters; {how}]",
            thousands(omitted)
        )
    });
    let observation = match &truncated {
        Some(note) if tail.is_empty() => format!("{head}\n{note}"),
        Some(note) => format!("{head}\n{note}\n{tail}"),
        None => head,
    };
    StateView {
        trajectory_id: t.id.clone(),
        state: i,
        states: t.states.len(),
        url: s.url.clone(),
        title: ann.titles[i].clone(),
        thought: s.thought.clone(),
        action: ann.actions[i].clone(),
        screenshot: s.screenshot.clone(),
        observation,
        observation_chars: total,
        truncated,
    }
}

/// States `start..=end` (at most [`MAX_SPAN_STATES`]; an end past the last state stops
/// at it). `None` when `start` is not a state.
pub fn span_view(
    t: &TrajectoryInput,
    start: usize,
    end: usize,
    max_chars: usize,
) -> Option<SpanView> {
    let n = t.states.len();
    if start >= n || end < start {
        return None;
    }
    let ann = annotate(t);
    let last = end.min(n - 1);
    let shown_end = last.min(start + MAX_SPAN_STATES - 1);
    let mut notes = Vec::new();
    if shown_end < last {
        notes.push(format!(
            "... [truncated: states {}-{last} not shown (at most {MAX_SPAN_STATES} per span); ask for span {}:{last}]",
            shown_end + 1,
            shown_end + 1
        ));
    }
    if end > last {
        notes.push(format!(
            "[the trajectory has {n} states: the span ends at {last}]"
        ));
    }
    Some(SpanView {
        trajectory_id: t.id.clone(),
        goal: t.goal.clone(),
        start,
        end: shown_end,
        states: (start..=shown_end)
            .map(|i| state_view(t, &ann, i, max_chars))
            .collect(),
        truncated: (!notes.is_empty()).then(|| notes.join(" ")),
    })
}

/// A pattern as an agent gives it: a case-insensitive regex, or plain words.
pub struct Pattern {
    pub source: String,
    pub mode: PatternMode,
    re: Regex,
    /// Words mode: the stemmed words looked for.
    words: Vec<String>,
}

impl Pattern {
    pub fn new(source: &str, mode: PatternMode) -> Result<Self, InputError> {
        let source = source.trim();
        if source.is_empty() {
            return Err(InputError::field("pattern", "`pattern` is empty"));
        }
        if source.len() > MAX_PATTERN_BYTES {
            return Err(InputError::field(
                "pattern",
                format!("`pattern` is longer than {MAX_PATTERN_BYTES} bytes"),
            ));
        }
        let build = |p: &str| {
            RegexBuilder::new(p)
                .case_insensitive(true)
                .size_limit(1 << 20)
                .dfa_size_limit(1 << 22)
                .build()
        };
        let (re, words) = match mode {
            PatternMode::Regex => (
                build(source).map_err(|e| {
                    InputError::field(
                        "pattern",
                        format!("`pattern` is not a valid regular expression: {e}"),
                    )
                })?,
                Vec::new(),
            ),
            PatternMode::Words => {
                let words = content_words(source);
                if words.is_empty() {
                    return Err(InputError::field(
                        "pattern",
                        "`pattern` holds no word to look for (only stop words or punctuation)",
                    ));
                }
                let alt = words
                    .iter()
                    .map(|w| regex::escape(w))
                    .collect::<Vec<_>>()
                    .join("|");
                let re = build(&format!(r"\b(?:{alt})[\p{{L}}\p{{N}}]*"))
                    .map_err(|e| InputError::field("pattern", e.to_string()))?;
                (re, words)
            }
        };
        Ok(Self {
            source: source.to_string(),
            mode,
            re,
            words,
        })
    }

    /// The indices (into `words`) of the words a line holds; for a regex, `{0}` when it
    /// matches. Empty: no match. A long line is read in pieces (see [`pieces`]), each
    /// metered, so one line cannot outrun the request's deadline.
    fn hits(&self, line: &str, meter: &mut Meter) -> Result<Vec<usize>, OutOfTime> {
        let mut out = Vec::new();
        for piece in pieces(line) {
            meter.read(piece.len())?;
            match self.mode {
                PatternMode::Regex => {
                    if self.re.is_match(piece) {
                        out.push(0);
                        break;
                    }
                }
                PatternMode::Words => {
                    for m in self.re.find_iter(piece) {
                        let w = stem(&m.as_str().to_lowercase());
                        if let Some(k) = self.words.iter().position(|x| *x == w) {
                            if !out.contains(&k) {
                                out.push(k);
                            }
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

/// Longest piece of a line one pattern search reads: a regex's cost is the pattern's
/// size times the text's, so a piece is also the most work done between two checks of
/// the deadline.
const PIECE_BYTES: usize = 16 * 1024;
/// How much consecutive pieces of a long line overlap: a match shorter than this is
/// found wherever it lies; a longer one across a piece's edge may be missed.
const PIECE_OVERLAP: usize = 1024;

/// `line` in pieces of at most [`PIECE_BYTES`] overlapping by [`PIECE_OVERLAP`]; a short
/// line is one piece. A piece ends and the next starts after whitespace where the
/// overlap holds some, so words are not cut.
fn pieces(line: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let rest = &line[start..];
        if rest.len() <= PIECE_BYTES {
            done = true;
            return Some(rest);
        }
        let mut end = PIECE_BYTES;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let piece = &rest[..end];
        // The next piece starts within the overlap, after whitespace if there is some.
        let mut next = end.saturating_sub(PIECE_OVERLAP).max(1);
        while !rest.is_char_boundary(next) {
            next += 1;
        }
        if let Some(ws) = rest[next..end].find(char::is_whitespace) {
            next += ws;
        }
        start += next;
        Some(piece)
    })
}

/// Bytes read by a search, with a deadline check every [`PIECE_BYTES`] of them.
pub(crate) struct Meter {
    stage: &'static str,
    unchecked: usize,
}

impl Meter {
    pub(crate) fn new(stage: &'static str) -> Self {
        // The first read checks: a request already out of time does not start.
        Self {
            stage,
            unchecked: PIECE_BYTES,
        }
    }

    fn read(&mut self, bytes: usize) -> Result<(), OutOfTime> {
        self.unchecked += bytes;
        if self.unchecked >= PIECE_BYTES {
            self.unchecked = 0;
            crate::budget::check(self.stage)?;
        }
        Ok(())
    }
}

/// The state `i` of `t` if it holds the pattern: its matching lines (at most `lines`
/// shown) and the pattern's words it holds.
fn state_match(
    t: &TrajectoryInput,
    ann: &Annotations,
    i: usize,
    p: &Pattern,
    lines: usize,
    meter: &mut Meter,
) -> Result<Option<StateMatch>, OutOfTime> {
    let s = &t.states[i];
    let mut found: Vec<MatchLine> = Vec::new();
    let mut words: HashSet<usize> = HashSet::new();
    let mut more = 0;
    let mut consider = |field: MatchField, text: &str| -> Result<(), OutOfTime> {
        let h = p.hits(text, meter)?;
        if h.is_empty() {
            return Ok(());
        }
        words.extend(h);
        if found.len() < lines {
            found.push(MatchLine {
                field,
                text: one_line(text, LINE_CHARS),
            });
        } else {
            more += 1;
        }
        Ok(())
    };
    if let Some(u) = &s.url {
        consider(MatchField::Url, u)?;
    }
    if let Some(a) = &ann.actions[i] {
        consider(MatchField::Action, a)?;
    }
    if let Some(th) = &s.thought {
        consider(MatchField::Thought, th)?;
    }
    for l in s.observation.as_deref().unwrap_or("").lines() {
        let l = l.trim();
        if !l.is_empty() {
            consider(MatchField::Page, l)?;
        }
    }
    if found.is_empty() && more == 0 {
        return Ok(None);
    }
    Ok(Some(StateMatch {
        trajectory_id: t.id.clone(),
        state: i,
        url: s.url.clone(),
        title: ann.titles[i].clone(),
        action: ann.actions[i].clone(),
        words_matched: if p.mode == PatternMode::Words {
            words.len()
        } else {
            0
        },
        lines: found,
        more_lines: more,
    }))
}

fn limited(
    mut all: Vec<StateMatch>,
    limit: usize,
    what: &str,
) -> (Vec<StateMatch>, Option<String>) {
    let n = all.len();
    if n <= limit {
        return (all, None);
    }
    all.truncate(limit);
    (
        all,
        Some(format!(
            "... [truncated: {} more matching states; {what} or ask with limit={n}]",
            n - limit
        )),
    )
}

/// The states of one trajectory holding the pattern, in state order.
pub fn match_states(t: &TrajectoryInput, p: &Pattern, limit: usize) -> Result<Matches, OutOfTime> {
    let ann = annotate(t);
    let mut meter = Meter::new("trajectory match");
    let mut all: Vec<StateMatch> = Vec::new();
    for i in 0..t.states.len() {
        all.extend(state_match(t, &ann, i, p, MATCH_LINES, &mut meter)?);
    }
    let states_matched = all.len();
    let (states, truncated) = limited(all, limit, "narrow the pattern");
    Ok(Matches {
        pattern: p.source.clone(),
        mode: p.mode,
        trajectory_id: Some(t.id.clone()),
        trajectories_searched: 1,
        states_matched,
        states,
        truncated,
    })
}

/// The states of every trajectory holding the pattern: in words mode the states holding
/// most of the words first, else in insert and state order.
pub fn search(
    records: &[TrajectoryRecord],
    p: &Pattern,
    limit: usize,
) -> Result<Matches, OutOfTime> {
    let mut all: Vec<(usize, StateMatch)> = Vec::new();
    let mut meter = Meter::new("trajectory search");
    for (k, r) in records.iter().enumerate() {
        let t = &r.trajectory;
        let ann = annotate(t);
        for i in 0..t.states.len() {
            if let Some(m) = state_match(t, &ann, i, p, SEARCH_LINES, &mut meter)? {
                all.push((k, m));
            }
        }
    }
    if p.mode == PatternMode::Words {
        all.sort_by(|(ka, a), (kb, b)| {
            b.words_matched
                .cmp(&a.words_matched)
                .then((b.lines.len() + b.more_lines).cmp(&(a.lines.len() + a.more_lines)))
                .then(ka.cmp(kb))
                .then(a.state.cmp(&b.state))
        });
    }
    let states_matched = all.len();
    let (states, truncated) = limited(
        all.into_iter().map(|(_, m)| m).collect(),
        limit,
        "narrow the pattern, match within one trajectory,",
    );
    Ok(Matches {
        pattern: p.source.clone(),
        mode: p.mode,
        trajectory_id: None,
        trajectories_searched: records.len(),
        states_matched,
        states,
        truncated,
    })
}

/// Per state of `t`: how many of `words` (stemmed content words) its page, thought,
/// action and URL hold. Used to pick the states that best answer a question; actions are
/// read as written (no element lookup: it is not needed to count words).
pub fn state_word_counts(t: &TrajectoryInput, words: &[String]) -> Result<Vec<usize>, OutOfTime> {
    let Ok(p) = Pattern::new(&words.join(" "), PatternMode::Words) else {
        return Ok(vec![0; t.states.len()]);
    };
    let mut meter = Meter::new("state words");
    let mut counts = Vec::with_capacity(t.states.len());
    for s in &t.states {
        let mut held: HashSet<usize> = HashSet::new();
        let fields = [&s.url, &s.action, &s.thought];
        for f in fields.into_iter().flatten() {
            held.extend(p.hits(f, &mut meter)?);
        }
        for l in s.observation.as_deref().unwrap_or("").lines() {
            held.extend(p.hits(l, &mut meter)?);
        }
        counts.push(held.len());
    }
    Ok(counts)
}

#[cfg(test)]
mod tests;
