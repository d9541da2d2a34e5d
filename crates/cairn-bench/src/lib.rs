//! The benchmark harness of Cairn (`cairn bench ...`).
//!
//! This crate owns the benchmark *protocols* (how a dataset is fed to a memory and
//! questioned: LongMemEval, LoCoMo, FriendsQA, EverMemBench, LongMemEval-V2), the retrieval *metrics* (exact definitions in
//! [`metrics::DEFINITIONS`], written into every run's METHODOLOGY.md), and the *reports*
//! (`results.jsonl`, `summary.json`, `summary.md`, `METHODOLOGY.md`, comparison tables).
//!
//! Boundary: it uses only the public API of the `cairn` crate (`Memory`, `MemoryConfig`,
//! `RecallOptions`, `Recall`, `Hit`, the `cairn::formats` loaders). It must never reach
//! into engine internals (ranking, stores, embedders): what the bench measures is what a
//! user gets.
//!
//! The CLI embeds [`BenchCommand`] as `cairn bench <subcommand>` and calls [`run`]:
//! ```no_run
//! use clap::Parser;
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(subcommand)]
//!     bench: cairn_bench::BenchCommand,
//! }
//! let cli = Cli::parse_from(["cairn", "longmemeval", "--data", "lme.json", "--limit", "5"]);
//! cairn_bench::run(cli.bench)?;
//! # Ok::<(), anyhow::Error>(())
//! ```
//!
//! A run writes `<out>/<run-label>/`: `results.jsonl` (one line per question per config
//! row, appended and flushed per question), `run.json`, `summary.json`, `summary.md` and
//! `METHODOLOGY.md`. Ctrl-C stops after the current question; `--resume` continues.

pub mod download;
pub mod env;
pub mod evermembench;
mod friendsqa;
pub mod lme_v2;
pub mod lme_v2_inspect;
mod locomo;
mod longmemeval;
pub mod metrics;
mod protocol;
pub mod qa;
pub mod record;
mod report;
pub mod scale;
pub mod summary;
pub mod trajectories_scale;
pub mod trajectories_scale_inspect;

pub use evermembench::EverMemArgs;
pub use friendsqa::question_word as friendsqa_question_word;
pub use lme_v2::LmeV2Args;
pub use locomo::question_id as locomo_question_id;
pub use protocol::{request_stop, space_name, ConfigRow, RunMeta};
pub use scale::ScaleBenchArgs;
pub use summary::Summary;
pub use trajectories_scale::ScaleArgs;

use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

/// `cairn bench <subcommand>`.
#[derive(Debug, Clone, Subcommand)]
pub enum BenchCommand {
    /// LongMemEval: one fresh space per question, its haystack ingested, then the
    /// question recalled; session- and turn-level retrieval metrics.
    Longmemeval(RunArgs),
    /// LoCoMo: one space per conversation, every question recalled; turn-level
    /// (dia_id) and session-level metrics per category.
    Locomo(LocomoArgs),
    /// FriendsQA: every scene streamed as group chat (a day per episode) into one space,
    /// then every question recalled against the whole history; utterance- and
    /// scene-level metrics per question word.
    Friendsqa(RunArgs),
    /// EverMemBench (multi-party group chats): the whole dialogue ingested day by day into
    /// one space, every question recalled; multiple choice answered by an LLM-free option
    /// scorer, open-ended questions given a retrieval-only diagnostic; accuracy per category.
    Evermembench(EverMemArgs),
    /// LongMemEval-V2 (web-agent trajectories): per question, a fresh space gets its
    /// haystack's trajectories inserted in order, then the question is recalled; scored
    /// without a reader (answer phrases in context, option scorer, abstention diagnostic).
    #[command(name = "lme-v2")]
    LmeV2(LmeV2Args),
    /// Cost of trajectory memory: N generated trajectories into one space (insert time,
    /// vectors, disk), then query latency.
    TrajectoriesScale(ScaleArgs),
    /// Recall at scale: one space filled with generated chat history to 10k, 100k and 1M
    /// units on the embedded store and/or PostgreSQL; ingest, footprint, latency and
    /// recall of planted needles.
    Scale(ScaleBenchArgs),
    /// Print a markdown table comparing finished runs (folders holding summary.json).
    Report {
        #[arg(required = true, value_name = "RUN_DIR")]
        runs: Vec<PathBuf>,
    },
    /// Where to get the official benchmark files and where to put them; verifies files
    /// already in place (no network access is needed or used).
    Download {
        #[arg(value_enum)]
        dataset: Dataset,
        /// Data folder [default: $CAIRN_DATA_DIR, else ../shared/data]. (Not `--dir`:
        /// that names the memory store in the `cairn` command.)
        #[arg(long = "data-dir", value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
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
    /// Name of the run folder [default: <dataset>-<config>-<UTC timestamp>].
    #[arg(long, value_name = "L")]
    pub run_label: Option<String>,
    /// Folder of run folders.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub out: PathBuf,
    /// Continue a run: questions already in its results.jsonl are skipped (without
    /// --run-label: the newest run of this dataset and config).
    #[arg(long)]
    pub resume: bool,
    /// Embedding cache file [default: $CAIRN_HOME/embedding-cache.sqlite3, CAIRN_HOME
    /// defaulting to ${XDG_CACHE_HOME:-$HOME/.cache}/cairn].
    #[arg(long, value_name = "FILE")]
    pub cache: Option<PathBuf>,
    /// Keep the run's data directory (and every space) instead of deleting it.
    #[arg(long)]
    pub keep_data: bool,
    /// Engine settings (a `cairn.toml`: `[engine.rank]`, `[embed]`) for experiments; the
    /// settings in force are written to METHODOLOGY.md. Default: the stock settings.
    #[arg(long, value_name = "FILE")]
    pub memory_config: Option<PathBuf>,
    /// What `as_of` recall runs with (LoCoMo: `question` and `question-or-later` both
    /// mean the conversation's last session date).
    #[arg(long, value_enum, default_value_t = AsOfPolicy::QuestionOrLater)]
    pub as_of: AsOfPolicy,
    /// QA rows: reader and judge models.
    #[command(flatten)]
    pub llm: qa::LlmArgs,
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
}

/// Runs one bench subcommand.
pub fn run(cmd: BenchCommand) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Longmemeval(args) => longmemeval::run(&args),
        BenchCommand::Locomo(args) => locomo::run(&args),
        BenchCommand::Friendsqa(args) => friendsqa::run(&args),
        BenchCommand::Evermembench(args) => evermembench::run(&args),
        BenchCommand::LmeV2(args) => lme_v2::run(&args),
        BenchCommand::TrajectoriesScale(args) => trajectories_scale::run(&args),
        BenchCommand::Scale(args) => scale::run(&args),
        BenchCommand::Report { runs } => {
            print!("{}", summary::compare(&runs)?);
            Ok(())
        }
        BenchCommand::Download { dataset, data_dir } => {
            download::run(dataset, &data_dir.unwrap_or_else(env::default_data_dir))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        bench: BenchCommand,
    }

    #[test]
    fn parses_the_documented_command_lines() {
        let c = Cli::try_parse_from([
            "cairn",
            "longmemeval",
            "--data",
            "f.json",
            "--config",
            "bench",
            "--limit",
            "3",
            "--questions",
            "a,b",
            "--run-label",
            "x",
            "--resume",
            "--cache",
            "c.sqlite3",
        ])
        .unwrap();
        let BenchCommand::Longmemeval(a) = c.bench else {
            panic!()
        };
        assert_eq!(a.config, ConfigChoice::Bench);
        assert_eq!(a.questions, ["a", "b"]);
        assert_eq!(a.out, PathBuf::from("bench-out"));
        assert!(a.resume);
        assert_eq!(a.as_of, AsOfPolicy::QuestionOrLater);
        let c = Cli::try_parse_from([
            "cairn",
            "locomo",
            "--data",
            "l.json",
            "--max-questions-per-conv",
            "5",
        ])
        .unwrap();
        let BenchCommand::Locomo(a) = c.bench else {
            panic!()
        };
        assert_eq!(a.common.config, ConfigChoice::Both);
        assert_eq!(a.max_questions_per_conv, Some(5));
        let c = Cli::try_parse_from([
            "cairn",
            "evermembench",
            "--dialogue",
            "dialogue_en.json",
            "--qa",
            "qa_004.json",
            "--memory-config",
            "cairn.toml",
        ])
        .unwrap();
        let BenchCommand::Evermembench(a) = c.bench else {
            panic!()
        };
        assert_eq!(a.qa, PathBuf::from("qa_004.json"));
        assert_eq!(a.config, ConfigChoice::Both);
        assert_eq!(a.memory_config, Some(PathBuf::from("cairn.toml")));
        assert!(Cli::try_parse_from(["cairn", "evermembench", "--qa", "q.json"]).is_err());
        assert!(Cli::try_parse_from(["cairn", "report"]).is_err());
        let c = Cli::try_parse_from(["cairn", "download", "locomo"]).unwrap();
        assert!(matches!(
            c.bench,
            BenchCommand::Download {
                dataset: Dataset::Locomo,
                data_dir: None
            }
        ));
    }

    #[test]
    fn space_names_are_valid_and_distinct() {
        assert_eq!(space_name("lme", "e47becba"), "lme-e47becba");
        assert_eq!(
            space_name("lme", "gpt4_2655b836_abs"),
            "lme-gpt4_2655b836_abs"
        );
        let a = space_name("lme", "a/b");
        let b = space_name("lme", "a_b");
        assert_ne!(a, b);
        assert!(a.starts_with("lme-a_b-"));
        let long = space_name("lme", &"x".repeat(300));
        assert!(long.len() <= 128);
        for n in [a, b, long] {
            assert!(cairn::SpaceId::new(n.clone()).is_ok(), "{n}");
        }
    }
}
