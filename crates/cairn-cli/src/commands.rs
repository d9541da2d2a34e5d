//! The memory commands: argument structs, their translation into library calls, and
//! printing (through `print.rs`).
use crate::print;
use anyhow::{bail, Context, Result};
use cairn::{Format, Memory, RecallOptions, UnitKind, WriteOptions};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct RecallArgs {
    /// The space to search.
    #[arg(long)]
    space: String,
    /// The question (or keywords) to find evidence for.
    query: String,
    /// How many hits (places of evidence) to return.
    #[arg(long, default_value_t = RecallOptions::default().top_k)]
    top_k: usize,
    /// Most tokens of packed context (counted with the embedding model's tokenizer).
    #[arg(long, default_value_t = RecallOptions::default().token_budget)]
    token_budget: usize,
    /// The context's form: synthesized (compact, newest first) or raw (verbatim,
    /// chronological).
    #[arg(long, default_value = "synthesized")]
    format: String,
    /// At most N hits of a kind, as KIND=N (e.g. --quota note=2); repeatable.
    #[arg(long = "quota", value_name = "KIND=N")]
    quotas: Vec<String>,
    /// The relevance floor (cosine of query and hit, -1..1; -1 turns it off): when no
    /// hit reaches it, the recall has none and says there is no relevant memory.
    #[arg(long, default_value_t = RecallOptions::default().min_relevance, allow_negative_numbers = true)]
    min_relevance: f32,
    /// Say where each hit's score came from and what packing did (see it with --json).
    #[arg(long)]
    explain: bool,
    #[command(flatten)]
    scope: ScopeArgs,
}

fn time(raw: &Option<String>, flag: &str) -> Result<Option<cairn::Timestamp>> {
    raw.as_deref()
        .map(|t| cairn::parse_timestamp(t).map_err(|e| anyhow::anyhow!("{flag}: {}", e.problem)))
        .transpose()
}

fn kind(k: &str) -> Result<UnitKind> {
    UnitKind::parse(k).with_context(|| format!("unknown kind {k:?}"))
}

fn quotas(raw: &[String]) -> Result<Option<std::collections::BTreeMap<UnitKind, usize>>> {
    if raw.is_empty() {
        return Ok(None);
    }
    raw.iter()
        .map(|q| {
            let (k, n) = q
                .split_once('=')
                .with_context(|| format!("--quota {q:?}: expected KIND=N"))?;
            let n: usize = n
                .parse()
                .with_context(|| format!("--quota {q:?}: {n:?} is not a count"))?;
            Ok((kind(k).context("--quota")?, n))
        })
        .collect::<Result<_>>()
        .map(Some)
}

fn some(v: &[String]) -> Option<Vec<String>> {
    (!v.is_empty()).then(|| v.to_vec())
}

impl RecallArgs {
    fn options(&self) -> Result<RecallOptions> {
        Ok(RecallOptions {
            top_k: self.top_k,
            token_budget: self.token_budget,
            format: self.format.parse::<Format>()?,
            quotas: quotas(&self.quotas)?,
            min_relevance: self.min_relevance,
            explain: self.explain,
            scope: self.scope.options()?,
        })
    }
}

pub fn recall(m: &Memory, a: &RecallArgs, json: bool) -> Result<()> {
    let r = m.recall(&a.space, &a.query, &a.options()?)?;
    print::warnings(&r.warnings, json);
    if json {
        return print::json(&r);
    }
    print::recall(&r);
    Ok(())
}

/// Tells the user, on stderr, what a read with `scope` warns of (a filter key no session
/// carries): `warning: ...`, or under `--json` one JSON object per warning, so stdout
/// stays the answer.
fn warn(m: &Memory, space: &str, scope: &cairn::ScopeOptions, json: bool) -> Result<()> {
    if scope.filter.is_some() {
        print::warnings(&m.filter_warnings(space, scope)?, json);
    }
    Ok(())
}

/// What a read sees (recall, history, entities, profile): the scope every surface takes,
/// as flags (a list field repeats its flag).
#[derive(clap::Args)]
pub struct ScopeArgs {
    /// As known at this date: later records are invisible, and relative dates in a query
    /// ("last week") resolve against it.
    #[arg(long)]
    as_of: Option<String>,
    /// Only what occurred from this date on (with --as-of, a time range).
    #[arg(long)]
    since: Option<String>,
    /// Only what this session holds (repeat for several).
    #[arg(long = "session", value_name = "ID")]
    sessions: Vec<String>,
    /// Only what this speaker took part in (repeat for several).
    #[arg(long = "speaker", value_name = "NAME")]
    speakers: Vec<String>,
    /// Only what this group chat holds (repeat for several).
    #[arg(long = "group", value_name = "NAME")]
    groups: Vec<String>,
    /// Only units of this kind (turn, round, episode, fact, slice, event, note, ...);
    /// repeat for several (the pools of a trajectory query).
    #[arg(long = "kind")]
    kinds: Vec<String>,
    /// Only sessions whose metadata matches this filter (JSON, e.g. '{"user_id": "u1"}').
    #[arg(long)]
    filter: Option<String>,
    /// Only this end user's sessions (JSON, e.g. '{"user_id": "u1"}').
    #[arg(long)]
    partition: Option<String>,
}

impl ScopeArgs {
    fn options(&self) -> Result<cairn::ScopeOptions> {
        let json = |raw: &Option<String>, flag: &str| {
            raw.as_deref()
                .map(|f| serde_json::from_str(f).with_context(|| format!("{flag} is not JSON")))
                .transpose()
        };
        Ok(cairn::ScopeOptions {
            as_of: time(&self.as_of, "--as-of")?,
            since: time(&self.since, "--since")?,
            sessions: some(&self.sessions),
            speakers: some(&self.speakers),
            groups: some(&self.groups),
            kinds: match self.kinds.is_empty() {
                true => None,
                false => Some(self.kinds.iter().map(|k| kind(k)).collect::<Result<_>>()?),
            },
            filter: json(&self.filter, "--filter")?,
            partition: json(&self.partition, "--partition")?,
        })
    }
}

#[derive(clap::Args)]
pub struct HistoryArgs {
    /// The space whose facts to read.
    #[arg(long)]
    space: String,
    /// What the fact is about, in a few words ("Atlas budget", "launch date").
    subject: String,
    #[command(flatten)]
    scope: ScopeArgs,
}

pub fn history(m: &Memory, a: &HistoryArgs, json: bool) -> Result<()> {
    let scope = a.scope.options()?;
    let found = m.history(&a.space, &a.subject, &scope)?;
    warn(m, &a.space, &scope, json)?;
    let Some(h) = found else {
        bail!("no fact about {:?} in space {:?}", a.subject, a.space);
    };
    if json {
        return print::json(&h);
    }
    print::history(&h);
    Ok(())
}

#[derive(clap::Args)]
pub struct EntitiesArgs {
    /// The space whose entity graph to read.
    #[arg(long)]
    space: String,
    /// One entity by name or alias; without it, lists the space's entities.
    name: Option<String>,
    /// List only entities whose name or an alias contains this.
    #[arg(long)]
    search: Option<String>,
    #[command(flatten)]
    scope: ScopeArgs,
}

pub fn entities(m: &Memory, a: &EntitiesArgs, json: bool) -> Result<()> {
    let scope = a.scope.options()?;
    let Some(name) = &a.name else {
        let list = m.entities(&a.space, a.search.as_deref(), &scope)?;
        warn(m, &a.space, &scope, json)?;
        if json {
            return print::json(&list);
        }
        print::entities(&list);
        return Ok(());
    };
    let found = m.entity(&a.space, name, &scope)?;
    warn(m, &a.space, &scope, json)?;
    let Some(e) = found else {
        bail!("no entity {name:?} in space {:?}", a.space);
    };
    if json {
        return print::json(&e);
    }
    print::entity(&e);
    Ok(())
}

#[derive(clap::Args)]
pub struct ProfileArgs {
    /// The space whose speakers to read.
    #[arg(long)]
    space: String,
    /// A speaker; without it, lists the space's speakers.
    speaker: Option<String>,
    #[command(flatten)]
    scope: ScopeArgs,
}

pub fn profile(m: &Memory, a: &ProfileArgs, json: bool) -> Result<()> {
    let scope = a.scope.options()?;
    let Some(speaker) = &a.speaker else {
        let speakers = m.speakers(&a.space, &scope)?;
        warn(m, &a.space, &scope, json)?;
        if json {
            return print::json(&speakers);
        }
        speakers.iter().for_each(|s| outln!("{s}"));
        return Ok(());
    };
    let found = m.profile(&a.space, speaker, &scope)?;
    warn(m, &a.space, &scope, json)?;
    let Some(p) = found else {
        bail!("no speaker {speaker:?} in space {:?}", a.space);
    };
    if json {
        return print::json(&p);
    }
    print::profile(&p);
    Ok(())
}

#[derive(clap::Args)]
pub struct ForgetArgs {
    /// The space to forget in.
    #[arg(long)]
    space: String,
    /// Forget this session (with --message, one message of it).
    #[arg(long)]
    session: Option<String>,
    /// Forget only this message of --session.
    #[arg(long, requires = "session")]
    message: Option<String>,
    /// With --message: forget the reply to it too (the next message, when another
    /// speaker wrote it).
    #[arg(long, requires = "message")]
    exchange: bool,
    /// Forget an end user: every session of this partition, as JSON
    /// ('{"user_id":"u1"}'), and everything derived from them.
    #[arg(long, conflicts_with_all = ["session", "trajectory", "memory", "all"])]
    partition: Option<String>,
    /// Forget one trajectory.
    #[arg(long, conflicts_with = "session")]
    trajectory: Option<String>,
    /// Forget one memory (by unit id, as recall cites it): what it was derived from.
    #[arg(long, conflicts_with_all = ["session", "trajectory"])]
    memory: Option<String>,
    /// Forget the whole space.
    #[arg(long, conflicts_with_all = ["session", "trajectory", "memory"])]
    all: bool,
}

pub fn forget(m: &Memory, a: &ForgetArgs, json: bool) -> Result<()> {
    let space = &a.space;
    if let Some(unit) = &a.memory {
        let report = m.forget_unit(space, unit)?;
        if json {
            return print::json(&report);
        }
        outln!("forgotten ({} removed)", report.removed_units);
        return Ok(());
    }
    if let Some(p) = &a.partition {
        return forget_partition(m, space, p, json);
    }
    if let (Some(s), Some(msg)) = (&a.session, &a.message) {
        let report = m.forget_message_with(space, s, msg, a.exchange)?;
        if json {
            return print::json(&report);
        }
        let ids = report.forgotten_messages.join(", ");
        outln!(
            "forgotten messages {ids} ({} removed)",
            report.removed_units
        );
        return Ok(());
    }
    let removed = match (&a.session, &a.trajectory, a.all) {
        (_, _, true) => usize::from(m.forget_space(space)?),
        (Some(s), _, _) => m.forget_session(space, s)?,
        (None, Some(t), _) => m.trajectories().forget(space, t)?,
        (None, None, false) => bail!(
            "say what to forget: --session ID [--message ID [--exchange]], --trajectory ID, --memory ID, --partition JSON, or --all"
        ),
    };
    if json {
        return print::json(&serde_json::json!({ "removed": removed }));
    }
    outln!("forgotten ({removed} removed)");
    Ok(())
}

/// `forget --partition '{"user_id":"u1"}'`: every session of an end user.
fn forget_partition(m: &Memory, space: &str, text: &str, json: bool) -> Result<()> {
    let value: serde_json::Value = serde_json::from_str(text)
        .context("--partition is not JSON (e.g. '{\"user_id\":\"u1\"}')")?;
    let partition =
        cairn::Partition::parse(&value).map_err(|e| anyhow::anyhow!("--partition: {e}"))?;
    let r = m.forget_partition(space, &partition)?;
    if json {
        return print::json(&r);
    }
    outln!(
        "forgotten {} sessions, {} messages ({} units removed)",
        r.sessions,
        r.messages,
        r.units
    );
    Ok(())
}

#[derive(clap::Args)]
pub struct ExportArgs {
    /// The space to export.
    #[arg(long)]
    space: String,
    /// Write the JSONL here instead of to stdout.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

pub fn spaces(m: &Memory, json: bool) -> Result<()> {
    let spaces: Vec<String> = m.spaces()?.into_iter().map(|s| s.to_string()).collect();
    if json {
        return print::json(&spaces);
    }
    spaces.iter().for_each(|s| outln!("{s}"));
    Ok(())
}

pub fn export(m: &Memory, a: &ExportArgs, json: bool) -> Result<()> {
    let n = match &a.output {
        Some(p) => {
            let f =
                std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?;
            let mut w = std::io::BufWriter::new(f);
            let n = m.export(&a.space, &mut w)?;
            w.flush()?;
            n
        }
        // Stdout is the export itself, JSONL, with or without --json.
        None => m.export(&a.space, std::io::stdout().lock())?,
    };
    match (&a.output, json) {
        (Some(p), true) => print::json(&serde_json::json!({"exported": n, "file": p})),
        _ => {
            eprintln!("exported {n} records");
            Ok(())
        }
    }
}

#[derive(clap::Args)]
pub struct ImportArgs {
    /// A JSONL file `cairn export` wrote.
    file: PathBuf,
    /// Restore every record into this space (an export of one space as another);
    /// without it, each record goes back into the space its line names.
    #[arg(long)]
    space: Option<String>,
}

pub fn import(m: &Memory, a: &ImportArgs) -> Result<()> {
    let f =
        std::fs::File::open(&a.file).with_context(|| format!("opening {}", a.file.display()))?;
    let report = m.import_with(
        std::io::BufReader::new(f),
        a.space.as_deref(),
        &WriteOptions::default(),
    )?;
    print::json(&report)
}

pub fn stats(m: &Memory, space: Option<&str>, json: bool) -> Result<()> {
    let spaces = match space {
        Some(s) => vec![s.to_string()],
        None => m.spaces()?.into_iter().map(|s| s.to_string()).collect(),
    };
    let stats = spaces
        .iter()
        .map(|s| m.stats(s))
        .collect::<Result<Vec<_>, _>>()?;
    if json {
        return print::json(&stats);
    }
    print::stats(&stats);
    Ok(())
}

pub fn check(m: &Memory, rebuild: bool) -> Result<()> {
    let report = m.check(rebuild)?;
    print::json(&report)?;
    if !report.unreadable.is_empty() {
        bail!("{} stored record(s) cannot be read (listed above under `unreadable`); forget them (`cairn forget --space S --session ID`) or restore them from an export", report.unreadable.len());
    }
    if !report.consistent {
        bail!("the indexes do not agree with the record; `cairn check --rebuild` rebuilds them from it");
    }
    Ok(())
}

pub fn migrate(store: Option<String>, json: bool) -> Result<()> {
    let Some(url) = store else {
        bail!("cairn migrate needs --store postgres://... (or CAIRN_STORE); the embedded store upgrades itself when opened");
    };
    let applied = Memory::migrate_postgres(&url).context("migrating the PostgreSQL store")?;
    if json {
        return print::json(&serde_json::json!({ "applied": applied }));
    }
    if applied.is_empty() {
        outln!("schema up to date");
    } else {
        let list: Vec<String> = applied.iter().map(|v| v.to_string()).collect();
        outln!("applied migration(s) {}", list.join(", "));
    }
    Ok(())
}

pub fn config(mut cfg: cairn::MemoryConfig, json: bool) -> Result<()> {
    cfg.store = cfg.store.as_deref().map(mask_password);
    if json {
        return print::json(&cfg);
    }
    out!(
        "{}",
        toml::to_string_pretty(&cfg).context("printing the configuration")?
    );
    Ok(())
}

/// `postgres://user:secret@host/db` as `postgres://user:***@host/db`.
fn mask_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.rsplit_once('@') {
        Some((user_info, host)) if user_info.contains(':') => {
            let user = user_info.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}")
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_store_password_is_masked() {
        assert_eq!(
            super::mask_password("postgres://cairn:s3cret@db:5432/cairn"),
            "postgres://cairn:***@db:5432/cairn"
        );
        assert_eq!(
            super::mask_password("postgres://db/cairn"),
            "postgres://db/cairn"
        );
    }
}
