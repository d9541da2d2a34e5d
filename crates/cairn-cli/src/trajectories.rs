//! `cairn trajectories`: the manifest and the inspection verbs, spans rendered into a
//! context, recall + inspection, the agent controller, and the workspace export. Text
//! output is what an agent reads (the same as the MCP tools); `--json` prints the
//! structures the HTTP API returns.
use crate::print::json as print_json;
use crate::{open_existing as open, Cli};
use anyhow::{bail, Context, Result};
use cairn::{
    AgentFallback, AgentLlm, AgentOptions, ContextRequest, ContextSpan, InspectRecallOptions,
    LlmConfig, ManifestForm, PatternMode, WorkspaceOptions,
};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args)]
pub struct TrajectoriesArgs {
    #[arg(long)]
    pub space: String,
    /// Without a subcommand: the concise manifest.
    #[command(subcommand)]
    pub command: Option<TrajCommand>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum FallbackArg {
    /// Plain recall over the trajectory pools.
    Recall,
    /// Recall + inspection (no LLM).
    Inspection,
}

/// `cairn trajectories agent`.
#[derive(Args)]
pub struct AgentArgs {
    question: String,
    /// An OpenAI-compatible server and model, `URL,MODEL` [default: the `[llm]` of
    /// the configuration; none: the fallback].
    #[arg(long, value_name = "URL,MODEL")]
    llm: Option<String>,
    /// Environment variable holding the server's API key.
    #[arg(long)]
    api_key_env: Option<String>,
    #[arg(long, default_value_t = 8)]
    max_steps: usize,
    /// Seconds for the whole run.
    #[arg(long, default_value_t = 120.0)]
    time_budget: f64,
    #[arg(long, default_value_t = cairn::inspect_limits::DEFAULT_CONTEXT_TOKENS)]
    token_budget: usize,
    #[arg(long, value_enum, default_value_t = FallbackArg::Recall)]
    fallback: FallbackArg,
}

/// `cairn trajectories context`.
#[derive(Args)]
pub struct ContextArgs {
    #[arg(long, default_value = "")]
    note: String,
    /// A span, `ID:A:B` (inclusive); repeat in order of importance.
    #[arg(long = "span", value_name = "ID:A:B")]
    spans: Vec<String>,
    /// A JSON file: `{note, spans, token_budget?, query?}` or an agent's
    /// `{memory_markdown, trajectory_spans}`; --span and --note add to it.
    #[arg(long, value_name = "FILE")]
    request: Option<PathBuf>,
    #[arg(long)]
    token_budget: Option<usize>,
    /// The question: page lines holding its words are kept first.
    #[arg(long)]
    query: Option<String>,
}

#[derive(Subcommand)]
pub enum TrajCommand {
    /// The manifest: per trajectory its goal, start URL, outcome and states (--full: and
    /// each state's URL, page title, thought and action).
    Manifest {
        #[arg(long)]
        full: bool,
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// Trajectories per page [default: 200 concise, 25 full].
        #[arg(long)]
        limit: Option<usize>,
    },
    /// One trajectory exactly as inserted (JSON), or one of its states.
    Show {
        id: String,
        /// Only this state (0-based).
        #[arg(long)]
        state: Option<usize>,
    },
    /// A compact summary of one trajectory: a line per state.
    Summary { id: String },
    /// One state with its page (cut to --max-chars, marked).
    State {
        id: String,
        index: usize,
        /// Page characters shown [default: 6000].
        #[arg(long)]
        max_chars: Option<usize>,
    },
    /// States A to B of one trajectory, written `A:B` (0-based, inclusive).
    Span {
        id: String,
        #[arg(value_name = "A:B")]
        span: String,
        /// Page characters per state [default: 2500].
        #[arg(long)]
        max_chars: Option<usize>,
    },
    /// The states of one trajectory matching a pattern (a regex, any case; --words:
    /// plain words).
    Match {
        id: String,
        pattern: String,
        #[arg(long)]
        words: bool,
        #[arg(long)]
        limit: Option<usize>,
    },
    /// The states of every trajectory of the space holding a pattern.
    Search {
        pattern: String,
        #[arg(long)]
        words: bool,
        #[arg(long)]
        limit: Option<usize>,
    },
    /// Render a note and spans into a context within a token budget.
    Context(ContextArgs),
    /// Recall + inspection (no LLM): recall shortlists, the best states become spans.
    Inspect {
        question: String,
        #[arg(long, default_value_t = cairn::inspect_limits::DEFAULT_CONTEXT_TOKENS)]
        token_budget: usize,
    },
    /// The agent controller: an LLM inspects the trajectories and answers with a note and
    /// spans; falls back to recall when it fails or runs out of time or steps.
    Agent(AgentArgs),
    /// Write (or update) a workspace for a coding agent: trajectories/<id>/trajectory.json,
    /// both summaries, INSTRUCTION.md and scripts/inspect.
    ExportWorkspace {
        /// The workspace folder (created if needed). Not `dir`: that is the global
        /// `--dir` of the memory.
        #[arg(value_name = "DIR")]
        out: PathBuf,
        /// Where the screenshot references resolve; found files are copied.
        #[arg(long, value_name = "DIR")]
        screenshots_from: Option<PathBuf>,
    },
}

fn mode(words: bool) -> PatternMode {
    if words {
        PatternMode::Words
    } else {
        PatternMode::Regex
    }
}

fn parse_span(s: &str) -> Result<(usize, usize)> {
    let (a, b) = s
        .split_once(':')
        .with_context(|| format!("span {s:?}: write A:B, e.g. 6:8"))?;
    let n = |x: &str| {
        x.trim()
            .parse::<usize>()
            .with_context(|| format!("span {s:?}: {x:?} is not a state index"))
    };
    Ok((n(a)?, n(b)?))
}

/// `ID:A:B`, the id possibly holding colons itself.
fn parse_context_span(s: &str) -> Result<ContextSpan> {
    let mut parts = s.rsplitn(3, ':');
    let (b, a, id) = (parts.next(), parts.next(), parts.next());
    let (Some(b), Some(a), Some(id)) = (b, a, id) else {
        bail!("--span {s:?}: write ID:A:B, e.g. run-7:6:8");
    };
    let (start_state, end_state) = parse_span(&format!("{a}:{b}"))?;
    Ok(ContextSpan {
        trajectory_id: id.to_string(),
        start_state,
        end_state,
    })
}

fn read_request(path: &std::path::Path) -> Result<ContextRequest> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    if v.get("trajectory_spans").is_some() {
        let spans = serde_json::from_value(v["trajectory_spans"].clone())
            .with_context(|| format!("{}: trajectory_spans", path.display()))?;
        return Ok(ContextRequest {
            note: v["memory_markdown"].as_str().unwrap_or("").to_string(),
            spans,
            token_budget: cairn::inspect_limits::DEFAULT_CONTEXT_TOKENS,
            query: None,
        });
    }
    serde_json::from_value(v).with_context(|| format!("{}: not a context request", path.display()))
}

/// The global arguments that open this memory again (for the helper script). A
/// PostgreSQL URL may hold a password: it is never written, cairn reads CAIRN_STORE.
fn reopen_args(cli: &Cli) -> Result<Vec<String>> {
    let abs = |p: &PathBuf| -> Result<String> {
        Ok(std::path::absolute(p)
            .with_context(|| format!("resolving {}", p.display()))?
            .display()
            .to_string())
    };
    let mut args = vec!["--dir".to_string(), abs(&cli.dir)?];
    if let Some(c) = &cli.config_file {
        args.extend(["--config-file".to_string(), abs(c)?]);
    }
    if let Some(m) = &cli.model_dir {
        args.extend(["--model-dir".to_string(), abs(m)?]);
    }
    if let Some(c) = &cli.embedding_cache {
        args.extend(["--embedding-cache".to_string(), abs(c)?]);
    }
    Ok(args)
}

pub fn run(cli: &Cli, args: &TrajectoriesArgs) -> Result<()> {
    let m = open(cli)?;
    let space = args.space.as_str();
    let out = |text: String, json: &dyn erased::Json| output(cli, text, json);
    let concise = TrajCommand::Manifest {
        full: false,
        offset: 0,
        limit: None,
    };
    let command = args.command.as_ref().unwrap_or(&concise);
    match command {
        TrajCommand::Manifest {
            full,
            offset,
            limit,
        } => {
            let r = m
                .trajectories()
                .manifest_page(space, manifest_form(*full), *offset, *limit)?;
            out(r.to_string(), &r)
        }
        TrajCommand::Show { id, state } => show(&m, space, id, *state),
        TrajCommand::Summary { id } => {
            let r = m.trajectories().summary(space, id)?;
            out(r.to_string(), &r)
        }
        TrajCommand::State {
            id,
            index,
            max_chars,
        } => {
            let r = m.trajectories().state(space, id, *index, *max_chars)?;
            out(r.to_string(), &r)
        }
        TrajCommand::Span {
            id,
            span,
            max_chars,
        } => {
            let (a, b) = parse_span(span)?;
            let r = m.trajectories().span(space, id, a, b, *max_chars)?;
            out(r.to_string(), &r)
        }
        TrajCommand::Match {
            id,
            pattern,
            words,
            limit,
        } => {
            let r = m
                .trajectories()
                .find(space, id, pattern, mode(*words), *limit)?;
            out(r.to_string(), &r)
        }
        TrajCommand::Search {
            pattern,
            words,
            limit,
        } => {
            let r = m
                .trajectories()
                .search(space, pattern, mode(*words), *limit)?;
            out(r.to_string(), &r)
        }
        TrajCommand::Context(a) => context(cli, &m, space, a),
        TrajCommand::Inspect {
            question,
            token_budget,
        } => inspect(cli, &m, space, question, *token_budget),
        TrajCommand::Agent(a) => agent(cli, &m, space, a),
        TrajCommand::ExportWorkspace {
            out: dir,
            screenshots_from,
        } => export(cli, &m, space, dir, screenshots_from.as_deref()),
    }
}

/// The manifest `--full` asks for.
fn manifest_form(full: bool) -> ManifestForm {
    if full {
        ManifestForm::Full
    } else {
        ManifestForm::Concise
    }
}

/// Prints an answer: its text, or with `--json` the answer as JSON.
fn output(cli: &Cli, text: String, json: &dyn erased::Json) -> Result<()> {
    if cli.json {
        json.print()
    } else {
        out!("{text}");
        Ok(())
    }
}

/// `show`: one trajectory exactly as inserted, or one of its states.
fn show(m: &cairn::Memory, space: &str, id: &str, state: Option<usize>) -> Result<()> {
    let Some(t) = m.trajectories().get(space, id)? else {
        bail!("no trajectory {id:?} in space {space:?}");
    };
    match state {
        Some(i) => {
            let n = t.trajectory.states.len();
            let Some(s) = t.trajectory.states.get(i) else {
                bail!("trajectory {id:?} has {n} states (0..{n})");
            };
            print_json(s)
        }
        None => print_json(&t),
    }
}

/// `context`: the note and spans rendered, the tokens used on stderr.
fn context(cli: &Cli, m: &cairn::Memory, space: &str, a: &ContextArgs) -> Result<()> {
    let req = context_request(a)?;
    let r = m.trajectories().context(space, &req)?;
    eprintln!("({} of {} tokens)", r.tokens, r.token_budget);
    output(cli, format!("{}\n", r.context), &r)
}

/// `context`'s request: the `--request` file (else an empty one), with `--note`, the
/// `--span`s, `--token-budget` and `--query` added.
fn context_request(a: &ContextArgs) -> Result<ContextRequest> {
    let mut req = match &a.request {
        Some(p) => read_request(p)?,
        None => ContextRequest {
            note: String::new(),
            spans: Vec::new(),
            token_budget: cairn::inspect_limits::DEFAULT_CONTEXT_TOKENS,
            query: None,
        },
    };
    if !a.note.is_empty() {
        req.note = a.note.clone();
    }
    for s in &a.spans {
        req.spans.push(parse_context_span(s)?);
    }
    if let Some(b) = a.token_budget {
        req.token_budget = b;
    }
    if a.query.is_some() {
        req.query = a.query.clone();
    }
    Ok(req)
}

/// `inspect`: recall + inspection, what it did on stderr.
fn inspect(
    cli: &Cli,
    m: &cairn::Memory,
    space: &str,
    question: &str,
    token_budget: usize,
) -> Result<()> {
    let opts = InspectRecallOptions {
        token_budget,
        ..InspectRecallOptions::default()
    };
    let r = m.trajectories().recall_inspect(space, question, &opts)?;
    eprintln!(
        "(shortlist {}; {} spans; {} tokens; {:.1} ms)",
        r.shortlist.join(", "),
        r.spans.len(),
        r.context.tokens,
        r.total_ms
    );
    output(cli, format!("{}\n", r.context.context), &r)
}

/// `agent`: the controller with the `--llm` model (else the configuration's `[llm]`).
fn agent(cli: &Cli, m: &cairn::Memory, space: &str, a: &AgentArgs) -> Result<()> {
    let AgentArgs {
        question,
        llm,
        api_key_env,
        max_steps,
        time_budget,
        token_budget,
        fallback,
    } = a;
    if !(time_budget.is_finite() && *time_budget > 0.0) {
        bail!("--time-budget must be a positive number of seconds");
    }
    let model = match llm {
        Some(spec) => {
            let mut cfg = LlmConfig::from_spec(spec)?;
            cfg.api_key_env = api_key_env.clone();
            // The run's budget bounds every call; a call never outlives it by much.
            cfg.timeout_secs = time_budget.ceil() as u64;
            cfg.retries = 0;
            Some(Arc::new(AgentLlm::new(cfg)?))
        }
        None => None,
    };
    let opts = AgentOptions {
        max_steps: *max_steps,
        time_budget_ms: (time_budget * 1000.0) as u64,
        token_budget: *token_budget,
        fallback: match fallback {
            FallbackArg::Recall => AgentFallback::Recall,
            FallbackArg::Inspection => AgentFallback::RecallInspection,
        },
        ..AgentOptions::default()
    };
    let r = m.trajectories().agent(space, question, &opts, model)?;
    eprintln!(
        "({:?}{}; {} model calls; {} steps; {} tokens; {:.0} ms)",
        r.mode,
        r.fallback_reason
            .as_deref()
            .map_or(String::new(), |w| format!(": {w}")),
        r.model_calls,
        r.steps.len(),
        r.context_tokens,
        r.elapsed_ms
    );
    if cli.json {
        return print_json(&r);
    }
    outln!("{}", r.context);
    Ok(())
}

/// `export-workspace`: the helper script calls this binary with the arguments that
/// opened this memory.
fn export(
    cli: &Cli,
    m: &cairn::Memory,
    space: &str,
    dir: &std::path::Path,
    screenshots_from: Option<&std::path::Path>,
) -> Result<()> {
    let program = std::env::current_exe()
        .context("locating the cairn binary")?
        .display()
        .to_string();
    let opts = WorkspaceOptions {
        helper: crate::workspace_helper::helper(&program, &reopen_args(cli)?, space),
        screenshots_from: screenshots_from.map(std::path::Path::to_path_buf),
    };
    let r = m.trajectories().export_workspace(space, dir, &opts)?;
    if cli.store.is_some() {
        eprintln!("note: the memory is in PostgreSQL; set CAIRN_STORE where scripts/inspect runs (the URL is never written into the workspace)");
    }
    if cli.json {
        return print_json(&r);
    }
    outln!(
                "{}: {} trajectories ({} written, {} unchanged, {} removed), {} screenshots copied{}; updated: {}",
                r.dir.display(),
                r.trajectories,
                r.written,
                r.unchanged,
                r.removed,
                r.screenshots_copied,
                if r.screenshots_missing > 0 {
                    format!(" ({} not found)", r.screenshots_missing)
                } else {
                    String::new()
                },
                if r.files_updated.is_empty() {
                    "nothing else".to_string()
                } else {
                    r.files_updated.join(", ")
                }
            );
    Ok(())
}

/// JSON printing of any answer behind one `&dyn` (the text arm needs no type).
mod erased {
    pub trait Json {
        fn print(&self) -> anyhow::Result<()>;
    }
    impl<T: serde::Serialize> Json for T {
        fn print(&self) -> anyhow::Result<()> {
            crate::print::json(self)
        }
    }
}
