//! The `cairn` command: a thin layer of argument parsing, configuration and output over
//! the `cairn` library and the `cairn-bench` harness. It holds no logic of its own.

/// `println!` for what a command prints: when stdout is closed (`cairn ... | head`) the
/// process ends quietly, as Unix tools do, instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::print::out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` of the same kind, without the newline.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::print::out(format_args!($($arg)*))
    };
}

mod allocator;
mod commands;
mod config;
mod ingest;
#[cfg(feature = "bench")]
mod load;
mod print;
#[cfg(feature = "reliability")]
mod reliability;
mod server;
mod trajectories;
mod workspace_helper;

use anyhow::{Context, Result};
use cairn::Memory;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "cairn", version, about = "Long-term memory for AI agents")]
struct Cli {
    /// Data directory of the memory store.
    #[arg(long, global = true, env = "CAIRN_DIR", default_value = "cairn-data")]
    dir: PathBuf,
    /// Configuration file (TOML). Defaults to `cairn.toml` in the data directory, if any.
    #[arg(long = "config-file", global = true, env = "CAIRN_CONFIG")]
    config_file: Option<PathBuf>,
    /// Local directory of the embedding model (overrides the configuration).
    #[arg(long, global = true, env = "CAIRN_MODEL_DIR")]
    model_dir: Option<PathBuf>,
    /// Embedding cache file (overrides the configuration).
    #[arg(long, global = true)]
    embedding_cache: Option<PathBuf>,
    /// Store the memory in this PostgreSQL database (`postgres://user:pass@host/db`, with
    /// pgvector; run `cairn migrate` first) instead of the data directory, which then
    /// keeps only the server's API keys. Also `store = "..."` in the configuration.
    #[arg(long, global = true, env = "CAIRN_STORE", hide_env_values = true)]
    store: Option<String>,
    /// Print machine-readable JSON (errors too: `{"error": ..., "field": ...}` on stderr).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Ingest sessions: a JSONL of sessions, a LongMemEval file or a LoCoMo file.
    Ingest(ingest::IngestArgs),
    /// Recall evidence for a query.
    Recall(commands::RecallArgs),
    /// Trajectories: the manifest, the inspection verbs (summary, state, span, match,
    /// search), context from spans, recall + inspection, the agent controller, and
    /// export-workspace.
    Trajectories(trajectories::TrajectoriesArgs),
    /// The version history of a fact subject ("budget for Atlas").
    History(commands::HistoryArgs),
    /// What a space shows about a speaker (style, roles, skills, topics, what they said of themself), with evidence.
    Profile(commands::ProfileArgs),
    /// The entity graph: the people, places, organizations and things a space names
    /// (`--search` to filter), or one of them with its mentions, relations and timeline.
    Entities(commands::EntitiesArgs),
    /// Forget a session, one message (or an exchange), a memory, a trajectory, an end user
    /// (a partition), or a whole space.
    Forget(commands::ForgetArgs),
    /// Export a space as JSONL (exactly what was ingested).
    Export(commands::ExportArgs),
    /// Import an export (also into another space, with --space).
    Import(commands::ImportArgs),
    /// Counts per space: sessions, messages, units of each kind.
    Stats {
        /// Only this space (default: every space).
        #[arg(long)]
        space: Option<String>,
    },
    /// List the spaces of the data directory (or store).
    Spaces,
    /// Verify derived state against the verbatim record; --rebuild recomputes it all.
    Check {
        #[arg(long)]
        rebuild: bool,
    },
    /// Create or upgrade the schema of a PostgreSQL store (--store); safe to repeat.
    Migrate,
    /// Print the configuration in effect (file < environment < flags) as TOML, or JSON
    /// with --json; a password in the store URL is masked. Checks the file, opens nothing.
    Config,
    /// Serve the HTTP API (/v1) and the MCP endpoint (/mcp).
    Serve(server::ServeArgs),
    /// Serve the MCP tools on stdin/stdout (for a local agent).
    Mcp(server::McpArgs),
    /// Manage API keys of the server (stored hashed in the data directory, or in the
    /// PostgreSQL store with --store).
    #[command(subcommand)]
    Keys(server::KeysCommand),
    /// Measure throughput and latency of a running server: recall, appends, or a mix.
    #[cfg(feature = "bench")]
    Load(load::LoadArgs),
    /// Reliability tests: crash (SIGKILL), soak, bad input, backup, fuzz (docs/reliability.md).
    #[cfg(feature = "reliability")]
    #[command(subcommand)]
    Reliability(reliability::ReliabilityCommand),
    /// Benchmarks (LongMemEval, LoCoMo, FriendsQA, EverMemBench) and their reports.
    #[cfg(feature = "bench")]
    #[command(subcommand)]
    Bench(cairn_bench::BenchCommand),
}

fn main() {
    allocator::keep_freed_memory();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => usage_error(e),
    };
    let json = cli.json;
    if let Err(e) = run(cli) {
        print::fail(&e, json);
    }
}

/// A command line clap refuses: its own message, or under `--json` the same as JSON.
fn usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
    let json = std::env::args().any(|a| a == "--json");
    if json && !matches!(e.kind(), DisplayHelp | DisplayVersion) {
        let message = e.render().to_string();
        let first = message.lines().next().unwrap_or_default();
        let first = first.strip_prefix("error: ").unwrap_or(first).to_string();
        print::fail(&anyhow::anyhow!(first), true);
    }
    e.exit()
}

fn load_config(cli: &Cli) -> Result<cairn::MemoryConfig> {
    let mut cfg = config::load(
        cli.config_file.as_deref(),
        &cli.dir,
        cli.model_dir.clone(),
        cli.embedding_cache.clone(),
    )?;
    if let Some(url) = &cli.store {
        cfg.store = Some(url.clone());
    }
    Ok(cfg)
}

/// Opens the memory for a command that writes: a new data directory is created.
fn open(cli: &Cli) -> Result<Memory> {
    let cfg = load_config(cli)?;
    let what = match &cfg.store {
        // The URL may hold a password: never print it.
        Some(_) => "opening the PostgreSQL store (--store)".to_string(),
        None => format!("opening {}", cli.dir.display()),
    };
    Memory::open_with(&cli.dir, cfg).context(what)
}

/// Opens the memory for a command that only reads: a data directory that does not exist
/// (a typo in `--dir`, or the wrong working directory) is an error, never created.
fn open_existing(cli: &Cli) -> Result<Memory> {
    if load_config(cli)?.store.is_none() {
        existing_data_dir(&cli.dir)?;
    }
    open(cli)
}

/// `dir` when it is a data directory (it holds a store or keys), else an error naming it.
fn existing_data_dir(dir: &std::path::Path) -> Result<()> {
    let held = ["records.sqlite3", "keys.sqlite3"]
        .iter()
        .any(|f| dir.join(f).exists());
    if !held {
        let shown = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        anyhow::bail!(
            "no Cairn data directory at {} (pass --dir, or set CAIRN_DIR, to the directory `cairn ingest` or `cairn serve` created)",
            shown.display()
        );
    }
    Ok(())
}

fn run(cli: Cli) -> Result<()> {
    let json = cli.json;
    match &cli.command {
        #[cfg(feature = "bench")]
        Command::Bench(cmd) => {
            let cmd = cmd.clone().with_config_file(cli.config_file.as_deref())?;
            cairn_bench::run(cmd, &mut print::Stdout)
        }
        #[cfg(feature = "reliability")]
        Command::Reliability(cmd) => reliability::run(cmd),
        Command::Migrate => commands::migrate(load_config(&cli)?.store, json),
        Command::Config => commands::config(load_config(&cli)?, json),
        Command::Serve(args) => {
            let file = config::server_file(cli.config_file.as_deref(), &cli.dir)?;
            server::serve(open(&cli)?, args, file)
        }
        Command::Mcp(args) => server::mcp(open(&cli)?, args),
        Command::Keys(cmd) => {
            let store = load_config(&cli)?.store;
            if store.is_none() && !cli.dir.is_dir() {
                // A key is for the server of one data directory: one made in a directory
                // that does not exist (a typo, the wrong working directory) would be
                // refused by that server. An existing one may be a server's before its
                // first start.
                existing_data_dir(&cli.dir)?;
            }
            server::keys(&cli.dir, store.as_deref(), cmd, json)
        }
        #[cfg(feature = "bench")]
        Command::Load(args) => load::run(args, json),
        Command::Ingest(args) => ingest::run(&open(&cli)?, args, json),
        Command::Recall(a) => commands::recall(&open_existing(&cli)?, a, json),
        Command::History(a) => commands::history(&open_existing(&cli)?, a, json),
        Command::Profile(a) => commands::profile(&open_existing(&cli)?, a, json),
        Command::Entities(a) => commands::entities(&open_existing(&cli)?, a, json),
        Command::Forget(a) => commands::forget(&open_existing(&cli)?, a, json),
        Command::Export(a) => commands::export(&open_existing(&cli)?, a, json),
        Command::Import(a) => commands::import(&open(&cli)?, a),
        Command::Stats { space } => commands::stats(&open_existing(&cli)?, space.as_deref(), json),
        Command::Spaces => commands::spaces(&open_existing(&cli)?, json),
        Command::Check { rebuild } => commands::check(&open_existing(&cli)?, *rebuild),
        Command::Trajectories(args) => trajectories::run(&cli, args),
    }
}
