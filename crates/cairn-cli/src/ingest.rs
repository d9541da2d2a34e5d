//! `cairn ingest`: reads a file in one of the supported shapes and ingests it.
use anyhow::{Context, Result};
use cairn::formats::{
    detect_format, load_evermem_dialogue, load_locomo, load_longmemeval, read_group_messages_jsonl,
    read_sessions_jsonl, read_trajectories_jsonl, InputFormat,
};
use cairn::{IngestReport, Memory, SessionInput};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
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
    /// evermembench (`dialogue_en.json`, ingested day by day), longmemeval, locomo, or
    /// auto (told from the keys of the file's first record).
    #[arg(long, default_value = "auto")]
    pub format: String,
    /// Only the first N questions / conversations (LongMemEval, LoCoMo).
    #[arg(long)]
    pub limit: Option<usize>,
}

/// A progress bar over `len` messages (stderr; hidden when it is not a terminal).
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

/// Sessions are written in batches of about this many messages, so the bar moves while a
/// one-space file is ingested (embedding batches are 32; a batch this size loses little).
const BATCH_MESSAGES: usize = 128;

/// `sessions` cut into runs of whole sessions holding about [`BATCH_MESSAGES`] each.
fn batches(sessions: Vec<SessionInput>) -> Vec<(usize, Vec<SessionInput>)> {
    let mut out: Vec<(usize, Vec<SessionInput>)> = Vec::new();
    for s in sessions {
        let n = s.messages.len();
        match out.last_mut() {
            Some((count, batch)) if *count < BATCH_MESSAGES => {
                *count += n;
                batch.push(s);
            }
            _ => out.push((n, vec![s])),
        }
    }
    out
}

/// Ingests `groups` (space, sessions), counting messages on a progress bar; returns the
/// summed report.
fn ingest_groups(
    memory: &Memory,
    groups: Vec<(String, Vec<SessionInput>)>,
) -> Result<IngestReport> {
    let total: usize = groups
        .iter()
        .flat_map(|(_, ss)| ss.iter().map(|s| s.messages.len()))
        .sum();
    let pb = bar(total, "messages");
    let mut report = IngestReport::default();
    for (space, sessions) in groups {
        pb.set_message(space.clone());
        for (messages, batch) in batches(sessions) {
            let r = memory
                .ingest_sessions(&space, batch)
                .with_context(|| format!("ingesting into space {space:?}"))?;
            report += &r;
            pb.inc(messages as u64);
        }
    }
    pb.finish_and_clear();
    Ok(report)
}

/// Group chats go into the one space named, a day at a time (as they would arrive).
fn ingest_group_days(
    memory: &Memory,
    args: &IngestArgs,
    format: InputFormat,
) -> Result<IngestReport> {
    let days: Vec<Vec<cairn::GroupMessage>> = if format == InputFormat::EverMemBench {
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
    let pb = bar(days.iter().map(Vec::len).sum(), "messages");
    let mut report = IngestReport::default();
    for day in days {
        let n = day.len();
        let r = memory
            .ingest_group_messages(&args.space, day)
            .with_context(|| format!("ingesting into space {:?}", args.space))?;
        report += &r;
        pb.inc(n as u64);
    }
    pb.finish_and_clear();
    Ok(report)
}

/// Trajectories, a few at a time, counting their states.
fn insert_trajectories(memory: &Memory, args: &IngestArgs) -> Result<IngestReport> {
    let all: Vec<_> = read_trajectories_jsonl(&args.file)?
        .into_iter()
        .take(args.limit.unwrap_or(usize::MAX))
        .collect();
    let pb = bar(all.iter().map(|t| t.states.len()).sum(), "states");
    let mut report = IngestReport::default();
    for chunk in all.chunks(8) {
        let r = memory
            .trajectories()
            .insert_many(&args.space, chunk.to_vec())
            .with_context(|| format!("inserting into space {:?}", args.space))?;
        report += &r;
        pb.inc(chunk.iter().map(|t| t.states.len() as u64).sum());
    }
    pb.finish_and_clear();
    Ok(report)
}

fn print_report(
    report: &IngestReport,
    spaces: &[String],
    start: Instant,
    json: bool,
) -> Result<()> {
    let secs = start.elapsed().as_secs_f64();
    if json {
        return crate::print::json(&serde_json::json!({
            "spaces": spaces, "report": report, "seconds": secs,
            "turns_per_second": report.messages_added as f64 / secs.max(1e-9),
        }));
    }
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
    Ok(())
}

/// The format to read: `--format`, or the one the file's first record shows.
fn format_of(args: &IngestArgs) -> Result<(InputFormat, bool)> {
    if args.format == "auto" {
        return Ok((detect_format(&args.file)?, true));
    }
    let f = InputFormat::parse(&args.format).with_context(|| {
        format!(
            "unknown --format {:?} ({}|auto)",
            args.format,
            InputFormat::names()
        )
    })?;
    Ok((f, false))
}

pub fn run(memory: &Memory, args: &IngestArgs, json: bool) -> Result<()> {
    let (format, detected) = format_of(args)?;
    let start = Instant::now();
    let result = ingest(memory, args, format);
    // A file read as the wrong shape fails on its first record; say how it was read. A
    // write the store refused (a conflict with what it holds, a full disk) read the file
    // fine, and a hint about the format would only mislead.
    let (report, spaces) = result.map_err(|e| match misread(&e) {
        false => e,
        true => e.context(match detected {
            true => format!(
                "{} was read as --format {format} (detected from its first record); pass --format to read it as another ({})",
                args.file.display(),
                InputFormat::names()
            ),
            false => format!("{} read as --format {format}", args.file.display()),
        }),
    })?;
    memory.flush()?;
    print_report(&report, &spaces, start, json)
}

/// Whether an ingest's error may come from reading the file as the wrong shape: anything
/// but an answer of the memory to a write it could read (a conflict, an idempotency
/// key, the store, the embedder, the deadline).
fn misread(e: &anyhow::Error) -> bool {
    !e.chain().any(|c| {
        c.downcast_ref::<cairn::Error>()
            .is_some_and(|e| !matches!(e, cairn::Error::Input(_) | cairn::Error::Io { .. }))
    })
}

/// Ingests the file; returns the report and the spaces written.
fn ingest(
    memory: &Memory,
    args: &IngestArgs,
    format: InputFormat,
) -> Result<(IngestReport, Vec<String>)> {
    let limit = args.limit.unwrap_or(usize::MAX);
    let one = || vec![args.space.clone()];
    let groups: Vec<(String, Vec<SessionInput>)> = match format {
        InputFormat::Trajectories => return Ok((insert_trajectories(memory, args)?, one())),
        InputFormat::Export => {
            // An export of any space, restored into the one named.
            let f = cairn::formats::open_reader(&args.file)?;
            let report = memory
                .import_with(f, Some(&args.space), &cairn::WriteOptions::default())
                .with_context(|| format!("importing into space {:?}", args.space))?;
            return Ok((report, one()));
        }
        InputFormat::GroupMessages | InputFormat::EverMemBench => {
            return Ok((ingest_group_days(memory, args, format)?, one()))
        }
        InputFormat::Sessions => vec![(args.space.clone(), read_sessions_jsonl(&args.file)?)],
        InputFormat::LongMemEval => load_longmemeval(&args.file)?
            .into_iter()
            .take(limit)
            .map(|q| {
                Ok((
                    format!("{}{}", args.space, q.question_id),
                    q.sessions()?.sessions,
                ))
            })
            .collect::<Result<_>>()?,
        InputFormat::Locomo => load_locomo(&args.file)?
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
    Ok((ingest_groups(memory, groups)?, spaces))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: usize, messages: usize) -> SessionInput {
        serde_json::from_value(serde_json::json!({
            "id": format!("s{id}"),
            "messages": (0..messages)
                .map(|i| serde_json::json!({"role": "user", "text": format!("m{i}")}))
                .collect::<Vec<_>>(),
        }))
        .unwrap()
    }

    /// The bar counts messages: one space of many sessions moves in steps of about
    /// `BATCH_MESSAGES` messages, never a whole file at once; sessions stay whole.
    #[test]
    fn batches_count_messages_and_keep_sessions_whole() {
        let sessions: Vec<_> = (0..60).map(|i| session(i, 11)).collect();
        let b = batches(sessions);
        assert_eq!(b.iter().map(|(n, _)| n).sum::<usize>(), 660);
        assert_eq!(b.iter().map(|(_, s)| s.len()).sum::<usize>(), 60);
        assert!(b.len() >= 5, "{} batches", b.len());
        for (n, s) in &b {
            assert_eq!(*n, s.iter().map(|s| s.messages.len()).sum::<usize>());
            assert!(*n < BATCH_MESSAGES + 11);
        }
        let one = batches(vec![session(0, 1000)]);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].0, 1000);
    }

    /// The store refusing a write of a file read fine is no reason to suggest another
    /// `--format` (it misled readers of the docs: issue 53); a file that does not parse,
    /// or holds records the library refuses, may be.
    #[test]
    fn a_refused_write_is_not_blamed_on_the_format() {
        let conflict = cairn::Error::Conflict(cairn::ConflictError::new(
            "session s1",
            "message 0 differs from the store",
        ));
        let e = anyhow::Context::context(Err::<(), _>(conflict), "ingesting into space \"alice\"")
            .unwrap_err();
        assert!(!misread(&e), "{e:#}");
        let bad = cairn::Error::Input(cairn::InputError::new("line 1", "no `messages`"));
        assert!(misread(&anyhow::Error::new(bad)));
        assert!(misread(&anyhow::anyhow!("line 1: not JSON")));
    }
}
