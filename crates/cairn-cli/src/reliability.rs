//! `cairn reliability <crash|soak|badinput|backup|races|diskfull|memory|fuzz|scaling>`: the drivers of `cairn-reliability`
//! with flags in and a JSON report out. Each runs this very binary as `cairn serve` (and
//! `cairn check`, `export`, `import`) in a scratch data directory.
use anyhow::{bail, Context, Result};
use cairn_reliability::{
    backup, badinput, crash, diskfull, fuzz, memory, races, scaling, soak, Cairn,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Subcommand, Clone)]
pub enum ReliabilityCommand {
    /// SIGKILL `cairn serve` at random moments during HTTP ingest; verify nothing
    /// acknowledged is lost and `cairn check` finds the indexes in agreement.
    Crash(CrashArgs),
    /// Concurrent clients mixing ingest and recall for a while.
    Soak(SoakArgs),
    /// Malformed and adversarial requests: every one a 4xx, the server up, data intact.
    Badinput(BadinputArgs),
    /// Export, import into a fresh store, compare recall.
    Backup(BackupArgs),
    /// Retries under one `Idempotency-Key` sent at once while the write lock is busy:
    /// exactly one write per key, a different body under a used key refused.
    Races(RacesArgs),
    /// A full disk, then a read-only one, under a real server (a tmpfs it mounts: root
    /// only): writes refused 507 or 503 and never stored, reads and forgets answered,
    /// writes back once space is freed, `cairn check` consistent.
    Diskfull(DiskfullArgs),
    /// The server's resident memory during concurrent slow exports of a large space, and
    /// after recalls each with a distinct large filter: neither may hold what it read.
    Memory(MemoryArgs),
    /// The CPU of every route and MCP tool as each dimension a request depends on
    /// doubles (speakers, names, sessions, messages per session, versions, subjects,
    /// trajectories, states, spaces, filter conditions); fails on growth faster than
    /// linear (docs/reliability.md).
    Scaling(ScalingArgs),
    /// Mutation-fuzz the parsers of outside input (stable Rust; see also `fuzz/`).
    Fuzz(FuzzArgs),
}

/// `cairn reliability crash`.
#[derive(clap::Args, Clone)]
pub struct CrashArgs {
    #[arg(long, default_value_t = 5)]
    kills: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value_t = 4)]
    writers: usize,
    /// Kill between these many milliseconds after each (re)start.
    #[arg(long, default_value_t = 300)]
    min_ms: u64,
    #[arg(long, default_value_t = 2000)]
    max_ms: u64,
    /// Run `cairn check` after every N-th kill.
    #[arg(long, default_value_t = 1)]
    check_every: usize,
    #[command(flatten)]
    work: Work,
}

/// `cairn reliability soak`.
#[derive(clap::Args, Clone)]
pub struct SoakArgs {
    #[arg(long, default_value_t = 32)]
    clients: usize,
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    #[arg(long, default_value_t = 20)]
    ingest_percent: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    work: Work,
}

/// `cairn reliability badinput`.
#[derive(clap::Args, Clone)]
pub struct BadinputArgs {
    #[command(flatten)]
    work: Work,
}

/// `cairn reliability backup`.
#[derive(clap::Args, Clone)]
pub struct BackupArgs {
    /// Sessions per space.
    #[arg(long, default_value_t = 30)]
    sessions: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    work: Work,
}

/// `cairn reliability races`.
#[derive(clap::Args, Clone)]
pub struct RacesArgs {
    #[arg(long, default_value_t = races::RacesOptions::default().rounds)]
    rounds: usize,
    /// Tries per key and round.
    #[arg(long, default_value_t = races::RacesOptions::default().retries)]
    retries: usize,
    /// Clients appending to another space meanwhile.
    #[arg(long, default_value_t = races::RacesOptions::default().busy_clients)]
    busy_clients: usize,
    #[command(flatten)]
    work: Work,
}

/// `cairn reliability diskfull`.
#[derive(clap::Args, Clone)]
pub struct DiskfullArgs {
    /// Size of the tmpfs (`mount -o size=`).
    #[arg(long, default_value_t = diskfull::DiskFullOptions::default().disk)]
    disk: String,
    #[command(flatten)]
    work: Work,
}

/// `cairn reliability memory`.
#[derive(clap::Args, Clone)]
pub struct MemoryArgs {
    #[arg(long, default_value_t = memory::MemoryOptions::default().sessions)]
    sessions: usize,
    /// KiB of text per session.
    #[arg(long, default_value_t = memory::MemoryOptions::default().session_kib)]
    session_kib: usize,
    #[arg(long, default_value_t = memory::MemoryOptions::default().exports)]
    exports: usize,
    #[arg(long, default_value_t = memory::MemoryOptions::default().filters)]
    filters: usize,
    /// Values in each filter's `in` list (about 100 bytes each).
    #[arg(long, default_value_t = memory::MemoryOptions::default().filter_values)]
    filter_values: usize,
    #[command(flatten)]
    work: Work,
}

/// `cairn reliability scaling`.
#[derive(clap::Args, Clone)]
pub struct ScalingArgs {
    /// N of each dimension's first size.
    #[arg(long, default_value_t = scaling::ScalingOptions::default().base)]
    base: usize,
    /// Doublings after the first size.
    #[arg(long, default_value_t = scaling::ScalingOptions::default().doublings)]
    doublings: usize,
    /// Cold measurements per probe and size (their median counts).
    #[arg(long, default_value_t = scaling::ScalingOptions::default().reps)]
    reps: usize,
    /// Only this dimension (repeat for several).
    #[arg(long = "dimension")]
    only: Vec<String>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write the table as markdown to this file.
    #[arg(long)]
    markdown: Option<PathBuf>,
    #[command(flatten)]
    work: Work,
}

/// `cairn reliability fuzz`.
#[derive(clap::Args, Clone)]
pub struct FuzzArgs {
    /// A target (see --list), or `all`.
    #[arg(long, default_value = "all")]
    target: String,
    /// Seconds per target.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Extra inputs per target (`DIR/<target>/*`), e.g. fuzz/corpus or found crashes.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Where inputs that panic are written.
    #[arg(long, default_value = "fuzz-crashes")]
    crashes: PathBuf,
    /// List the targets.
    #[arg(long)]
    list: bool,
    /// Write every target's seeds to `DIR/<target>/seed-<n>` (a starting corpus for
    /// `cargo fuzz run`) and exit.
    #[arg(long, value_name = "DIR")]
    write_seeds: Option<PathBuf>,
}

#[derive(clap::Args, Clone)]
pub struct Work {
    /// Scratch directory (created; default: a temporary one, removed afterwards).
    #[arg(long)]
    work: Option<PathBuf>,
}

impl Work {
    fn dir(&self) -> Result<(PathBuf, Option<tempfile::TempDir>)> {
        match &self.work {
            Some(d) => {
                std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
                Ok((d.clone(), None))
            }
            None => {
                let t = tempfile::Builder::new()
                    .prefix("cairn-reliability-")
                    .tempdir()?;
                Ok((t.path().to_path_buf(), Some(t)))
            }
        }
    }
}

fn report<T: serde::Serialize>(r: &T, passed: bool, what: &str) -> Result<()> {
    outln!("{}", serde_json::to_string_pretty(r)?);
    if !passed {
        bail!("{what} FAILED (see the report above)");
    }
    eprintln!("{what}: passed");
    Ok(())
}

pub fn run(cmd: &ReliabilityCommand) -> Result<()> {
    let bin = std::env::current_exe().context("locating the cairn binary")?;
    match cmd {
        ReliabilityCommand::Crash(a) => crash_test(&bin, a),
        ReliabilityCommand::Soak(a) => soak_test(&bin, a),
        ReliabilityCommand::Badinput(a) => {
            let (dir, _keep) = a.work.dir()?;
            let r = badinput::run(&Cairn::new(&bin, dir.join("data")), say)?;
            report(&r, r.passed(), "badinput")
        }
        ReliabilityCommand::Races(a) => races_test(&bin, a),
        ReliabilityCommand::Diskfull(a) => {
            let (dir, _keep) = a.work.dir()?;
            let opts = diskfull::DiskFullOptions {
                disk: a.disk.clone(),
                ..Default::default()
            };
            let r = diskfull::run(&bin, &dir, &opts)?;
            report(&r, r.passed(), "diskfull")
        }
        ReliabilityCommand::Memory(a) => memory_test(&bin, a),
        ReliabilityCommand::Scaling(a) => scaling_test(&bin, a),
        ReliabilityCommand::Backup(a) => {
            let (dir, _keep) = a.work.dir()?;
            let r = backup::run(&bin, &dir, a.sessions, a.seed)?;
            report(&r, r.passed(), "backup")
        }
        ReliabilityCommand::Fuzz(a) => fuzz_test(a),
    }
}

/// Progress of a driver, on stderr.
fn say(m: &str) {
    eprintln!("{m}");
}

fn crash_test(bin: &Path, a: &CrashArgs) -> Result<()> {
    let (dir, _keep) = a.work.dir()?;
    let opts = crash::CrashOptions {
        kills: a.kills,
        seed: a.seed,
        writers: a.writers,
        min_delay: Duration::from_millis(a.min_ms),
        max_delay: Duration::from_millis(a.max_ms.max(a.min_ms)),
        check_every: a.check_every,
    };
    let r = crash::run(&Cairn::new(bin, dir.join("data")), &opts, say)?;
    report(&r, r.passed(), "crash")
}

fn soak_test(bin: &Path, a: &SoakArgs) -> Result<()> {
    let (dir, _keep) = a.work.dir()?;
    let opts = soak::SoakOptions {
        clients: a.clients,
        duration: Duration::from_secs(a.seconds),
        seed: a.seed,
        ingest_percent: a.ingest_percent,
    };
    let r = soak::run(&Cairn::new(bin, dir.join("data")), &opts, say)?;
    let ok = r.errors == 0 && r.sessions_verified == r.sessions_acknowledged;
    report(&r, ok, "soak")
}

fn races_test(bin: &Path, a: &RacesArgs) -> Result<()> {
    let (dir, _keep) = a.work.dir()?;
    let opts = races::RacesOptions {
        rounds: a.rounds,
        retries: a.retries,
        busy_clients: a.busy_clients,
    };
    let r = races::run(&Cairn::new(bin, dir.join("data")), &opts, say)?;
    report(&r, r.passed(), "races")
}

fn memory_test(bin: &Path, a: &MemoryArgs) -> Result<()> {
    let (dir, _keep) = a.work.dir()?;
    let opts = memory::MemoryOptions {
        sessions: a.sessions,
        session_kib: a.session_kib,
        exports: a.exports,
        filters: a.filters,
        filter_values: a.filter_values,
    };
    let r = memory::run(&Cairn::new(bin, dir.join("data")), &opts, say)?;
    report(&r, r.passed(&opts), "memory")
}

fn scaling_test(bin: &Path, a: &ScalingArgs) -> Result<()> {
    let (dir, _keep) = a.work.dir()?;
    let opts = scaling::ScalingOptions {
        base: a.base,
        doublings: a.doublings,
        reps: a.reps,
        only: a.only.clone(),
        seed: a.seed,
    };
    let r = scaling::run(&Cairn::new(bin, dir.join("data")), &opts, say)?;
    if let Some(path) = &a.markdown {
        std::fs::write(path, r.markdown())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    report(&r, r.passed(), "scaling")
}

fn fuzz_test(a: &FuzzArgs) -> Result<()> {
    if let Some(dir) = &a.write_seeds {
        return write_fuzz_seeds(dir);
    }
    if a.list {
        for t in fuzz::TARGETS {
            outln!("{:<16} {}", t.name, t.about);
        }
        return Ok(());
    }
    let target = &a.target;
    let targets: Vec<&fuzz::Target> = if target == "all" {
        fuzz::TARGETS.iter().collect()
    } else {
        vec![fuzz::target(target)
            .with_context(|| format!("no fuzz target {target:?} (see --list)"))?]
    };
    let mut reports = Vec::new();
    let mut failed = Vec::new();
    for t in targets {
        match fuzz::run(
            t,
            Duration::from_secs(a.seconds),
            u64::MAX,
            a.seed,
            a.corpus.as_deref(),
            Some(&a.crashes),
        ) {
            Ok(r) => {
                eprintln!(
                    "{}: {} executions in {:.0}s, no crash",
                    r.target, r.executions, r.seconds
                );
                reports.push(serde_json::to_value(r)?);
            }
            Err(e) => {
                eprintln!("{e:#}");
                failed.push(t.name);
            }
        }
    }
    let ok = failed.is_empty();
    report(
        &serde_json::json!({"targets": reports, "failed": failed}),
        ok,
        "fuzz",
    )
}

/// Every target's seeds written to `DIR/<target>/seed-<n>`.
fn write_fuzz_seeds(dir: &Path) -> Result<()> {
    for t in fuzz::TARGETS {
        let d = dir.join(t.name);
        std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
        for (i, seed) in t.seeds.iter().enumerate() {
            let f = d.join(format!("seed-{i}"));
            std::fs::write(&f, seed).with_context(|| format!("writing {}", f.display()))?;
        }
    }
    Ok(())
}
