//! MCP tools over the same operations as the HTTP API (`ops.rs`, `routes/inspect.rs`):
//! the memory tools `remember`, `recall`, `forget`, `history`, `profile`, `subjects`,
//! `entities`, `spaces`, and the trajectory tools (`trajectories.rs`). Served on stdio
//! (`cairn mcp`, the local user is admin) and as streamable HTTP at `/mcp` (stateless JSON
//! responses; the caller's key, checked by the HTTP middleware, scopes every tool call
//! exactly as it scopes the REST routes). A connection sees the memory tools only, or all
//! of them ([`McpTools`]); every input schema is in the portable subset (`schema.rs`).
use crate::auth::Access;
use crate::auth::Principal;
use crate::error::{ApiError, ServerError};
use crate::ops;
use crate::wire::out::HitOut;
use crate::wire::stated::{state_descriptions, stated};
use crate::wire::{scope_with, RecallRequest};
use crate::AppState;
use cairn::{Format, Memo, Message, RememberInput, Role, UnitKind};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use std::sync::{Arc, OnceLock};

mod args;
mod order;
mod schema;
// The trajectory tools: a second router on the same server, combined in the constructors.
mod trajectories;
pub use args::*;

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

fn tool_error(e: ApiError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "{} ({})",
        e.detail, e.code
    ))])
}

/// A library answer as a tool answers it, with its request's warnings (`warnings`, as
/// over HTTP) when there are any.
fn warned<T: serde::Serialize>(w: ops::Warned<T>) -> Result<Value, ApiError> {
    let mut v = serde_json::to_value(&w.answer).map_err(ApiError::internal)?;
    if let (Value::Object(m), false) = (&mut v, w.warnings.is_empty()) {
        let warnings = serde_json::to_value(&w.warnings).map_err(ApiError::internal)?;
        m.insert("warnings".into(), warnings);
    }
    Ok(v)
}

/// A tool's answer: its JSON, or the error as a tool error.
fn json_answer(r: Result<impl serde::Serialize, ApiError>) -> Result<CallToolResult, ErrorData> {
    Ok(match r {
        Ok(v) => CallToolResult::success(vec![json_text(&v)]),
        Err(e) => tool_error(e),
    })
}

fn json_text(v: &impl serde::Serialize) -> ContentBlock {
    ContentBlock::text(serde_json::to_string_pretty(v).unwrap_or_default())
}

/// The tool's messages as the library's: roles and times read, nothing decided.
fn messages_of(ms: Vec<MessageArg>) -> Result<Vec<Message>, ApiError> {
    ms.into_iter()
        .enumerate()
        .map(|(i, m)| {
            let role = m
                .role
                .map(|r| {
                    serde_json::from_value::<Role>(Value::String(r.clone())).map_err(|_| {
                        ApiError::invalid(
                            format!("messages[{i}].role"),
                            format!("unknown role {r:?} (user, assistant, system)"),
                        )
                    })
                })
                .transpose()?;
            let occurred_at = m
                .occurred_at
                .as_deref()
                .map(|t| crate::wire::parse_time(t, &format!("messages[{i}].occurred_at")))
                .transpose()?;
            Ok(Message {
                id: String::new(),
                role,
                speaker: m.speaker,
                text: m.text,
                occurred_at,
                metadata: Value::Null,
            })
        })
        .collect()
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

/// A router whose tools' input schemas are rewritten into the portable subset.
fn portable<S>(mut router: ToolRouter<S>) -> ToolRouter<S> {
    // The texts are this crate's own: a name `stated` does not know is a bug the tests
    // that build the routers find.
    let state = |text: &str| stated(text).unwrap_or_else(|e| panic!("an MCP tool's text: {e}"));
    for route in router.map.values_mut() {
        let mut schema = Value::Object(schema::portable(&route.attr.input_schema));
        state_descriptions(&mut schema).unwrap_or_else(|e| panic!("an MCP tool's schema: {e}"));
        if let Value::Object(schema) = schema {
            route.attr.input_schema = Arc::new(schema);
        }
        if let Some(text) = &route.attr.description {
            route.attr.description = Some(state(text).into());
        }
    }
    router
}

#[tool_router]
impl CairnMcp {
    /// A server for a local, trusted client (stdio): the caller is admin.
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
                portable(Self::tool_router() + Self::trajectory_router()),
                portable(Self::tool_router()),
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

    /// The space `remember` writes to. A space is created by its first write only when the
    /// connection was set up for it (the server's default space, or one the key names);
    /// any other name must exist, so a mistyped name is refused, not made a new space.
    async fn space_to_write(
        &self,
        asked: Option<String>,
        who: &Principal,
    ) -> Result<String, ApiError> {
        let space = self.space(asked, who)?;
        // Authorization first: whether a space exists is not for a key outside it to learn.
        who.require_in(&space, crate::auth::Need::Write)?;
        let expected = self.default_space.as_deref() == Some(space.as_str())
            || matches!(&who.access, Access::Spaces(s) if s.contains(&space));
        if expected {
            return Ok(space);
        }
        let name = space.clone();
        let known = crate::ops::blocking(&self.state, move |m| {
            Ok((m.space_exists(&name)?, m.spaces()?))
        })
        .await?;
        match known {
            (true, _) => Ok(space),
            (false, all) => {
                // A few names are enough to spot a typo; `spaces` lists them all.
                let mut some: Vec<String> = all.iter().take(20).map(|s| s.to_string()).collect();
                if all.len() > some.len() {
                    some.push(format!("… {} more", all.len() - some.len()));
                }
                Err(ApiError::invalid(
                    "space",
                    format!(
                        "space {space:?} does not exist (spaces: {}); name one of them, or create it first (`POST /v1/spaces`, or `cairn mcp --space {space}`)",
                        if some.is_empty() { "none yet".to_string() } else { some.join(", ") }
                    ),
                ))
            }
        }
    }

    /// The space a call names, else the server's default, else the caller's only space.
    fn space(&self, asked: Option<String>, who: &Principal) -> Result<String, ApiError> {
        let only = match &who.access {
            Access::Spaces(s) if s.len() == 1 => s.first().cloned(),
            _ => None,
        };
        asked
            .or_else(|| self.default_space.clone())
            .or(only)
            .ok_or_else(|| {
                ApiError::invalid(
                    "space",
                    "name a `space` (call `spaces` for the ones this key may use)",
                )
            })
    }

    #[tool(
        description = "Store something in long-term memory so it can be recalled in later conversations. Pass `note` for one fact, preference, decision or instruction worth keeping (\"User's daughter is called Mia\"), or `messages` to keep conversation turns verbatim (appended to `session_id`). Memory keeps the exact words and when they were said; nothing is summarized away. Returns what was stored."
    )]
    async fn remember(
        &self,
        Parameters(args): Parameters<RememberArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let run = async {
            let who = self.caller(&ctx)?;
            let space = self.space_to_write(args.space, &who).await?;
            let occurred_at = args
                .occurred_at
                .as_deref()
                .map(|t| crate::wire::parse_time(t, "occurred_at"))
                .transpose()?;
            let memo = match (args.note, args.messages) {
                (Some(note), None) => Memo::Note(note),
                (None, Some(ms)) if !ms.is_empty() => Memo::Messages(messages_of(ms)?),
                _ => {
                    return Err(ApiError::invalid(
                        "note",
                        "pass either `note` or a non-empty `messages`",
                    ))
                }
            };
            let input = RememberInput {
                memo,
                session_id: args.session_id,
                occurred_at,
                metadata: args.metadata.map_or(Value::Null, Value::Object),
            };
            let kept = ops::remember(&self.state, &who, &space, input).await?;
            Ok(json!({
                "space": space,
                "session_id": kept.session_id,
                "messages_added": kept.report.messages_added,
                "dated_at_recording": kept.report.dated_at_recording,
                "units": kept.report.units,
            }))
        };
        json_answer(run.await)
    }

    #[tool(
        description = "Search long-term memory for evidence relevant to a question, before answering anything about the user's past, preferences, plans or earlier conversations. Returns `context` (the evidence as text, dated and attributed, within `token_budget` tokens: quote from it; it opens with the user's card, their standing instructions and current facts, listed in `card`: follow them), `hits` (ranked memories with their session_id, turn ids, speakers, dates and `relevance`, for citing or forgetting), `extra_hits` (further memories the context shows because the budget had room), `hits_cut` (memories the context shows only in part or not at all) `no_relevant_memory` (true when nothing stored bears on the question: say you do not know rather than guess) and, when `filter` names a metadata key no conversation carries, `warnings` (check the key's spelling). Relative dates in the query (\"last week\") resolve against `as_of` (default now)."
    )]
    async fn recall(
        &self,
        Parameters(args): Parameters<RecallArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let run = async {
            let who = self.caller(&ctx)?;
            let space = self.space(args.space, &who)?;
            let format = match args.format.as_deref() {
                None => Format::Synthesized,
                Some(f) => f
                    .parse::<Format>()
                    .map_err(|e| ApiError::invalid("format", e.to_string()))?,
            };
            let stock = cairn::RecallOptions::default();
            let req = RecallRequest {
                query: args.query,
                top_k: args.top_k.unwrap_or(stock.top_k),
                token_budget: args.token_budget.unwrap_or(stock.token_budget),
                format,
                as_of: args.as_of,
                since: args.since,
                sessions: args.sessions,
                speakers: args.speakers,
                groups: args.groups,
                kinds: None::<Vec<UnitKind>>,
                quotas: None,
                filter: args.filter.map(serde_json::Value::Object),
                partition: None,
                min_relevance: args.min_relevance.unwrap_or(stock.min_relevance),
                explain: false,
            };
            let r = ops::recall(&self.state, &who, &space, req).await?;
            let cited = |hits: &[HitOut]| -> Vec<Value> {
                hits.iter()
                    .map(|h| {
                        json!({
                            "memory_id": h.unit_id, "session_id": h.session_id,
                            "turn_ids": h.turn_ids, "speakers": h.speakers,
                            "occurred_at": h.occurred_at, "score": h.score,
                            "relevance": h.relevance,
                        })
                    })
                    .collect()
            };
            let mut v = json!({
                "context": r.context,
                "hits": cited(&r.hits),
                "extra_hits": cited(&r.extra_hits),
                "no_relevant_memory": r.no_relevant_memory,
                "hits_cut": r.hits_cut_ids,
            });
            if !r.card.is_empty() {
                v["card"] = json!(r
                    .card
                    .iter()
                    .map(|l| json!({
                        "memory_id": l.unit_id, "category": l.category,
                        "statement": l.statement, "stated_at": l.stated_at,
                        "session_id": l.session_id,
                    }))
                    .collect::<Vec<_>>());
            }
            if !r.warnings.is_empty() {
                v["warnings"] = json!(r.warnings);
            }
            Ok(v)
        };
        json_answer(run.await)
    }

    #[tool(
        description = "Permanently delete from long-term memory: a memory `recall` returned (`memory_id`: the messages it was drawn from are deleted, and the answer lists them), a whole conversation (`session_id`), one message of it (`session_id` and `message_id`; with `exchange: true` the reply to it too), or an end user whole (`partition`: `{\"user_id\": \"u1\"}`, when a user asks to be forgotten). The words and everything derived from them are removed and can no longer be recalled. Use when the user asks to forget something or information is wrong; it cannot be undone."
    )]
    async fn forget(
        &self,
        Parameters(args): Parameters<ForgetArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let run = async {
            let who = self.caller(&ctx)?;
            let space = self.space(args.space, &who)?;
            if args.exchange && args.message_id.is_none() {
                return Err(ApiError::invalid(
                    "exchange",
                    "`exchange` forgets a message's reply with it: pass it with `session_id` and `message_id`",
                ));
            }
            if let Some(p) = args.partition {
                if args.memory_id.is_some() || args.session_id.is_some() {
                    return Err(ApiError::invalid(
                        "partition",
                        "`partition` forgets an end user whole: give it alone",
                    ));
                }
                let p = cairn::Partition::parse(&Value::Object(p)).map_err(cairn::Error::from)?;
                let r = ops::forget_partition(&self.state, &who, &space, p).await?;
                let mut v = serde_json::to_value(r).map_err(ApiError::internal)?;
                v["forgotten"] = json!(true);
                return Ok(v);
            }
            match (args.memory_id, args.session_id) {
                (Some(id), None) if args.message_id.is_none() => {
                    let r = ops::forget_memory(&self.state, &who, &space, id).await?;
                    let mut v = serde_json::to_value(r).map_err(ApiError::internal)?;
                    v["forgotten"] = json!(true);
                    Ok(v)
                }
                (None, Some(session)) => match args.message_id.as_deref() {
                    Some(message) => {
                        let r = ops::forget_message(
                            &self.state,
                            &who,
                            &space,
                            &session,
                            message,
                            args.exchange,
                        )
                        .await?;
                        let mut v = serde_json::to_value(r).map_err(ApiError::internal)?;
                        v["forgotten"] = json!(true);
                        Ok(v)
                    }
                    None => {
                        let n = ops::forget_session(&self.state, &who, &space, &session).await?;
                        Ok(json!({"forgotten": true, "removed_units": n}))
                    }
                },
                _ => Err(ApiError::invalid(
                    "memory_id",
                    "pass `memory_id` (a recall hit's), `session_id` with an optional `message_id`, or `partition`",
                )),
            }
        };
        json_answer(run.await)
    }

    #[tool(
        description = "How a fact changed over time: every stated value of a subject (a budget, a date, a price, who owns a task), oldest first, with when each was said, by whom, and which one replaced it. The last version is the current one. Use for \"what is the final X\", \"when did X change\", or \"what was X on <date>\" (pass `as_of`)."
    )]
    async fn history(
        &self,
        Parameters(args): Parameters<HistoryArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let run = async {
            let who = self.caller(&ctx)?;
            let space = self.space(args.space, &who)?;
            let scope = scope_with(args.filter.map(Value::Object), args.as_of.as_deref())?;
            warned(ops::history(&self.state, &who, &space, args.subject, scope).await?)
        };
        json_answer(run.await)
    }

    #[tool(
        description = "What the memory shows about a person: communication style (brief or detailed, formal or casual, directive or collaborative, reply speed), roles and skills said of them (each with the message that shows it), topics they talk about, and their groups. Use before writing to or about someone, or to answer \"who is X\" and \"what is X good at\"."
    )]
    async fn profile(
        &self,
        Parameters(args): Parameters<ProfileArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let run = async {
            let who = self.caller(&ctx)?;
            let space = self.space(args.space, &who)?;
            let scope = scope_with(args.filter.map(Value::Object), args.as_of.as_deref())?;
            warned(ops::profile(&self.state, &who, &space, args.speaker, scope).await?)
        };
        json_answer(run.await)
    }

    #[tool(
        description = "Which memory spaces this connection may use (and whether it may write), so you can name the right `space` in other calls. Call it first when you do not know which `space` to pass; `default` is the space used when a call names none (with a key for a single space, that space)."
    )]
    async fn spaces(
        &self,
        Parameters(_args): Parameters<SpacesArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let run = async {
            let who = self.caller(&ctx)?;
            let me = ops::me(&self.state, &who).await?;
            let mut v = serde_json::to_value(&me).map_err(ApiError::internal)?;
            v["default"] = json!(self.space(None, &who).ok());
            Ok::<_, ApiError>(v)
        };
        json_answer(run.await)
    }

    #[tool(
        description = "Every subject the memory holds versioned facts about (a budget, a date, an owner), with how many values were stated and the newest one. Use to find the words to pass to `history`."
    )]
    async fn subjects(
        &self,
        Parameters(args): Parameters<SubjectsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let run = async {
            let who = self.caller(&ctx)?;
            let space = self.space(args.space, &who)?;
            let scope = scope_with(args.filter.map(Value::Object), args.as_of.as_deref())?;
            ops::subjects(&self.state, &who, &space, scope).await
        };
        json_answer(run.await)
    }

    #[tool(
        description = "The people, places, organizations and things the memory's conversations name, with how often and when; with `name`, one of them with the messages that mention it, who and what it appears with, and the sessions it appears in, in time order."
    )]
    async fn entities(
        &self,
        Parameters(args): Parameters<EntitiesArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let run = async {
            let who = self.caller(&ctx)?;
            let space = self.space(args.space, &who)?;
            let scope = scope_with(args.filter.map(Value::Object), args.as_of.as_deref())?;
            Ok(match args.name {
                Some(name) => {
                    json_text(&ops::entity(&self.state, &who, &space, name, scope).await?)
                }
                None => {
                    json_text(&ops::entities(&self.state, &who, &space, args.search, scope).await?)
                }
            })
        };
        Ok(match run.await {
            Ok(v) => CallToolResult::success(vec![v]),
            Err(e) => tool_error(e),
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
