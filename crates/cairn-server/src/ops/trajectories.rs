//! The trajectory-inspection operations both surfaces call: the HTTP routes
//! (`routes/trajectory_inspect.rs`, which answer wire types) and the MCP tools
//! (`mcp/trajectories.rs`, which answer text). Each checks the key first (a foreign key
//! learns nothing, not even a text bound), then the bounds of its text input, then calls
//! the `cairn` API on the blocking pool.
use super::blocking;
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::AppState;
use cairn::{
    AgentOptions, AgentRun, ContextRequest, InspectRecallOptions, InspectedRecall, Manifest,
    ManifestForm, Matches, PatternMode, RenderedContext, SpanView, StateView, TrajectoryOverview,
};
use std::sync::Arc;

type S = Arc<AppState>;
type Result<T> = std::result::Result<T, ApiError>;

/// Read access first, then the text's bound.
fn checked(who: &Principal, space: &str, text: &str, max: usize, field: &str) -> Result<()> {
    who.require(space, Need::Read)?;
    if text.len() > max {
        return Err(crate::limits::too_long(field.to_string(), text.len(), max));
    }
    Ok(())
}

/// A page of the manifest.
pub async fn manifest(
    st: &S,
    who: &Principal,
    space: String,
    form: ManifestForm,
    offset: usize,
    limit: Option<usize>,
) -> Result<Manifest> {
    who.require(&space, Need::Read)?;
    blocking(st, move |m| {
        m.trajectories().manifest_page(&space, form, offset, limit)
    })
    .await
}

/// One trajectory's summary.
pub async fn summary(
    st: &S,
    who: &Principal,
    space: String,
    id: String,
) -> Result<TrajectoryOverview> {
    who.require(&space, Need::Read)?;
    blocking(st, move |m| m.trajectories().summary(&space, &id)).await
}

/// One state, its page cut to `max_chars`.
pub async fn state(
    st: &S,
    who: &Principal,
    space: String,
    id: String,
    index: usize,
    max_chars: Option<usize>,
) -> Result<StateView> {
    who.require(&space, Need::Read)?;
    blocking(st, move |m| {
        m.trajectories().state(&space, &id, index, max_chars)
    })
    .await
}

/// States `start..=end` of one trajectory.
pub async fn span(
    st: &S,
    who: &Principal,
    space: String,
    id: String,
    start: usize,
    end: usize,
    max_chars: Option<usize>,
) -> Result<SpanView> {
    who.require(&space, Need::Read)?;
    blocking(st, move |m| {
        m.trajectories().span(&space, &id, start, end, max_chars)
    })
    .await
}

/// What a pattern search asks: the pattern, how it is read, how many states to show.
pub struct Pattern {
    pub pattern: String,
    pub mode: PatternMode,
    pub limit: Option<usize>,
}

/// The states of one trajectory (`id`) or of every trajectory of the space holding a
/// pattern.
pub async fn matches(
    st: &S,
    who: &Principal,
    space: String,
    id: Option<String>,
    p: Pattern,
) -> Result<Matches> {
    let max = cairn::bounds::MAX_PATTERN_BYTES;
    checked(who, &space, &p.pattern, max, "pattern")?;
    blocking(st, move |m| match id {
        Some(id) => m
            .trajectories()
            .find(&space, &id, &p.pattern, p.mode, p.limit),
        None => m.trajectories().search(&space, &p.pattern, p.mode, p.limit),
    })
    .await
}

/// A note and spans rendered into a context.
pub async fn context(
    st: &S,
    who: &Principal,
    space: String,
    req: ContextRequest,
) -> Result<RenderedContext> {
    let max = cairn::bounds::MAX_NOTE_BYTES;
    checked(who, &space, &req.note, max, "note")?;
    blocking(st, move |m| m.trajectories().context(&space, &req)).await
}

/// Recall + inspection (no LLM); the options are checked before any work.
pub async fn inspect(
    st: &S,
    who: &Principal,
    space: String,
    question: String,
    opts: InspectRecallOptions,
) -> Result<InspectedRecall> {
    let max = st.config.limits.max_text_bytes;
    checked(who, &space, &question, max, "question")?;
    opts.validate()
        .map_err(|e| ApiError::invalid(e.record.clone(), e.to_string()))?;
    blocking(st, move |m| {
        m.trajectories().recall_inspect(&space, &question, &opts)
    })
    .await
}

/// The agent controller with the server's LLM; the options are checked before any work.
pub async fn agent(
    st: &S,
    who: &Principal,
    space: String,
    question: String,
    opts: AgentOptions,
) -> Result<AgentRun> {
    let max = st.config.limits.max_text_bytes;
    checked(who, &space, &question, max, "question")?;
    opts.validate()
        .map_err(|e| ApiError::invalid(e.record.clone(), e.to_string()))?;
    blocking(st, move |m| {
        m.trajectories().agent(&space, &question, &opts, None)
    })
    .await
}
