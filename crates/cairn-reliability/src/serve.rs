//! A real `cairn serve` child process on a free loopback port, the plain HTTP client of
//! `cairn-load` pointed at it, and `cairn` CLI calls: the drivers test what a user runs.
use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use cairn_load::client::{encode, encode_bytes, Client, Resp};

/// The admin key the drivers start servers with.
pub const ADMIN_KEY: &str = "reliability-admin-key-0123456789";

/// Where the `cairn` binary is and which data directory it serves.
#[derive(Debug, Clone)]
pub struct Cairn {
    pub bin: PathBuf,
    pub dir: PathBuf,
}

impl Cairn {
    pub fn new(bin: impl Into<PathBuf>, dir: impl Into<PathBuf>) -> Self {
        Self {
            bin: bin.into(),
            dir: dir.into(),
        }
    }

    fn command(&self) -> Command {
        let mut c = Command::new(&self.bin);
        c.arg("--dir").arg(&self.dir).env_remove("CAIRN_ADMIN_KEY");
        c
    }

    /// Runs `cairn --json <args>`; its stdout as JSON.
    pub fn json(&self, args: &[&str]) -> Result<Value> {
        let out = self.command().arg("--json").args(args).output()?;
        if !out.status.success() {
            // What it printed says why (`check` prints what disagrees, then fails).
            let said: String = String::from_utf8_lossy(&out.stdout)
                .chars()
                .take(2000)
                .collect();
            bail!(
                "cairn {}: {} {said}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        serde_json::from_slice(&out.stdout)
            .with_context(|| format!("cairn {}: output is not JSON", args.join(" ")))
    }

    /// Runs `cairn <args>`, which must succeed.
    pub fn run(&self, args: &[&str]) -> Result<()> {
        let out = self.command().args(args).output()?;
        if !out.status.success() {
            bail!(
                "cairn {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    }

    /// Starts `cairn serve` on a free loopback port with [`ADMIN_KEY`].
    pub fn serve(&self, extra: &[&str]) -> Result<Server> {
        let mut child = self
            .command()
            .args(["serve", "--bind", "127.0.0.1:0", "--admin-key", ADMIN_KEY])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", self.bin.display()))?;
        let log = Arc::new(Mutex::new(String::new()));
        let err = child.stderr.take().expect("stderr");
        let l = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let mut l = l.lock().unwrap_or_else(|p| p.into_inner());
                if l.len() < 1 << 20 {
                    l.push_str(&line);
                    l.push('\n');
                }
            }
        });
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        out.read_line(&mut line)?;
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut out.into_inner(), &mut std::io::sink());
        });
        match line.trim().strip_prefix("cairn serve: listening on ") {
            Some(url) => Ok(Server {
                pid: child.id(),
                child,
                client: Client::new(url, Some(ADMIN_KEY)),
                log,
            }),
            None => {
                let _ = child.wait();
                std::thread::sleep(Duration::from_millis(50));
                let log = log.lock().unwrap_or_else(|p| p.into_inner()).clone();
                Err(anyhow!("cairn serve did not start: {}", log.trim()))
            }
        }
    }
}

/// True when an error says the embedding model is missing (tests are then SKIPPED).
pub fn model_missing(e: &anyhow::Error) -> bool {
    format!("{e:#}").contains("embedding model")
}

/// Resident memory of process `pid` (VmRSS), in KiB; Linux only.
pub fn rss_kib_of(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

pub struct Server {
    child: Child,
    pub pid: u32,
    pub client: Client,
    log: Arc<Mutex<String>>,
}

impl Server {
    /// SIGKILL: no flush, no graceful anything.
    pub fn kill(mut self) -> Result<()> {
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }

    /// SIGTERM, then waits for the process to finish its requests and flush.
    pub fn stop(mut self) -> Result<()> {
        Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status()?;
        let status = self.child.wait()?;
        if !status.success() {
            bail!("cairn serve exited with {status}: {}", self.log());
        }
        Ok(())
    }

    /// True while the process runs.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Resident memory of the server process (VmRSS), in KiB; Linux only.
    pub fn rss_kib(&self) -> Option<u64> {
        rss_kib_of(self.pid)
    }

    /// What the server wrote to stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
