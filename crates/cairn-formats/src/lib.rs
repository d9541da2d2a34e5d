//! Parsers of outside input shapes into Cairn's source types.
//!
//! This crate owns *reading formats that Cairn does not define*: JSONL files of sessions,
//! and the public memory benchmarks (LongMemEval, LoCoMo, FriendsQA). Each loader turns a
//! file into plain structs, and each record converts into [`cairn_core::SessionInput`]s
//! that have passed [`cairn_core::SessionInput::validate`].
//!
//! Boundaries: this crate reads files and nothing else. It must never touch storage, the
//! engine, embedders or the network; callers hand the sessions it returns to the engine.
//!
//! Errors: every loader error names the file and the record (line number, question id,
//! sample id, scene title, session, turn) and the problem, so a user can find what to fix.
//! Nothing here panics on input.
//!
//! Modules:
//! - [`detect`]: which supported shape a file holds (`cairn ingest`'s auto format).
//! - [`io`]: read plain or gzip-compressed files, parse JSON, hash files.
//! - [`jsonl`]: one [`cairn_core::SessionInput`] per line.
//! - [`longmemeval`]: LongMemEval records (`longmemeval_s`, `longmemeval_oracle`).
//! - [`locomo`]: LoCoMo conversations and their questions.
//! - [`evermembench`]: EverMemBench group-chat days and questions; group-message JSONL.
//! - [`trajectories`]: agent trajectories, one per line (LongMemEval-V2 shape).
//! - [`lme_v2`]: LongMemEval-V2 questions (with their `eval_function`) and haystacks.
//! - [`friendsqa`]: FriendsQA scenes (multi-party dialogue) and their questions.

pub mod detect;
pub mod error;
pub mod evermembench;
mod fields;
pub mod friendsqa;
pub mod io;
pub mod jsonl;
pub mod lme_v2;
pub mod locomo;
pub mod longmemeval;
pub mod trajectories;

pub use detect::{detect_format, InputFormat};
pub use error::FormatError;
pub use evermembench::{
    load_evermem_dialogue, load_evermem_qa, read_group_messages_jsonl, EverDay, EverQuestion,
};
pub use friendsqa::{
    friendsqa_group_days, load_friendsqa, scene_session_id, FriendsAnswer, FriendsHistory,
    FriendsQuestion, FriendsScene, FriendsUtterance,
};
pub use io::{open_reader, read_bytes, read_json_file, read_text_file, sha256_file};
pub use jsonl::{open_sessions_jsonl, parse_session_line, read_sessions_jsonl, SessionLines};
pub use lme_v2::{
    load_lme_v2_haystacks, load_lme_v2_questions, EvalFunction, EvalKind, LmeV2Question,
};
pub use locomo::{
    load_locomo, LocomoConversion, LocomoQa, LocomoSample, LocomoSession, LocomoTurn,
};
pub use longmemeval::{
    load_longmemeval, DuplicateResolution, DuplicateSession, LmeHaystack, LmeQuestion, LmeTurn,
};
pub use trajectories::read_trajectories_jsonl;
