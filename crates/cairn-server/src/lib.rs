//! The Cairn server: a versioned HTTP JSON API (`/v1`), an MCP endpoint (streamable HTTP at
//! `/mcp`, and stdio through [`serve_stdio`]), and API keys. (The load driver that measures
//! it over HTTP is `cairn-load`, a client like any other.)
//!
//! This crate owns everything about talking to clients: routes, wire JSON and its parsing,
//! problem details, authentication and per-space authorization, limits, the OpenAPI spec
//! (generated from the wire types by `routes/openapi.rs`, served at `/v1/openapi.json`,
//! checked in as `openapi.json`), and the MCP tools. It is
//! the only crate that serves HTTP or knows wire JSON.
//!
//! It must never hold ranking, derivation or storage logic: every answer comes from the
//! public `cairn` API ([`cairn::Memory`]), called on the blocking pool. It keeps no
//! storage of its own: API keys are rows of the memory's store (`cairn::KeyRecords`).
//!
//! Invariants:
//! - every route checks the caller's key (401) before its handler runs, and every route
//!   that names a space checks the [`Principal`] against it before reading it, refusing
//!   spaces outside a key's list alike whether or not they exist (a body the wire
//!   cannot read is refused, 415/400/422, after the key and before the space check);
//! - no panic reaches a client (handlers run under a panic catcher, library calls on the
//!   blocking pool), and every error is a problem document with a stable `code`;
//! - a write is answered only after the library returned, i.e. once it is durable.

mod auth;
mod conn;
mod error;
mod limits;
mod mcp;
mod ops;
mod routes;
mod ui;
mod wire;

pub use auth::{
    secrets_equal, Access, KeyInfo, KeyStore, Need, NewKey, Principal, MIN_ADMIN_KEY_LEN,
};
pub use conn::{default_max_connections, ConnectionLimits};
pub use error::{ApiError, ServerError};
pub use limits::Limits;
pub use mcp::{serve_stdio, CairnMcp, McpTools};
pub use routes::{openapi_document, openapi_text, route_table, OPENAPI};

use axum::Router;
use cairn::Memory;
use std::sync::Arc;

/// How the server authenticates callers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthMode {
    /// Bearer keys from the key store, plus an optional admin key that sees every space.
    Keys { admin_key: Option<String> },
    /// No authentication: every caller is admin. Only for a server bound to loopback
    /// (`serve` refuses it elsewhere).
    Disabled,
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub limits: Limits,
    pub auth: AuthMode,
    /// `Host` values every route accepts (DNS-rebinding protection: a page on another
    /// origin that resolves its name to this machine must not reach the API); `None`
    /// accepts any, for servers behind a proxy on a public name (keys still apply).
    pub allowed_hosts: Option<Vec<String>>,
    /// Timeouts of slow clients, the connection cap, the shutdown deadline.
    pub connections: ConnectionLimits,
    /// The MCP tools `/mcp` offers when a request does not ask (`?tools=memory|all`).
    pub mcp_tools: McpTools,
}

/// The names a loopback server answers to.
pub fn loopback_hosts() -> Vec<String> {
    vec!["localhost".into(), "127.0.0.1".into(), "::1".into()]
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            auth: AuthMode::Keys { admin_key: None },
            allowed_hosts: Some(loopback_hosts()),
            connections: ConnectionLimits::default(),
            mcp_tools: McpTools::default(),
        }
    }
}

/// Shared by every request. Holds no state of its own beyond connections and keys: every
/// rule (and every lock a write needs) is the engine's, so several servers on one
/// database behave as one.
pub struct AppState {
    pub memory: Arc<Memory>,
    pub keys: KeyStore,
    pub config: ServerConfig,
}

impl AppState {
    /// The state of a server over `memory`; the key store is the memory's store when it
    /// keeps keys (PostgreSQL), else `keys.sqlite3` in its data directory.
    pub fn new(memory: Arc<Memory>, config: ServerConfig) -> Result<Arc<Self>, ServerError> {
        if let AuthMode::Keys { admin_key: Some(k) } = &config.auth {
            if k.len() < MIN_ADMIN_KEY_LEN {
                return Err(ServerError::Config(format!(
                    "the admin key must have at least {MIN_ADMIN_KEY_LEN} characters"
                )));
            }
        }
        let keys = KeyStore::for_memory(&memory);
        Ok(Arc::new(Self {
            memory,
            keys,
            config,
        }))
    }
}

/// The whole application: `/v1` API, `/mcp`, limits, auth, panic catching, tracing.
pub fn router(state: Arc<AppState>) -> Router {
    routes::build(state)
}

/// Serves `router(state)` on `listener` until `shutdown` resolves; in-flight requests
/// then get `config.connections.shutdown_timeout` to finish (see `conn.rs` for the
/// timeouts and the connection cap).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let limits = state.config.connections.clone();
    conn::serve(listener, router(state), limits, shutdown).await
}
