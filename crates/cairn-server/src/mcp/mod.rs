//! MCP tools over the same operations as the HTTP API (`ops.rs`, `routes/inspect.rs`):
//! the memory tools `remember`, `recall`, `forget`, `history`, `profile`, `subjects`,
//! `entities`, `spaces` (`memory.rs`), and the trajectory tools (`trajectories.rs`), each
//! declared as a row of a table that `tools.rs` makes into a route. Served on stdio
//! (`cairn mcp`, the local user is admin) and as streamable HTTP at `/mcp` (stateless JSON
//! responses; the caller's key, checked by the HTTP middleware, scopes every tool call
//! exactly as it scopes the REST routes) by `server.rs`. A connection sees the memory
//! tools only, or all of them ([`McpTools`]); every input schema is in the portable
//! subset (`schema.rs`).
mod args;
mod memory;
mod order;
mod schema;
mod server;
mod tools;
mod trajectories;

pub(crate) use server::{http_service, jsonrpc_guard};
pub use server::{serve_stdio, CairnMcp, McpTools};
