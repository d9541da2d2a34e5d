//! The trajectory-inspection answers (manifest, summary, state, span, matches, rendered
//! context, recall + inspection, agent run) and the context request. Each is the
//! server's own type, converted from (or, for the request, into) the library's by
//! destructuring every field and matching every variant, so a field or variant added to
//! or renamed in the library is a compile error here rather than a silent change of the
//! HTTP API; each serialises exactly as the library's type does (the same names, the same
//! fields left out: `each_answer_is_the_json_the_library_wrote`). Nested objects and
//! enumerations are inlined in the document, as their schemas were written before.
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `concise` or `full`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ManifestFormWire {
    Concise,
    Full,
}

impl Default for ManifestFormWire {
    fn default() -> Self {
        cairn::ManifestForm::default().into()
    }
}

impl From<cairn::ManifestForm> for ManifestFormWire {
    fn from(f: cairn::ManifestForm) -> Self {
        match f {
            cairn::ManifestForm::Concise => Self::Concise,
            cairn::ManifestForm::Full => Self::Full,
        }
    }
}

impl From<ManifestFormWire> for cairn::ManifestForm {
    fn from(f: ManifestFormWire) -> Self {
        match f {
            ManifestFormWire::Concise => Self::Concise,
            ManifestFormWire::Full => Self::Full,
        }
    }
}

/// `regex` or `words`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PatternModeWire {
    Regex,
    Words,
}

impl From<cairn::PatternMode> for PatternModeWire {
    fn from(m: cairn::PatternMode) -> Self {
        match m {
            cairn::PatternMode::Regex => Self::Regex,
            cairn::PatternMode::Words => Self::Words,
        }
    }
}

impl From<PatternModeWire> for cairn::PatternMode {
    fn from(m: PatternModeWire) -> Self {
        match m {
            PatternModeWire::Regex => Self::Regex,
            PatternModeWire::Words => Self::Words,
        }
    }
}

/// What the agent controller falls back to: `recall` or `recall_inspection`.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentFallbackWire {
    Recall,
    RecallInspection,
}

impl From<AgentFallbackWire> for cairn::AgentFallback {
    fn from(f: AgentFallbackWire) -> Self {
        match f {
            AgentFallbackWire::Recall => Self::Recall,
            AgentFallbackWire::RecallInspection => Self::RecallInspection,
        }
    }
}

/// One state as listed in summaries.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = StepLine)]
pub struct StepLineOut {
    pub state: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought: Option<String>,
    /// The action, with the element it names: `click [107]  # [107] button 'Sign in'`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
}

impl From<cairn::StepLine> for StepLineOut {
    fn from(s: cairn::StepLine) -> Self {
        let cairn::StepLine {
            state,
            url,
            title,
            thought,
            action,
            screenshot,
        } = s;
        Self {
            state,
            url,
            title,
            thought,
            action,
            screenshot,
        }
    }
}

fn steps(steps: Vec<cairn::StepLine>) -> Vec<StepLineOut> {
    steps.into_iter().map(StepLineOut::from).collect()
}

/// One trajectory in the manifest.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ManifestEntry)]
pub struct ManifestEntryOut {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    pub goal: String,
    /// The start URL (else the first URL visited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_url: Option<String>,
    /// The outcome as the source wrote it (`success`, `false`, JSON).
    pub outcome: String,
    pub succeeded: Option<bool>,
    pub states: usize,
    /// Full form: the steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<StepLineOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

impl From<cairn::ManifestEntry> for ManifestEntryOut {
    fn from(e: cairn::ManifestEntry) -> Self {
        let cairn::ManifestEntry {
            id,
            domain,
            goal,
            start_url,
            outcome,
            succeeded,
            states,
            steps: lines,
            truncated,
        } = e;
        Self {
            id,
            domain,
            goal,
            start_url,
            outcome,
            succeeded,
            states,
            steps: lines.map(steps),
            truncated,
        }
    }
}

/// A page of the manifest of a space, in insert order.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Manifest)]
pub struct ManifestOut {
    #[schema(inline)]
    pub form: ManifestFormWire,
    /// Trajectories in the space.
    pub total: usize,
    pub offset: usize,
    pub entries: Vec<ManifestEntryOut>,
    /// Where the next page starts; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// What the page left out, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

impl From<cairn::Manifest> for ManifestOut {
    fn from(m: cairn::Manifest) -> Self {
        let cairn::Manifest {
            form,
            total,
            offset,
            entries,
            next_offset,
            truncated,
        } = m;
        Self {
            form: form.into(),
            total,
            offset,
            entries: entries.into_iter().map(ManifestEntryOut::from).collect(),
            next_offset,
            truncated,
        }
    }
}

/// A compact summary of one trajectory: its header and one line per state.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = TrajectoryOverview)]
pub struct TrajectoryOverviewOut {
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    pub goal: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_url: Option<String>,
    pub outcome: String,
    pub succeeded: Option<bool>,
    pub states: usize,
    pub steps: Vec<StepLineOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

impl From<cairn::TrajectoryOverview> for TrajectoryOverviewOut {
    fn from(o: cairn::TrajectoryOverview) -> Self {
        let cairn::TrajectoryOverview {
            id,
            domain,
            goal,
            start_url,
            outcome,
            succeeded,
            states,
            steps: lines,
            truncated,
        } = o;
        Self {
            id,
            domain,
            goal,
            start_url,
            outcome,
            succeeded,
            states,
            steps: steps(lines),
            truncated,
        }
    }
}

/// One state in full: its page (the observation), cut to a size when asked.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = StateView)]
pub struct StateViewOut {
    pub trajectory_id: String,
    pub state: usize,
    /// States in the trajectory.
    pub states: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
    /// The page, whole or cut in the middle (the cut marked in it).
    pub observation: String,
    /// Characters of the whole observation.
    pub observation_chars: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

impl From<cairn::StateView> for StateViewOut {
    fn from(v: cairn::StateView) -> Self {
        let cairn::StateView {
            trajectory_id,
            state,
            states,
            url,
            title,
            thought,
            action,
            screenshot,
            observation,
            observation_chars,
            truncated,
        } = v;
        Self {
            trajectory_id,
            state,
            states,
            url,
            title,
            thought,
            action,
            screenshot,
            observation,
            observation_chars,
            truncated,
        }
    }
}

/// States `start..=end` of one trajectory.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SpanView)]
pub struct SpanViewOut {
    pub trajectory_id: String,
    pub goal: String,
    pub start: usize,
    pub end: usize,
    pub states: Vec<StateViewOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

impl From<cairn::SpanView> for SpanViewOut {
    fn from(v: cairn::SpanView) -> Self {
        let cairn::SpanView {
            trajectory_id,
            goal,
            start,
            end,
            states,
            truncated,
        } = v;
        Self {
            trajectory_id,
            goal,
            start,
            end,
            states: states.into_iter().map(StateViewOut::from).collect(),
            truncated,
        }
    }
}

/// Where in a state a line matched.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MatchFieldOut {
    Url,
    Thought,
    Action,
    Page,
}

impl From<cairn::MatchField> for MatchFieldOut {
    fn from(f: cairn::MatchField) -> Self {
        match f {
            cairn::MatchField::Url => Self::Url,
            cairn::MatchField::Thought => Self::Thought,
            cairn::MatchField::Action => Self::Action,
            cairn::MatchField::Page => Self::Page,
        }
    }
}

/// One matching line.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = MatchLine)]
pub struct MatchLineOut {
    #[schema(inline)]
    pub field: MatchFieldOut,
    pub text: String,
}

impl From<cairn::MatchLine> for MatchLineOut {
    fn from(l: cairn::MatchLine) -> Self {
        let cairn::MatchLine { field, text } = l;
        Self {
            field: field.into(),
            text,
        }
    }
}

/// One state holding the pattern, with its matching lines.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = StateMatch)]
pub struct StateMatchOut {
    pub trajectory_id: String,
    pub state: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Words mode: how many of the pattern's words the state holds (else 0).
    pub words_matched: usize,
    pub lines: Vec<MatchLineOut>,
    /// Matching lines not shown.
    pub more_lines: usize,
}

impl From<cairn::StateMatch> for StateMatchOut {
    fn from(m: cairn::StateMatch) -> Self {
        let cairn::StateMatch {
            trajectory_id,
            state,
            url,
            title,
            action,
            words_matched,
            lines,
            more_lines,
        } = m;
        Self {
            trajectory_id,
            state,
            url,
            title,
            action,
            words_matched,
            lines: lines.into_iter().map(MatchLineOut::from).collect(),
            more_lines,
        }
    }
}

/// The states of one trajectory (`match`) or of a whole space (`search`) holding a
/// pattern.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Matches)]
pub struct MatchesOut {
    pub pattern: String,
    #[schema(inline)]
    pub mode: PatternModeWire,
    /// `match`: the trajectory searched; `search`: absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    pub trajectories_searched: usize,
    /// States that matched (shown or not).
    pub states_matched: usize,
    pub states: Vec<StateMatchOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

impl From<cairn::Matches> for MatchesOut {
    fn from(m: cairn::Matches) -> Self {
        let cairn::Matches {
            pattern,
            mode,
            trajectory_id,
            trajectories_searched,
            states_matched,
            states,
            truncated,
        } = m;
        Self {
            pattern,
            mode: mode.into(),
            trajectory_id,
            trajectories_searched,
            states_matched,
            states: states.into_iter().map(StateMatchOut::from).collect(),
            truncated,
        }
    }
}

/// A span of states to put into a context: zero-based, inclusive.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ContextSpan)]
pub struct ContextSpanWire {
    pub trajectory_id: String,
    /// Zero-based; `start_state_index` is accepted too.
    #[serde(alias = "start_state_index")]
    pub start_state: usize,
    /// Inclusive; `end_state_index` is accepted too.
    #[serde(alias = "end_state_index")]
    pub end_state: usize,
}

impl From<cairn::ContextSpan> for ContextSpanWire {
    fn from(s: cairn::ContextSpan) -> Self {
        let cairn::ContextSpan {
            trajectory_id,
            start_state,
            end_state,
        } = s;
        Self {
            trajectory_id,
            start_state,
            end_state,
        }
    }
}

impl From<ContextSpanWire> for cairn::ContextSpan {
    fn from(s: ContextSpanWire) -> Self {
        let ContextSpanWire {
            trajectory_id,
            start_state,
            end_state,
        } = s;
        Self {
            trajectory_id,
            start_state,
            end_state,
        }
    }
}

fn spans(spans: Vec<cairn::ContextSpan>) -> Vec<ContextSpanWire> {
    spans.into_iter().map(ContextSpanWire::from).collect()
}

fn default_context_tokens() -> usize {
    cairn::inspect_limits::DEFAULT_CONTEXT_TOKENS
}

// The bounds and the default of `token_budget` are stated from the library by
// `routes/openapi.rs`.
/// `POST /v1/spaces/{space}/trajectory-context`: a note and spans to render into a
/// context of at most `token_budget` tokens.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ContextRequest)]
pub struct ContextRequestWire {
    /// What the reader should know first (markdown, at most {MAX_NOTE_BYTES} bytes).
    #[serde(default)]
    pub note: String,
    /// Most important first; at most {MAX_CONTEXT_STATES} states in all.
    #[schema(max_items = 64)]
    pub spans: Vec<ContextSpanWire>,
    #[serde(default = "default_context_tokens")]
    pub token_budget: usize,
    /// The question: page lines holding its words are kept first.
    #[serde(default)]
    pub query: Option<String>,
}

impl From<ContextRequestWire> for cairn::ContextRequest {
    fn from(r: ContextRequestWire) -> Self {
        let ContextRequestWire {
            note,
            spans,
            token_budget,
            query,
        } = r;
        Self {
            note,
            spans: spans.into_iter().map(cairn::ContextSpan::from).collect(),
            token_budget,
            query,
        }
    }
}

/// What became of one span in a rendered context.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = RenderedSpan)]
pub struct RenderedSpanOut {
    pub trajectory_id: String,
    pub start_state: usize,
    pub end_state: usize,
    /// States whose header made it into the context.
    pub states_shown: usize,
    /// Page lines left out for the budget.
    pub lines_cut: usize,
}

impl From<cairn::RenderedSpan> for RenderedSpanOut {
    fn from(s: cairn::RenderedSpan) -> Self {
        let cairn::RenderedSpan {
            trajectory_id,
            start_state,
            end_state,
            states_shown,
            lines_cut,
        } = s;
        Self {
            trajectory_id,
            start_state,
            end_state,
            states_shown,
            lines_cut,
        }
    }
}

/// A note and spans written out within a token budget.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = RenderedContext)]
pub struct RenderedContextOut {
    pub context: String,
    /// Tokens of `context`, counted with the embedding model's tokenizer; never more than `token_budget`.
    pub tokens: usize,
    pub token_budget: usize,
    /// The note was cut to fit.
    pub note_cut: bool,
    pub spans: Vec<RenderedSpanOut>,
}

impl From<cairn::RenderedContext> for RenderedContextOut {
    fn from(c: cairn::RenderedContext) -> Self {
        let cairn::RenderedContext {
            context,
            tokens,
            token_budget,
            note_cut,
            spans,
        } = c;
        Self {
            context,
            tokens,
            token_budget,
            note_cut,
            spans: spans.into_iter().map(RenderedSpanOut::from).collect(),
        }
    }
}

/// What recall + inspection chose and rendered.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = InspectedRecall)]
pub struct InspectedRecallOut {
    pub note: String,
    pub spans: Vec<ContextSpanWire>,
    pub shortlist: Vec<String>,
    pub context: RenderedContextOut,
    pub recall_ms: f64,
    pub inspect_ms: f64,
    pub render_ms: f64,
    pub total_ms: f64,
}

impl From<cairn::InspectedRecall> for InspectedRecallOut {
    fn from(r: cairn::InspectedRecall) -> Self {
        let cairn::InspectedRecall {
            note,
            spans: chosen,
            shortlist,
            context,
            recall_ms,
            inspect_ms,
            render_ms,
            total_ms,
        } = r;
        Self {
            note,
            spans: spans(chosen),
            shortlist,
            context: context.into(),
            recall_ms,
            inspect_ms,
            render_ms,
            total_ms,
        }
    }
}

/// How a run's answer was made: the model's note and spans, or the fallback.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentModeOut {
    Agent,
    Fallback,
}

impl From<cairn::AgentMode> for AgentModeOut {
    fn from(m: cairn::AgentMode) -> Self {
        match m {
            cairn::AgentMode::Agent => Self::Agent,
            cairn::AgentMode::Fallback => Self::Fallback,
        }
    }
}

/// One step of a run: the tool the model chose and what it cost.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = AgentStep)]
pub struct AgentStepOut {
    pub step: usize,
    pub tool: String,
    /// The model's step as it gave it.
    #[schema(value_type = serde_json::Value)]
    pub args: serde_json::Value,
    /// Wall time of the model call, milliseconds.
    pub model_ms: f64,
    /// Wall time of the tool, milliseconds.
    pub tool_ms: f64,
    /// Characters of the tool result shown to the model.
    pub result_chars: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl From<cairn::AgentStep> for AgentStepOut {
    fn from(s: cairn::AgentStep) -> Self {
        let cairn::AgentStep {
            step,
            tool,
            args,
            model_ms,
            tool_ms,
            result_chars,
            error,
        } = s;
        Self {
            step,
            tool,
            args,
            model_ms,
            tool_ms,
            result_chars,
            error,
        }
    }
}

/// What a controller run produced: the note and spans, their rendered context, and the
/// trace of its steps.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = AgentRun)]
pub struct AgentRunOut {
    #[schema(inline)]
    pub mode: AgentModeOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub note: String,
    pub spans: Vec<ContextSpanWire>,
    pub context: String,
    pub context_tokens: usize,
    pub steps: Vec<AgentStepOut>,
    pub model_calls: usize,
    pub elapsed_ms: f64,
}

impl From<cairn::AgentRun> for AgentRunOut {
    fn from(r: cairn::AgentRun) -> Self {
        let cairn::AgentRun {
            mode,
            fallback_reason,
            model,
            note,
            spans: chosen,
            context,
            context_tokens,
            steps,
            model_calls,
            elapsed_ms,
        } = r;
        Self {
            mode: mode.into(),
            fallback_reason,
            model,
            note,
            spans: spans(chosen),
            context,
            context_tokens,
            steps: steps.into_iter().map(AgentStepOut::from).collect(),
            model_calls,
            elapsed_ms,
        }
    }
}
