//! Starting a retrieval run: its label, the run it resumes, its config rows and the notes
//! its `run.json` carries.
use super::plan::RunPlan;
use crate::args::RunArgs;
use crate::records::retrieval::{read_results, QuestionRecord};
use crate::run::folder::latest_run;
use crate::run::rows::{config_name, config_rows, with_extra_rows};
use crate::run::{check_label, utc_stamp};
use crate::run::{ConfigRow, RunMeta};
use anyhow::{bail, Context as _};
use std::path::Path;

/// The run's label: `--run-label`, a new `<dataset>-<config>-<stamp>`, or with
/// `--resume` alone the newest such run in `--out`.
pub(super) fn resolve_label(args: &RunArgs, dataset: &str) -> anyhow::Result<String> {
    let prefix = format!("{dataset}-{}-", config_name(args.config));
    let label = match (&args.run.run_label, args.resume) {
        (Some(l), _) => l.clone(),
        (None, false) => format!("{prefix}{}", utc_stamp(chrono::Utc::now())),
        (None, true) => latest_run(&args.run.out, &prefix).with_context(|| {
            format!(
                "--resume without --run-label: no earlier run {prefix}* in {}",
                args.run.out.display()
            )
        })?,
    };
    check_label(&label)?;
    Ok(label)
}

/// The `run.json` of the run being resumed (none for a new run); refused when it ran on
/// another file.
pub(super) fn previous_meta(
    dir: &Path,
    args: &RunArgs,
    plan: &RunPlan,
) -> anyhow::Result<Option<RunMeta>> {
    let run_json = dir.join("run.json");
    if !(args.resume && run_json.is_file()) {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&run_json)
        .with_context(|| format!("reading {}", run_json.display()))?;
    let p: RunMeta =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", run_json.display()))?;
    if p.data_sha256 != plan.sha256 || p.dataset != plan.dataset {
        bail!(
            "cannot resume {}: it ran on {} {} (sha256 {}), not this file (sha256 {})",
            dir.display(),
            p.dataset,
            p.data_path,
            p.data_sha256,
            plan.sha256
        );
    }
    Ok(Some(p))
}

/// The results the run folder already holds; refused unless the run is resumed.
pub(super) fn existing_results(
    results_path: &Path,
    dir: &Path,
    resume: bool,
) -> anyhow::Result<Vec<QuestionRecord>> {
    let (existing, bad) = read_results(results_path)?;
    if !resume && (!existing.is_empty() || bad > 0) {
        bail!(
            "{} already holds results: pass --resume to continue that run, or another --run-label",
            dir.display()
        );
    }
    Ok(existing)
}

/// The config rows of the run: `--config`'s, with `--features-top-k`, the floors and the
/// peers.
pub(super) fn run_rows(args: &RunArgs) -> Vec<ConfigRow> {
    with_extra_rows(
        with_features(config_rows(args.config, 10_000), args.features_top_k),
        &args.floors,
        &args.peers,
    )
}

/// The command lines of the runs before this one: those the resumed run had, then its own.
pub(super) fn previous_command_lines(previous: Option<&RunMeta>) -> Vec<Vec<String>> {
    let mut lines = Vec::new();
    if let Some(p) = previous {
        lines.extend(p.previous_command_lines.iter().cloned());
        lines.push(p.command_line.clone());
    }
    lines
}

/// With `--features-top-k N`, the `bench` row returns N explained hits (their features
/// are recorded).
fn with_features(mut rows: Vec<ConfigRow>, top_k: Option<usize>) -> Vec<ConfigRow> {
    if let Some(n) = top_k {
        for row in rows.iter_mut().filter(|r| r.name == "bench") {
            row.options.top_k = n;
            row.options.explain = true;
        }
    }
    rows
}

/// The dataset notes with one saying how ids reached the memory.
pub(super) fn with_ids_note(mut notes: Vec<String>, keep_ids: bool) -> Vec<String> {
    notes.push(if keep_ids {
        "Ids: the dataset's own session, group and message ids were handed to the memory \
            (`--keep-ids`)."
            .into()
    } else {
        "Ids: session, group and message ids were renamed to opaque hashes before ingest \
            (and LongMemEval's `has_answer` turn marks dropped), and mapped back for \
            scoring; records show the dataset's ids, unit ids the memory's."
            .into()
    });
    notes
}
