//! Routes of `/v1` and `/mcp`: one table (method, path, handler), from which both the router
//! and the route list checked against `openapi.json` are built, so the two cannot drift.
//! Adding an endpoint is one handler (in the file of its resource, with its
//! `#[utoipa::path]` attribute) and one table row (and the handler in `paths(...)` of
//! `openapi.rs`, which a test demands).
//!
//! Middleware, outermost first: tracing, panic catching, problem documents for axum's own
//! rejections, the `Host` check (DNS rebinding), then per route the key check.
//! What the handlers share lives beside them: `handler.rs` (their state, result and query
//! strings) and `idempotency.rs` (a write's key and its answer).
pub(crate) mod entities;
mod handler;
mod idempotency;
pub(crate) mod inspect;
mod keys;
mod memories;
mod openapi;
mod recall;
mod sessions;
mod spaces;
mod trajectories;
pub(crate) mod trajectory_inspect;
mod transfer;

use crate::error::ApiError;
use crate::{AppState, AuthMode, Principal};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, post_service, MethodRouter};
use axum::Router;
use handler::S;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The OpenAPI document of this API as checked in beside the crate; a test holds it equal
/// to what [`openapi_document`] generates and the server serves.
pub const OPENAPI: &str = include_str!("../../openapi.json");
pub use openapi::{document as openapi_document, document_text as openapi_text};

use memories::*;
use recall::*;
use sessions::*;
use spaces::*;
use trajectories::*;
use transfer::*;

struct Route {
    method: Method,
    path: &'static str,
    /// Reachable without a key (liveness, readiness, the spec).
    public: bool,
    handler: MethodRouter<S>,
}

fn public(method: Method, path: &'static str, handler: MethodRouter<S>) -> Route {
    Route {
        method,
        path,
        public: true,
        handler,
    }
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
    let mut routes = service_routes();
    routes.extend(session_routes());
    routes.extend(trajectory_routes());
    routes.extend(read_routes(state));
    routes
}

/// The routes of the service itself: health, the document, the inspector, keys, spaces.
fn service_routes() -> Vec<Route> {
    vec![
        public(Method::GET, "/v1/health", get(health)),
        public(Method::GET, "/v1/ready", get(ready)),
        public(Method::GET, "/v1/openapi.json", get(openapi::openapi)),
        public(Method::GET, "/ui", get(crate::ui::index)),
        public(Method::GET, "/ui/", get(crate::ui::index_slash)),
        public(Method::GET, "/ui/{file}", get(crate::ui::file)),
        r(Method::GET, "/v1/me", get(crate::routes::inspect::me)),
        r(Method::GET, "/v1/keys", get(keys::list)),
        r(Method::POST, "/v1/keys", post(keys::create)),
        r(Method::DELETE, "/v1/keys/{id}", delete(keys::revoke)),
        r(Method::GET, "/v1/spaces", get(list_spaces)),
        r(Method::POST, "/v1/spaces", post(create_space)),
        r(Method::DELETE, "/v1/spaces/{space}", delete(delete_space)),
        r(
            Method::POST,
            "/v1/spaces/{space}/partitions/forget",
            post(forget_partition),
        ),
        r(Method::GET, "/v1/stats", get(all_stats)),
        r(Method::GET, "/v1/spaces/{space}/stats", get(space_stats)),
    ]
}

/// Writing and reading sessions and messages.
fn session_routes() -> Vec<Route> {
    vec![
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
    ]
}

/// Trajectories: their writes, reads and inspection verbs.
fn trajectory_routes() -> Vec<Route> {
    vec![
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
            get(trajectory_inspect::manifest),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectories/{id}/summary",
            get(trajectory_inspect::summary),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectories/{id}/states/{index}/view",
            get(trajectory_inspect::state_view),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectories/{id}/span",
            get(trajectory_inspect::span),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectories/{id}/match",
            get(trajectory_inspect::match_states),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectory-search",
            get(trajectory_inspect::search),
        ),
        r(
            Method::POST,
            "/v1/spaces/{space}/trajectory-context",
            post(trajectory_inspect::context),
        ),
        r(
            Method::POST,
            "/v1/spaces/{space}/trajectory-inspect",
            post(trajectory_inspect::inspect),
        ),
        r(
            Method::POST,
            "/v1/spaces/{space}/trajectory-agent",
            post(trajectory_inspect::agent),
        ),
    ]
}

/// Knowledge, recall, memories, transfer and MCP.
fn read_routes(state: &S) -> Vec<Route> {
    vec![
        r(Method::GET, "/v1/spaces/{space}/history", get(history)),
        r(
            Method::GET,
            "/v1/spaces/{space}/subjects",
            get(crate::routes::inspect::subjects),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/sessions/{session}/units",
            get(crate::routes::inspect::session_units),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/trajectories/{id}/units",
            get(crate::routes::inspect::trajectory_units),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/entities",
            get(crate::routes::entities::list),
        ),
        r(
            Method::GET,
            "/v1/spaces/{space}/entities/{name}",
            get(crate::routes::entities::one),
        ),
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
            post_service(crate::mcp::http_service(state.clone())).layer(
                middleware::from_fn_with_state(state.clone(), crate::mcp::jsonrpc_guard),
            ),
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
        .layer(middleware::from_fn_with_state(state.clone(), check_host))
        .layer(middleware::from_fn(problem_for_rejections))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            |_: Box<dyn std::any::Any + Send>| {
                ApiError::internal("a handler panicked").into_response()
            },
        ))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}

/// Refuses requests whose `Host` is not one this server answers to: a web page on another
/// origin can make a browser send requests to a loopback server by resolving its own name
/// there (DNS rebinding); keys stop it, but a server run with `--no-auth` has none.
async fn check_host(State(st): State<S>, req: Request, next: Next) -> Response {
    let Some(allowed) = &st.config.allowed_hosts else {
        return next.run(req).await;
    };
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(host_name)
        .unwrap_or_default();
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(host)) {
        return next.run(req).await;
    }
    ApiError::new(
        StatusCode::FORBIDDEN,
        "host_not_allowed",
        "this server does not answer to that Host name (see `cairn serve --allowed-host`)",
    )
    .with_field("Host")
    .into_response()
}

/// The name of a `Host` value without its port (`[::1]:7700` is `::1`).
fn host_name(v: &str) -> &str {
    let v = v.trim();
    if let Some(rest) = v.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    match v.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => v,
    }
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
