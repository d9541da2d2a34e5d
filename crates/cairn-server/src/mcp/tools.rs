//! What every tool shares: the call's context ([`Call`]: who calls, the state, the space a
//! call names), and [`tool`], which makes one row of a tool table (a name, the text an
//! agent reads, an operation over the shared `ops`) into a route: arguments parsed, the
//! caller read, the answer or error sent as the tool's text. The tables are in
//! `memory.rs` and `trajectories.rs`.
use super::schema;
use crate::auth::{Access, Need, Principal};
use crate::error::ApiError;
use crate::wire::stated::{state_descriptions, stated};
use crate::AppState;
use rmcp::handler::server::common::schema_for_type;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;

/// One tool call's context: the server's state, the caller, and the space used when a call
/// names none.
pub struct Call {
    pub state: Arc<AppState>,
    pub who: Principal,
    pub default_space: Option<String>,
}

/// A server that can say who makes a call (the HTTP request's key, or the local user).
pub trait Caller: Send + Sync + 'static {
    fn call(&self, ctx: &RequestContext<RoleServer>) -> Result<Call, ApiError>;
}

/// A tool's answer: the text an agent reads.
pub type Answer = Result<String, ApiError>;

/// One row of a tool table as a route: the input schema is `A`'s, the description is
/// stated (`{NAME}` written in) when the router is made portable.
pub fn tool<S, A, F, Fut>(name: &'static str, description: &'static str, run: F) -> ToolRoute<S>
where
    S: Caller,
    A: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(Call, A) -> Fut + Copy + Send + Sync + 'static,
    Fut: Future<Output = Answer> + Send + 'static,
{
    let attr = Tool::new(name, description, schema_for_type::<A>());
    ToolRoute::new_dyn(attr, move |ctx: ToolCallContext<'_, S>| {
        Box::pin(async move {
            let arguments = Value::Object(ctx.arguments.unwrap_or_default());
            let args = serde_json::from_value::<A>(arguments).map_err(|e| {
                ErrorData::invalid_params(format!("failed to deserialize parameters: {e}"), None)
            })?;
            let answer = match ctx.service.call(&ctx.request_context) {
                Ok(call) => run(call, args).await,
                Err(e) => Err(e),
            };
            Ok(match answer {
                Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
                Err(e) => tool_error(e),
            }
            .into())
        })
    })
}

/// An error as a tool answers it: the problem and its code, for the agent to read.
pub fn tool_error(e: ApiError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "{} ({})",
        e.detail, e.code
    ))])
}

/// A library answer as a tool's text: pretty JSON.
pub fn pretty(v: &impl serde::Serialize) -> Answer {
    serde_json::to_string_pretty(v).map_err(ApiError::internal)
}

/// A router whose tools' input schemas are rewritten into the portable subset and whose
/// texts are stated.
pub fn portable<S>(mut router: ToolRouter<S>) -> ToolRouter<S> {
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

impl Call {
    /// The space a call names, else the server's default, else the caller's only space.
    pub fn space(&self, asked: Option<String>) -> Result<String, ApiError> {
        let only = match &self.who.access {
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

    /// The space `remember` writes to. A space is created by its first write only when the
    /// connection was set up for it (the server's default space, or one the key names);
    /// any other name must exist, so a mistyped name is refused, not made a new space.
    pub async fn space_to_write(&self, asked: Option<String>) -> Result<String, ApiError> {
        let space = self.space(asked)?;
        // Authorization first: whether a space exists is not for a key outside it to learn.
        self.who.require_in(&space, Need::Write)?;
        let expected = self.default_space.as_deref() == Some(space.as_str())
            || matches!(&self.who.access, Access::Spaces(s) if s.contains(&space));
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
}
