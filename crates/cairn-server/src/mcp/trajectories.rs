//! The MCP tools of trajectory inspection, as a table (name, the text an agent reads, the
//! operation): a second tool router, combined with the memory tools' by the server. Each tool answers the text an agent reads
//! (the operations of `ops/trajectories.rs`, which the HTTP routes call too), sized for its context, with
//! every cut said in the answer. The descriptions tell an agent which tool to use when:
//! manifest -> summary -> match -> state/span, then context.
use super::tools::{tool, Answer, Call, Caller};
use crate::error::ApiError;
use crate::ops::trajectories::{self as ops, Pattern};
use cairn::{ContextRequest, ContextSpan, InspectRecallOptions, ManifestForm, PatternMode};
use rmcp::handler::server::router::tool::ToolRouter;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ManifestArgs {
    /// Memory space holding the trajectories. Optional when the server has a default.
    #[serde(default)]
    pub space: Option<String>,
    /// `concise` (default): a line per trajectory. `full`: also every state's URL, page
    /// title, thought and action.
    #[serde(default)]
    pub form: Option<String>,
    /// First trajectory of the page (0-based; the answer says the next offset).
    #[serde(default)]
    pub offset: Option<usize>,
    /// Trajectories per page (default {DEFAULT_MANIFEST_CONCISE} concise, {DEFAULT_MANIFEST_FULL} full).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryArgs {
    #[serde(default)]
    pub space: Option<String>,
    /// The trajectory id, as the manifest lists it.
    pub trajectory_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateArgs {
    #[serde(default)]
    pub space: Option<String>,
    pub trajectory_id: String,
    /// The state index (0-based).
    pub state: usize,
    /// Page characters to show (default {DEFAULT_STATE_CHARS}; a cut is marked and says how to see all).
    #[serde(default)]
    pub max_chars: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpanArgs {
    #[serde(default)]
    pub space: Option<String>,
    pub trajectory_id: String,
    /// First state (0-based).
    pub start: usize,
    /// Last state (inclusive; at most {MAX_SPAN_STATES} states per call).
    pub end: usize,
    /// Page characters per state (default {DEFAULT_SPAN_STATE_CHARS}).
    #[serde(default)]
    pub max_chars: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatchArgs {
    #[serde(default)]
    pub space: Option<String>,
    pub trajectory_id: String,
    /// A regular expression, any case (`Delete Review|Previous`), or plain words with
    /// `mode: "words"`.
    pub pattern: String,
    /// `regex` (default) or `words`.
    #[serde(default)]
    pub mode: Option<String>,
    /// Matching states to show (default {DEFAULT_MATCHES}).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    #[serde(default)]
    pub space: Option<String>,
    /// Words to look for (default mode `words`: states holding most of them first), or a
    /// regex with `mode: "regex"`.
    pub pattern: String,
    #[serde(default)]
    pub mode: Option<String>,
    /// Hits to show (default {DEFAULT_SEARCH_HITS}).
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpanArg {
    pub trajectory_id: String,
    /// First state (0-based).
    pub start_state: usize,
    /// Last state (inclusive).
    pub end_state: usize,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextArgs {
    #[serde(default)]
    pub space: Option<String>,
    /// What the reader should know first: where the evidence is, the procedure, or why
    /// the question's premise is wrong.
    #[serde(default)]
    pub note: Option<String>,
    /// The states that prove it, most important first (one to three states each, usually).
    pub spans: Vec<SpanArg>,
    /// Most tokens of context (default {DEFAULT_CONTEXT_TOKENS}; never exceeded).
    #[serde(default)]
    #[schemars(range(min = 1, max = cairn::bounds::MAX_TOKEN_BUDGET))]
    pub token_budget: Option<usize>,
    /// The question: page lines holding its words are kept first when a page is cut.
    #[serde(default)]
    pub query: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectArgs {
    #[serde(default)]
    pub space: Option<String>,
    /// The question to find evidence for.
    pub question: String,
    /// Most tokens of context (default {DEFAULT_INSPECT_TOKENS}).
    #[serde(default)]
    #[schemars(range(min = 1, max = cairn::bounds::MAX_TOKEN_BUDGET))]
    pub token_budget: Option<usize>,
}

/// The trajectory tools.
pub fn tools<S: Caller>() -> ToolRouter<S> {
    ToolRouter::new()
        .with_route(tool("trajectory_manifest", MANIFEST, manifest))
        .with_route(tool("trajectory_summary", SUMMARY, summary))
        .with_route(tool("trajectory_state", STATE, state))
        .with_route(tool("trajectory_span", SPAN, span))
        .with_route(tool("trajectory_match", MATCH, matches))
        .with_route(tool("trajectory_search", SEARCH, search))
        .with_route(tool("trajectory_context", CONTEXT, context))
        .with_route(tool(
            "trajectory_quick_context",
            QUICK_CONTEXT,
            quick_context,
        ))
}

const MANIFEST: &str = "Start here for questions about a web environment or past agent runs. Lists the stored trajectories (runs of a web agent) of a space: id, goal, start URL, outcome and number of states. `form: \"full\"` adds every state's URL, page title, thought and action (long: use it on a few pages at a time, or `trajectory_summary` on one run). Use it to shortlist the two or three runs whose goal and pages fit the question.";

const SUMMARY: &str = "A compact summary of one shortlisted trajectory: goal, outcome, and a line per state with its URL, page title, the agent's thought and its action (naming the element acted on, e.g. `click [107]  # [107] button 'Sign in'`). Use it to see where in a run the evidence is before opening pages with `trajectory_state` or `trajectory_span`.";

const STATE: &str = "One state of a trajectory in full: URL, title, thought, action and the page (accessibility tree), cut to `max_chars` characters with the cut marked. Use it to read the exact page that shows a field, value, button or error; prefer `trajectory_match` first to find which state that is.";

const SPAN: &str = "A few consecutive states of a trajectory (`start` to `end`, inclusive, at most {MAX_SPAN_STATES}), each with its page cut to `max_chars`. Use it to see what an action led to (a form before and after saving, the step where an error appeared); keep spans short, two or three states usually prove a point.";

const MATCH: &str = "The states of one trajectory whose URL, thought, action or page lines match a pattern (a regex, any case, e.g. `Delete Review|Previous`; or plain words with `mode: \"words\"`), with the matching lines. Use it on a shortlisted run to find the state holding what the question asks about, then read that state.";

const SEARCH: &str = "Search every trajectory of a space for words (states holding most of them first) or a regex (`mode: \"regex\"`); returns (trajectory, state) pairs with the matching lines. Use it when the manifest does not point to a run, or to find every run that saw a page or message; otherwise prefer `trajectory_match` on a shortlisted run.";

const CONTEXT: &str = "Use it last, to finish: it turns your findings into the context a reader answers from. Give a short `note` (where the evidence is, the procedure, or why the question's premise is wrong) and the `spans` that prove it, most important first; Cairn writes the note and those states' pages within `token_budget` tokens, keeping the lines that matter when a page must be cut.";

const QUICK_CONTEXT: &str = "A quick first answer without inspecting by hand: recall shortlists trajectories for the question, the states that best hold it become spans, and the best procedure or gotcha note leads; returns the rendered context (within `token_budget`). Use it for a fast answer or a starting point, then verify with the other tools when it matters.";

/// A pattern as the tools take it: `mode` when given, else the tool's own default.
fn pattern(
    pattern: String,
    mode: Option<&str>,
    default: PatternMode,
    limit: Option<usize>,
) -> Result<Pattern, ApiError> {
    let mode = match mode {
        None => default,
        Some(m) => m
            .parse()
            .map_err(|e: cairn::InputError| ApiError::invalid("mode", e.to_string()))?,
    };
    Ok(Pattern {
        pattern,
        mode,
        limit,
    })
}

async fn manifest(c: Call, a: ManifestArgs) -> Answer {
    let space = c.space(a.space)?;
    let form = match a.form.as_deref() {
        None => ManifestForm::Concise,
        Some(f) => f
            .parse()
            .map_err(|e: cairn::InputError| ApiError::invalid("form", e.to_string()))?,
    };
    let offset = a.offset.unwrap_or(0);
    let out = ops::manifest(&c.state, &c.who, space, form, offset, a.limit).await?;
    Ok(out.to_string())
}

async fn summary(c: Call, a: TrajectoryArgs) -> Answer {
    let space = c.space(a.space)?;
    let out = ops::summary(&c.state, &c.who, space, a.trajectory_id).await?;
    Ok(out.to_string())
}

async fn state(c: Call, a: StateArgs) -> Answer {
    let space = c.space(a.space)?;
    let (id, max_chars) = (a.trajectory_id, a.max_chars);
    let out = ops::state(&c.state, &c.who, space, id, a.state, max_chars).await?;
    Ok(out.to_string())
}

async fn span(c: Call, a: SpanArgs) -> Answer {
    let space = c.space(a.space)?;
    let (id, max_chars) = (a.trajectory_id, a.max_chars);
    let out = ops::span(&c.state, &c.who, space, id, a.start, a.end, max_chars).await?;
    Ok(out.to_string())
}

async fn matches(c: Call, a: MatchArgs) -> Answer {
    let space = c.space(a.space)?;
    let p = pattern(a.pattern, a.mode.as_deref(), PatternMode::Regex, a.limit)?;
    let out = ops::matches(&c.state, &c.who, space, Some(a.trajectory_id), p).await?;
    Ok(out.to_string())
}

async fn search(c: Call, a: SearchArgs) -> Answer {
    let space = c.space(a.space)?;
    let p = pattern(a.pattern, a.mode.as_deref(), PatternMode::Words, a.limit)?;
    let out = ops::matches(&c.state, &c.who, space, None, p).await?;
    Ok(out.to_string())
}

async fn context(c: Call, a: ContextArgs) -> Answer {
    let space = c.space(a.space)?;
    let req = ContextRequest {
        note: a.note.unwrap_or_default(),
        spans: a
            .spans
            .into_iter()
            .map(|s| ContextSpan {
                trajectory_id: s.trajectory_id,
                start_state: s.start_state,
                end_state: s.end_state,
            })
            .collect(),
        token_budget: a
            .token_budget
            .unwrap_or(cairn::inspect_limits::DEFAULT_CONTEXT_TOKENS),
        query: a.query,
    };
    let out = ops::context(&c.state, &c.who, space, req).await?;
    Ok(out.to_string())
}

async fn quick_context(c: Call, a: InspectArgs) -> Answer {
    let space = c.space(a.space)?;
    let d = InspectRecallOptions::default();
    let opts = InspectRecallOptions {
        token_budget: a.token_budget.unwrap_or(d.token_budget),
        ..d
    };
    let r = ops::inspect(&c.state, &c.who, space, a.question, opts).await?;
    let spans = r
        .spans
        .iter()
        .map(|s| format!("{} {}-{}", s.trajectory_id, s.start_state, s.end_state))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(format!("Spans: {spans}\n\n{}", r.context.context))
}
