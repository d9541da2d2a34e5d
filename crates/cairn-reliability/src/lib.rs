//! Reliability drivers for Cairn, modelled on how SQLite and PostgreSQL earn trust: each
//! test is a command anyone can repeat (`cairn reliability ...`), with a short form that
//! runs in CI (`crates/cairn-cli/tests/reliability.rs`) and a long form documented in
//! `docs/reliability.md`.
//!
//! - [`crash`]: SIGKILL `cairn serve` at random moments during HTTP ingest; nothing
//!   acknowledged may be lost, and `cairn check` must find the indexes in agreement.
//! - [`badinput`]: a corpus of malformed and adversarial requests, each refused with a 4xx
//!   problem document, the server up and a canary unchanged after every one.
//! - [`soak`]: concurrent clients mixing ingest and recall (a workload of `cairn-load`'s
//!   driver, the one `cairn load` uses); errors, latency percentiles (nearest rank,
//!   `cairn_load::stats`) and server memory over time.
//! - [`backup`]: export, import into a fresh store, identical recall.
//! - [`races`]: retries under one `Idempotency-Key` raced against each other and a busy
//!   write lock; exactly one write per key.
//! - [`diskfull`]: a full disk and a read-only one under a real server: refusals are
//!   `507`/`503`, reads and forgets keep working, nothing refused is stored.
//! - [`memory`]: the server's resident memory under concurrent exports of a large space
//!   and recalls with distinct large filters.
//! - [`scaling`]: the CPU of every route and MCP tool as each dimension a request depends
//!   on doubles; any growth faster than linear is reported.
//! - [`fuzz`]: every parser of outside input as a fuzz target (libFuzzer in `fuzz/`, and a
//!   stable mutation fuzzer here).
//! - isolation: property tests in `tests/isolation.rs` (through the library).
//!
//! The drivers talk to real `cairn` processes (HTTP on loopback through `cairn-load`'s
//! client, and the CLI). Beside `cairn-load`, this crate links only what it fuzzes: the
//! `cairn-core` types and validation, the `cairn-formats` parsers and `cairn-engine`'s
//! query analyzer; never a store or the server.
pub mod backup;
pub mod badinput;
pub mod corpus;
pub mod crash;
pub mod diskfull;
pub mod fuzz;
pub mod memory;
pub mod races;
pub mod scaling;
pub mod serve;
pub mod soak;

pub use serve::{model_missing, Cairn};

/// Text of about `bytes` bytes of words no other seed repeats, so that every write costs
/// the store its own room (records, text index) and no two are alike.
pub(crate) fn unique_words(seed: usize, bytes: usize) -> String {
    let mut x = seed as u64 * 2_654_435_761 + 1;
    let mut out = String::with_capacity(bytes + 16);
    while out.len() < bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push_str(&format!("w{:x} ", x % 1_000_000_007));
    }
    out
}
