//! The discourse a clause is read in: who is speaking and when, whom a clause is about,
//! and what the message has said so far for the clauses after.
use cairn_core::Timestamp;

/// Who is speaking, and when.
#[derive(Debug, Clone, Copy)]
pub struct Speaking<'a> {
    pub speaker: &'a str,
    pub at: Option<Timestamp>,
    /// The chat is with an assistant (roles): "we" is the speaker's household there; in
    /// a chat of named speakers it may be a team.
    pub with_assistant: bool,
}

/// Whom a clause is about.
#[derive(Debug, Clone, PartialEq)]
pub struct Who {
    pub person: String,
    /// The speaker themself ("I", "we").
    pub speaker: bool,
    /// A name the message did not introduce: only what a person is (home, work, role,
    /// family, plans) is read of it.
    pub bare_name: bool,
}

/// What a message has said so far, for the clauses after: names given to relations
/// ("my partner Ana"), the last third party ("she"), the last thing named.
#[derive(Debug, Default)]
pub(super) struct Context {
    pub(super) aliases: Vec<(String, String)>,
    pub(super) last_third: Option<String>,
    pub(super) last_object: Option<String>,
    pub(super) last_subject: Option<Who>,
    /// The clause before in this sentence stated nothing (a question, a modal).
    pub(super) skipped: bool,
}
