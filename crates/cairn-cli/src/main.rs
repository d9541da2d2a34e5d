//! The `cairn` command: a thin layer of argument parsing, configuration and output over
//! the `cairn` library and the `cairn-bench` harness. It holds no logic of its own.

mod config;
mod ingest;
mod reliability;
mod server;
mod trajectories;

use anyhow::{bail, Context, Result};
use cairn::{Format, Memory, RecallOptions, UnitKind};
use clap::{Parser, Subcommand};
use std::io::Write;
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
    Recall {
        #[arg(long)]
        space: String,
        query: String,
        #[arg(long, default_value_t = 3)]
        top_k: usize,
        #[arg(long, default_value_t = 600)]
        token_budget: usize,
        #[arg(long, default_value = "synthesized")]
        format: String,
        /// Recall as of this date (units after it are invisible).
        #[arg(long)]
        as_of: Option<String>,
        /// Only units from this date on (with --as-of, a time range).
        #[arg(long)]
        since: Option<String>,
        #[arg(long = "session")]
        sessions: Vec<String>,
        #[arg(long = "speaker")]
        speakers: Vec<String>,
        #[arg(long = "group")]
        groups: Vec<String>,
        /// Only units of this kind (turn, round, episode, fact, slice, event, note, ...);
        /// repeat for several (the pools of a trajectory query).
        #[arg(long = "kind")]
        kinds: Vec<String>,
        /// At most N hits of a kind, as KIND=N (e.g. --quota note=2); repeatable.
        #[arg(long = "quota", value_name = "KIND=N")]
        quotas: Vec<String>,
    },
    /// Trajectories: the manifest, the inspection verbs (summary, state, span, match,
    /// search), context from spans, recall + inspection, the agent controller, and
    /// export-workspace.
    Trajectories(trajectories::TrajectoriesArgs),
    /// The version history of a fact subject ("budget for Atlas").
    History {
        #[arg(long)]
        space: String,
        subject: String,
        /// The history as known at this date.
        #[arg(long)]
        as_of: Option<String>,
    },
    /// What a space shows about a speaker (style, roles, skills, topics), with evidence.
    Profile {
        #[arg(long)]
        space: String,
        /// A speaker; without it, lists the space's speakers.
        speaker: Option<String>,
    },
    /// Forget a session, one message, or a whole space.
    Forget {
        #[arg(long)]
        space: String,
        #[arg(long)]
        session: Option<String>,
        #[arg(long, requires = "session")]
        message: Option<String>,
        /// Forget one trajectory.
        #[arg(long, conflicts_with = "session")]
        trajectory: Option<String>,
        /// Forget the whole space.
        #[arg(long, conflicts_with_all = ["session", "trajectory"])]
        all: bool,
    },
    /// Export a space as JSONL (exactly what was ingested).
    Export {
        #[arg(long)]
        space: String,
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Import an export.
    Import { file: PathBuf },
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
    /// Measure recall throughput and latency of a running server.
    Load(server::LoadArgs),
    /// Reliability tests: crash (SIGKILL), soak, bad input, backup, fuzz (docs/reliability.md).
    #[command(subcommand)]
    Reliability(reliability::ReliabilityCommand),
    /// Benchmarks (LongMemEval, LoCoMo, FriendsQA, EverMemBench) and their reports.
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
        eprintln!("error: {e:#}");
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

fn migrate(cli: &Cli) -> Result<()> {
    let Some(url) = load_config(cli)?.store else {
        bail!("cairn migrate needs --store postgres://... (or CAIRN_STORE); the embedded store upgrades itself when opened");
    };
    let applied = Memory::migrate_postgres(&url).context("migrating the PostgreSQL store")?;
    if cli.json {
        print_json(&serde_json::json!({ "applied": applied }))?;
    } else if applied.is_empty() {
        println!("schema up to date");
    } else {
        println!(
            "applied migration(s) {}",
            applied
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}

fn parse_quotas(raw: &[String]) -> Result<Option<std::collections::BTreeMap<UnitKind, usize>>> {
    if raw.is_empty() {
        return Ok(None);
    }
    raw.iter()
        .map(|q| {
            let (k, n) = q
                .split_once('=')
                .with_context(|| format!("--quota {q:?}: expected KIND=N"))?;
            let kind =
                UnitKind::parse(k).with_context(|| format!("--quota: unknown kind {k:?}"))?;
            let n: usize = n
                .parse()
                .with_context(|| format!("--quota {q:?}: {n:?} is not a count"))?;
            Ok((kind, n))
        })
        .collect::<Result<_>>()
        .map(Some)
}

fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

fn run(cli: Cli) -> Result<()> {
    match &cli.command {
        Command::Bench(cmd) => cairn_bench::run(cmd.clone()),
        Command::Reliability(cmd) => reliability::run(cmd),
        Command::Migrate => migrate(&cli),
        Command::Serve(args) => server::serve(open(&cli)?, args),
        Command::Mcp(args) => server::mcp(open(&cli)?, args),
        Command::Keys(cmd) => {
            let store = load_config(&cli)?.store;
            server::keys(&cli.dir, store.as_deref(), cmd, cli.json)
        }
        Command::Load(args) => server::load(args, cli.json),
        Command::Ingest(args) => ingest::run(&open(&cli)?, args, cli.json),
        Command::Recall {
            space,
            query,
            top_k,
            token_budget,
            format,
            as_of,
            since,
            sessions,
            speakers,
            groups,
            kinds,
            quotas,
        } => {
            let options = RecallOptions {
                top_k: *top_k,
                token_budget: *token_budget,
                format: format.parse::<Format>()?,
                as_of: as_of.as_deref().map(cairn::parse_timestamp).transpose()?,
                since: since.as_deref().map(cairn::parse_timestamp).transpose()?,
                sessions: (!sessions.is_empty()).then(|| sessions.clone()),
                speakers: (!speakers.is_empty()).then(|| speakers.clone()),
                groups: (!groups.is_empty()).then(|| groups.clone()),
                kinds: if kinds.is_empty() {
                    None
                } else {
                    Some(
                        kinds
                            .iter()
                            .map(|k| {
                                UnitKind::parse(k).with_context(|| format!("unknown kind {k:?}"))
                            })
                            .collect::<Result<_>>()?,
                    )
                },
                quotas: parse_quotas(quotas)?,
            };
            let recall = open(&cli)?.recall(space, query, &options)?;
            if cli.json {
                return print_json(&recall);
            }
            for (i, h) in recall.hits.iter().enumerate() {
                let source = match (&h.session_id, &h.trajectory_id, h.states) {
                    (Some(s), _, _) => format!("session={s} turns={}", h.turn_ids.join(",")),
                    (None, Some(t), Some([a, b])) => format!("trajectory={t} states={a}..{b}"),
                    _ => "-".to_string(),
                };
                println!(
                    "{:>2}. {:.4}  {}  {source} {}{}",
                    i + 1,
                    h.score,
                    h.unit_id,
                    h.occurred_at
                        .map(|t| t.format("%Y-%m-%d").to_string())
                        .unwrap_or_default(),
                    if h.superseded_by.is_some() {
                        " (superseded)"
                    } else {
                        ""
                    }
                );
            }
            println!(
                "\n--- context ({} tokens, {} hits cut, {:.1} ms) ---",
                recall.context_tokens, recall.hits_cut, recall.timings.total_ms
            );
            println!("{}", recall.context);
            Ok(())
        }
        Command::Trajectories(args) => trajectories::run(&cli, args),
        Command::History {
            space,
            subject,
            as_of,
        } => {
            let as_of = as_of.as_deref().map(cairn::parse_timestamp).transpose()?;
            let Some(h) = open(&cli)?.history(space, subject, as_of)? else {
                bail!("no fact about {subject:?} in space {space:?}");
            };
            if cli.json {
                return print_json(&h);
            }
            println!("{}", h.subject);
            for v in &h.versions {
                let day = |t: Option<cairn::Timestamp>| {
                    t.map_or("-".to_string(), |t| t.format("%Y-%m-%d %H:%M").to_string())
                };
                println!(
                    "  {:<30} from {} to {}  ({}, {} {})",
                    v.value,
                    day(v.valid_from),
                    if v.valid_to.is_some() {
                        day(v.valid_to)
                    } else {
                        "now".into()
                    },
                    v.speaker.as_deref().unwrap_or("-"),
                    v.session_id.as_deref().unwrap_or("-"),
                    v.message_id.as_deref().unwrap_or("-"),
                );
            }
            Ok(())
        }
        Command::Profile { space, speaker } => {
            let m = open(&cli)?;
            let Some(speaker) = speaker else {
                let speakers = m.speakers(space)?;
                if cli.json {
                    return print_json(&speakers);
                }
                for s in speakers {
                    println!("{s}");
                }
                return Ok(());
            };
            let Some(p) = m.profile(space, speaker)? else {
                bail!("no speaker {speaker:?} in space {space:?}");
            };
            if cli.json {
                return print_json(&p);
            }
            println!("{}", p.summary);
            for e in p.roles.iter().chain(&p.skills) {
                println!(
                    "  {:<30} evidence: {} {}",
                    e.what, e.session_id, e.message_id
                );
            }
            Ok(())
        }
        Command::Forget {
            space,
            session,
            message,
            trajectory,
            all,
        } => {
            let m = open(&cli)?;
            let removed = match (session, message, trajectory, all) {
                (_, _, _, true) => usize::from(m.forget_space(space)?),
                (Some(s), Some(msg), _, _) => m.forget_message(space, s, msg)?,
                (Some(s), None, _, _) => m.forget_session(space, s)?,
                (None, _, Some(t), _) => m.forget_trajectory(space, t)?,
                (None, _, None, false) => {
                    bail!("say what to forget: --session ID [--message ID], --trajectory ID, or --all")
                }
            };
            if cli.json {
                return print_json(&serde_json::json!({ "removed": removed }));
            }
            println!("forgotten ({removed} removed)");
            Ok(())
        }
        Command::Export { space, output } => {
            let m = open(&cli)?;
            let n = match output {
                Some(p) => {
                    let f = std::fs::File::create(p)
                        .with_context(|| format!("creating {}", p.display()))?;
                    let mut w = std::io::BufWriter::new(f);
                    let n = m.export(space, &mut w)?;
                    w.flush()?;
                    n
                }
                None => m.export(space, std::io::stdout().lock())?,
            };
            eprintln!("exported {n} sessions");
            Ok(())
        }
        Command::Import { file } => {
            let f =
                std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?;
            let report = open(&cli)?.import(std::io::BufReader::new(f))?;
            print_json(&report)
        }
        Command::Stats { space } => {
            let m = open(&cli)?;
            let spaces = match space {
                Some(s) => vec![s.clone()],
                None => m.spaces()?.into_iter().map(|s| s.to_string()).collect(),
            };
            let stats = spaces
                .iter()
                .map(|s| m.stats(s))
                .collect::<Result<Vec<_>, _>>()?;
            if cli.json {
                return print_json(&stats);
            }
            for s in stats {
                let kinds: Vec<String> = s
                    .units_by_kind
                    .iter()
                    .map(|(k, n)| format!("{k}={n}"))
                    .collect();
                println!(
                    "{}: {} sessions, {} messages, {} units ({})",
                    s.space,
                    s.sessions,
                    s.messages,
                    s.units,
                    kinds.join(" ")
                );
            }
            Ok(())
        }
        Command::Spaces => {
            for s in open(&cli)?.spaces()? {
                println!("{s}");
            }
            Ok(())
        }
        Command::Check { rebuild } => {
            let report = open(&cli)?.check(*rebuild)?;
            print_json(&report)?;
            if !report.consistent {
                bail!("the indexes do not agree with the record; `cairn check --rebuild` rebuilds them from it");
            }
            Ok(())
        }
    }
}
