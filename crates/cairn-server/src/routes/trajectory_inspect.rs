//! Trajectory inspection over HTTP: the manifest (concise or full), a trajectory's
//! summary, one state, a span, the states matching a pattern, a search across a space,
//! a context rendered from a note and spans, recall + inspection, and the agent
//! controller. Each handler checks the key, parses its own wire shape (errors name the
//! field), calls the operation it shares with the MCP tools (`ops/trajectories.rs`) and
//! answers its wire type (`wire/inspection.rs`).
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::trajectories as ops;
use crate::wire::doc::*;
use crate::wire::inspection::{
    AgentFallbackWire, AgentRunOut, ContextRequestWire, InspectedRecallOut, ManifestFormWire,
    ManifestOut, MatchesOut, PatternModeWire, RenderedContextOut, SpanViewOut, StateViewOut,
    TrajectoryOverviewOut,
};
use crate::wire::WireJson;
use crate::AppState;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use cairn::{AgentOptions, InspectRecallOptions, PatternMode};
use serde::Deserialize;
use std::sync::Arc;
use utoipa::{IntoParams, ToSchema};

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
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ManifestQuery {
    /// `concise` (default) or `full`.
    #[serde(default)]
    #[param(required = false, inline)]
    pub form: ManifestFormWire,
    /// First trajectory of the page (0-based).
    #[serde(default)]
    #[param(required = false)]
    pub offset: usize,
    /// Trajectories per page (default {DEFAULT_MANIFEST_CONCISE} concise, {DEFAULT_MANIFEST_FULL} full; at most {MAX_MANIFEST}).
    #[param(required = false)]
    pub limit: Option<usize>,
}

/// Query of `.../trajectories/{id}/states/{index}/view`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct StateQuery {
    /// Page characters shown.
    #[param(required = false)]
    pub max_chars: Option<usize>,
}

/// Query of `.../trajectories/{id}/span`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct SpanQuery {
    /// First state (0-based).
    pub start: usize,
    /// Last state (inclusive).
    pub end: usize,
    /// Page characters per state.
    #[param(required = false)]
    pub max_chars: Option<usize>,
}

/// Query of `.../trajectories/{id}/match` and `.../trajectory-search`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PatternQuery {
    /// Regex or words (at most {MAX_PATTERN_BYTES} bytes).
    pub pattern: String,
    /// `regex` or `words` (the default: `regex` in one trajectory, `words` across them).
    #[param(required = false, inline)]
    pub mode: Option<PatternModeWire>,
    /// Matching states shown (at most {MAX_INSPECT_RESULTS}).
    #[param(required = false)]
    pub limit: Option<usize>,
}

/// `POST /v1/spaces/{space}/trajectory-inspect`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectRequest {
    pub question: String,
    pub token_budget: Option<usize>,
    pub top_k: Option<usize>,
    pub trajectories: Option<usize>,
}

/// `POST /v1/spaces/{space}/trajectory-agent`: runs the controller with the server's
/// configured LLM (`[llm]`); without one, the answer is the fallback.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentRequest {
    pub question: String,
    pub max_steps: Option<usize>,
    pub time_budget_ms: Option<u64>,
    pub token_budget: Option<usize>,
    #[schema(inline)]
    pub fallback: Option<AgentFallbackWire>,
}

impl InspectRequest {
    /// The library's options: the defaults where the request says nothing.
    fn options(&self) -> InspectRecallOptions {
        let d = InspectRecallOptions::default();
        InspectRecallOptions {
            token_budget: self.token_budget.unwrap_or(d.token_budget),
            top_k: self.top_k.unwrap_or(d.top_k),
            trajectories: self.trajectories.unwrap_or(d.trajectories),
            ..d
        }
    }
}

impl AgentRequest {
    /// The library's options: the defaults where the request says nothing.
    fn options(&self) -> AgentOptions {
        let d = AgentOptions::default();
        AgentOptions {
            max_steps: self.max_steps.unwrap_or(d.max_steps),
            time_budget_ms: self.time_budget_ms.unwrap_or(d.time_budget_ms),
            token_budget: self.token_budget.unwrap_or(d.token_budget),
            fallback: self.fallback.map_or(d.fallback, Into::into),
            ..d
        }
    }
}

impl PatternQuery {
    fn pattern(self, default_mode: PatternMode) -> ops::Pattern {
        ops::Pattern {
            mode: self.mode.map_or(default_mode, Into::into),
            pattern: self.pattern,
            limit: self.limit,
        }
    }
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/trajectory-manifest",
    operation_id = "trajectoryManifestPage",
    tag = "trajectories",
    summary = "The manifest of a space's trajectories, paged",
    description = "Per trajectory (insert order): goal, start URL, outcome and state count; `form=full` adds every state's URL, page title, thought and action (the action names the element acted on). A page says where the next starts (`next_offset`) and its `truncated` note says so in words.",
    params(SpacePath, ManifestQuery),
    responses(
        (status = 200, description = "OK", body = ManifestOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(crate) async fn manifest(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<ManifestQuery>, QueryRejection>,
) -> ApiResult<Json<ManifestOut>> {
    who.require(&space, Need::Read)?;
    let q = query(q)?;
    let page = ops::manifest(&st, &who, space, q.form.into(), q.offset, q.limit).await?;
    Ok(Json(page.into()))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/trajectories/{id}/summary",
    operation_id = "trajectorySummary",
    tag = "trajectories",
    summary = "A compact summary of one trajectory",
    description = "Its goal, start URL, outcome and a line per state (URL, page title, thought, action naming the element acted on), at most {SUMMARY_MAX_STATES} states (a `truncated` note says how to see the rest).",
    params(SpacePath, TrajectoryPath),
    responses(
        (status = 200, description = "OK", body = TrajectoryOverviewOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(crate) async fn summary(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> ApiResult<Json<TrajectoryOverviewOut>> {
    Ok(Json(ops::summary(&st, &who, space, id).await?.into()))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/trajectories/{id}/states/{index}/view",
    operation_id = "trajectoryStateView",
    tag = "trajectories",
    summary = "One state for reading",
    description = "The state with its page title, the action annotated with the element it names, and the page (observation) cut in the middle to `max_chars` characters (default {DEFAULT_STATE_CHARS}, at most {MAX_STATE_CHARS}); the cut is marked in the text and in `truncated`.",
    params(SpacePath, TrajectoryPath, StatePath, StateQuery),
    responses(
        (status = 200, description = "OK", body = StateViewOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(crate) async fn state_view(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id, index)): Path<(String, String, String)>,
    q: Result<Query<StateQuery>, QueryRejection>,
) -> ApiResult<Json<StateViewOut>> {
    who.require(&space, Need::Read)?;
    let i: usize = index
        .parse()
        .map_err(|_| ApiError::invalid("index", format!("{index:?} is not a state index")))?;
    let q = query(q)?;
    Ok(Json(
        ops::state(&st, &who, space, id, i, q.max_chars)
            .await?
            .into(),
    ))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/trajectories/{id}/span",
    operation_id = "trajectorySpan",
    tag = "trajectories",
    summary = "A span of states",
    description = "States `start` to `end` (inclusive; at most {MAX_SPAN_STATES} per call, an end past the last state stops there), each page cut to `max_chars` (default {DEFAULT_SPAN_STATE_CHARS}).",
    params(SpacePath, TrajectoryPath, SpanQuery),
    responses(
        (status = 200, description = "OK", body = SpanViewOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(crate) async fn span(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
    q: Result<Query<SpanQuery>, QueryRejection>,
) -> ApiResult<Json<SpanViewOut>> {
    who.require(&space, Need::Read)?;
    let q = query(q)?;
    let span = ops::span(&st, &who, space, id, q.start, q.end, q.max_chars).await?;
    Ok(Json(span.into()))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/trajectories/{id}/match",
    operation_id = "trajectoryMatch",
    tag = "trajectories",
    summary = "States of one trajectory matching a pattern",
    description = "The states whose URL, thought, action or page lines match `pattern` (`mode=regex`, the default: a case-insensitive regular expression; `mode=words`: any of the words, lightly stemmed), with up to {MATCH_LINES} matching lines each; at most `limit` states (default {DEFAULT_MATCHES}).",
    params(SpacePath, TrajectoryPath, PatternQuery),
    responses(
        (status = 200, description = "OK", body = MatchesOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(crate) async fn match_states(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
    q: Result<Query<PatternQuery>, QueryRejection>,
) -> ApiResult<Json<MatchesOut>> {
    who.require(&space, Need::Read)?;
    let q = query(q)?;
    Ok(Json(
        ops::matches(&st, &who, space, Some(id), q.pattern(PatternMode::Regex))
            .await?
            .into(),
    ))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/trajectory-search",
    operation_id = "trajectorySearch",
    tag = "trajectories",
    summary = "Search every trajectory of a space",
    description = "(trajectory, state) pairs holding `pattern` (`mode=words`, the default: states holding most of the words first; `mode=regex`: insert and state order), with up to {SEARCH_LINES} matching lines each; at most `limit` (default {DEFAULT_SEARCH_HITS}).",
    params(SpacePath, PatternQuery),
    responses(
        (status = 200, description = "OK", body = MatchesOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(crate) async fn search(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<PatternQuery>, QueryRejection>,
) -> ApiResult<Json<MatchesOut>> {
    who.require(&space, Need::Read)?;
    let q = query(q)?;
    Ok(Json(
        ops::matches(&st, &who, space, None, q.pattern(PatternMode::Words))
            .await?
            .into(),
    ))
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{space}/trajectory-context",
    operation_id = "trajectoryContext",
    tag = "trajectories",
    summary = "Render a note and spans into a context",
    description = "The note first, then each span (most important first) with its states' URL, title, thought, action and page, within `token_budget` tokens (counted with the embedding model's tokenizer; never exceeded). When a page must be cut, lines holding the words of `query`, then new message lines, are kept first. Every span must name a stored trajectory and states it has (`spans[i].end_state` names the bad field).",
    params(SpacePath),
    request_body = ContextRequestWire,
    responses(
        (status = 200, description = "OK", body = RenderedContextOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 400, response = BadRequest),
        (status = 413, response = TooLarge),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(crate) async fn context(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(req): WireJson<ContextRequestWire>,
) -> ApiResult<Json<RenderedContextOut>> {
    Ok(Json(
        ops::context(&st, &who, space, req.into()).await?.into(),
    ))
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{space}/trajectory-inspect",
    operation_id = "trajectoryInspect",
    tag = "trajectories",
    summary = "Recall + inspection (no LLM)",
    description = "Recall over the trajectory pools shortlists trajectories; the states its best hits cite, plus each shortlisted trajectory's state holding most of the question's words, become spans; the best note leads; rendered within `token_budget` (default {DEFAULT_INSPECT_TOKENS}).",
    params(SpacePath),
    request_body = InspectRequest,
    responses(
        (status = 200, description = "OK", body = InspectedRecallOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 400, response = BadRequest),
        (status = 413, response = TooLarge),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(crate) async fn inspect(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(req): WireJson<InspectRequest>,
) -> ApiResult<Json<InspectedRecallOut>> {
    let opts = req.options();
    Ok(Json(
        ops::inspect(&st, &who, space, req.question, opts)
            .await?
            .into(),
    ))
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{space}/trajectory-agent",
    operation_id = "trajectoryAgent",
    tag = "trajectories",
    summary = "Run the agent controller",
    description = "The server's configured LLM (`[llm]`) works through the trajectories with the inspection verbs (triage, shortlist from the manifest, inspect) and answers with a note and spans, rendered into a context. Bounded by `max_steps` model calls and `time_budget_ms` (at most {MAX_AGENT_TIME_MS}); when the model fails, times out or never answers, or none is configured, the answer is the fallback (`recall` or `recall_inspection`) and `fallback_reason` says why.",
    params(SpacePath),
    request_body = AgentRequest,
    responses(
        (status = 200, description = "OK", body = AgentRunOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 400, response = BadRequest),
        (status = 413, response = TooLarge),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(crate) async fn agent(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(req): WireJson<AgentRequest>,
) -> ApiResult<Json<AgentRunOut>> {
    let opts = req.options();
    Ok(Json(
        ops::agent(&st, &who, space, req.question, opts)
            .await?
            .into(),
    ))
}
