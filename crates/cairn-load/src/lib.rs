//! The HTTP load driver of Cairn: concurrent clients against a running `cairn serve`,
//! used by `cairn load` (server throughput: [`load`]) and by `cairn reliability soak`
//! (errors and memory under a long mixed load, in `cairn-reliability`).
//!
//! - [`client`]: a plain blocking HTTP client (status and body of every answer).
//! - [`driver`]: the concurrency loop; a [`driver::Workload`] says what each client sends
//!   (reads, writes, any mix) and what counts as a success.
//! - [`load`]: `cairn load`'s mixes (`read`, `write`, `mixed`) over [`corpus`]'s
//!   synthetic conversations and questions.
//! - [`stats`]: the one percentile definition (nearest rank) of every harness: these
//!   drivers, the benchmarks (`cairn-bench`) and the reliability drivers.
//!
//! Boundary: HTTP only (no `cairn` library, no store), so a load measures what a client
//! gets and can be pointed at any server.
pub mod client;
pub mod corpus;
pub mod driver;
pub mod load;
pub mod stats;

pub use client::{Client, Resp};
