//! Trajectory inspection over HTTP: the manifest (concise or full), a trajectory's
//! summary, one state, a span, the states matching a pattern, a search across a space,
//! a context rendered from a note and spans, recall + inspection, and the agent
//! controller. Each handler checks the key, parses its own wire shape (errors name the
//! field) and calls the `cairn` API on the blocking pool; the operations are shared
//! with the MCP tools (`mcp_trajectories.rs`).
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::blocking;
use crate::wire::WireJson;
use crate::AppState;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use cairn::{
    AgentFallback, AgentOptions, AgentRun, ContextRequest, InspectRecallOptions, InspectedRecall,
    Manifest, ManifestForm, Matches, PatternMode, RenderedContext, SpanView, StateView,
    TrajectoryOverview,
};
use serde::Deserialize;
use std::sync::Arc;

type S = Arc<AppState>;
type ApiResult<T> = Result<T, ApiError>;

fn query<T>(q: Result<Query<T>, QueryRejection>) -> ApiResult<T> {
    q.map(|Query(v)| v).map_err(|e| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_query",
            e.body_text(),
        )
    })
}

/// Query of `GET /v1/spaces/{space}/trajectory-manifest`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestQuery {
    #[serde(default)]
    pub form: ManifestForm,
    #[serde(default)]
    pub offset: usize,
    pub limit: Option<usize>,
}

/// Query of `.../trajectories/{id}/states/{index}/view`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateQuery {
    pub max_chars: Option<usize>,
}

/// Query of `.../trajectories/{id}/span`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpanQuery {
    pub start: usize,
    pub end: usize,
    pub max_chars: Option<usize>,
}

/// Query of `.../trajectories/{id}/match` and `.../trajectory-search`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatternQuery {
    pub pattern: String,
    pub mode: Option<PatternMode>,
    pub limit: Option<usize>,
}

/// `POST /v1/spaces/{space}/trajectory-inspect`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InspectRequest {
    pub question: String,
    pub token_budget: Option<usize>,
    pub top_k: Option<usize>,
    pub trajectories: Option<usize>,
}

/// `POST /v1/spaces/{space}/trajectory-agent`: runs the controller with the server's
/// configured LLM (`[llm]`); without one, the answer is the fallback.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentRequest {
    pub question: String,
    pub max_steps: Option<usize>,
    pub time_budget_ms: Option<u64>,
    pub token_budget: Option<usize>,
    pub fallback: Option<AgentFallback>,
}

/// Read access first (a foreign key learns nothing, not even a text bound), then the
/// text's bound.
fn checked(who: &Principal, space: &str, text: &str, max: usize, field: &str) -> ApiResult<()> {
    who.require(space, Need::Read)?;
    if text.len() > max {
        return Err(crate::limits::too_long(field.to_string(), text.len(), max));
    }
    Ok(())
}

pub(crate) async fn manifest_op(
    st: &S,
    who: &Principal,
    space: String,
    q: ManifestQuery,
) -> ApiResult<Manifest> {
    who.require(&space, Need::Read)?;
    blocking(st, move |m| {
        m.trajectory_manifest_page(&space, q.form, q.offset, q.limit)
    })
    .await
}

pub(crate) async fn summary_op(
    st: &S,
    who: &Principal,
    space: String,
    id: String,
) -> ApiResult<TrajectoryOverview> {
    who.require(&space, Need::Read)?;
    blocking(st, move |m| m.trajectory_summary(&space, &id)).await
}

pub(crate) async fn state_op(
    st: &S,
    who: &Principal,
    space: String,
    id: String,
    index: usize,
    max_chars: Option<usize>,
) -> ApiResult<StateView> {
    who.require(&space, Need::Read)?;
    blocking(st, move |m| {
        m.trajectory_state(&space, &id, index, max_chars)
    })
    .await
}

pub(crate) async fn span_op(
    st: &S,
    who: &Principal,
    space: String,
    id: String,
    q: SpanQuery,
) -> ApiResult<SpanView> {
    who.require(&space, Need::Read)?;
    blocking(st, move |m| {
        m.trajectory_span(&space, &id, q.start, q.end, q.max_chars)
    })
    .await
}

pub(crate) async fn match_op(
    st: &S,
    who: &Principal,
    space: String,
    id: Option<String>,
    q: PatternQuery,
    default_mode: PatternMode,
) -> ApiResult<Matches> {
    checked(
        who,
        &space,
        &q.pattern,
        cairn::inspect_limits::MAX_PATTERN_BYTES,
        "pattern",
    )?;
    let mode = q.mode.unwrap_or(default_mode);
    blocking(st, move |m| match id {
        Some(id) => m.trajectory_match(&space, &id, &q.pattern, mode, q.limit),
        None => m.trajectory_search(&space, &q.pattern, mode, q.limit),
    })
    .await
}

pub(crate) async fn context_op(
    st: &S,
    who: &Principal,
    space: String,
    req: ContextRequest,
) -> ApiResult<RenderedContext> {
    checked(
        who,
        &space,
        &req.note,
        cairn::inspect_limits::MAX_NOTE_BYTES,
        "note",
    )?;
    blocking(st, move |m| m.trajectory_context(&space, &req)).await
}

pub(crate) async fn inspect_op(
    st: &S,
    who: &Principal,
    space: String,
    o: InspectRequest,
) -> ApiResult<InspectedRecall> {
    let question = o.question;
    checked(
        who,
        &space,
        &question,
        st.config.limits.max_text_bytes,
        "question",
    )?;
    let d = InspectRecallOptions::default();
    let opts = InspectRecallOptions {
        token_budget: o.token_budget.unwrap_or(d.token_budget),
        top_k: o.top_k.unwrap_or(d.top_k),
        trajectories: o.trajectories.unwrap_or(d.trajectories),
        ..d
    };
    opts.validate()
        .map_err(|e| ApiError::invalid(e.record.clone(), e.to_string()))?;
    blocking(st, move |m| {
        m.trajectory_recall_inspect(&space, &question, &opts)
    })
    .await
}

pub(crate) async fn agent_op(
    st: &S,
    who: &Principal,
    space: String,
    r: AgentRequest,
) -> ApiResult<AgentRun> {
    checked(
        who,
        &space,
        &r.question,
        st.config.limits.max_text_bytes,
        "question",
    )?;
    let d = AgentOptions::default();
    let opts = AgentOptions {
        max_steps: r.max_steps.unwrap_or(d.max_steps),
        time_budget_ms: r.time_budget_ms.unwrap_or(d.time_budget_ms),
        token_budget: r.token_budget.unwrap_or(d.token_budget),
        fallback: r.fallback.unwrap_or(d.fallback),
        ..d
    };
    opts.validate()
        .map_err(|e| ApiError::invalid(e.record.clone(), e.to_string()))?;
    let question = r.question;
    blocking(st, move |m| {
        m.trajectory_agent(&space, &question, &opts, None)
    })
    .await
}

pub(crate) async fn manifest(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<ManifestQuery>, QueryRejection>,
) -> ApiResult<Json<Manifest>> {
    who.require(&space, Need::Read)?;
    Ok(Json(manifest_op(&st, &who, space, query(q)?).await?))
}

pub(crate) async fn summary(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> ApiResult<Json<TrajectoryOverview>> {
    Ok(Json(summary_op(&st, &who, space, id).await?))
}

pub(crate) async fn state_view(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id, index)): Path<(String, String, String)>,
    q: Result<Query<StateQuery>, QueryRejection>,
) -> ApiResult<Json<StateView>> {
    who.require(&space, Need::Read)?;
    let i: usize = index
        .parse()
        .map_err(|_| ApiError::invalid("index", format!("{index:?} is not a state index")))?;
    let q = query(q)?;
    Ok(Json(state_op(&st, &who, space, id, i, q.max_chars).await?))
}

pub(crate) async fn span(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
    q: Result<Query<SpanQuery>, QueryRejection>,
) -> ApiResult<Json<SpanView>> {
    who.require(&space, Need::Read)?;
    Ok(Json(span_op(&st, &who, space, id, query(q)?).await?))
}

pub(crate) async fn match_states(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
    q: Result<Query<PatternQuery>, QueryRejection>,
) -> ApiResult<Json<Matches>> {
    who.require(&space, Need::Read)?;
    let q = query(q)?;
    Ok(Json(
        match_op(&st, &who, space, Some(id), q, PatternMode::Regex).await?,
    ))
}

pub(crate) async fn search(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<PatternQuery>, QueryRejection>,
) -> ApiResult<Json<Matches>> {
    who.require(&space, Need::Read)?;
    let q = query(q)?;
    Ok(Json(
        match_op(&st, &who, space, None, q, PatternMode::Words).await?,
    ))
}

pub(crate) async fn context(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(req): WireJson<ContextRequest>,
) -> ApiResult<Json<RenderedContext>> {
    Ok(Json(context_op(&st, &who, space, req).await?))
}

pub(crate) async fn inspect(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(req): WireJson<InspectRequest>,
) -> ApiResult<Json<InspectedRecall>> {
    Ok(Json(inspect_op(&st, &who, space, req).await?))
}

pub(crate) async fn agent(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(req): WireJson<AgentRequest>,
) -> ApiResult<Json<AgentRun>> {
    Ok(Json(agent_op(&st, &who, space, req).await?))
}
