//! Warnings: what a read answered but wants its caller to know, carried beside the answer
//! on every surface (HTTP `warnings`, MCP tool results, the CLI's stderr, the clients).
//!
//! A warning never changes the answer; a refusal would. A filter naming a metadata key
//! that no session carries yet gets a warning, not an error, because the key may be about
//! to be written (an agent filtering on `user_id` before its first write is correct).
use serde::{Deserialize, Serialize};

/// The code of a filter naming a metadata key that no session the request may see
/// carries (a misspelt key matches nothing, silently, without it).
pub const UNKNOWN_FILTER_KEY: &str = "unknown_filter_key";

/// One warning: a stable `code`, the request's `field` it is about (a JSON path such as
/// `filter.userid`), and a message for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    pub code: String,
    pub field: String,
    pub message: String,
}
