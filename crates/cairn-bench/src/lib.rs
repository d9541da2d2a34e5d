//! The benchmark harness of Cairn (`cairn bench ...`), as a small framework: each
//! benchmark is one short file (`benches/`) composing the same layers.
//!
//! | layer | module | holds |
//! |---|---|---|
//! | datasets | [`datasets`] | questions and evidence from each dataset file (read by `cairn::formats`), selection by the command line; the generated data of the scale benches |
//! | protocols | [`protocol`] | how a memory is fed and questioned: the retrieval protocol of LongMemEval, LoCoMo and FriendsQA (resumable, one record per question and config row) |
//! | run machinery | [`run`] | run folder and label, [`run::RunMeta`], opening the memory, config rows, Ctrl-C, progress |
//! | peers | [`peers`] | the turn-level peer recipes (BM25, MiniLM, their RRF) a retrieval run answers beside the memory (`--peers`) |
//! | scoring | [`scoring`] | pure functions: retrieval metrics, the LLM-free option scorer, phrase matching, QA prompts and verdicts |
//! | QA rows | [`qa`] | the reader and judge models (`--reader`, `--judge`) over `cairn-llm` |
//! | records | [`records`] | one line of `results.jsonl` per bench shape, the append-only results file |
//! | reports | [`report`] | `summary.json` / `summary.md` per bench shape, METHODOLOGY.md from the templates in `methodology/`, `cairn bench report` |
//!
//! Imports only go down the table's order of dependence: benches use everything;
//! reports use records, run and scoring; the protocol uses the run machinery, peers,
//! records, scoring and reports; datasets use the protocol's question type; scoring and
//! the run machinery use neither reports nor protocols (a config row names its peer). Prose lives in `methodology/*.md` and
//! `prompts/*.txt`, not in code. Latency percentiles are `cairn_load::stats` (nearest
//! rank), the definition every harness reports.
//!
//! A new benchmark: a dataset adapter in `datasets/` (or a loader in `cairn-formats`
//! first), a file in `benches/` with its flags and `run`, a record and report module when
//! it does not fit the retrieval shape, a `methodology/<name>.md` template, and a variant
//! of [`BenchCommand`].
//!
//! Boundary: the memory under test is reached only through the public API of the `cairn`
//! crate (`Memory`, `MemoryConfig`, `RecallOptions`, `Recall`, `Hit`, the
//! `cairn::formats` loaders), never engine internals (ranking, stores, embedders): what
//! the bench measures is what a user gets. Beside it the crate links `cairn-llm` (the
//! reader and judge of QA rows, optional at run time) and `cairn-load` (its latency
//! statistics). Two exceptions, each for one bench and on purpose: `cairn bench ann`
//! measures `cairn-store`'s HNSW index alone (the same code the embedded store runs, to
//! compare it with other vector stores on the same vectors), and `cairn bench scale
//! --embedder hashed` hands the memory a cheap seeded embedder (`run::hashed`, over
//! `cairn-embed`'s trait) to fill a space with a million distinct vectors.
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
//! cairn_bench::run(cli.bench, &mut std::io::stdout())?;
//! # Ok::<(), anyhow::Error>(())
//! ```
//!
//! A run writes `<out>/<run-label>/`: `results.jsonl` (one line per question per config
//! row, appended and flushed per question), `run.json`, `summary.json`, `summary.md` and
//! `METHODOLOGY.md`. Ctrl-C stops after the current question; `--resume` continues.

pub mod args;
pub mod benches;
pub mod datasets;
pub mod download;
pub mod env;
pub mod peers;
pub mod protocol;
pub mod qa;
pub mod records;
pub mod report;
pub mod run;
pub mod scoring;
pub mod template;

pub use args::{AsOfPolicy, ConfigChoice, Dataset, LocomoArgs, RunArgs, RunFolderArgs};
pub use datasets::friendsqa::question_word as friendsqa_question_word;
pub use datasets::locomo::question_id as locomo_question_id;
pub use report::retrieval::Summary;
pub use run::{request_stop, space_name, ConfigRow, RunMeta};

use clap::Subcommand;
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
    Evermembench(benches::evermembench::EverMemArgs),
    /// LongMemEval-V2 (web-agent trajectories): per question, a fresh space gets its
    /// haystack's trajectories inserted in order, then the question is recalled; scored
    /// without a reader (answer phrases in context, option scorer, abstention diagnostic).
    #[command(name = "lme-v2")]
    LmeV2(benches::lme_v2::LmeV2Args),
    /// The personal-memory suite: user/assistant conversations whose personal facts
    /// (home, work, family, likes, habits, plans, ...) are scored per category, and
    /// whose questions must get the current value first; `--llm` adds the LLM
    /// enrichment side by side.
    Personal(benches::personal::PersonalArgs),
    /// Cost of trajectory memory: N generated trajectories into one space (insert time,
    /// vectors, disk), then query latency.
    TrajectoriesScale(benches::trajectories_scale::ScaleArgs),
    /// Recall at scale: one space filled with generated chat history to 10k, 100k and 1M
    /// units on the embedded store and/or PostgreSQL; ingest, footprint, latency and
    /// recall of planted needles.
    Scale(benches::scale::ScaleBenchArgs),
    /// The embedded store's HNSW index alone on vectors and queries from files (the same
    /// files `scripts/bench-side-by-side.py` gives ChromaDB and LanceDB): build time,
    /// single-threaded query latency, recall@k against the exact answers.
    Ann(benches::ann::AnnBenchArgs),
    /// Draw the latency plot of `bench scale` over the points of several runs (for
    /// instance the 10k-1M run and a distinct-vector point) into one SVG.
    ScalePlot {
        #[arg(required = true, value_name = "RUN_DIR")]
        runs: Vec<PathBuf>,
        /// The SVG file to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Write the headline tables of a benchmarks page (docs/benchmarks/README.md) from
    /// the runs its `<!-- headline: RUN ... -->` marker names; --check only compares.
    Headline {
        /// The page [default: docs/benchmarks/README.md].
        #[arg(default_value = "docs/benchmarks/README.md", value_name = "PAGE")]
        page: PathBuf,
        /// Fail when the page's tables are not what the runs render; write nothing.
        #[arg(long)]
        check: bool,
    },
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

impl BenchCommand {
    /// The run flags of a bench that opens a memory (`None`: `ann`, the plots, reports
    /// and downloads, which run no engine).
    fn run_folder(&mut self) -> Option<&mut RunFolderArgs> {
        match self {
            BenchCommand::Longmemeval(a) | BenchCommand::Friendsqa(a) => Some(&mut a.run),
            BenchCommand::Locomo(a) => Some(&mut a.common.run),
            BenchCommand::Evermembench(a) => Some(&mut a.run),
            BenchCommand::LmeV2(a) => Some(&mut a.run),
            BenchCommand::Personal(a) => Some(&mut a.run),
            BenchCommand::TrajectoriesScale(a) => Some(&mut a.run),
            BenchCommand::Scale(a) => Some(&mut a.run),
            _ => None,
        }
    }

    /// Takes the `cairn` command's configuration file (`--config-file`, `CAIRN_CONFIG`)
    /// as the bench's engine settings, as `--memory-config` names them: a file given
    /// there is never silently left unread. Two different files are an error.
    pub fn with_config_file(mut self, file: Option<&std::path::Path>) -> anyhow::Result<Self> {
        let (Some(file), Some(run)) = (file, self.run_folder()) else {
            return Ok(self);
        };
        match &run.memory_config {
            Some(own) if own != file => anyhow::bail!(
                "--config-file {} and --memory-config {} name two engine settings files; give one",
                file.display(),
                own.display()
            ),
            _ => run.memory_config = Some(file.to_path_buf()),
        }
        Ok(self)
    }
}

/// Runs one bench subcommand. What a command prints for its reader (`ann`'s result,
/// `download`'s sources, `report`'s table) goes to `stdout`, so the caller decides what a
/// closed output means; progress goes to stderr.
pub fn run(cmd: BenchCommand, stdout: &mut dyn std::io::Write) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Longmemeval(args) => benches::longmemeval::run(&args),
        BenchCommand::Locomo(args) => benches::locomo::run(&args),
        BenchCommand::Friendsqa(args) => benches::friendsqa::run(&args),
        BenchCommand::Evermembench(args) => benches::evermembench::run(&args),
        BenchCommand::LmeV2(args) => benches::lme_v2::run(&args),
        BenchCommand::Personal(args) => benches::personal::run(&args),
        BenchCommand::TrajectoriesScale(args) => benches::trajectories_scale::run(&args),
        BenchCommand::Scale(args) => benches::scale::run(&args),
        BenchCommand::Ann(args) => benches::ann::run(&args, stdout),
        BenchCommand::ScalePlot { runs, out } => benches::scale::plot(&runs, &out),
        BenchCommand::Headline { page, check } => {
            let current = report::headline::update(&page, check)?;
            match (current, check) {
                (true, _) => writeln!(stdout, "{}: headline current", page.display())?,
                (false, false) => writeln!(stdout, "{}: headline written", page.display())?,
                (false, true) => anyhow::bail!(
                    "{}: the headline tables are not what its runs render; run `cairn bench headline {}`",
                    page.display(),
                    page.display()
                ),
            }
            Ok(())
        }
        BenchCommand::Report { runs } => {
            write!(stdout, "{}", report::retrieval::compare(&runs)?)?;
            Ok(())
        }
        BenchCommand::Download { dataset, data_dir } => {
            let dir = data_dir.unwrap_or_else(env::default_data_dir);
            download::run(dataset, &dir, stdout)
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

    /// `cairn --config-file` reaches a bench's engine as `--memory-config` does.
    #[test]
    fn the_commands_config_file_is_the_benchs_engine_settings() {
        let parse = |extra: &[&str]| {
            let mut argv = vec!["cairn", "personal"];
            argv.extend_from_slice(extra);
            Cli::try_parse_from(argv).unwrap().bench
        };
        let settings = |c: BenchCommand| match c {
            BenchCommand::Personal(a) => a.run.memory_config,
            _ => unreachable!(),
        };
        let file = std::path::Path::new("a.toml");
        let taken = parse(&[]).with_config_file(Some(file)).unwrap();
        assert_eq!(settings(taken), Some(file.to_path_buf()));
        let same = parse(&["--memory-config", "a.toml"]);
        assert!(same.with_config_file(Some(file)).is_ok());
        let err = parse(&["--memory-config", "b.toml"])
            .with_config_file(Some(file))
            .unwrap_err();
        assert!(err.to_string().contains("b.toml"), "{err}");
        assert_eq!(settings(parse(&[]).with_config_file(None).unwrap()), None);
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
        assert_eq!(a.run.out, PathBuf::from("bench-out"));
        assert_eq!(a.run.cache, Some(PathBuf::from("c.sqlite3")));
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
        assert_eq!(a.run.memory_config, Some(PathBuf::from("cairn.toml")));
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
