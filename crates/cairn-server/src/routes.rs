//! Routes of `/v1` and `/mcp`: one table (method, path, handler), from which both the router
//! and the route list checked against `openapi.json` are built, so the two cannot drift.
//! Adding an endpoint is one handler and one table row (and its entry in the spec, which a
//! test demands).
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::{self, blocking, parse_filter, parse_time, session_doc};
use crate::wire::{
    parse, read_body, AddMessages, BatchIngest, CreateSpace, GroupIngest, HistoryQuery,
    ListMemories, ListSessions, Page, RecallRequest, TrajectoryIngest, WireJson,
};
use crate::{AppState, AuthMode};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, post_service, MethodRouter};
use axum::{Extension, Json, Router};
use cairn::{SessionInput, SessionRecord, Unit, UnitKind};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The OpenAPI document of this API, checked in beside the crate.
pub const OPENAPI: &str = include_str!("../openapi.json");

type S = Arc<AppState>;
type ApiResult<T> = Result<T, ApiError>;

struct Route {
    method: Method,
    path: &'static str,
    /// Reachable without a key (liveness, readiness, the spec).
    public: bool,
    handler: MethodRouter<S>,
}

fn r(method: Method, path: &'static str, handler: MethodRouter<S>) -> Route {
    Route {
        method,
        path,
        public: false,
        handler,
    }
}

fn table(state: &S) -> Vec<Route> {
    let public = |method, path, handler| Route {
        method,
        path,
        public: true,
        handler,
    };
    vec![
        public(Method::GET, "/v1/health", get(health)),
        public(Method::GET, "/v1/ready", get(ready)),
        public(Method::GET, "/v1/openapi.json", get(openapi)),
        r(Method::GET, "/v1/spaces", get(list_spaces)),
        r(Method::POST, "/v1/spaces", post(create_space)),
        r(Method::DELETE, "/v1/spaces/{space}", delete(delete_space)),
        r(Method::GET, "/v1/stats", get(all_stats)),
        r(Method::GET, "/v1/spaces/{space}/stats", get(space_stats)),
        r(
            Method::POST,
            "/v1/spaces/{space}/sessions",
            post(ingest_session),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/sessions",
            get(list_sessions),
        ),
        r(
            Method::POST,
            "/v1/spaces/{space}/sessions/batch",
            post(ingest_batch),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/sessions/{session}",
            get(get_session),
        ),
        r(
            Method::DELETE,
            "/v1/spaces/{space}/sessions/{session}",
            delete(delete_session),
        ),
        r(
            Method::DELETE,
            "/v1/spaces/{space}/sessions/{session}/messages/{message}",
            delete(delete_message),
        ),
        r(
            Method::POST,
            "/v1/spaces/{space}/messages",
            post(add_messages),
        ),
        r(
            Method::POST,
            "/v1/spaces/{space}/group-messages",
            post(add_group_messages),
        ),
        r(
            Method::POST,
            "/v1/spaces/{space}/trajectories",
            post(insert_trajectories),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectories",
            get(trajectory_manifest),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectories/{id}",
            get(get_trajectory),
        ),
        r(
            Method::DELETE,
            "/v1/spaces/{space}/trajectories/{id}",
            delete(delete_trajectory),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectories/{id}/states/{index}",
            get(get_trajectory_state),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectory-manifest",
            get(crate::trajectories::manifest),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectories/{id}/summary",
            get(crate::trajectories::summary),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectories/{id}/states/{index}/view",
            get(crate::trajectories::state_view),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectories/{id}/span",
            get(crate::trajectories::span),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectories/{id}/match",
            get(crate::trajectories::match_states),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectory-search",
            get(crate::trajectories::search),
        ),
        r(
            Method::POST,
            "/v1/spaces/{space}/trajectory-context",
            post(crate::trajectories::context),
        ),
        r(
            Method::POST,
            "/v1/spaces/{space}/trajectory-inspect",
            post(crate::trajectories::inspect),
        ),
        r(
            Method::POST,
            "/v1/spaces/{space}/trajectory-agent",
            post(crate::trajectories::agent),
        ),
        r(Method::GET, "/v1/spaces/{space}/history", get(history)),
        r(Method::GET, "/v1/spaces/{space}/speakers", get(speakers)),
        r(
            Method::GET,
            "/v1/spaces/{space}/profiles/{speaker}",
            get(profile),
        ),
        r(Method::POST, "/v1/spaces/{space}/recall", post(recall)),
        r(
            Method::GET,
            "/v1/spaces/{space}/memories",
            get(list_memories),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/memories/{id}",
            get(get_memory),
        ),
        r(
            Method::DELETE,
            "/v1/spaces/{space}/memories/{id}",
            delete(delete_memory),
        ),
        r(Method::GET, "/v1/spaces/{space}/export", get(export)),
        r(Method::POST, "/v1/spaces/{space}/import", post(import)),
        r(
            Method::POST,
            "/mcp",
            post_service(crate::mcp::http_service(state.clone())),
        ),
    ]
}

/// Every (method, path) the router serves, for checking the spec against.
pub fn route_table(state: &Arc<AppState>) -> Vec<(Method, &'static str)> {
    table(state)
        .into_iter()
        .map(|r| (r.method, r.path))
        .collect()
}

pub(crate) fn build(state: S) -> Router {
    let mut public: BTreeMap<&str, MethodRouter<S>> = BTreeMap::new();
    let mut private: BTreeMap<&str, MethodRouter<S>> = BTreeMap::new();
    for route in table(&state) {
        let group = if route.public {
            &mut public
        } else {
            &mut private
        };
        let merged = match group.remove(route.path) {
            Some(existing) => existing.merge(route.handler),
            None => route.handler,
        };
        group.insert(route.path, merged);
    }
    let mut open = Router::new();
    for (path, h) in public {
        open = open.route(path, h);
    }
    let mut guarded = Router::new();
    for (path, h) in private {
        guarded = guarded.route(path, h);
    }
    let guarded = guarded.route_layer(middleware::from_fn_with_state(state.clone(), authenticate));
    open.merge(guarded)
        .fallback(|| async {
            ApiError::not_found("route_not_found", "no such route; see /v1/openapi.json")
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "method not allowed on this route; see /v1/openapi.json",
            )
        })
        .layer(middleware::from_fn(problem_for_rejections))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            |_: Box<dyn std::any::Any + Send>| {
                ApiError::internal("a handler panicked").into_response()
            },
        ))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}

/// axum's own rejections (a path segment that is not UTF-8, say) are plain text; every
/// client error of `/v1` is a problem document, so they are rewrapped (`invalid_path`).
/// `/mcp` answers in its own protocol and is left alone.
async fn problem_for_rejections(req: Request, next: Next) -> Response {
    let mcp = req.uri().path().starts_with("/mcp");
    let resp = next.run(req).await;
    let status = resp.status();
    let problem = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/problem+json"));
    if mcp || problem || !status.is_client_error() {
        return resp;
    }
    let body = axum::body::to_bytes(resp.into_body(), 4096)
        .await
        .unwrap_or_default();
    let detail = String::from_utf8_lossy(&body).trim().to_string();
    let detail = if detail.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("bad request")
            .to_string()
    } else {
        detail
    };
    ApiError::new(status, "invalid_path", detail).into_response()
}

/// The key of a request: `Authorization: Bearer <key>` (or Mem0's `Token <key>`), or
/// `X-API-Key: <key>`.
fn presented_key(headers: &HeaderMap) -> Option<&str> {
    if let Some(v) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        let (scheme, rest) = v.trim().split_once(' ')?;
        if scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("token") {
            return Some(rest.trim());
        }
        return None;
    }
    headers.get("x-api-key").and_then(|v| v.to_str().ok())
}

async fn authenticate(State(st): State<S>, mut req: Request, next: Next) -> Response {
    let who = match &st.config.auth {
        AuthMode::Disabled => Ok(Principal::admin("local")),
        AuthMode::Keys { admin_key } => match presented_key(req.headers()) {
            None => Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "an API key is required: `Authorization: Bearer <key>`",
            )),
            Some(k)
                if admin_key
                    .as_deref()
                    .is_some_and(|a| crate::secrets_equal(a, k)) =>
            {
                Ok(Principal::admin("admin"))
            }
            Some(k) => match st.keys.authenticate(k) {
                Ok(Some(p)) => Ok(p),
                Ok(None) => Err(ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "unknown or revoked API key",
                )),
                Err(e) => Err(ApiError::internal(e)),
            },
        },
    };
    match who {
        Ok(p) => {
            req.extensions_mut().insert(p);
            next.run(req).await
        }
        Err(e) => e.into_response(),
    }
}

fn query<T>(q: Result<Query<T>, QueryRejection>) -> ApiResult<T> {
    q.map(|Query(v)| v).map_err(|e| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_query",
            e.body_text(),
        )
    })
}

async fn health() -> Json<Value> {
    Json(json!({"status": "ok", "version": cairn::VERSION}))
}

async fn ready(State(st): State<S>) -> ApiResult<Json<Value>> {
    let spaces = blocking(&st, |m| m.spaces())
        .await
        .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "not_ready", e.detail))?;
    Ok(Json(json!({"status": "ready", "spaces": spaces.len()})))
}

async fn openapi() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI)
}

async fn list_spaces(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
) -> ApiResult<Json<Value>> {
    let spaces = blocking(&st, |m| m.spaces()).await?;
    let names: Vec<String> = spaces
        .into_iter()
        .map(|s| s.to_string())
        .filter(|s| who.can_see(s))
        .collect();
    Ok(Json(json!({ "spaces": names })))
}

async fn create_space(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    WireJson(body): WireJson<CreateSpace>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    who.require(&body.name, Need::Write)?;
    let name = body.name.clone();
    let created = blocking(&st, move |m| m.create_space(&name))
        .await
        .map_err(|e| rename_field(e, "name"))?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(json!({"name": body.name, "created": created}))))
}

/// Validation of a space name reports the record `space ...`; on the wire the field is
/// the one the client sent.
fn rename_field(mut e: ApiError, field: &str) -> ApiError {
    if e.code == "invalid_input" {
        e.field = Some(field.to_string());
    }
    e
}

async fn delete_space(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Json<Value>> {
    who.require(&space, Need::Write)?;
    let lock = st.space_lock(&space);
    let _guard = lock.lock().await;
    let sp = space.clone();
    let existed = blocking(&st, move |m| m.forget_space(&sp)).await?;
    if !existed {
        return Err(no_space(&space));
    }
    Ok(Json(json!({"deleted": true})))
}

fn no_space(space: &str) -> ApiError {
    ApiError::not_found("space_not_found", format!("space {space:?} does not exist"))
}

async fn require_space(st: &S, space: &str) -> ApiResult<()> {
    let sp = space.to_string();
    if blocking(st, move |m| m.space_exists(&sp)).await? {
        Ok(())
    } else {
        Err(no_space(space))
    }
}

async fn all_stats(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
) -> ApiResult<Json<Value>> {
    let stats = blocking(&st, move |m| {
        m.spaces()?
            .into_iter()
            .filter(|s| who.can_see(s.as_str()))
            .map(|s| m.stats(s.as_str()))
            .collect::<Result<Vec<_>, _>>()
    })
    .await?;
    Ok(Json(json!({ "spaces": stats })))
}

async fn space_stats(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Json<cairn::SpaceStats>> {
    who.require(&space, Need::Read)?;
    require_space(&st, &space).await?;
    Ok(Json(blocking(&st, move |m| m.stats(&space)).await?))
}

async fn ingest_session(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(session): WireJson<SessionInput>,
) -> ApiResult<Json<cairn::IngestReport>> {
    who.require(&space, Need::Write)?;
    ops::check_limits(&st, std::slice::from_ref(&session), "")?;
    Ok(Json(ops::ingest(&st, &who, &space, vec![session]).await?))
}

async fn ingest_batch(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(body): WireJson<BatchIngest>,
) -> ApiResult<Json<cairn::IngestReport>> {
    who.require(&space, Need::Write)?;
    ops::check_limits(&st, &body.sessions, "sessions")?;
    Ok(Json(ops::ingest(&st, &who, &space, body.sessions).await?))
}

async fn add_messages(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(body): WireJson<AddMessages>,
) -> ApiResult<Json<cairn::IngestReport>> {
    Ok(Json(ops::add_messages(&st, &who, &space, body).await?))
}

async fn add_group_messages(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(body): WireJson<GroupIngest>,
) -> ApiResult<Json<cairn::IngestReport>> {
    who.require(&space, Need::Write)?;
    ops::check_group_limits(&st, &body.messages)?;
    // Appends to a group's day are read-modify-writes of one session: one at a time.
    let lock = st.space_lock(&space);
    let _guard = lock.lock().await;
    Ok(Json(
        ops::blocking_write(&st, move |m| m.ingest_group_messages(&space, body.messages)).await?,
    ))
}

async fn insert_trajectories(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(body): WireJson<TrajectoryIngest>,
) -> ApiResult<Json<cairn::IngestReport>> {
    who.require(&space, Need::Write)?;
    ops::check_trajectory_limits(&st, &body.trajectories)?;
    Ok(Json(
        ops::blocking_write(&st, move |m| {
            m.insert_trajectories(&space, body.trajectories)
        })
        .await?,
    ))
}

async fn trajectory_manifest(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Json<Value>> {
    who.require(&space, Need::Read)?;
    let list = blocking(&st, move |m| m.trajectory_manifest(&space)).await?;
    Ok(Json(json!({ "trajectories": list })))
}

async fn fetch_trajectory(st: &S, space: &str, id: &str) -> ApiResult<cairn::TrajectoryRecord> {
    let (sp, i) = (space.to_string(), id.to_string());
    blocking(st, move |m| m.trajectory(&sp, &i))
        .await?
        .ok_or_else(|| ApiError::not_found("not_found", format!("trajectory {id:?} not found")))
}

async fn get_trajectory(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> ApiResult<Json<cairn::TrajectoryRecord>> {
    who.require(&space, Need::Read)?;
    Ok(Json(fetch_trajectory(&st, &space, &id).await?))
}

async fn get_trajectory_state(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id, index)): Path<(String, String, String)>,
) -> ApiResult<Json<cairn::AgentState>> {
    who.require(&space, Need::Read)?;
    let i: usize = index
        .parse()
        .map_err(|_| ApiError::invalid("index", format!("{index:?} is not a state index")))?;
    let t = fetch_trajectory(&st, &space, &id).await?;
    let n = t.trajectory.states.len();
    t.trajectory
        .states
        .into_iter()
        .nth(i)
        .map(Json)
        .ok_or_else(|| {
            ApiError::not_found(
                "not_found",
                format!("trajectory {id:?} has {n} states; no state {i}"),
            )
        })
}

async fn delete_trajectory(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    who.require(&space, Need::Write)?;
    let n = blocking(&st, move |m| m.forget_trajectory(&space, &id)).await?;
    Ok(Json(json!({"removed_units": n})))
}

async fn history(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<HistoryQuery>, QueryRejection>,
) -> ApiResult<Json<cairn::FactHistory>> {
    who.require(&space, Need::Read)?;
    let Query(q) = q.map_err(|e| ApiError::invalid("subject", e.body_text()))?;
    Ok(Json(
        ops::history(&st, &who, &space, q.subject, q.as_of.as_deref()).await?,
    ))
}

async fn speakers(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Json<Value>> {
    who.require(&space, Need::Read)?;
    let list = blocking(&st, move |m| m.speakers(&space)).await?;
    Ok(Json(json!({ "speakers": list })))
}

async fn profile(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, speaker)): Path<(String, String)>,
) -> ApiResult<Json<cairn::SpeakerProfile>> {
    Ok(Json(ops::profile(&st, &who, &space, speaker).await?))
}

const DEFAULT_PAGE: usize = 50;
const MAX_PAGE: usize = 1000;

fn page_limit(limit: Option<usize>) -> ApiResult<usize> {
    match limit.unwrap_or(DEFAULT_PAGE) {
        0 => Err(ApiError::invalid("limit", "`limit` must be at least 1")),
        n if n > MAX_PAGE => Err(ApiError::invalid(
            "limit",
            format!("`limit` must be at most {MAX_PAGE}"),
        )),
        n => Ok(n),
    }
}

fn filter_param(raw: Option<&str>) -> ApiResult<Option<cairn::filter::Filter>> {
    raw.map(|text| {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| ApiError::invalid("filter", format!("filter is not JSON: {e}")))?;
        parse_filter(&v, "filter")
    })
    .transpose()
}

async fn list_sessions(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<ListSessions>, QueryRejection>,
) -> ApiResult<Json<Page<SessionRecord>>> {
    who.require(&space, Need::Read)?;
    let q = query(q)?;
    let limit = page_limit(q.limit)?;
    let filter = filter_param(q.filter.as_deref())?;
    let all = blocking(&st, move |m| m.sessions(&space)).await?;
    let kept: Vec<SessionRecord> = match filter {
        Some(f) => all
            .into_iter()
            .filter(|r| f.matches(&session_doc(r)))
            .collect(),
        None => all,
    };
    Ok(Json(Page::of(kept, q.offset.unwrap_or(0), limit)))
}

async fn get_session(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, session)): Path<(String, String)>,
) -> ApiResult<Json<SessionRecord>> {
    who.require(&space, Need::Read)?;
    let id = session.clone();
    blocking(&st, move |m| m.session(&space, &id))
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("not_found", format!("session {session:?} not found")))
}

async fn delete_session(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, session)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    let n = ops::forget(&st, &who, &space, &session, None).await?;
    Ok(Json(json!({"removed_units": n})))
}

async fn delete_message(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, session, message)): Path<(String, String, String)>,
) -> ApiResult<Json<Value>> {
    let n = ops::forget(&st, &who, &space, &session, Some(&message)).await?;
    Ok(Json(json!({"removed_units": n})))
}

async fn recall(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    WireJson(body): WireJson<RecallRequest>,
) -> ApiResult<Json<cairn::Recall>> {
    Ok(Json(ops::recall(&st, &who, &space, body).await?))
}

async fn list_memories(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    q: Result<Query<ListMemories>, QueryRejection>,
) -> ApiResult<Json<Page<Unit>>> {
    who.require(&space, Need::Read)?;
    let q = query(q)?;
    let limit = page_limit(q.limit)?;
    let kind = q
        .kind
        .as_deref()
        .map(|k| {
            UnitKind::parse(k)
                .ok_or_else(|| ApiError::invalid("kind", format!("unknown kind {k:?}")))
        })
        .transpose()?;
    let since = q
        .since
        .as_deref()
        .map(|t| parse_time(t, "since"))
        .transpose()?;
    let until = q
        .until
        .as_deref()
        .map(|t| parse_time(t, "until"))
        .transpose()?;
    let filter = filter_param(q.filter.as_deref())?;
    let (session_id, speaker) = (q.session_id, q.speaker);
    let units = blocking(&st, move |m| {
        let units = m.space_units(&space)?;
        let docs: HashMap<String, Value> = match &filter {
            Some(_) => m
                .sessions(&space)?
                .iter()
                .map(|r| (r.session.id.clone(), session_doc(r)))
                .collect(),
            None => HashMap::new(),
        };
        Ok(units
            .into_iter()
            .filter(|u| kind.is_none_or(|k| u.kind == k))
            .filter(|u| {
                session_id
                    .as_ref()
                    .is_none_or(|s| u.provenance.session_id.as_ref() == Some(s))
            })
            .filter(|u| {
                speaker
                    .as_ref()
                    .is_none_or(|s| u.provenance.speakers.contains(s))
            })
            .filter(|u| since.is_none_or(|t| u.occurred_at.is_some_and(|o| o >= t)))
            .filter(|u| until.is_none_or(|t| u.occurred_at.is_some_and(|o| o <= t)))
            .filter(|u| match &filter {
                None => true,
                Some(f) => u
                    .provenance
                    .session_id
                    .as_ref()
                    .and_then(|s| docs.get(s))
                    .is_some_and(|d| f.matches(d)),
            })
            .collect::<Vec<_>>())
    })
    .await?;
    Ok(Json(Page::of(units, q.offset.unwrap_or(0), limit)))
}

async fn fetch_unit(st: &S, space: &str, id: &str) -> ApiResult<Unit> {
    let (sp, uid) = (space.to_string(), id.to_string());
    blocking(st, move |m| m.units(&sp, &[uid]))
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::not_found("memory_not_found", format!("memory {id:?} not found")))
}

async fn get_memory(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> ApiResult<Json<Unit>> {
    who.require(&space, Need::Read)?;
    Ok(Json(fetch_unit(&st, &space, &id).await?))
}

/// A memory is derived from messages; deleting it forgets those messages (and so every
/// unit, index entry and cached vector derived from them). Anything less would leave the
/// text recallable through the verbatim record.
async fn delete_memory(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    who.require(&space, Need::Write)?;
    let unit = fetch_unit(&st, &space, &id).await?;
    if let (None, Some(t)) = (&unit.provenance.session_id, &unit.provenance.trajectory_id) {
        let (sp, t) = (space.clone(), t.clone());
        let removed = blocking(&st, move |m| m.forget_trajectory(&sp, &t)).await?;
        return Ok(Json(json!({
            "trajectory_id": unit.provenance.trajectory_id,
            "forgotten_trajectory": true,
            "removed_units": removed,
        })));
    }
    let Some(session) = unit.provenance.session_id.clone() else {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_deletable",
            "this memory has no source session to forget",
        ));
    };
    let lock = st.space_lock(&space);
    let _guard = lock.lock().await;
    let (sp, s, msgs) = (
        space.clone(),
        session.clone(),
        unit.provenance.message_ids.clone(),
    );
    let whole = unit.kind == UnitKind::Episode;
    let removed = blocking(&st, move |m| {
        if whole {
            return m.forget_session(&sp, &s);
        }
        let mut removed = 0;
        for msg in &msgs {
            removed += match m.forget_message(&sp, &s, msg) {
                Ok(n) => n,
                // Already gone (the session went with an earlier message).
                Err(cairn::Error::Store(cairn::StoreError::NotFound(_))) => 0,
                Err(e) => return Err(e),
            };
        }
        Ok(removed)
    })
    .await?;
    Ok(Json(json!({
        "session_id": session,
        "forgotten_messages": if whole { Value::Null } else { json!(unit.provenance.message_ids) },
        "forgotten_session": whole,
        "removed_units": removed,
    })))
}

async fn export(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Response> {
    who.require(&space, Need::Read)?;
    let body = blocking(&st, move |m| {
        let mut out = Vec::new();
        m.export(&space, &mut out)?;
        Ok(out)
    })
    .await?;
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], body).into_response())
}

/// Restores an export of this space (JSONL of session records, as `export` writes them).
/// Records of other spaces are refused: a key scoped to one space must not be able to write
/// another through an import file.
async fn import(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    req: Request,
) -> ApiResult<Json<cairn::IngestReport>> {
    who.require(&space, Need::Write)?;
    let bytes = read_body(req, st.config.limits.max_body_bytes).await?;
    let text = std::str::from_utf8(&bytes).map_err(|_| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "malformed_json",
            "body is not UTF-8",
        )
    })?;
    let mut sessions = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at_line = |mut e: ApiError| {
            e.field = Some(format!(
                "line {}{}",
                i + 1,
                e.field.map(|f| format!(": {f}")).unwrap_or_default()
            ));
            e.detail = format!("line {}: {}", i + 1, e.detail);
            e
        };
        // An export holds session lines, then trajectory lines.
        let is_trajectory = serde_json::from_str::<Value>(line)
            .ok()
            .is_some_and(|v| v.get("trajectory").is_some());
        let (rec_space, session) = if is_trajectory {
            let rec: cairn::TrajectoryRecord = parse(line.as_bytes()).map_err(at_line)?;
            (rec.space, None)
        } else {
            let rec: SessionRecord = parse(line.as_bytes()).map_err(at_line)?;
            (rec.space, Some(rec.session))
        };
        if rec_space.as_str() != space {
            return Err(ApiError::invalid(
                format!("line {}: space", i + 1),
                format!(
                    "record of space {:?} in an import into {space:?}",
                    rec_space.as_str()
                ),
            ));
        }
        sessions.extend(session);
    }
    ops::check_limits(&st, &sessions, "sessions")?;
    let report = ops::blocking_write(&st, move |m| m.import(std::io::Cursor::new(bytes))).await?;
    Ok(Json(report))
}
