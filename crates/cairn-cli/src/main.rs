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

// candle allocates and frees multi-megabyte tensors for every layer of every batch;
// glibc's allocator hands each back to the kernel, so embedding spent a third of its
// time in page faults. mimalloc keeps them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Print machine-readable JSON.
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
    /// What a space shows about a speaker (style, roles, skills, topics), with evidence.
    Profile(commands::ProfileArgs),
    /// The entity graph: the people, places, organizations and things a space names
    /// (`--search` to filter), or one of them with its mentions, relations and timeline.
    Entities(commands::EntitiesArgs),
    /// Forget a session, one message, a memory, a trajectory, or a whole space.
    Forget(commands::ForgetArgs),
    /// Export a space as JSONL (exactly what was ingested).
    Export(commands::ExportArgs),
    /// Import an export (also into another space, with --space).
    Import(commands::ImportArgs),
    /// Counts per space.
    Stats {
        #[arg(long)]
        space: Option<String>,
    },
    /// List spaces.
    Spaces,
    /// Verify derived state against the verbatim record; --rebuild recomputes it all.
    Check {
        #[arg(long)]
        rebuild: bool,
    },
    /// Create or upgrade the schema of a PostgreSQL store (--store); safe to repeat.
    Migrate,
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
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = run(Cli::parse()) {
        eprintln!("error: {}", print::error(&e));
        std::process::exit(1);
    }
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

fn open(cli: &Cli) -> Result<Memory> {
    let cfg = load_config(cli)?;
    let what = match &cfg.store {
        // The URL may hold a password: never print it.
        Some(_) => "opening the PostgreSQL store (--store)".to_string(),
        None => format!("opening {}", cli.dir.display()),
    };
    Memory::open_with(&cli.dir, cfg).context(what)
}

fn run(cli: Cli) -> Result<()> {
    let json = cli.json;
    match &cli.command {
        #[cfg(feature = "bench")]
        Command::Bench(cmd) => cairn_bench::run(cmd.clone(), &mut print::Stdout),
        #[cfg(feature = "reliability")]
        Command::Reliability(cmd) => reliability::run(cmd),
        Command::Migrate => commands::migrate(load_config(&cli)?.store, json),
        Command::Serve(args) => {
            let file = config::server_file(cli.config_file.as_deref(), &cli.dir)?;
            server::serve(open(&cli)?, args, file)
        }
        Command::Mcp(args) => server::mcp(open(&cli)?, args),
        Command::Keys(cmd) => {
            let store = load_config(&cli)?.store;
            server::keys(&cli.dir, store.as_deref(), cmd, json)
        }
        #[cfg(feature = "bench")]
        Command::Load(args) => load::run(args, json),
        Command::Ingest(args) => ingest::run(&open(&cli)?, args, json),
        Command::Recall(a) => commands::recall(&open(&cli)?, a, json),
        Command::History(a) => commands::history(&open(&cli)?, a, json),
        Command::Profile(a) => commands::profile(&open(&cli)?, a, json),
        Command::Entities(a) => commands::entities(&open(&cli)?, a, json),
        Command::Forget(a) => commands::forget(&open(&cli)?, a, json),
        Command::Export(a) => commands::export(&open(&cli)?, a),
        Command::Import(a) => commands::import(&open(&cli)?, a),
        Command::Stats { space } => commands::stats(&open(&cli)?, space.as_deref(), json),
        Command::Spaces => {
            for s in open(&cli)?.spaces()? {
                outln!("{s}");
            }
            Ok(())
        }
        Command::Check { rebuild } => commands::check(&open(&cli)?, *rebuild),
        Command::Trajectories(args) => trajectories::run(&cli, args),
    }
}
