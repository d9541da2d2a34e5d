//! Inspection of stored trajectories, the way a coding agent works through them: a
//! manifest (concise or full), a compact summary of one trajectory, one state, a span of
//! states, the states of one trajectory matching a pattern, a search across a space, and
//! a context rendered from a note and chosen spans.
//!
//! Every answer is sized for an agent's context: each has limits, and whatever a limit
//! cut is said in the answer itself (`... [truncated: 3,204 more characters; ...]`), with
//! the call that shows the rest. `Display` writes the answer as the text an agent reads
//! (the MCP tools, the CLI and the agent controller all use it); the structs are what the
//! HTTP API returns.
use crate::bounds::{MAX_CONTEXT_SPANS, MAX_CONTEXT_STATES, MAX_NOTE_BYTES};
use crate::InputError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Observation characters of one state by default.
pub const DEFAULT_STATE_CHARS: usize = 6_000;
/// Observation characters per state of a span by default.
pub const DEFAULT_SPAN_STATE_CHARS: usize = 2_500;
/// Most states listed in a trajectory summary.
pub const SUMMARY_MAX_STATES: usize = 120;
/// Steps listed per trajectory in the full manifest.
pub const MANIFEST_STEPS: usize = 60;
/// Characters kept of a thought, an action and a URL in summaries and listings.
pub const THOUGHT_CHARS: usize = 240;
pub const ACTION_CHARS: usize = 320;
pub const URL_CHARS: usize = 220;
/// Characters kept of a matching line.
pub const LINE_CHARS: usize = 240;
/// Matching lines shown per state (`match`) and per hit (`search`).
pub const MATCH_LINES: usize = 8;
pub const SEARCH_LINES: usize = 3;
/// States returned by `match` and hits by `search` unless asked otherwise (at most
/// [`MAX_INSPECT_RESULTS`]).
pub const DEFAULT_MATCHES: usize = 30;
pub const DEFAULT_SEARCH_HITS: usize = 20;
/// Trajectories per manifest page unless asked otherwise (concise, full; at most
/// [`MAX_MANIFEST`]).
pub const DEFAULT_MANIFEST_CONCISE: usize = 200;
pub const DEFAULT_MANIFEST_FULL: usize = 25;
/// A context request's token budget unless asked otherwise.
pub const DEFAULT_CONTEXT_TOKENS: usize = 2_000;

/// `1234567` as `1,234,567`: truncation notes are read by people and models alike.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A one-line, at most `max`-character version of `s` (whitespace collapsed), `...` when
/// cut.
pub fn one_line(s: &str, max: usize) -> String {
    let compact = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if compact.chars().count() <= max {
        return compact;
    }
    let kept: String = compact.chars().take(max.saturating_sub(3)).collect();
    format!("{kept}...")
}

/// Which manifest: one line per trajectory, or with its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ManifestForm {
    /// Goal, start URL, outcome and state count of each trajectory.
    #[default]
    Concise,
    /// Also each state's URL, page title, thought and action (the action sequence).
    Full,
}

impl std::str::FromStr for ManifestForm {
    type Err = InputError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "concise" => Ok(Self::Concise),
            "full" => Ok(Self::Full),
            other => Err(InputError::new(
                "form",
                format!("unknown form {other:?} (concise or full)"),
            )),
        }
    }
}

/// How a pattern is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PatternMode {
    /// A regular expression, case-insensitive (`Delete Review|Previous`).
    #[default]
    Regex,
    /// Plain words: a line matches when it holds any of them (lightly stemmed, stop
    /// words ignored); states are ranked by how many of the words they hold.
    Words,
}

impl std::str::FromStr for PatternMode {
    type Err = InputError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "regex" => Ok(Self::Regex),
            "words" => Ok(Self::Words),
            other => Err(InputError::new(
                "mode",
                format!("unknown mode {other:?} (regex or words)"),
            )),
        }
    }
}

/// One state as listed in summaries: where, what the page was, what the agent thought
/// and did. The action names the element it acted on (`click [107]  # [107] button
/// 'Sign in'`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepLine {
    pub state: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
}

/// One trajectory in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestEntry {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    pub goal: String,
    /// The start URL (else the first URL visited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_url: Option<String>,
    /// The outcome as the source wrote it (`success`, `false`, JSON).
    pub outcome: String,
    pub succeeded: Option<bool>,
    pub states: usize,
    /// Full form: the steps (at most [`MANIFEST_STEPS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<StepLine>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

/// A page of the manifest of a space, in insert order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub form: ManifestForm,
    /// Trajectories in the space.
    pub total: usize,
    pub offset: usize,
    pub entries: Vec<ManifestEntry>,
    /// Where the next page starts; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

/// A compact summary of one trajectory: its header and one line per state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryOverview {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    pub goal: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_url: Option<String>,
    pub outcome: String,
    pub succeeded: Option<bool>,
    pub states: usize,
    pub steps: Vec<StepLine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

/// One state in full: its page (the observation), cut to a size when asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateView {
    pub trajectory_id: String,
    pub state: usize,
    /// States in the trajectory.
    pub states: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
    /// The observation, whole or cut in the middle (the cut is marked in it).
    pub observation: String,
    /// Characters of the whole observation.
    pub observation_chars: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

/// States `start..=end` of one trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpanView {
    pub trajectory_id: String,
    pub goal: String,
    pub start: usize,
    pub end: usize,
    pub states: Vec<StateView>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

/// Where in a state a line matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchField {
    Url,
    Thought,
    Action,
    Page,
}

impl MatchField {
    fn label(self) -> &'static str {
        match self {
            MatchField::Url => "URL",
            MatchField::Thought => "Thought",
            MatchField::Action => "Action",
            MatchField::Page => "Page",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchLine {
    pub field: MatchField,
    pub text: String,
}

/// One state holding the pattern, with its matching lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateMatch {
    pub trajectory_id: String,
    pub state: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Words mode: how many of the pattern's words the state holds (else 0).
    pub words_matched: usize,
    pub lines: Vec<MatchLine>,
    /// Matching lines not shown.
    pub more_lines: usize,
}

/// The states of one trajectory (`match`) or of a whole space (`search`) holding a
/// pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matches {
    pub pattern: String,
    pub mode: PatternMode,
    /// `match`: the trajectory searched; `search`: absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    pub trajectories_searched: usize,
    /// States that matched (shown or not).
    pub states_matched: usize,
    pub states: Vec<StateMatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

/// A span of states to put into a context: zero-based, inclusive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextSpan {
    pub trajectory_id: String,
    #[serde(alias = "start_state_index")]
    pub start_state: usize,
    #[serde(alias = "end_state_index")]
    pub end_state: usize,
}

impl ContextSpan {
    /// The span of a unit's states `[first, end)` (a hit's `states`), inclusive as
    /// spans are.
    pub fn of_states(trajectory_id: String, [first, end]: [u32; 2]) -> Self {
        ContextSpan {
            trajectory_id,
            start_state: first as usize,
            end_state: (end as usize).saturating_sub(1).max(first as usize),
        }
    }
}

/// A note and spans to render into a context of at most `token_budget` tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextRequest {
    /// What the reader should know first (markdown); may be empty.
    #[serde(default)]
    pub note: String,
    /// In order of importance: when the budget runs out, later spans lose first.
    pub spans: Vec<ContextSpan>,
    #[serde(default = "default_context_tokens")]
    pub token_budget: usize,
    /// Optional question: page lines holding its words are kept first when a page must
    /// be cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
}

fn default_context_tokens() -> usize {
    DEFAULT_CONTEXT_TOKENS
}

impl ContextRequest {
    /// Checks sizes and shapes; errors name the field (`spans[2].end_state`).
    pub fn validate(&self) -> Result<(), InputError> {
        crate::bounds::in_range(
            "token_budget",
            self.token_budget,
            crate::bounds::MAX_TOKEN_BUDGET,
        )?;
        if self.note.len() > MAX_NOTE_BYTES {
            return Err(InputError::new(
                "note",
                format!(
                    "`note` has {} bytes (at most {MAX_NOTE_BYTES})",
                    self.note.len()
                ),
            ));
        }
        if self.spans.len() > MAX_CONTEXT_SPANS {
            return Err(InputError::new(
                "spans",
                format!("{} spans (at most {MAX_CONTEXT_SPANS})", self.spans.len()),
            ));
        }
        let mut states = 0usize;
        for (i, s) in self.spans.iter().enumerate() {
            if s.trajectory_id.trim().is_empty() {
                return Err(InputError::new(
                    format!("spans[{i}].trajectory_id"),
                    "`trajectory_id` is empty",
                ));
            }
            if s.end_state < s.start_state {
                return Err(InputError::new(
                    format!("spans[{i}].end_state"),
                    format!(
                        "`end_state` {} is before `start_state` {} (indices are inclusive)",
                        s.end_state, s.start_state
                    ),
                ));
            }
            states += s.end_state - s.start_state + 1;
            if states > MAX_CONTEXT_STATES {
                return Err(InputError::new(
                    format!("spans[{i}]"),
                    format!("the spans hold more than {MAX_CONTEXT_STATES} states"),
                ));
            }
        }
        Ok(())
    }
}

/// What became of one span in a rendered context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RenderedSpan {
    pub trajectory_id: String,
    pub start_state: usize,
    pub end_state: usize,
    /// States whose header made it into the context.
    pub states_shown: usize,
    /// Page lines left out for the budget.
    pub lines_cut: usize,
}

/// A note and spans written out within a token budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RenderedContext {
    pub context: String,
    /// Tokens of `context`, counted with the embedding model's tokenizer; never more
    /// than `token_budget`.
    pub tokens: usize,
    pub token_budget: usize,
    /// The note was cut to fit.
    pub note_cut: bool,
    pub spans: Vec<RenderedSpan>,
}

/// Options of recall + inspection (no LLM): recall's best hits give the states, each
/// shortlisted trajectory adds the state holding most of the question's words, and note
/// and spans are rendered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InspectRecallOptions {
    pub token_budget: usize,
    /// Recall hits considered.
    pub top_k: usize,
    /// Trajectories shortlisted (in hit order) and inspected for the question's words.
    pub trajectories: usize,
    /// States taken from the hits, in rank order.
    pub max_states: usize,
}

impl Default for InspectRecallOptions {
    fn default() -> Self {
        Self {
            token_budget: DEFAULT_CONTEXT_TOKENS,
            top_k: 20,
            trajectories: 3,
            max_states: 6,
        }
    }
}

pub use crate::bounds::MAX_INSPECT_TRAJECTORIES;

impl InspectRecallOptions {
    /// Checks every bound; errors name the field. The engine refuses what this refuses.
    pub fn validate(&self) -> Result<(), InputError> {
        use crate::bounds::{in_range, MAX_TOKEN_BUDGET, MAX_TOP_K};
        in_range("token_budget", self.token_budget, MAX_TOKEN_BUDGET)?;
        in_range("top_k", self.top_k, MAX_TOP_K)?;
        in_range("trajectories", self.trajectories, MAX_INSPECT_TRAJECTORIES)?;
        in_range("max_states", self.max_states, MAX_TOP_K)
    }
}

/// What recall + inspection chose and rendered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InspectedRecall {
    pub note: String,
    pub spans: Vec<ContextSpan>,
    pub shortlist: Vec<String>,
    pub context: RenderedContext,
    pub recall_ms: f64,
    pub inspect_ms: f64,
    pub render_ms: f64,
    pub total_ms: f64,
}

fn opt_line(f: &mut fmt::Formatter<'_>, label: &str, v: &Option<String>) -> fmt::Result {
    match v {
        Some(v) => writeln!(f, "{label}: {v}"),
        None => Ok(()),
    }
}

fn outcome_label(outcome: &str, succeeded: Option<bool>) -> String {
    match succeeded {
        Some(true) => format!("{outcome} (succeeded)"),
        Some(false) => format!("{outcome} (failed)"),
        None => outcome.to_string(),
    }
}

fn step_line(f: &mut fmt::Formatter<'_>, s: &StepLine, thoughts: bool) -> fmt::Result {
    write!(f, "- State {}", s.state)?;
    if let Some(t) = &s.title {
        write!(f, " [{t}]")?;
    }
    writeln!(f)?;
    if let Some(u) = &s.url {
        writeln!(f, "  URL: {}", one_line(u, URL_CHARS))?;
    }
    if thoughts {
        if let Some(t) = &s.thought {
            writeln!(f, "  Thought: {}", one_line(t, THOUGHT_CHARS))?;
        }
    }
    writeln!(
        f,
        "  Action: {}",
        s.action
            .as_deref()
            .map_or("<none>".to_string(), |a| one_line(a, ACTION_CHARS))
    )?;
    if thoughts {
        if let Some(p) = &s.screenshot {
            writeln!(f, "  Screenshot: {p}")?;
        }
    }
    Ok(())
}

impl fmt::Display for Manifest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Trajectories {}-{} of {} ({} manifest)",
            (self.offset + 1).min(self.total),
            self.offset + self.entries.len(),
            self.total,
            match self.form {
                ManifestForm::Concise => "concise",
                ManifestForm::Full => "full",
            }
        )?;
        for (i, e) in self.entries.iter().enumerate() {
            writeln!(f)?;
            writeln!(f, "{}. {}: {}", self.offset + i + 1, e.id, e.goal)?;
            write!(
                f,
                "   outcome {}, {} states",
                outcome_label(&e.outcome, e.succeeded),
                e.states
            )?;
            if let Some(u) = &e.start_url {
                write!(f, ", start {}", one_line(u, URL_CHARS))?;
            }
            writeln!(f)?;
            if let Some(steps) = &e.steps {
                for s in steps {
                    write!(f, "   {}", s.state)?;
                    if let Some(t) = &s.title {
                        write!(f, " [{t}]")?;
                    }
                    if let Some(u) = &s.url {
                        write!(f, " {}", one_line(u, URL_CHARS))?;
                    }
                    if let Some(t) = &s.thought {
                        write!(f, " | thought: {}", one_line(t, 120))?;
                    }
                    writeln!(
                        f,
                        " | {}",
                        s.action
                            .as_deref()
                            .map_or("<no action>".into(), |a| one_line(a, ACTION_CHARS))
                    )?;
                }
            }
            if let Some(t) = &e.truncated {
                writeln!(f, "   {t}")?;
            }
        }
        if let Some(t) = &self.truncated {
            writeln!(f, "\n{t}")?;
        }
        Ok(())
    }
}

impl fmt::Display for TrajectoryOverview {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Trajectory: {}", self.id)?;
        writeln!(f, "Goal: {}", self.goal)?;
        opt_line(f, "Start URL", &self.start_url)?;
        writeln!(
            f,
            "Outcome: {}",
            outcome_label(&self.outcome, self.succeeded)
        )?;
        writeln!(f, "States: {}", self.states)?;
        writeln!(f)?;
        for s in &self.steps {
            step_line(f, s, true)?;
        }
        if let Some(t) = &self.truncated {
            writeln!(f, "{t}")?;
        }
        Ok(())
    }
}

fn state_body(f: &mut fmt::Formatter<'_>, s: &StateView) -> fmt::Result {
    opt_line(f, "URL", &s.url)?;
    opt_line(f, "Title", &s.title)?;
    opt_line(f, "Thought", &s.thought)?;
    writeln!(f, "Action: {}", s.action.as_deref().unwrap_or("<none>"))?;
    opt_line(f, "Screenshot", &s.screenshot)?;
    writeln!(f, "Page ({} characters):", thousands(s.observation_chars))?;
    writeln!(f, "{}", s.observation)
}

impl fmt::Display for StateView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Trajectory {} state {} (states 0-{})",
            self.trajectory_id,
            self.state,
            self.states.saturating_sub(1)
        )?;
        state_body(f, self)
    }
}

impl fmt::Display for SpanView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Trajectory {} states {}:{} (goal: {})",
            self.trajectory_id, self.start, self.end, self.goal
        )?;
        for s in &self.states {
            writeln!(f, "\n=== State {} ===", s.state)?;
            state_body(f, s)?;
        }
        if let Some(t) = &self.truncated {
            writeln!(f, "\n{t}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Matches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.mode {
            PatternMode::Regex => "regex",
            PatternMode::Words => "words",
        };
        match &self.trajectory_id {
            Some(t) => writeln!(
                f,
                "Trajectory {t}: {} state(s) match {mode} {:?}",
                self.states_matched, self.pattern
            )?,
            None => writeln!(
                f,
                "{} state(s) in {} trajectories match {mode} {:?}",
                self.states_matched, self.trajectories_searched, self.pattern
            )?,
        }
        if self.states.is_empty() {
            writeln!(f, "No matching states found.")?;
        }
        for s in &self.states {
            write!(f, "\n=== {} state {}", s.trajectory_id, s.state)?;
            if let Some(t) = &s.title {
                write!(f, " [{t}]")?;
            }
            if self.mode == PatternMode::Words {
                write!(f, " ({} word(s))", s.words_matched)?;
            }
            writeln!(f, " ===")?;
            if let Some(u) = &s.url {
                writeln!(f, "URL: {}", one_line(u, URL_CHARS))?;
            }
            if let Some(a) = &s.action {
                writeln!(f, "Action: {}", one_line(a, ACTION_CHARS))?;
            }
            for l in &s.lines {
                writeln!(f, "- {}: {}", l.field.label(), l.text)?;
            }
            if s.more_lines > 0 {
                writeln!(
                    f,
                    "- ... [{} more matching line(s); use state {} for the whole page]",
                    s.more_lines, s.state
                )?;
            }
        }
        if let Some(t) = &self.truncated {
            writeln!(f, "\n{t}")?;
        }
        Ok(())
    }
}

impl fmt::Display for RenderedContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_well_and_requests_name_their_bad_field() {
        assert_eq!(thousands(3204), "3,204");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(one_line("a\n  b   c", 10), "a b c");
        assert_eq!(one_line("abcdefghijkl", 8), "abcde...");
        let r: ContextRequest = serde_json::from_str(
            r#"{"note": "n", "spans": [{"trajectory_id": "t", "start_state_index": 3, "end_state_index": 1}]}"#,
        )
        .unwrap();
        assert_eq!(r.token_budget, DEFAULT_CONTEXT_TOKENS);
        let e = r.validate().unwrap_err();
        assert_eq!(e.record, "spans[0].end_state");
        assert!("full".parse::<ManifestForm>().is_ok());
        assert_eq!("grep".parse::<PatternMode>().unwrap_err().record, "mode");
    }
}
