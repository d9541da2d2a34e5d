//! The bounds of the recall and read options: the library's validation checks them, the
//! MCP tool schemas and the server's OpenAPI document state them from these constants,
//! so a bound changed here changes all three. (Input sizes are bounded beside what they
//! bound: `source.rs`, `trajectory.rs`, `inspect.rs`, `filter.rs`.)

use crate::InputError;

/// Longest space name (bytes).
pub use crate::ids::MAX_SPACE_LEN;
/// A trajectory's bounds: states, and the bytes of each text field of a state
/// (`AgentState::bounded_fields`).
pub use crate::trajectory::{MAX_FIELD_BYTES, MAX_OBSERVATION_BYTES, MAX_STATES};

/// Largest `top_k` (and the other per-request counts of hits or states) accepted.
pub const MAX_TOP_K: usize = 1000;
/// Largest `token_budget` accepted.
pub const MAX_TOKEN_BUDGET: usize = 1_000_000;
/// Most model calls of one agent run (`max_steps`).
pub const MAX_AGENT_STEPS: usize = 100;
/// The longest one agent run may take (ten minutes): no single request runs away.
pub const MAX_AGENT_TIME_MS: u64 = 600_000;
/// Trajectories one recall + inspection may shortlist.
pub const MAX_INSPECT_TRAJECTORIES: usize = 100;

/// Largest a stored session may grow: 8 MiB of its messages (their texts, ids, speakers
/// and metadata as JSON), what one request body may carry at the server's default
/// (`max_body_bytes`). An ingest, append, group message or import that would make a
/// session larger is refused (`InputError` on `messages`, [`crate::TooLarge::Session`];
/// 413 `session_too_large` over HTTP); a longer conversation goes on in a new session.
/// Why: every write to a session and every forget of one of its messages reads,
/// re-checks and rewrites the whole record under the write lock (13 ms of CPU per MiB
/// measured for an append), so an unbounded session made each write to it slower and
/// held every other writer back.
pub const MAX_SESSION_BYTES: usize = 8 << 20;

/// Largest page of a listing (`limit`), and the page size when none is asked for.
pub const MAX_PAGE: usize = 1000;
pub const DEFAULT_PAGE: usize = 50;

/// A listing's page size: `limit` when asked for (1..=[`MAX_PAGE`]), else
/// [`DEFAULT_PAGE`]; the error names `limit`.
pub fn page_limit(limit: Option<usize>) -> Result<usize, InputError> {
    let n = limit.unwrap_or(DEFAULT_PAGE);
    if n == 0 || n > MAX_PAGE {
        return Err(InputError::field(
            "limit",
            format!("`limit` must be 1..={MAX_PAGE}, got {n}"),
        ));
    }
    Ok(n)
}

/// The range of `min_relevance`: a cosine similarity (-1 turns the floor off).
pub const MIN_RELEVANCE_RANGE: std::ops::RangeInclusive<f32> = -1.0..=1.0;

/// Checks `1..=max` for a count or budget; the error names the field.
pub fn in_range(field: &str, v: usize, max: usize) -> Result<(), InputError> {
    if v == 0 || v > max {
        return Err(InputError::new(
            field,
            format!("`{field}` must be 1..={max}, got {v}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_the_default_or_within_one_to_the_largest_naming_limit() {
        assert_eq!(page_limit(None).unwrap(), DEFAULT_PAGE);
        assert_eq!(page_limit(Some(MAX_PAGE)).unwrap(), MAX_PAGE);
        for bad in [0, MAX_PAGE + 1] {
            let e = page_limit(Some(bad)).unwrap_err();
            assert_eq!(e.field.as_deref(), Some("limit"), "{e}");
        }
    }
}
