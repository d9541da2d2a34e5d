//! The run machinery every bench shares, whatever its dataset and scoring: the run
//! folder and its label, the record of how the run was made ([`RunMeta`]), the memory
//! under test, config rows, Ctrl-C, the progress bar.
//!
//! A run writes `<out>/<run-label>/`: `results.jsonl` (one line per question and config
//! row, or per measured point), `run.json` (this run's [`RunMeta`]), and at the end
//! `summary.json`, `summary.md` and `METHODOLOGY.md` (`crate::report`).
pub mod folder;
pub mod hashed;
pub mod memory;
pub mod meta;
pub mod progress;
pub mod rows;
pub mod stop;

pub use folder::{check_label, space_name, utc_stamp, RunFolder};
pub use memory::{open_memory, open_memory_hashed, open_memory_in};
pub use meta::RunMeta;
pub use rows::ConfigRow;
pub use stop::{arm_stop, request_stop, stopped};
