//! The doc-example test: every example block of README.md, docs/ and the clients' READMEs
//! runs here, so a documented example is a tested example (docs/README.md, "How the
//! examples are tested", is the guide for writers).
//!
//! A page is one terminal session: its blocks run in order in a fresh folder (holding a
//! copy of `examples/`), and what a shell block exports or the directory it changes to
//! carries on to the next block, as it would for a reader typing them. `cairn` is the
//! binary under test; `CAIRN_BIND` and `CAIRN_URL` name a free port, and `:7700` in a
//! block is rewritten to it, so pages never meet another server. Whatever a page started
//! (a `cairn serve &`) is stopped when the page ends.
//!
//! How a block runs comes from its language: `sh`/`bash`/`console` run in bash (`-e`,
//! `pipefail`), `python` in python3 with the checkout's client, `ts`/`js` in node with the
//! checkout's TypeScript client (transpiled by its own `typescript`), `json` and `toml`
//! are parsed (TOML as `cairn.toml`), `rust` blocks are doctests of the `cairn` crate (the
//! page must be included there), `text` is output. A marker on the line before a block
//! changes that, and every block that does not run is counted with its reason:
//!
//! - `<!-- doc-test: skip: REASON -->` does not run it (docker, a remote host, ...);
//! - `<!-- doc-test: file: PATH -->` writes it to PATH for later blocks, and checks it;
//! - `<!-- doc-test: fails -->` runs it and wants a non-zero exit (an error shown);
//! - `<!-- doc-test: serve -->` runs it, then waits until `$CAIRN_URL/v1/health` answers;
//! - `<!-- doc-test: needs: data -->` runs it only where the benchmark data is (a skip
//!   otherwise); `needs: postgres` only with `CAIRN_TEST_DATABASE_URL` (exported to the
//!   block as `CAIRN_STORE`; a failure under `CAIRN_REQUIRE_POSTGRES`);
//! - `<!-- doc-test: page skip: REASON -->`, before any block, is the default of a page.
//!
//! Without Python's `httpx` or the TypeScript client's `node_modules`, their blocks are
//! skipped and said so; `CAIRN_REQUIRE_DOCS` (set by `.ci/run`) makes that a failure.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one block may run.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(300);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pages whose examples are tested, relative to the repository.
fn pages() -> Vec<PathBuf> {
    let root = repo();
    let mut out = vec![
        PathBuf::from("README.md"),
        PathBuf::from("clients/python/README.md"),
        PathBuf::from("clients/typescript/README.md"),
    ];
    let mut stack = vec![root.join("docs")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                // Run folders hold benchmark outputs (their METHODOLOGY.md is generated).
                if p.file_name().is_some_and(|n| n != "runs") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p.strip_prefix(&root).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// What a marker (or the language) says to do with a block.
#[derive(Debug, Clone, PartialEq)]
enum Plan {
    Shell,
    Python,
    TypeScript,
    Json,
    Toml,
    Rust,
    Output,
    File(String),
    Skip(String),
}

#[derive(Debug, Clone)]
struct Block {
    line: usize,
    lang: String,
    code: String,
    plan: Plan,
    fails: bool,
    serve: bool,
    needs: Option<String>,
}

/// The fenced blocks of a page with their plans; an error for a block that says nothing
/// of how it runs, or a marker that means nothing.
fn parse(page: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = page.lines().collect();
    let mut blocks = Vec::new();
    let mut page_skip: Option<String> = None;
    let mut marker: Option<(usize, String)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        if let Some(m) = line
            .strip_prefix("<!-- doc-test:")
            .and_then(|m| m.trim_end().strip_suffix("-->"))
        {
            let m = m.trim();
            if let Some(reason) = m.strip_prefix("page skip:") {
                if !blocks.is_empty() {
                    return Err(format!("line {}: a page marker after a block", i + 1));
                }
                page_skip = Some(reason.trim().to_string());
            } else {
                marker = Some((i, m.to_string()));
            }
            i += 1;
            continue;
        }
        let fence = if line.starts_with("```") {
            "```"
        } else if line.starts_with("~~~") {
            "~~~"
        } else {
            if !line.is_empty() {
                // A marker belongs to the block right after it (blank lines aside).
                if let Some((at, _)) = marker.take() {
                    return Err(format!("line {}: a marker not followed by a block", at + 1));
                }
            }
            i += 1;
            continue;
        };
        let indent = lines[i].len() - line.len();
        let lang = line[3..]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string();
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !lines[end].trim_start().starts_with(fence) {
            end += 1;
        }
        let code: Vec<&str> = lines[start..end.min(lines.len())]
            .iter()
            .map(|l| {
                l.get(indent.min(l.len() - l.trim_start().len())..)
                    .unwrap_or(l)
            })
            .collect();
        let mut block = Block {
            line: start,
            lang: lang.clone(),
            code: code.join("\n") + "\n",
            plan: Plan::Output,
            fails: false,
            serve: false,
            needs: None,
        };
        let directive = marker.take().map(|(_, m)| m);
        block.plan = plan(
            &lang,
            directive.as_deref(),
            &mut block,
            page_skip.as_deref(),
        )
        .map_err(|e| format!("line {start}: {e}"))?;
        blocks.push(block);
        i = end + 1;
    }
    Ok(blocks)
}

fn plan(
    lang: &str,
    directive: Option<&str>,
    block: &mut Block,
    page_skip: Option<&str>,
) -> Result<Plan, String> {
    let by_lang = || -> Result<Plan, String> {
        Ok(match lang {
            "sh" | "bash" | "shell" | "console" => Plan::Shell,
            "python" | "py" => Plan::Python,
            "ts" | "typescript" | "js" | "javascript" => Plan::TypeScript,
            "json" | "jsonl" => Plan::Json,
            "toml" => Plan::Toml,
            "rust" => Plan::Rust,
            "text" => Plan::Output,
            other => {
                return Err(format!(
                    "a ```{other} block needs a marker saying how it runs (<!-- doc-test: ... -->)"
                ))
            }
        })
    };
    let Some(d) = directive else {
        return match page_skip {
            Some(reason) if lang != "text" => Ok(Plan::Skip(reason.to_string())),
            _ => by_lang(),
        };
    };
    let mut plan = by_lang();
    // `skip:` takes the rest of the marker as its reason, semicolons and all.
    let (d, skip) = match d.find("skip:") {
        Some(at) => (&d[..at], Some(d[at + "skip:".len()..].trim())),
        None => (d, None),
    };
    if let Some(reason) = skip {
        plan = Ok(Plan::Skip(reason.to_string()));
    }
    for part in d.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some(path) = part.strip_prefix("file:") {
            plan = Ok(Plan::File(path.trim().to_string()));
        } else if let Some(what) = part.strip_prefix("needs:") {
            block.needs = Some(what.trim().to_string());
        } else if part == "fails" {
            block.fails = true;
        } else if part == "serve" {
            block.serve = true;
        } else if part == "run" {
            // Runs by its language even on a page skipped by default.
        } else {
            return Err(format!("unknown doc-test marker {part:?}"));
        }
    }
    plan
}

/// What ran, what was checked and what was not, and why.
#[derive(Default)]
struct Tally {
    ran: usize,
    checked: usize,
    output: usize,
    skipped: BTreeMap<String, usize>,
    failures: Vec<String>,
}

/// Which languages can run here, or why not.
struct Runtimes {
    python: Result<(), String>,
    node: Result<(), String>,
    data: Option<PathBuf>,
    postgres: Option<String>,
    /// The test database and the schema made for this run (dropped at its end).
    pg_schema: Option<(String, String)>,
}

impl Runtimes {
    fn probe() -> Self {
        let python = Command::new("python3")
            .args(["-c", "import httpx"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|_| ())
            .ok_or_else(|| {
                "Python blocks need python3 with httpx (pip install './clients/python[test,adapters]')".to_string()
            });
        let ts = repo().join("clients/typescript");
        let node = match (
            Command::new("node").arg("--version").output().is_ok(),
            ts.join("node_modules/typescript").is_dir(),
            ts.join("dist/index.js").is_file(),
        ) {
            (true, true, true) => Ok(()),
            _ => Err("TypeScript blocks need node and `npm ci` in clients/typescript".to_string()),
        };
        let data = Some(cairn_testkit::fixtures::data_dir()).filter(|p| p.is_dir());
        let base = std::env::var("CAIRN_TEST_DATABASE_URL").ok();
        let (postgres, pg_schema) = match base.map(own_schema) {
            Some((url, schema)) => (Some(url), schema),
            None => (None, None),
        };
        Self {
            python,
            node,
            data,
            postgres,
            pg_schema,
        }
    }
}

impl Drop for Runtimes {
    fn drop(&mut self) {
        if let Some((base, schema)) = &self.pg_schema {
            let _ = Command::new("psql")
                .arg(base)
                .args(["-q", "-c"])
                .arg(format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                .output();
        }
    }
}

/// The test database's URL with a schema of this run's own as its search path (made with
/// `psql`; without it, the URL as given), and the schema to drop.
fn own_schema(url: String) -> (String, Option<(String, String)>) {
    let schema = format!("cairn_docs_{}", std::process::id());
    let made = Command::new("psql")
        .arg(&url)
        .args(["-q", "-c"])
        .arg(format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .output()
        .is_ok_and(|o| o.status.success());
    if !made {
        return (url, None);
    }
    let sep = if url.contains('?') { '&' } else { '?' };
    let scoped = format!("{url}{sep}options=-c%20search_path%3D{schema},public");
    (scoped, Some((url, schema)))
}

/// One page's terminal session.
struct Session {
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
    fn new(root: &Path, rt: &Runtimes) -> Self {
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
    fn run(&mut self, block: &Block, rt: &Runtimes) -> Result<(), String> {
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
        while start.elapsed() < Duration::from_secs(120) {
            if ureq::get(&health).call().is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!("no server answered {health} within 120 s"))
    }

    fn write_file(&self, path: &str, content: &str) {
        let p = self.dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        for g in &self.groups {
            kill_group(*g, "TERM");
        }
        // A server flushes its indexes on SIGTERM; give it a moment, then end the rest.
        std::thread::sleep(Duration::from_millis(300));
        for g in &self.groups {
            kill_group(*g, "KILL");
        }
    }
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

/// Checks a block that is data, not a program.
fn check(block: &Block) -> Result<(), String> {
    match (&block.plan, block.lang.as_str()) {
        (Plan::Json, _) | (Plan::File(_), "json" | "jsonl") => {
            let whole = serde_json::from_str::<serde_json::Value>(&block.code);
            if whole.is_ok() {
                return Ok(());
            }
            // JSONL: one value per line.
            for (i, l) in block.code.lines().enumerate() {
                if !l.trim().is_empty() {
                    serde_json::from_str::<serde_json::Value>(l)
                        .map_err(|e| format!("line {} of the block: not JSON: {e}", i + 1))?;
                }
            }
            Ok(())
        }
        (Plan::Toml, _) | (Plan::File(_), "toml") => {
            // As `cairn` reads its configuration file.
            let tmp = tempfile::tempdir().unwrap();
            let file = tmp.path().join("cairn.toml");
            std::fs::write(&file, &block.code).unwrap();
            let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
                .arg("--config-file")
                .arg(&file)
                .arg("config")
                .output()
                .map_err(|e| e.to_string())?;
            match out.status.success() {
                true => Ok(()),
                false => Err(format!(
                    "not a valid cairn.toml: {}",
                    String::from_utf8_lossy(&out.stderr)
                )),
            }
        }
        _ => Ok(()),
    }
}

/// A page whose ```rust blocks are doctests of the `cairn` crate.
fn included_as_doctest(page: &Path) -> bool {
    let lib = std::fs::read_to_string(repo().join("crates/cairn/src/lib.rs")).unwrap();
    lib.contains(&format!("include_str!(\"../../../{}\")", page.display()))
}

fn run_page(page: &Path, rt: &Runtimes, tally: &mut Tally) {
    let text = std::fs::read_to_string(repo().join(page)).unwrap();
    let blocks = match parse(&text) {
        Ok(b) => b,
        Err(e) => {
            tally.failures.push(format!("{}: {e}", page.display()));
            return;
        }
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut session = Session::new(tmp.path(), rt);
    let require = std::env::var_os("CAIRN_REQUIRE_DOCS").is_some();
    for b in &blocks {
        let at = format!("{}:{} (```{})", page.display(), b.line, b.lang);
        let skip = |tally: &mut Tally, reason: String, fatal: bool| {
            if fatal {
                tally.failures.push(format!("{at}: cannot run: {reason}"));
            }
            *tally.skipped.entry(reason).or_default() += 1;
        };
        match &b.plan {
            Plan::Skip(reason) => {
                skip(tally, reason.clone(), false);
                continue;
            }
            Plan::Output => {
                tally.output += 1;
                continue;
            }
            Plan::Rust => {
                if included_as_doctest(page) {
                    tally.checked += 1;
                } else {
                    tally.failures.push(format!(
                        "{at}: a rust block of a page that crates/cairn/src/lib.rs does not include as a doctest"
                    ));
                }
                continue;
            }
            Plan::Json | Plan::Toml | Plan::File(_) => {
                match check(b) {
                    Ok(()) => tally.checked += 1,
                    Err(e) => tally.failures.push(format!("{at}: {e}")),
                }
                if let Plan::File(path) = &b.plan {
                    session.write_file(path, &b.code);
                }
                continue;
            }
            Plan::Python => {
                if let Err(why) = &rt.python {
                    skip(tally, why.clone(), require);
                    continue;
                }
            }
            Plan::TypeScript => {
                if let Err(why) = &rt.node {
                    skip(tally, why.clone(), require);
                    continue;
                }
            }
            Plan::Shell => {}
        }
        match b.needs.as_deref() {
            Some("data") if rt.data.is_none() => {
                skip(
                    tally,
                    "needs the benchmark data (CAIRN_DATA_DIR)".into(),
                    false,
                );
                continue;
            }
            Some("postgres") if rt.postgres.is_none() => {
                let fatal = std::env::var_os("CAIRN_REQUIRE_POSTGRES").is_some();
                skip(
                    tally,
                    "needs PostgreSQL (CAIRN_TEST_DATABASE_URL)".into(),
                    fatal,
                );
                continue;
            }
            Some("data" | "postgres") | None => {}
            Some(other) => {
                tally
                    .failures
                    .push(format!("{at}: unknown need {other:?} (data, postgres)"));
                continue;
            }
        }
        let start = Instant::now();
        match session.run(b, rt) {
            Ok(()) => {
                tally.ran += 1;
                eprintln!("ok   {at} ({:.1} s)", start.elapsed().as_secs_f64());
            }
            Err(e) => {
                eprintln!("FAIL {at}");
                tally
                    .failures
                    .push(format!("{at}: {e}\n--- block ---\n{}", b.code));
                // Later blocks of the page build on this one.
                let left = blocks.iter().filter(|x| x.line > b.line).count();
                if left > 0 {
                    *tally
                        .skipped
                        .entry(format!("after a failure in {}", page.display()))
                        .or_default() += left;
                }
                return;
            }
        }
    }
}

fn model_installed() -> bool {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--dir")
        .arg(tmp.path().join("data"))
        .args(["ingest", "--format", "jsonl", "--space", "probe"])
        .arg(&empty)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && err.contains("embedding model") {
        cairn_testkit::model_missing(err.trim());
        return false;
    }
    true
}

#[test]
fn every_documented_example_runs() {
    if !model_installed() {
        return;
    }
    let rt = Runtimes::probe();
    let only = std::env::var("CAIRN_DOC_PAGE").ok();
    let mut tally = Tally::default();
    for page in pages() {
        if only
            .as_deref()
            .is_some_and(|o| !page.to_string_lossy().contains(o))
        {
            continue;
        }
        run_page(&page, &rt, &mut tally);
    }
    eprintln!(
        "doc examples: {} ran, {} checked, {} output shown, {} not run:",
        tally.ran,
        tally.checked,
        tally.output,
        tally.skipped.values().sum::<usize>()
    );
    for (reason, n) in &tally.skipped {
        eprintln!("  {n} x {reason}");
    }
    assert!(
        tally.failures.is_empty(),
        "{} doc example(s) failed:\n\n{}",
        tally.failures.len(),
        tally.failures.join("\n\n")
    );
    assert!(tally.ran > 0, "no example ran");
}

#[cfg(test)]
mod parsing {
    use super::*;

    #[test]
    fn markers_languages_and_pages() {
        let page = "<!-- doc-test: page skip: records of runs -->\n\n```sh\ncairn bench\n```\n\n<!-- doc-test: run -->\n```sh\ncairn spaces\n```\n```text\nout\n```\n";
        let b = parse(page).unwrap();
        assert_eq!(b[0].plan, Plan::Skip("records of runs".into()));
        assert_eq!(b[1].plan, Plan::Shell);
        assert_eq!(b[2].plan, Plan::Output);
        let b = parse("<!-- doc-test: file: a.toml -->\n```toml\nx = 1\n```\n<!-- doc-test: fails; serve -->\n\n```bash\nfalse\n```\n<!-- doc-test: needs: data; skip: a; b -->\n```sh\nx\n```\n").unwrap();
        assert_eq!(b[2].plan, Plan::Skip("a; b".into()));
        assert_eq!(b[2].needs.as_deref(), Some("data"));
        assert_eq!(b[0].plan, Plan::File("a.toml".into()));
        assert!(b[1].fails && b[1].serve && b[1].plan == Plan::Shell);
        assert!(parse("```yaml\na: 1\n```\n")
            .unwrap_err()
            .contains("needs a marker"));
        assert!(parse("<!-- doc-test: maybe -->\n```sh\nx\n```\n")
            .unwrap_err()
            .contains("unknown"));
        assert!(parse("<!-- doc-test: fails -->\ntext\n```sh\nx\n```\n")
            .unwrap_err()
            .contains("not followed"));
        // An indented block (in a list) loses its indent.
        let b = parse("- item\n\n  ```sh\n  echo hi\n  ```\n").unwrap();
        assert_eq!(b[0].code, "echo hi\n");
    }
}

/// The clients' versions the docs name are the packages' own (they drifted before).
#[test]
fn client_versions_in_the_docs_are_the_packages() {
    let read = |p: &str| std::fs::read_to_string(repo().join(p)).unwrap();
    let py = read("clients/python/pyproject.toml")
        .lines()
        .find_map(|l| l.strip_prefix("version = "))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap();
    let ts: serde_json::Value =
        serde_json::from_str(&read("clients/typescript/package.json")).unwrap();
    let ts = ts["version"].as_str().unwrap().to_string();
    let expect = [
        ("docs/clients.md", format!("Python: `cairn-client` {py}")),
        (
            "docs/clients.md",
            format!("TypeScript: `cairn-client` {ts}"),
        ),
        ("docs/clients.md", format!("cairn-client-{ts}.tgz")),
        ("clients/python/README.md", format!("Version {py}")),
        ("clients/typescript/README.md", format!("Version {ts}")),
        (
            "clients/typescript/README.md",
            format!("cairn-client-{ts}.tgz"),
        ),
    ];
    for (page, text) in expect {
        assert!(read(page).contains(&text), "{page} should say {text:?}");
    }
}
