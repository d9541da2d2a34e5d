//! `cairn serve`, `cairn mcp`, `cairn keys`: flags in, `cairn-server` calls out.
use crate::config::ServerFile;
use anyhow::{bail, Context, Result};
use cairn::Memory;
use cairn_server::{
    AppState, AuthMode, ConnectionLimits, KeyStore, Limits, McpTools, ServerConfig,
};
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
    /// Largest request body in bytes [default: 8 MiB].
    #[arg(long, env = "CAIRN_MAX_BODY_BYTES")]
    pub max_body_bytes: Option<usize>,
    /// Most sessions in one batch or import [default: 1000].
    #[arg(long, env = "CAIRN_MAX_BATCH_SESSIONS")]
    pub max_batch_sessions: Option<usize>,
    /// Most messages (and trajectory states) one write may add [default: 1000].
    #[arg(long, env = "CAIRN_MAX_REQUEST_MESSAGES")]
    pub max_request_messages: Option<usize>,
    /// Longest message text (and trajectory field) in bytes [default: 1 MiB].
    #[arg(long, env = "CAIRN_MAX_TEXT_BYTES")]
    pub max_text_bytes: Option<usize>,
    /// Longest recall query in bytes [default: 16 KiB].
    #[arg(long, env = "CAIRN_MAX_QUERY_BYTES")]
    pub max_query_bytes: Option<usize>,
    /// Longest a request may work, in ms, before it is answered 503 `too_much_work`; 0:
    /// no bound [default: 10000].
    #[arg(long, env = "CAIRN_MAX_REQUEST_MS")]
    pub max_request_ms: Option<u64>,
    /// Time a client has to send a request head, in ms, from the connection opening or
    /// the previous response (so also how long an idle connection stays open)
    /// [default: 10000].
    #[arg(long, env = "CAIRN_HEADER_TIMEOUT_MS")]
    pub header_timeout_ms: Option<u64>,
    /// Time a client has to send a whole request body, in ms [default: 30000].
    #[arg(long, env = "CAIRN_BODY_TIMEOUT_MS")]
    pub body_timeout_ms: Option<u64>,
    /// Connections served at once; more wait until one closes [default: 1024, or half
    /// the open-file limit when lower].
    #[arg(long, env = "CAIRN_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// After SIGTERM or Ctrl-C: time in-flight requests get to finish, in ms
    /// [default: 30000].
    #[arg(long, env = "CAIRN_SHUTDOWN_TIMEOUT_MS")]
    pub shutdown_timeout_ms: Option<u64>,
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

impl ServeArgs {
    /// The server's settings: these flags (or their variables), else the configuration
    /// file's `[server]` table, else the defaults.
    fn config(&self, file: ServerFile, auth: AuthMode) -> ServerConfig {
        let loopback = self.bind.ip().is_loopback();
        let (l, c) = (Limits::default(), ConnectionLimits::default());
        let ms = std::time::Duration::from_millis;
        let allowed_hosts = if !self.allowed_hosts.is_empty() {
            Some(self.allowed_hosts.clone())
        } else if let Some(hosts) = file.allowed_hosts {
            Some(hosts)
        } else if loopback {
            Some(cairn_server::loopback_hosts())
        } else {
            None
        };
        let request_ms = self.max_request_ms.or(file.max_request_ms);
        ServerConfig {
            limits: Limits {
                max_body_bytes: self
                    .max_body_bytes
                    .or(file.max_body_bytes)
                    .unwrap_or(l.max_body_bytes),
                max_batch_sessions: self
                    .max_batch_sessions
                    .or(file.max_batch_sessions)
                    .unwrap_or(l.max_batch_sessions),
                max_request_messages: self
                    .max_request_messages
                    .or(file.max_request_messages)
                    .unwrap_or(l.max_request_messages),
                max_text_bytes: self
                    .max_text_bytes
                    .or(file.max_text_bytes)
                    .unwrap_or(l.max_text_bytes),
                max_query_bytes: self
                    .max_query_bytes
                    .or(file.max_query_bytes)
                    .unwrap_or(l.max_query_bytes),
                max_request_time: match request_ms {
                    Some(0) => None,
                    Some(n) => Some(ms(n)),
                    None => l.max_request_time,
                },
            },
            connections: ConnectionLimits {
                header_timeout: self
                    .header_timeout_ms
                    .or(file.header_timeout_ms)
                    .map_or(c.header_timeout, ms),
                body_timeout: self
                    .body_timeout_ms
                    .or(file.body_timeout_ms)
                    .map_or(c.body_timeout, ms),
                max_connections: self
                    .max_connections
                    .or(file.max_connections)
                    .unwrap_or(c.max_connections),
                shutdown_timeout: self
                    .shutdown_timeout_ms
                    .or(file.shutdown_timeout_ms)
                    .map_or(c.shutdown_timeout, ms),
            },
            auth,
            allowed_hosts,
            mcp_tools: self.mcp_tools,
        }
    }
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
    /// Serve one end user's partition only, as JSON (`'{"user_id":"u1"}'`): every tool
    /// reads that partition's memories and `remember` tags what it keeps with it, as a
    /// key pinned to it would over HTTP.
    #[arg(long)]
    pub partition: Option<String>,
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
        /// Pin the key to one end user's partition, as JSON (`'{"user_id":"u1"}'`; keys:
        /// user_id, agent_id, namespace): everything it reads is that partition's,
        /// everything it writes is tagged with it.
        #[arg(long)]
        partition: Option<String>,
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

pub fn serve(memory: Memory, args: &ServeArgs, file: ServerFile) -> Result<()> {
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
    let config = args.config(file, auth);
    let shutdown_timeout = config.connections.shutdown_timeout;
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
    // A library call still running past the deadline (its connection already dropped)
    // gets as long again; a write is one transaction, so stopping it loses nothing
    // acknowledged.
    rt.shutdown_timeout(shutdown_timeout);
    // Requests are done; closing the memory flushes its indexes.
    drop(state);
    Ok(())
}

pub fn mcp(memory: Memory, args: &McpArgs) -> Result<()> {
    let partition = args
        .partition
        .as_deref()
        .map(|j| -> Result<cairn::Partition> {
            let v = serde_json::from_str(j).context("--partition is not JSON")?;
            Ok(cairn::Partition::parse(&v)?)
        })
        .transpose()?;
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
        partition,
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
            partition,
        } => create_key(
            &store,
            &home,
            spaces,
            *read_only,
            label.as_deref(),
            partition.as_deref(),
            json,
        )?,
        KeysCommand::List => list_keys(&store, json)?,
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

/// `keys create`: the token on stdout (with `--json`, the key and where it lives), what
/// it is for on stderr.
fn create_key(
    store: &KeyStore,
    home: &str,
    spaces: &[String],
    read_only: bool,
    label: Option<&str>,
    partition: Option<&str>,
    json: bool,
) -> Result<()> {
    let partition: Option<serde_json::Value> = partition
        .map(serde_json::from_str)
        .transpose()
        .context("--partition is not JSON")?;
    let k = store.create(spaces, read_only, label, partition.as_ref())?;
    if json {
        let mut v = serde_json::to_value(&k)?;
        v["data_dir"] = home.into();
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!("{}", k.token);
        eprintln!(
            "key {} for space(s) {}{}{} of {home}; the token above is shown only now",
            k.info.id,
            k.info.spaces.join(", "),
            if k.info.read_only { " (read-only)" } else { "" },
            k.info
                .partition
                .as_ref()
                .map(|p| format!(", pinned to {p}"))
                .unwrap_or_default()
        );
    }
    Ok(())
}

/// `keys list`: every key, never its token.
fn list_keys(store: &KeyStore, json: bool) -> Result<()> {
    let keys = store.list()?;
    if json {
        outln!("{}", serde_json::to_string_pretty(&keys)?);
    } else {
        for k in keys {
            outln!(
                "{}  {}  {}{}{}{}",
                k.id,
                k.spaces.join(","),
                if k.read_only {
                    "read-only"
                } else {
                    "read-write"
                },
                k.partition
                    .map(|p| format!("  pinned {p}"))
                    .unwrap_or_default(),
                k.label.map(|l| format!("  {l}")).unwrap_or_default(),
                k.revoked_at
                    .map(|r| format!("  revoked {r}"))
                    .unwrap_or_default()
            );
        }
    }
    Ok(())
}
