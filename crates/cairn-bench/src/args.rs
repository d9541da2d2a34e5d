//! The flags every retrieval bench shares (`cairn bench longmemeval|locomo|friendsqa`)
//! and the choices they name. Each bench's own flags live with the bench.
use crate::qa::LlmArgs;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// The run folder and what a run reads besides its data: the flags of every bench
/// (`#[command(flatten)]` into each bench's options).
#[derive(Debug, Clone, Args)]
pub struct RunFolderArgs {
    /// Name of the run folder [default: the bench's name, its configuration where it has
    /// one, and the UTC time].
    #[arg(long, value_name = "L")]
    pub run_label: Option<String>,
    /// Folder of run folders.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub out: PathBuf,
    /// Embedding cache file [default: $CAIRN_HOME/embedding-cache.sqlite3, CAIRN_HOME
    /// defaulting to ${XDG_CACHE_HOME:-$HOME/.cache}/cairn; `trajectories-scale`: a fresh
    /// one in the run folder, so its insert is cold].
    #[arg(long, value_name = "FILE")]
    pub cache: Option<PathBuf>,
    /// Keep the run's data directory (and every space) instead of deleting it (`scale`:
    /// and the PostgreSQL spaces; `trajectories-scale`: and its fresh cache).
    #[arg(long)]
    pub keep_data: bool,
    /// Engine settings (a `cairn.toml`: `[engine.rank]`, `[embed]`) for experiments; the
    /// settings in force are written to METHODOLOGY.md. Default: the stock settings.
    #[arg(long, value_name = "FILE")]
    pub memory_config: Option<PathBuf>,
}

/// Options common to benchmark runs.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The dataset file (plain or gzip JSON).
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,
    /// Config rows: `defaults` (RecallOptions::default()), `bench` (top_k=10,
    /// token_budget=10000, format=raw), or both (one ingest, two recalls).
    #[arg(long, value_enum, default_value_t = ConfigChoice::Both)]
    pub config: ConfigChoice,
    /// Run at most N questions (after --questions).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Only these question ids (LoCoMo: sample ids like conv-26 or question ids like
    /// conv-26:q3), comma separated.
    #[arg(long, value_delimiter = ',', value_name = "ID,...")]
    pub questions: Vec<String>,
    /// Where the run goes and what it reads: shared by every bench.
    #[command(flatten)]
    pub run: RunFolderArgs,
    /// Continue a run: questions already in its results.jsonl are skipped (without
    /// --run-label: the newest run of this dataset and config).
    #[arg(long)]
    pub resume: bool,
    /// What `as_of` recall runs with (LoCoMo: `question` and `question-or-later` both
    /// mean the conversation's last session date).
    #[arg(long, value_enum, default_value_t = AsOfPolicy::QuestionOrLater)]
    pub as_of: AsOfPolicy,
    /// Hand the memory the dataset's own session, group and message ids (and
    /// LongMemEval's `has_answer` marks). By default they are renamed to opaque ids
    /// before ingest and mapped back for scoring, so no label in an id can reach ranking.
    #[arg(long)]
    pub keep_ids: bool,
    /// One space for every question: each question's history (LoCoMo: each
    /// conversation's) is ingested into ONE space, its sessions tagged
    /// `metadata.user_id` with the question (conversation) id, and each question
    /// recalls with the filter `{"user_id": <its id>}`: the multi-user deployment of
    /// agent builders, measured against a space per question.
    #[arg(long)]
    pub shared_space: bool,
    /// Training data for learned ranking (`scripts/ltr-fit.py`): the `bench` row
    /// recalls N hits with an explanation, and each hit's record carries the ranking
    /// features of its unit. Metrics still count the first 10 hits at most.
    #[arg(long, value_name = "N")]
    pub features_top_k: Option<usize>,
    /// Add turn-level peers as rows `peer-bm25`, `peer-minilm`, `peer-rrf` (all three
    /// when the flag has no value): each ranks single turns of the same space and packs
    /// them whole into the `defaults` row's budget, counted with the same tokenizer.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        num_args = 0..,
        default_missing_values = ["bm25", "minilm", "rrf"],
        value_name = "PEER,..."
    )]
    pub peers: Vec<crate::peers::Peer>,
    /// Add a `defaults` row at each of these relevance floors (`defaults@<floor>`;
    /// -1 is no floor): the curve of evidence kept and off-topic questions refused.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "FLOOR,...",
        allow_negative_numbers = true
    )]
    pub floors: Vec<f32>,
    /// Off-topic questions to ask of every space besides its own: another benchmark's
    /// file (every `question` in it) or a text file of one question per line; `general`
    /// is the built-in list of general-knowledge questions. Recorded apart (exclusion
    /// `off-topic`): the share the memory answers `no_relevant_memory`.
    #[arg(long, value_delimiter = ',', value_name = "FILE|general,...")]
    pub off_topic: Vec<String>,
    /// Off-topic questions per space from each `--off-topic` source (different ones for
    /// each space, in turn).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub off_topic_per_space: usize,
    /// QA rows: reader and judge models.
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// LoCoMo options.
#[derive(Debug, Clone, Args)]
pub struct LocomoArgs {
    #[command(flatten)]
    pub common: RunArgs,
    /// At most N questions per conversation (file order).
    #[arg(long, value_name = "N")]
    pub max_questions_per_conv: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConfigChoice {
    Defaults,
    Bench,
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Dataset {
    Longmemeval,
    Locomo,
}

/// How a question's `as_of` is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AsOfPolicy {
    /// Exactly the question date (LongMemEval sessions dated after it become invisible).
    Question,
    /// The question date, or the latest haystack session date when that is later.
    QuestionOrLater,
    /// No as_of (recall as of now).
    None,
}

impl AsOfPolicy {
    pub fn name(self) -> &'static str {
        match self {
            AsOfPolicy::Question => "question",
            AsOfPolicy::QuestionOrLater => "question-or-later",
            AsOfPolicy::None => "none",
        }
    }

    /// The policy in words, for METHODOLOGY.md (`lme`: LongMemEval's dated questions,
    /// else LoCoMo's undated ones).
    pub fn describe(self, lme: bool) -> String {
        match (self, lme) {
            (AsOfPolicy::Question, true) => "as_of = the question date exactly; haystack \
                sessions dated after it are invisible to recall"
                .into(),
            (AsOfPolicy::QuestionOrLater, true) => "as_of = the question date, raised to the \
                latest haystack session date when a haystack session is dated after the \
                question (the data has such sessions, up to ~23.5 h later, often evidence; \
                filtering them out would lose evidence); each adjusted question carries an \
                `as_of_note`"
                .into(),
            (AsOfPolicy::None, _) => "as_of = none (recall as of now)".into(),
            (_, false) => "as_of = the date of the conversation's last session (LoCoMo \
                questions carry no date of their own)"
                .into(),
        }
    }
}
