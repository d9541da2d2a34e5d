//! Every bound of what a request may carry or ask for, in one place: the library's
//! validation checks them, the MCP tool schemas and the server's OpenAPI document state
//! them from these constants, so a bound changed here changes every surface. (What a
//! request gets when it asks for nothing, the defaults, lives with what it configures.)

use crate::InputError;

/// Longest space name (bytes).
pub use crate::ids::MAX_SPACE_LEN;

// What a write may carry: sessions and their messages (`source.rs`).

/// Longest accepted message text, in bytes (1 MiB). Longer input is an error, never cut.
pub const MAX_TEXT_BYTES: usize = 1 << 20;
/// Longest accepted id (session, message), in bytes.
pub const MAX_ID_BYTES: usize = 256;
/// Most messages in one session.
pub const MAX_MESSAGES: usize = 100_000;
/// Deepest nesting of a metadata value (or a trajectory's outcome), counting the object
/// itself: `{"a": [1]}` is 2 deep. A stored record wraps metadata in up to five levels
/// of its own (export line, record, session, messages, message), and every JSON reader
/// Cairn uses stops at 128 levels (serde_json's recursion limit); 32 keeps whatever is
/// accepted readable with room to spare.
pub const MAX_METADATA_DEPTH: usize = 32;
/// Largest metadata value (or outcome), in bytes of compact JSON: metadata travels with
/// every session listing and filter, so it is bounded like an id, not like a text.
pub const MAX_METADATA_BYTES: usize = 64 << 10;
/// Longest accepted idempotency key, in bytes.
pub const MAX_IDEMPOTENCY_KEY: usize = 255;

// Trajectories (`trajectory.rs`: `AgentState::bounded_fields`).

/// Most states in one trajectory.
pub const MAX_STATES: usize = 10_000;
/// Longest accepted observation (an accessibility tree), in bytes.
pub const MAX_OBSERVATION_BYTES: usize = 4 << 20;
/// Longest goal, thought, action or URL, in bytes.
pub const MAX_FIELD_BYTES: usize = 64 << 10;

// Trajectory inspection (`inspect.rs`).

/// Most observation characters of one state in one answer.
pub const MAX_STATE_CHARS: usize = 200_000;
/// Most states in one span answer.
pub const MAX_SPAN_STATES: usize = 10;
/// Most states a `match` returns and hits a `search` returns.
pub const MAX_INSPECT_RESULTS: usize = 500;
/// Longest accepted pattern, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1_000;
/// Most trajectories per manifest page.
pub const MAX_MANIFEST: usize = 1_000;
/// Most spans, states and note bytes of one context request.
pub const MAX_CONTEXT_SPANS: usize = 64;
pub const MAX_CONTEXT_STATES: usize = 200;
pub const MAX_NOTE_BYTES: usize = 64 << 10;

// Metadata filters (`filter.rs`).

/// Deepest nesting of `and`/`or`/`not` accepted (input from the network must not be able
/// to exhaust the stack).
pub const MAX_FILTER_DEPTH: usize = 16;
/// Most conditions in one filter.
pub const MAX_FILTER_CONDITIONS: usize = 256;
/// Most values in all the `in` and `nin` lists of one filter together (and in a scope's
/// session and group lists).
pub const MAX_FILTER_LIST_VALUES: usize = 10_000;

// Recall and reads.

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
