//! `cairn ingest`: reads a file in one of the supported shapes and ingests it.
use anyhow::{bail, Context, Result};
use cairn::formats::{
    load_evermem_dialogue, load_locomo, load_longmemeval, read_group_messages_jsonl,
    read_sessions_jsonl, read_trajectories_jsonl,
};
use cairn::{IngestReport, Memory, SessionInput};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args)]
pub struct IngestArgs {
    /// The file to ingest (`.json`, `.json.gz` or `.jsonl`).
    pub file: PathBuf,
    /// Target space. For LongMemEval and LoCoMo files, a prefix: each question or
    /// conversation gets its own space `<prefix><id>`.
    #[arg(long)]
    pub space: String,
    /// jsonl (one session per line), group-jsonl (one group message per line),
    /// trajectories (one agent trajectory per line), export (what `cairn export` wrote),
    /// evermembench (`dialogue_en.json`, streamed day by day), longmemeval, locomo, or
    /// auto (from the content).
    #[arg(long, default_value = "auto")]
    pub format: String,
    /// Only the first N questions / conversations (LongMemEval, LoCoMo).
    #[arg(long)]
    pub limit: Option<usize>,
}

fn detect(path: &Path) -> Result<&'static str> {
    let name = path.to_string_lossy();
    let jsonl = name.ends_with(".jsonl");
    let mut head = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(cairn::formats::open_reader(path)?, 4096),
        &mut head,
    )
    .with_context(|| format!("reading {}", path.display()))?;
    let text = String::from_utf8_lossy(&head);
    if jsonl {
        let first = text.lines().next().unwrap_or("");
        return Ok(if is_export_line(first) {
            "export"
        } else if first.contains("\"group\"") && !first.contains("\"messages\"") {
            "group-jsonl"
        } else {
            "jsonl"
        });
    }
    if text.contains("\"dialogues\"") {
        Ok("evermembench")
    } else if text.contains("\"haystack_sessions\"") || text.contains("\"question_id\"") {
        Ok("longmemeval")
    } else if text.contains("\"sample_id\"") || text.contains("\"conversation\"") {
        Ok("locomo")
    } else {
        bail!(
            "cannot tell the format of {}: pass --format jsonl|group-jsonl|trajectories|evermembench|longmemeval|locomo",
            path.display()
        )
    }
}

/// A line of `cairn export`: a record with `recorded_at` around a session or trajectory.
fn is_export_line(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line).is_ok_and(|v| {
        v.get("recorded_at").is_some()
            && (v.get("session").is_some() || v.get("trajectory").is_some())
    })
}

fn bar(len: usize, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len as u64);
    pb.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg} (eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    pb
}

/// Ingests `groups` (space, sessions) with a progress bar; returns the summed report.
fn ingest_groups(
    memory: &Memory,
    groups: Vec<(String, Vec<SessionInput>)>,
    what: &str,
) -> Result<IngestReport> {
    let pb = bar(groups.len(), what);
    let mut total = IngestReport::default();
    for (space, sessions) in groups {
        pb.set_message(space.clone());
        let r = memory
            .ingest_sessions(&space, sessions)
            .with_context(|| format!("ingesting into space {space:?}"))?;
        total += &r;
        pb.inc(1);
    }
    pb.finish_and_clear();
    Ok(total)
}

/// Group chats go into the one space named, a day at a time (as they would arrive).
fn ingest_group_days(
    memory: &Memory,
    args: &IngestArgs,
    format: &str,
    json: bool,
    start: Instant,
) -> Result<()> {
    let days: Vec<Vec<cairn::GroupMessage>> = if format == "evermembench" {
        load_evermem_dialogue(&args.file)?
            .into_iter()
            .map(|d| d.messages)
            .collect()
    } else {
        let mut by_day: std::collections::BTreeMap<String, Vec<cairn::GroupMessage>> =
            Default::default();
        for m in read_group_messages_jsonl(&args.file)? {
            by_day
                .entry(m.time.format("%Y-%m-%d").to_string())
                .or_default()
                .push(m);
        }
        by_day.into_values().collect()
    };
    let days: Vec<_> = days
        .into_iter()
        .take(args.limit.unwrap_or(usize::MAX))
        .collect();
    let pb = bar(days.len(), "days");
    let mut report = IngestReport::default();
    for day in days {
        let r = memory
            .ingest_group_messages(&args.space, day)
            .with_context(|| format!("ingesting into space {:?}", args.space))?;
        report += &r;
        pb.inc(1);
    }
    pb.finish_and_clear();
    memory.flush()?;
    print_report(&report, std::slice::from_ref(&args.space), start, json)
}

fn print_report(
    report: &IngestReport,
    spaces: &[String],
    start: Instant,
    json: bool,
) -> Result<()> {
    let secs = start.elapsed().as_secs_f64();
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "spaces": spaces, "report": report, "seconds": secs,
                "turns_per_second": report.messages_added as f64 / secs.max(1e-9),
            }))?
        );
    } else {
        outln!(
            "ingested {} sessions ({} messages), {} trajectories, {} units into {} space(s) in {:.1}s: {:.0} turns/s; vectors computed {}, from cache {}",
            report.sessions,
            report.messages_added,
            report.trajectories,
            report.units,
            spaces.len(),
            secs,
            report.messages_added as f64 / secs.max(1e-9),
            report.vectors_computed,
            report.vectors_cached
        );
        if report.dated_at_recording > 0 {
            outln!(
                "{} messages had no time and were dated when recorded",
                report.dated_at_recording
            );
        }
    }
    Ok(())
}

pub fn run(memory: &Memory, args: &IngestArgs, json: bool) -> Result<()> {
    let format = match args.format.as_str() {
        "auto" => detect(&args.file)?,
        "jsonl" => "jsonl",
        "longmemeval" => "longmemeval",
        "locomo" => "locomo",
        "group-jsonl" => "group-jsonl",
        "evermembench" => "evermembench",
        "trajectories" => "trajectories",
        "export" => "export",
        other => bail!(
            "unknown --format {other:?} (jsonl, group-jsonl, trajectories, export, evermembench, longmemeval, locomo, auto)"
        ),
    };
    let limit = args.limit.unwrap_or(usize::MAX);
    let start = Instant::now();
    if format == "trajectories" {
        let all = read_trajectories_jsonl(&args.file)?;
        let all: Vec<_> = all.into_iter().take(limit).collect();
        let report = memory
            .insert_trajectories(&args.space, all)
            .with_context(|| format!("inserting into space {:?}", args.space))?;
        memory.flush()?;
        return print_report(&report, std::slice::from_ref(&args.space), start, json);
    }
    if format == "export" {
        // An export of any space, restored into the one named.
        let f = cairn::formats::open_reader(&args.file)?;
        let report = memory
            .import_with(f, Some(&args.space), &cairn::WriteOptions::default())
            .with_context(|| format!("importing into space {:?}", args.space))?;
        memory.flush()?;
        return print_report(&report, std::slice::from_ref(&args.space), start, json);
    }
    if format == "group-jsonl" || format == "evermembench" {
        return ingest_group_days(memory, args, format, json, start);
    }
    let groups: Vec<(String, Vec<SessionInput>)> = match format {
        "jsonl" => vec![(args.space.clone(), read_sessions_jsonl(&args.file)?)],
        "longmemeval" => load_longmemeval(&args.file)?
            .into_iter()
            .take(limit)
            .map(|q| {
                Ok((
                    format!("{}{}", args.space, q.question_id),
                    q.sessions()?.sessions,
                ))
            })
            .collect::<Result<_>>()?,
        _ => load_locomo(&args.file)?
            .into_iter()
            .take(limit)
            .map(|s| {
                Ok((
                    format!("{}{}", args.space, s.sample_id),
                    s.sessions_input()?.sessions,
                ))
            })
            .collect::<Result<_>>()?,
    };
    let spaces: Vec<String> = groups.iter().map(|g| g.0.clone()).collect();
    let report = ingest_groups(memory, groups, "ingest")?;
    memory.flush()?;
    print_report(&report, &spaces, start, json)
}
