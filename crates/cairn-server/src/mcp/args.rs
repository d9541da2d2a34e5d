//! The memory tools' arguments: what each tool takes, as its input schema describes it
//! (doc comments become the schema's descriptions).
use crate::wire::ScopeWire;
use schemars::JsonSchema;
use serde::Deserialize;

/// One message of a conversation to remember.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageArg {
    /// `user`, `assistant` or `system`. Give this or `speaker`.
    #[serde(default)]
    pub role: Option<String>,
    /// Name of who wrote it, for group chats. Give this or `role`.
    #[serde(default)]
    pub speaker: Option<String>,
    /// The message text, verbatim.
    pub text: String,
    /// When it was written, e.g. `2024-03-01T09:30:00Z` or `2024-03-01 09:30`.
    #[serde(default)]
    pub occurred_at: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberArgs {
    /// Memory space (one per user or agent). Optional when the server has a default.
    #[serde(default)]
    pub space: Option<String>,
    /// A single thing worth keeping, in plain words: a fact, preference, decision or
    /// instruction (e.g. "The user is allergic to peanuts"). Use this or `messages`.
    #[serde(default)]
    pub note: Option<String>,
    /// Conversation turns to keep verbatim, in order. Use this or `note`.
    #[serde(default)]
    pub messages: Option<Vec<MessageArg>>,
    /// The conversation the messages belong to; later calls with the same id append to it.
    /// Defaults to a new id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// When the conversation (or note) happened; defaults to now. Messages with their own
    /// `occurred_at` keep it.
    #[serde(default)]
    pub occurred_at: Option<String>,
    /// Who the memory belongs to, as conversation metadata, e.g. `{"user_id": "u1"}`. An
    /// agent serving several users passes each user's id here, and the same
    /// `{"user_id": "u1"}` as `filter` to `recall`, `history`, `profile` and the others,
    /// so one user's memories never answer another. For an existing `session_id`, omit it
    /// or pass what the session already has.
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    /// Memory space to search. Optional when the server has a default.
    #[serde(default)]
    pub space: Option<String>,
    /// What you want to know, as a question or keywords (e.g. "Where does the user live?").
    pub query: String,
    /// How many pieces of evidence to return (default {DEFAULT_TOP_K}, as over HTTP).
    #[serde(default)]
    #[schemars(range(min = 1, max = cairn::bounds::MAX_TOP_K))]
    pub top_k: Option<usize>,
    /// Most tokens of context to return (default {DEFAULT_TOKEN_BUDGET}, as over HTTP).
    #[serde(default)]
    #[schemars(range(min = 1, max = cairn::bounds::MAX_TOKEN_BUDGET))]
    pub token_budget: Option<usize>,
    /// `synthesized` (compact, newest first; default) or `raw` (verbatim, chronological).
    #[serde(default)]
    pub format: Option<String>,
    /// The relevance floor (cosine of question and memory, -1..1; the stock floor when
    /// not given, as over HTTP; -1 turns it off): when no memory reaches it, the answer
    /// has none and says `no_relevant_memory: true`.
    #[serde(default)]
    #[schemars(range(min = *cairn::bounds::MIN_RELEVANCE_RANGE.start(), max = *cairn::bounds::MIN_RELEVANCE_RANGE.end()))]
    pub min_relevance: Option<f32>,
    /// What the recall sees: `as_of`, `since`, `sessions`, `speakers`, `groups`, `kinds`,
    /// `filter`, `partition` (the same scope as every read).
    #[serde(flatten)]
    pub scope: ScopeWire,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetArgs {
    /// Memory space. Optional when the server has a default.
    #[serde(default)]
    pub space: Option<String>,
    /// A memory to forget: the `memory_id` of a `recall` hit. The messages it was drawn
    /// from are forgotten, and the answer lists them. Give this or `session_id`.
    #[serde(default)]
    pub memory_id: Option<String>,
    /// A whole conversation to forget (a hit's `session_id`). Give this or `memory_id`.
    #[serde(default)]
    pub session_id: Option<String>,
    /// With `session_id`: forget only this message of it (one of a hit's `turn_ids`).
    #[serde(default)]
    pub message_id: Option<String>,
    /// With `message_id`: forget the reply to it too (the next message, when the other
    /// party wrote it), so nothing the reply repeated stays.
    #[serde(default)]
    pub exchange: bool,
    /// An end user to forget whole, when they ask to be forgotten: every conversation
    /// whose metadata holds these values (`{"user_id": "u1"}`) and everything drawn from
    /// them. Give this alone.
    #[serde(default)]
    pub partition: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// Memory space. Optional when the server has a default.
    #[serde(default)]
    pub space: Option<String>,
    /// What the fact is about, in a few words ("budget for project Atlas", "launch date",
    /// "owner of the vendor review").
    pub subject: String,
    /// What the read sees: `as_of` (default now), `filter` (e.g. `{"user_id": "u1"}`)
    /// and the other fields of a scope, as `recall` takes them.
    #[serde(flatten)]
    pub scope: ScopeWire,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfileArgs {
    /// Memory space. Optional when the server has a default.
    #[serde(default)]
    pub space: Option<String>,
    /// The person's name as it appears in the conversations.
    pub speaker: String,
    /// What the read sees: `as_of` (default now), `filter` (e.g. `{"user_id": "u1"}`)
    /// and the other fields of a scope, as `recall` takes them.
    #[serde(flatten)]
    pub scope: ScopeWire,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpacesArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubjectsArgs {
    /// Memory space. Optional when the server has a default.
    #[serde(default)]
    pub space: Option<String>,
    /// What the read sees: `as_of` (default now), `filter` (e.g. `{"user_id": "u1"}`)
    /// and the other fields of a scope, as `recall` takes them.
    #[serde(flatten)]
    pub scope: ScopeWire,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntitiesArgs {
    /// Memory space. Optional when the server has a default.
    #[serde(default)]
    pub space: Option<String>,
    /// One entity by name or alias: its mentions, relations and timeline. Without it,
    /// the list of entities.
    #[serde(default)]
    pub name: Option<String>,
    /// List only entities whose name or an alias contains this.
    #[serde(default)]
    pub search: Option<String>,
    /// What the read sees: `as_of` (default now), `filter` (e.g. `{"user_id": "u1"}`)
    /// and the other fields of a scope, as `recall` takes them.
    #[serde(flatten)]
    pub scope: ScopeWire,
}
