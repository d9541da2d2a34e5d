//! The Cairn MCP server: which tools a connection is offered, who calls, and the two
//! transports (stdio, streamable HTTP at `/mcp`).
use super::order;
use super::tools::{portable, Call, Caller};
use super::{memory, trajectories};
use crate::auth::Principal;
use crate::error::{ApiError, ServerError};
use crate::AppState;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool_handler, ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;
use std::sync::{Arc, OnceLock};

/// Which tools a connection is offered: a chat agent needs the memory tools only; the
/// trajectory tools (web-agent runs) are eight more in its context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum McpTools {
    /// `remember`, `recall`, `forget`, `history`, `subjects`, `profile`, `entities`,
    /// `spaces`.
    Memory,
    /// The memory tools and the trajectory tools.
    #[default]
    All,
}

impl std::str::FromStr for McpTools {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "memory" => Ok(McpTools::Memory),
            "all" => Ok(McpTools::All),
            other => Err(format!("unknown tool set {other:?} (memory, all)")),
        }
    }
}

/// The Cairn MCP server.
#[derive(Clone)]
pub struct CairnMcp {
    state: Arc<AppState>,
    /// Fixed caller (stdio); `None` reads the caller from the HTTP request.
    local: Option<Principal>,
    /// Space used when a tool call names none.
    default_space: Option<String>,
    /// The tools offered when the connection does not ask (`?tools=` over HTTP).
    tools: McpTools,
    /// Every tool.
    tool_router: ToolRouter<Self>,
    /// The memory tools only.
    memory_router: ToolRouter<Self>,
}

/// What the server tells an agent about its tools.
const INSTRUCTIONS: &str = "Cairn is long-term memory. Call `recall` before answering \
    questions about the user's past, preferences or earlier conversations; call `remember` \
    for things worth keeping across conversations; call `forget` with a recall hit's \
    `memory_id` when asked to delete something; call `history` for how a value (budget, \
    date, owner) changed and what it is now (`subjects` lists what facts it holds); call \
    `profile` for what is known about a person; `spaces` names the spaces this connection \
    may use. Serving several users in one space, pass the user's id as `remember`'s \
    `metadata` and as the other tools' `filter` (`{\"user_id\": \"u1\"}`) on every call. When the trajectory tools are offered, answer questions about a web \
    environment that agents explored by working through the stored trajectories: \
    `trajectory_manifest` to shortlist runs, `trajectory_summary` and `trajectory_match` to \
    find the state, `trajectory_state` or `trajectory_span` to read it, then \
    `trajectory_context` with a note and the spans that prove it.";

impl CairnMcp {
    /// A server whose caller is the local user (stdio): every space, or one end user's
    /// partition of them when `partition` is given (`cairn mcp --partition`), as a key
    /// pinned to it.
    pub fn local(
        state: Arc<AppState>,
        default_space: Option<String>,
        tools: McpTools,
        partition: Option<cairn::Partition>,
    ) -> Self {
        let who = Principal {
            partition,
            ..Principal::admin("local")
        };
        Self::new(state, Some(who), default_space, tools)
    }

    /// A server whose caller is the key of each HTTP request; the tools it offers are the
    /// request's `?tools=memory|all`, else the server's `mcp_tools`.
    pub fn http(state: Arc<AppState>) -> Self {
        let tools = state.config.mcp_tools;
        Self::new(state, None, None, tools)
    }

    fn new(
        state: Arc<AppState>,
        local: Option<Principal>,
        default_space: Option<String>,
        tools: McpTools,
    ) -> Self {
        // Made portable and stated once per process: an HTTP request's MCP call makes a
        // server of its own, and the schemas are the same for every one.
        static ROUTERS: OnceLock<(ToolRouter<CairnMcp>, ToolRouter<CairnMcp>)> = OnceLock::new();
        let (all, memory) = ROUTERS.get_or_init(|| {
            (
                portable(memory::tools() + trajectories::tools()),
                portable(memory::tools()),
            )
        });
        Self {
            state,
            local,
            default_space,
            tools,
            tool_router: all.clone(),
            memory_router: memory.clone(),
        }
    }

    /// The tools of this call's connection: the HTTP request's `?tools=`, else the
    /// server's choice.
    fn router<'a>(
        &'a self,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<&'a ToolRouter<Self>, ErrorData> {
        let asked = ctx
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.uri.query())
            .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("tools=")));
        let tools = match asked {
            Some(v) => v
                .parse::<McpTools>()
                .map_err(|e| ErrorData::invalid_params(format!("?tools=: {e}"), None))?,
            None => self.tools,
        };
        Ok(match tools {
            McpTools::Memory => &self.memory_router,
            McpTools::All => &self.tool_router,
        })
    }

    fn caller(&self, ctx: &RequestContext<RoleServer>) -> Result<Principal, ApiError> {
        if let Some(p) = &self.local {
            return Ok(p.clone());
        }
        ctx.extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Principal>())
            .cloned()
            // The HTTP middleware always sets it; its absence means a wiring mistake, and
            // refusing is the safe answer.
            .ok_or_else(|| {
                ApiError::new(
                    axum::http::StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "no caller",
                )
            })
    }
}

impl Caller for CairnMcp {
    fn call(&self, ctx: &RequestContext<RoleServer>) -> Result<Call, ApiError> {
        Ok(Call {
            state: self.state.clone(),
            who: self.caller(ctx)?,
            default_space: self.default_space.clone(),
        })
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for CairnMcp {
    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, ErrorData> {
        let router = self.router(&ctx)?;
        Ok(rmcp::model::ListToolsResult {
            result_type: Some(rmcp::model::ResultType::COMPLETE),
            tools: router.list_all(),
            meta: None,
            next_cursor: None,
            ttl_ms: None,
            cache_scope: None,
        })
    }

    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        // On stdio, a call takes effect after every request sent before it (`order.rs`);
        // the turn ends when this call does.
        let turn = ctx.extensions.get::<order::Turn>().cloned();
        if let Some(t) = &turn {
            t.wait().await;
        }
        let router = self.router(&ctx)?;
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, ctx);
        router.call(tcc).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cairn", cairn::VERSION))
            .with_instructions(INSTRUCTIONS)
    }
}

/// The `/mcp` endpoint: stateless streamable HTTP with plain JSON responses, so each POST is
/// independent and carries its own key.
pub(crate) fn http_service(
    state: Arc<AppState>,
) -> StreamableHttpService<CairnMcp, LocalSessionManager> {
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(state.config.limits.max_body_bytes);
    // `Host` is checked for every route by the router (`routes::check_host`).
    config = config.disable_allowed_hosts();
    StreamableHttpService::new(
        move || Ok(CairnMcp::http(state.clone())),
        Default::default(),
        config,
    )
}

/// JSON-RPC's own errors for what never reaches a tool: a body that is not JSON is a parse
/// error (-32700), a `tools/call` whose `arguments` is not an object has invalid params
/// (-32602). (The MCP library would answer the first with an HTTP status and the second
/// as an unknown method.)
pub(crate) async fn jsonrpc_guard(
    axum::extract::State(state): axum::extract::State<Arc<AppState>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    // JSON-RPC over HTTP is JSON: what a web page may send cross-site is refused first.
    if let Err(e) =
        crate::wire::require_media_type(req.headers(), &["application/json"], "application/json")
    {
        return e.into_response();
    }
    let (parts, body) = req.into_parts();
    let bytes = match crate::wire::read_body(axum::extract::Request::new(body), &state.config).await
    {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let parsed: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return rpc_error(
                serde_json::Value::Null,
                -32700,
                &format!("parse error: {e}"),
            )
        }
    };
    let bad_arguments = parsed.get("method").and_then(|m| m.as_str()) == Some("tools/call")
        && parsed
            .get("params")
            .and_then(|p| p.get("arguments"))
            .is_some_and(|a| !a.is_object() && !a.is_null());
    if bad_arguments {
        let id = parsed.get("id").cloned().unwrap_or(serde_json::Value::Null);
        return rpc_error(id, -32602, "invalid params: `arguments` must be an object");
    }
    let req = axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes));
    next.run(req).await.into_response()
}

fn rpc_error(id: serde_json::Value, code: i64, message: &str) -> axum::response::Response {
    use axum::response::IntoResponse;
    let status = if code == -32700 {
        axum::http::StatusCode::BAD_REQUEST
    } else {
        axum::http::StatusCode::OK
    };
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (status, axum::Json(body)).into_response()
}

/// Serves the MCP tools on stdin/stdout until the client disconnects, the requests taking
/// effect in the order they were sent (`order.rs`); within one end user's partition when
/// `partition` is given (see [`CairnMcp::local`]).
pub async fn serve_stdio(
    state: Arc<AppState>,
    default_space: Option<String>,
    tools: McpTools,
    partition: Option<cairn::Partition>,
) -> Result<(), ServerError> {
    let (stdin, stdout) = rmcp::transport::stdio();
    let transport = order::InOrder::new(rmcp::transport::async_rw::AsyncRwTransport::new_server(
        stdin, stdout,
    ));
    let service = CairnMcp::local(state, default_space, tools, partition)
        .serve(transport)
        .await
        .map_err(|e| ServerError::Mcp(e.to_string()))?;
    service
        .waiting()
        .await
        .map_err(|e| ServerError::Mcp(e.to_string()))?;
    Ok(())
}
