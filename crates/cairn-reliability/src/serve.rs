//! A real `cairn serve` child process on a free loopback port, a plain HTTP client, and
//! `cairn` CLI calls: the drivers test what a user runs.
use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
            bail!(
                "cairn {}: {}",
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
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|n| n.parse().ok())
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

/// A response: status, content type, body (JSON when it parses, else a string).
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub content_type: String,
    pub body: Value,
    pub text: String,
}

#[derive(Clone)]
pub struct Client {
    pub base: String,
    key: Option<String>,
    agent: ureq::Agent,
}

/// Percent-encodes one path segment (every byte outside the unreserved set).
pub fn encode(s: &str) -> String {
    encode_bytes(s.as_bytes())
}

pub fn encode_bytes(s: &[u8]) -> String {
    s.iter()
        .map(|&b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Client {
    pub fn new(base: &str, key: Option<&str>) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            key: key.map(str::to_string),
            agent: ureq::AgentBuilder::new()
                .timeout(Duration::from_secs(120))
                .build(),
        }
    }

    /// A request to `path` (already encoded); `Err` only when no HTTP answer came
    /// (connection refused or reset: the server is down).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, &[u8])>,
        key: Option<&str>,
    ) -> Result<Resp, String> {
        let url = format!("{}{path}", self.base);
        let mut req = self.agent.request(method, &url);
        // `Some("")`: no Authorization header at all.
        if let Some(k) = key.or(self.key.as_deref()).filter(|k| !k.is_empty()) {
            req = req.set("Authorization", &format!("Bearer {k}"));
        }
        let result = match body {
            Some((ctype, b)) => req.set("Content-Type", ctype).send_bytes(b),
            None => req.call(),
        };
        let resp = match result {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => return Err(format!("{method} {url}: {e}")),
        };
        let status = resp.status();
        let content_type = resp.header("content-type").unwrap_or("").to_string();
        let mut bytes = Vec::new();
        resp.into_reader()
            .take(64 << 20)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{method} {url}: reading the body: {e}"))?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text.clone()));
        Ok(Resp {
            status,
            content_type,
            body,
            text,
        })
    }

    pub fn get(&self, path: &str) -> Result<Resp, String> {
        self.request("GET", path, None, None)
    }

    pub fn post(&self, path: &str, json: &Value) -> Result<Resp, String> {
        self.request(
            "POST",
            path,
            Some(("application/json", json.to_string().as_bytes())),
            None,
        )
    }

    pub fn delete(&self, path: &str) -> Result<Resp, String> {
        self.request("DELETE", path, None, None)
    }
}
