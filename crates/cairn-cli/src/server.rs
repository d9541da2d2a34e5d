//! `cairn serve`, `cairn mcp`, `cairn keys`: flags in, `cairn-server` calls out.
use anyhow::{bail, Context, Result};
use cairn::Memory;
use cairn_server::{AppState, AuthMode, KeyStore, Limits, McpTools, ServerConfig};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// Address to listen on. Loopback by default: put a TLS reverse proxy in front to
    /// expose it.
    #[arg(long, env = "CAIRN_BIND", default_value = "127.0.0.1:7700")]
    pub bind: SocketAddr,
    /// Admin key: sees and writes every space (at least 24 characters).
    #[arg(long, env = "CAIRN_ADMIN_KEY", hide_env_values = true)]
    pub admin_key: Option<String>,
    /// Accept requests without a key (every caller is admin). Refused unless bound to a
    /// loopback address.
    #[arg(long)]
    pub no_auth: bool,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = Limits::default().max_body_bytes)]
    pub max_body_bytes: usize,
    /// Most sessions in one batch or import.
    #[arg(long, default_value_t = Limits::default().max_batch_sessions)]
    pub max_batch_sessions: usize,
    /// Most messages (and trajectory states) one write may add.
    #[arg(long, default_value_t = Limits::default().max_request_messages)]
    pub max_request_messages: usize,
    /// Longest message text (and trajectory field) in bytes.
    #[arg(long, default_value_t = Limits::default().max_text_bytes)]
    pub max_text_bytes: usize,
    /// Longest recall query in bytes.
    #[arg(long, default_value_t = Limits::default().max_query_bytes)]
    pub max_query_bytes: usize,
    /// Host names the server answers to (DNS-rebinding protection, every route). Default:
    /// the loopback names when bound to loopback, any host otherwise.
    #[arg(long = "allowed-host")]
    pub allowed_hosts: Vec<String>,
    /// The tools /mcp offers when a client does not ask (`/mcp?tools=memory|all`):
    /// memory (remember, recall, forget, history, subjects, profile, entities, spaces) or
    /// all (those and the trajectory tools).
    #[arg(long, default_value = "all", value_parser = parse_tools)]
    pub mcp_tools: McpTools,
}

fn parse_tools(s: &str) -> Result<McpTools, String> {
    s.parse()
}

#[derive(clap::Args)]
pub struct McpArgs {
    /// Space used when a tool call names none (created by the first `remember`).
    #[arg(long)]
    pub space: Option<String>,
    /// The tools offered: memory (remember, recall, forget, history, subjects, profile,
    /// entities, spaces: what a chat agent needs) or all (those and the trajectory tools).
    #[arg(long, default_value = "all", value_parser = parse_tools)]
    pub tools: McpTools,
}

#[derive(clap::Subcommand)]
pub enum KeysCommand {
    /// Create a key; its token is printed once and never stored.
    Create {
        /// A space the key may use (repeat for several).
        #[arg(long = "space", required = true)]
        spaces: Vec<String>,
        /// The key may read but not write.
        #[arg(long)]
        read_only: bool,
        /// A note to tell keys apart.
        #[arg(long)]
        label: Option<String>,
    },
    /// List keys (never their tokens).
    List,
    /// Revoke a key by id; takes effect on the next request.
    Revoke { id: String },
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutting down");
}

pub fn serve(memory: Memory, args: &ServeArgs) -> Result<()> {
    let loopback = args.bind.ip().is_loopback();
    let auth = if args.no_auth {
        if !loopback {
            bail!(
                "--no-auth is only allowed on a loopback address (got {})",
                args.bind
            );
        }
        AuthMode::Disabled
    } else {
        AuthMode::Keys {
            admin_key: args.admin_key.clone(),
        }
    };
    let allowed_hosts = if !args.allowed_hosts.is_empty() {
        Some(args.allowed_hosts.clone())
    } else if loopback {
        Some(cairn_server::loopback_hosts())
    } else {
        None
    };
    let config = ServerConfig {
        limits: Limits {
            max_body_bytes: args.max_body_bytes,
            max_batch_sessions: args.max_batch_sessions,
            max_request_messages: args.max_request_messages,
            max_text_bytes: args.max_text_bytes,
            max_query_bytes: args.max_query_bytes,
        },
        auth,
        allowed_hosts,
        mcp_tools: args.mcp_tools,
    };
    let state = AppState::new(Arc::new(memory), config)?;
    if matches!(&state.config.auth, AuthMode::Keys { admin_key: None })
        && state.keys.list()?.iter().all(|k| k.revoked_at.is_some())
    {
        eprintln!(
            "warning: no API keys yet; create one with `cairn keys create --space NAME` or set CAIRN_ADMIN_KEY"
        );
    }
    let rt = runtime()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.bind)
            .await
            .with_context(|| format!("binding {}", args.bind))?;
        let addr = listener.local_addr()?;
        // The first stdout line is the address (tests and scripts bind port 0 and read it).
        outln!("cairn serve: listening on http://{addr}");
        cairn_server::serve(listener, state.clone(), shutdown_signal()).await?;
        anyhow::Ok(())
    })?;
    // Requests are done; closing the memory flushes its indexes.
    drop(state);
    Ok(())
}

pub fn mcp(memory: Memory, args: &McpArgs) -> Result<()> {
    let state = AppState::new(
        Arc::new(memory),
        ServerConfig {
            auth: AuthMode::Disabled,
            ..Default::default()
        },
    )?;
    runtime()?.block_on(cairn_server::serve_stdio(
        state,
        args.space.clone(),
        args.tools,
    ))?;
    Ok(())
}

/// `store`: a PostgreSQL URL (keys live in the database), else the data directory's file.
pub fn keys(dir: &Path, store: Option<&str>, cmd: &KeysCommand, json: bool) -> Result<()> {
    // Where the key lives, said with every new key: a key made for another data directory
    // is refused by the server, and the output is where that shows.
    let home = match store {
        Some(_) => "the PostgreSQL store (--store)".to_string(),
        None => std::path::absolute(dir)
            .unwrap_or_else(|_| dir.to_path_buf())
            .display()
            .to_string(),
    };
    let store = match store {
        Some(url) => KeyStore::with_records(
            Memory::postgres_key_records(url).context("opening the PostgreSQL store (--store)")?,
        ),
        None => KeyStore::open(dir)?,
    };
    match cmd {
        KeysCommand::Create {
            spaces,
            read_only,
            label,
        } => {
            let k = store.create(spaces, *read_only, label.as_deref())?;
            if json {
                let mut v = serde_json::to_value(&k)?;
                v["data_dir"] = home.into();
                outln!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                outln!("{}", k.token);
                eprintln!(
                    "key {} for space(s) {}{} of {home}; the token above is shown only now",
                    k.info.id,
                    k.info.spaces.join(", "),
                    if k.info.read_only { " (read-only)" } else { "" }
                );
            }
        }
        KeysCommand::List => {
            let keys = store.list()?;
            if json {
                outln!("{}", serde_json::to_string_pretty(&keys)?);
            } else {
                for k in keys {
                    outln!(
                        "{}  {}  {}{}{}",
                        k.id,
                        k.spaces.join(","),
                        if k.read_only {
                            "read-only"
                        } else {
                            "read-write"
                        },
                        k.label.map(|l| format!("  {l}")).unwrap_or_default(),
                        k.revoked_at
                            .map(|r| format!("  revoked {r}"))
                            .unwrap_or_default()
                    );
                }
            }
        }
        KeysCommand::Revoke { id } => {
            if !store.revoke(id)? {
                bail!("no live key with id {id:?} in {home}");
            }
            if json {
                outln!("{}", serde_json::json!({ "revoked": id }));
            } else {
                eprintln!("revoked {id}");
            }
        }
    }
    Ok(())
}
