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
//! Readers follow the pages in order on one machine, so a page must also run after the
//! others: `docs_in_sequence` runs every page in the reading order of docs/README.md (the
//! README first, then the pages its list links, then the rest by name) in ONE folder, so
//! one data directory: each page a new terminal there (variables and directory afresh,
//! what the previous page started stopped, a port of its own), what the pages before it
//! stored still stored. Blocks that need the benchmark data or PostgreSQL run only in the
//! per-page test (their stores are their own). A failure says `in sequence` and which
//! page it came after. With `CAIRN_DOC_PAGE`, the sequence stops after that page (what a
//! reader who arrives there has run). The two tests take turns (`TURNS`): together they
//! would race for the CPU, and for the PostgreSQL schema of this process.
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
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

/// The doc tests run one at a time (see the module docs).
static TURNS: Mutex<()> = Mutex::new(());

pub(crate) fn repo() -> PathBuf {
    cairn_testkit::fixtures::workspace_root()
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

/// The pages in the order a reader meets them: the README, the pages docs/README.md
/// links (in its order), then the rest by name.
fn reading_order() -> Vec<PathBuf> {
    let all = pages();
    let index = std::fs::read_to_string(repo().join("docs/README.md")).unwrap();
    let mut order = vec![PathBuf::from("README.md")];
    for link in index.split("](").skip(1) {
        let Some(target) = link.split(')').next() else {
            continue;
        };
        let page = normalize(&Path::new("docs").join(target.split('#').next().unwrap()));
        if all.contains(&page) && !order.contains(&page) {
            order.push(page);
        }
    }
    for p in all {
        if !order.contains(&p) {
            order.push(p);
        }
    }
    order
}

/// A relative path with its `..` segments resolved (`docs/../README.md` -> `README.md`).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[path = "doc_examples/markdown.rs"]
mod markdown;
#[path = "doc_examples/session.rs"]
mod session;

use markdown::{parse, Block, Plan};
use session::Session;

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
pub(crate) struct Runtimes {
    pub(crate) python: Result<(), String>,
    pub(crate) node: Result<(), String>,
    pub(crate) data: Option<PathBuf>,
    pub(crate) postgres: Option<String>,
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

/// How a page runs: alone, in a fresh folder, or in sequence after the pages named.
enum Run<'a> {
    Alone,
    After(&'a [PathBuf]),
}

fn run_page(page: &Path, session: &mut Session, how: &Run, rt: &Runtimes, tally: &mut Tally) {
    let text = std::fs::read_to_string(repo().join(page)).unwrap();
    let blocks = match parse(&text) {
        Ok(b) => b,
        Err(e) => {
            tally.failures.push(format!("{}: {e}", page.display()));
            return;
        }
    };
    let require = std::env::var_os("CAIRN_REQUIRE_DOCS").is_some();
    for b in &blocks {
        let at = match how {
            Run::Alone => format!("{}:{} (```{})", page.display(), b.line, b.lang),
            Run::After(before) => format!(
                "in sequence, {}:{} (```{}) after {}",
                page.display(),
                b.line,
                b.lang,
                after(before)
            ),
        };
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
            Some(_) if matches!(how, Run::After(_)) => {
                // Their stores are their own (benchmark spaces, a PostgreSQL schema, fixed
                // ports): the per-page test runs them.
                skip(
                    tally,
                    "in sequence: runs in the per-page test".into(),
                    false,
                );
                continue;
            }
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
                    let prefix = match how {
                        Run::Alone => "",
                        Run::After(_) => "in sequence, ",
                    };
                    *tally
                        .skipped
                        .entry(format!("{prefix}after a failure in {}", page.display()))
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

/// The pages a page ran after, for its failures: the last one and how many before it.
fn after(before: &[PathBuf]) -> String {
    match before {
        [] => "no other page".to_string(),
        [one] => one.display().to_string(),
        [.., last] => {
            let n = before.len() - 1;
            let pages = if n == 1 { "page" } else { "pages" };
            format!("{} (and the {n} {pages} before it)", last.display())
        }
    }
}

/// Whether `CAIRN_DOC_PAGE` (when set) names this page.
fn asked_for(page: &Path, only: Option<&str>) -> bool {
    only.is_none_or(|o| page.to_string_lossy().contains(o))
}

#[test]
fn every_documented_example_runs() {
    let _turn = TURNS.lock().unwrap_or_else(|e| e.into_inner());
    if !model_installed() {
        return;
    }
    let rt = Runtimes::probe();
    let only = std::env::var("CAIRN_DOC_PAGE").ok();
    let mut tally = Tally::default();
    for page in pages() {
        if !asked_for(&page, only.as_deref()) {
            continue;
        }
        let tmp = tempfile::tempdir().unwrap();
        let mut session = Session::new(tmp.path(), &rt);
        run_page(&page, &mut session, &Run::Alone, &rt, &mut tally);
    }
    report("doc examples", &tally);
}

/// Every page after the pages before it in the reading order, in one folder and data
/// directory (see the module docs).
#[test]
fn docs_in_sequence() {
    let _turn = TURNS.lock().unwrap_or_else(|e| e.into_inner());
    if !model_installed() {
        return;
    }
    let rt = Runtimes::probe();
    let only = std::env::var("CAIRN_DOC_PAGE").ok();
    let order = reading_order();
    let last = match &only {
        Some(o) => order.iter().position(|p| asked_for(p, Some(o))),
        None => order.len().checked_sub(1),
    };
    let Some(last) = last else {
        return;
    };
    let mut tally = Tally::default();
    let tmp = tempfile::tempdir().unwrap();
    let mut session = Session::new(tmp.path(), &rt);
    for (i, page) in order[..=last].iter().enumerate() {
        eprintln!("in sequence: {}", page.display());
        run_page(
            page,
            &mut session,
            &Run::After(&order[..i]),
            &rt,
            &mut tally,
        );
        session.next_page();
    }
    report("doc examples in sequence", &tally);
}

/// Prints what ran and why the rest did not; fails on any failure.
fn report(what: &str, tally: &Tally) {
    eprintln!(
        "{what}: {} ran, {} checked, {} output shown, {} not run:",
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
    // The TypeScript client's tests run on the Node versions the package supports: no
    // dev dependency may need a newer one (`ai` 7 needed Node 22 under `node >= 18`).
    let min = |v: &serde_json::Value| -> u32 {
        let s = v.as_str().unwrap_or(">=0");
        s.trim_start_matches(">=")
            .split('.')
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let pkg: serde_json::Value =
        serde_json::from_str(&read("clients/typescript/package.json")).unwrap();
    let lock: serde_json::Value =
        serde_json::from_str(&read("clients/typescript/package-lock.json")).unwrap();
    let supported = min(&pkg["engines"]["node"]);
    for dep in pkg["devDependencies"].as_object().unwrap().keys() {
        let needs = &lock["packages"][format!("node_modules/{dep}")]["engines"]["node"];
        if needs.is_string() {
            assert!(
                min(needs) <= supported,
                "{dep} needs node {needs}, the package says >={supported}"
            );
        }
    }
}
