//! The headline tables of `docs/benchmarks/README.md`, generated from run folders
//! (`cairn bench headline`), so the page shows what the runs hold and nothing typed by
//! hand. The page names its runs in a marker line and the tables follow it:
//!
//! ```text
//! <!-- headline: longmemeval-s-dev locomo-dev evermembench-fixture -->
//! ...generated...
//! <!-- headline: end -->
//! ```
//!
//! Run names are folders beside the page under `runs/`. `--check` fails when the page's
//! tables are not what the runs render (a test runs it).
use super::{f3, ms};
use anyhow::{bail, Context as _};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const BEGIN: &str = "<!-- headline:";
const END: &str = "<!-- headline: end -->";

/// The run names of the page's marker, and where the generated part starts and ends.
fn section(page: &str) -> anyhow::Result<(Vec<String>, usize, usize)> {
    let start = page
        .find(BEGIN)
        .with_context(|| format!("no `{BEGIN} RUN ... -->` marker"))?;
    let line_end = start + page[start..].find("-->").context("unclosed marker")? + 3;
    let runs: Vec<String> = page[start + BEGIN.len()..line_end - 3]
        .split_whitespace()
        .map(str::to_string)
        .collect();
    if runs.is_empty() || runs == ["end"] {
        bail!("the first `{BEGIN}` marker names no runs");
    }
    let end = page[line_end..]
        .find(END)
        .map(|e| line_end + e)
        .with_context(|| format!("no `{END}` after the marker"))?;
    Ok((runs, line_end, end))
}

fn summary(dir: &Path) -> anyhow::Result<Value> {
    let p = dir.join("summary.json");
    let text = std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", p.display()))
}

/// The generated part: the retrieval table of the retrieval runs, the accuracy figures of
/// the others, and where each run came from.
pub fn render(runs_dir: &Path, runs: &[String]) -> anyhow::Result<String> {
    let mut retrieval = Vec::new();
    let mut evermem = Vec::new();
    let mut lme_v2 = Vec::new();
    let mut provenance = String::new();
    for name in runs {
        let dir = runs_dir.join(name);
        let s = summary(&dir)?;
        let meta = &s["meta"];
        let _ = writeln!(
            provenance,
            "- `{name}`: {} {} at git `{}`, {}{}",
            meta["dataset"].as_str().unwrap_or("?"),
            meta["data_path"]
                .as_str()
                .and_then(|p| Path::new(p).file_name())
                .map(|f| format!("(`{}`)", f.to_string_lossy()))
                .unwrap_or_default(),
            meta["git_sha"].as_str().unwrap_or("?"),
            meta["finished_at"]
                .as_str()
                .map(|t| t.get(..10).unwrap_or(t))
                .unwrap_or("?"),
            if s["complete"] == true {
                ""
            } else {
                ", incomplete"
            },
        );
        match meta["dataset"].as_str() {
            Some("longmemeval" | "locomo" | "friendsqa") => retrieval.push(dir),
            Some("evermembench") => evermem.push((name.clone(), s)),
            Some("lme-v2") => lme_v2.push((name.clone(), s)),
            other => bail!("{name}: no headline for dataset {other:?}"),
        }
    }
    let mut out = String::from("\n");
    if !retrieval.is_empty() {
        out.push_str("**Retrieval** (abstention and LoCoMo category 5 excluded; `defaults` is what an agent gets out of the box, `bench` the ten-hit row):\n\n");
        out.push_str(&super::retrieval::compare(&retrieval)?);
        out.push('\n');
    }
    if !evermem.is_empty() {
        evermem_table(&mut out, &evermem);
    }
    if !lme_v2.is_empty() {
        lme_v2_table(&mut out, &lme_v2);
    }
    out.push_str("Runs (folders under `runs/`, each with its METHODOLOGY.md and every per-question record):\n\n");
    out.push_str(&provenance);
    out.push('\n');
    Ok(out)
}

/// The EverMemBench runs' table: a line per run and config row.
fn evermem_table(out: &mut String, runs: &[(String, Value)]) {
    out.push_str("**EverMemBench** (multi-party group chats; multiple choice answered by the option scorer over the recalled evidence, no LLM):\n\n");
    out.push_str("| run | config | multiple choice | accuracy | question only | chance | open: mean coverage |\n|---|---|---:|---:|---:|---:|---:|\n");
    for (name, s) in runs {
        for row in s["rows"].as_array().into_iter().flatten() {
            let mc = &row["overall"]["multiple_choice"];
            let _ = writeln!(
                out,
                "| {name} | `{}` | {} | {} | {} | {} | {} |",
                row["config"].as_str().unwrap_or("?"),
                mc["n"],
                num(&mc["accuracy"]),
                num(&mc["question_only_accuracy"]),
                num(&s["chance_accuracy"]),
                num(&row["overall"]["open"]["mean_coverage"]),
            );
        }
    }
    out.push('\n');
}

/// The LongMemEval-V2 runs' table: a line per run.
fn lme_v2_table(out: &mut String, runs: &[(String, Value)]) {
    out.push_str("**LongMemEval-V2** (web-agent trajectories; no reader model: whether the answer reached the context):\n\n");
    out.push_str("| run | questions | answer phrases all in context | choice accuracy | evidence run in context | evidence run's note hit | recall p50 ms |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for (name, s) in runs {
        let o = &s["overall"];
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} |",
            o["questions"],
            num(&o["phrases_all_in_context"]),
            num(&o["choice_accuracy"]),
            num(&o["evidence_in_context"]),
            num(&o["evidence_note_hit"]),
            o["recall_wall_ms"]["p50"]
                .as_f64()
                .map(ms)
                .unwrap_or_else(|| "–".into()),
        );
    }
    out.push('\n');
}

fn num(v: &Value) -> String {
    v.as_f64().map(f3).unwrap_or_else(|| "–".into())
}

/// Renders the headline of the page at `path` from its runs; writes it back, or with
/// `check` only compares. Returns whether the page was already current.
pub fn update(path: &Path, check: bool) -> anyhow::Result<bool> {
    let page =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let (runs, start, end) = section(&page).with_context(|| path.display().to_string())?;
    let runs_dir: PathBuf = path
        .parent()
        .map_or_else(|| PathBuf::from("runs"), |p| p.join("runs"));
    let fresh = render(&runs_dir, &runs)?;
    let current = page[start..end] == fresh;
    if !current && !check {
        let updated = format!("{}{fresh}{}", &page[..start], &page[end..]);
        std::fs::write(path, updated).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_names_the_runs_and_bounds_the_tables() {
        let page = "# B\n<!-- headline: a b -->\nold\n<!-- headline: end -->\nrest\n";
        let (runs, start, end) = section(page).unwrap();
        assert_eq!(runs, ["a", "b"]);
        assert_eq!(&page[start..end], "\nold\n");
        assert!(section("<!-- headline: end -->").is_err());
        assert!(section("<!-- headline: a -->\nno end").is_err());
    }

    /// The page's tables are what its runs hold: a run folder replaced, or a table edited
    /// by hand, fails here until `cairn bench headline` is run again.
    #[test]
    fn the_benchmarks_page_shows_what_its_runs_hold() {
        let page = cairn_testkit::fixtures::workspace_root().join("docs/benchmarks/README.md");
        assert!(
            update(&page, true).unwrap(),
            "docs/benchmarks/README.md is not current: run `cairn bench headline docs/benchmarks/README.md`"
        );
    }
}
