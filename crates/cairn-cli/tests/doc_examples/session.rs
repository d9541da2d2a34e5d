//! A page's terminal session: a fresh folder, the variables and directory carried from
//! block to block, a free port, and whatever the page started stopped at its end. In
//! sequence (`docs_in_sequence`) the folder, and so the data directory, is kept from page
//! to page ([`Session::next_page`]), as for a reader who opens a new terminal in the same
//! folder for each page.
use super::markdown::{Block, Plan};
use super::{repo, Runtimes};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one block may run.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(300);

/// One page's terminal session.
pub(crate) struct Session {
    dir: PathBuf,
    state: PathBuf,
    port: u16,
    groups: Vec<u32>,
    n: usize,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

impl Session {
    /// Ends a page and opens the next in the same folder: whatever the page started is
    /// stopped (waited for: a server flushes its indexes on SIGTERM, and the next page's
    /// opens the same data directory), the variables and directory start afresh, and the
    /// next page gets a port of its own.
    pub(crate) fn next_page(&mut self) {
        self.stop(Duration::from_secs(20));
        std::fs::write(&self.state, format!("cd {}\n", shell_quote(&self.dir))).unwrap();
        self.port = free_port();
    }

    /// Stops what the session started: SIGTERM, up to `grace` to end, then SIGKILL.
    fn stop(&mut self, grace: Duration) {
        for g in &self.groups {
            kill_group(*g, "TERM");
        }
        let start = Instant::now();
        while start.elapsed() < grace && self.groups.iter().any(|g| group_alive(*g)) {
            std::thread::sleep(Duration::from_millis(50));
        }
        for g in self.groups.drain(..) {
            kill_group(g, "KILL");
        }
    }

    pub(crate) fn new(root: &Path, rt: &Runtimes) -> Self {
        let dir = root.to_path_buf();
        copy_dir(&repo().join("examples"), &dir.join("examples"));
        // The benchmark files, where they are, by their names (`locomo10_dev.json`).
        if let Some(data) = &rt.data {
            for sub in std::fs::read_dir(data).into_iter().flatten().flatten() {
                for f in std::fs::read_dir(sub.path())
                    .into_iter()
                    .flatten()
                    .flatten()
                {
                    if f.path().is_file() {
                        let _ = std::os::unix::fs::symlink(f.path(), dir.join(f.file_name()));
                    }
                }
            }
        }
        let doc = dir.join(".doc");
        std::fs::create_dir_all(&doc).unwrap();
        let state = doc.join("state.sh");
        std::fs::write(&state, format!("cd {}\n", shell_quote(&dir))).unwrap();
        // The TypeScript client resolves as `cairn-client`, and its dev dependencies (`ai`,
        // `zod`) as themselves, from the page's folder.
        let ts = repo().join("clients/typescript");
        let modules = dir.join("node_modules");
        std::fs::create_dir_all(&modules).unwrap();
        if let Ok(entries) = std::fs::read_dir(ts.join("node_modules")) {
            for e in entries.flatten() {
                let _ = std::os::unix::fs::symlink(e.path(), modules.join(e.file_name()));
            }
        }
        let _ = std::os::unix::fs::symlink(&ts, modules.join("cairn-client"));
        Self {
            dir,
            state,
            port: free_port(),
            groups: Vec::new(),
            n: 0,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Runs one block; `Err` says why it failed, with its output.
    pub(crate) fn run(&mut self, block: &Block, rt: &Runtimes) -> Result<(), String> {
        self.n += 1;
        let doc = self.dir.join(".doc");
        let code = block.code.replace(":7700", &format!(":{}", self.port));
        let cairn_bin = Path::new(env!("CARGO_BIN_EXE_cairn"));
        let path = format!(
            "{}:{}",
            cairn_bin.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let body = match &block.plan {
            Plan::Shell => code,
            Plan::Python => {
                let file = doc.join(format!("block-{}.py", self.n));
                std::fs::write(&file, code).unwrap();
                format!("exec python3 {}\n", shell_quote(&file))
            }
            Plan::TypeScript => {
                let file = doc.join(format!("block-{}.ts", self.n));
                std::fs::write(&file, code).unwrap();
                let runner = doc.join("run-ts.mjs");
                std::fs::write(&runner, TS_RUNNER).unwrap();
                format!(
                    "exec node {} {} {}\n",
                    shell_quote(&runner),
                    shell_quote(
                        &repo()
                            .join("clients/typescript/node_modules/typescript/lib/typescript.js")
                    ),
                    shell_quote(&file)
                )
            }
            other => unreachable!("{other:?} does not run"),
        };
        // The session's variables and directory come in, and go out again on exit.
        let script = format!(
            "set -a\n. {state}\nset +a\ntrap '__cairn_doc_save' EXIT\n__cairn_doc_save() {{\n  {{ declare -p | grep -vE '{ignored}'; echo \"cd $(printf %q \"$PWD\")\"; }} > {state}.new 2>/dev/null && mv {state}.new {state}\n}}\nset -eo pipefail\n{body}",
            state = shell_quote(&self.state),
            ignored = IGNORED_VARS,
        );
        let script_file = doc.join(format!("block-{}.sh", self.n));
        std::fs::write(&script_file, script).unwrap();
        let out_file = doc.join(format!("block-{}.out", self.n));
        let out = std::fs::File::create(&out_file).unwrap();
        let mut cmd = Command::new("bash");
        cmd.arg("--noprofile")
            .arg("--norc")
            .arg(&script_file)
            .current_dir(&self.dir)
            .env("PATH", path)
            .env("CAIRN_BIND", format!("127.0.0.1:{}", self.port))
            .env("CAIRN_URL", self.url())
            .env("PYTHONPATH", repo().join("clients/python"))
            .env("REPO", repo())
            .env_remove("CAIRN_DIR")
            .env_remove("CAIRN_ADMIN_KEY")
            .env_remove("CAIRN_API_KEY")
            .env_remove("CAIRN_STORE")
            .env_remove("CAIRN_CONFIG")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        if let Some(data) = &rt.data {
            cmd.env("CAIRN_DATA_DIR", data);
        }
        if block.needs.as_deref() == Some("postgres") {
            if let Some(url) = &rt.postgres {
                cmd.env("CAIRN_STORE", url);
            }
        }
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().map_err(|e| format!("starting bash: {e}"))?;
        self.groups.push(child.id());
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if start.elapsed() > BLOCK_TIMEOUT {
                kill_group(child.id(), "KILL");
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let output = std::fs::read_to_string(&out_file).unwrap_or_default();
        let failed = |why: &str| Err(format!("{why}\n--- output ---\n{}", tail(&output)));
        match status {
            None => return failed(&format!("timed out after {BLOCK_TIMEOUT:?}")),
            Some(s) if s.success() && block.fails => {
                return failed("succeeded, but its marker says it fails")
            }
            Some(s) if !s.success() && !block.fails => return failed(&format!("exited with {s}")),
            _ => {}
        }
        if block.serve {
            self.wait_for_server()
                .map_err(|e| format!("{e}\n{}", tail(&output)))?;
        }
        Ok(())
    }

    fn wait_for_server(&self) -> Result<(), String> {
        let health = format!("{}/v1/health", self.url());
        let start = Instant::now();
        let agent = cairn_load::client::agent(Duration::from_secs(5));
        while start.elapsed() < Duration::from_secs(120) {
            let answer = cairn_load::client::send(&agent, "GET", &health, &[], None);
            if answer.is_ok_and(|r| r.status == 200) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!("no server answered {health} within 120 s"))
    }

    pub(crate) fn write_file(&self, path: &str, content: &str) {
        let p = self.dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // A server flushes its indexes on SIGTERM; give it a moment, then end the rest.
        self.stop(Duration::from_millis(300));
    }
}

/// Whether any process of a group is left.
fn group_alive(pgid: u32) -> bool {
    Command::new("kill")
        .args(["-0", "--"])
        .arg(format!("-{pgid}"))
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn kill_group(pgid: u32, signal: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg("--")
        .arg(format!("-{pgid}"))
        .stderr(Stdio::null())
        .status();
}

/// Variables of bash itself, which a session must not carry from block to block.
const IGNORED_VARS: &str = "^declare -[a-zA-Z]*r|^declare -[-a-zA-Z]* (BASH[A-Z_]*|BASHOPTS|SHELLOPTS|EUID|PPID|UID|GROUPS|FUNCNAME|PIPESTATUS|DIRSTACK|HIST[A-Z]*|LINENO|RANDOM|SECONDS|SRANDOM|EPOCH[A-Z]*|OPTIND|OPTERR|IFS|PS[0-9]|_|COLUMNS|LINES|SHLVL|PWD|OLDPWD|HOSTNAME|HOSTTYPE|MACHTYPE|OSTYPE|TERM|COMP_WORDBREAKS|MAILCHECK)=";

/// Transpiles a TypeScript block with the client's own compiler and runs it as a module.
const TS_RUNNER: &str = r#"
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [typescript, file] = process.argv.slice(2);
const ts = createRequire(import.meta.url)(typescript);
const out = ts.transpileModule(readFileSync(file, "utf8"), {
  compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
});
const js = file.replace(/\.ts$/, ".mjs");
writeFileSync(js, out.outputText);
await import(pathToFileURL(js).href);
"#;

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}
