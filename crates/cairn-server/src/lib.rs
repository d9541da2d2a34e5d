//! The Cairn server: a versioned HTTP JSON API (`/v1`), an MCP endpoint (streamable HTTP at
//! `/mcp`, and stdio through [`serve_stdio`]), API keys, and a load driver to measure it.
//!
//! This crate owns everything about talking to clients: routes, wire JSON and its parsing,
//! problem details, authentication and per-space authorization, limits, the OpenAPI spec
//! (`openapi.json`, checked in and served at `/v1/openapi.json`), and the MCP tools. It is
//! the only crate that knows HTTP or wire JSON.
//!
//! It must never hold ranking, derivation or storage logic: every answer comes from the
//! public `cairn` API ([`cairn::Memory`]), called on the blocking pool. Its only storage is
//! its own key file (`keys.sqlite3` in the data directory).
//!
//! Invariants:
//! - every route that names a space checks the caller's [`Principal`] before anything
//!   else, and refuses spaces outside a key's list alike whether or not they exist;
//! - no panic reaches a client (handlers run under a panic catcher, library calls on the
//!   blocking pool), and every error is a problem document with a stable `code`;
//! - a write is answered only after the library returned, i.e. once it is durable.

mod auth;
mod error;
pub mod load;
mod mcp;
mod ops;
mod routes;
mod trajectories;
mod wire;

pub use auth::{
    secrets_equal, Access, KeyInfo, KeyStore, Need, NewKey, Principal, KEYS_FILE, MIN_ADMIN_KEY_LEN,
};
pub use error::{ApiError, ServerError};
pub use mcp::{serve_stdio, CairnMcp};
pub use routes::{route_table, OPENAPI};

use axum::Router;
use cairn::Memory;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// Limits on what one request may carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest request body, in bytes (also bounds `import`).
    pub max_body_bytes: usize,
    /// Most sessions in one batch ingest or import.
    pub max_batch_sessions: usize,
    /// Longest message text (and query), in bytes.
    pub max_text_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 8 << 20,
            max_batch_sessions: 1000,
            max_text_bytes: 64 << 10,
        }
    }
}

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
    /// `Host` values the MCP endpoint accepts (DNS-rebinding protection); `None` accepts
    /// any, for servers behind a proxy on a public name (keys still apply).
    pub mcp_allowed_hosts: Option<Vec<String>>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            auth: AuthMode::Keys { admin_key: None },
            mcp_allowed_hosts: Some(vec!["localhost".into(), "127.0.0.1".into(), "::1".into()]),
        }
    }
}

/// Shared by every request.
pub struct AppState {
    pub memory: Arc<Memory>,
    pub keys: KeyStore,
    pub config: ServerConfig,
    /// One lock per space for read-modify-write operations (appends, forgets). Ingest of
    /// one space never waits on another space's lock.
    space_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
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
        let keys = KeyStore::for_memory(&memory)?;
        Ok(Arc::new(Self {
            memory,
            keys,
            config,
            space_locks: Mutex::new(HashMap::new()),
        }))
    }

    pub(crate) fn space_lock(&self, space: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.space_locks.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(space.to_string()).or_default().clone()
    }
}

/// The whole application: `/v1` API, `/mcp`, limits, auth, panic catching, tracing.
pub fn router(state: Arc<AppState>) -> Router {
    routes::build(state)
}

/// Serves `router(state)` on `listener` until `shutdown` resolves; in-flight requests
/// finish first.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let app = router(state);
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await?;
    Ok(())
}
