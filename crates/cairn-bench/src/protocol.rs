//! What both dataset protocols share: the run directory, the memory, config rows, one
//! recall turned into a scored [`QuestionRecord`], Ctrl-C, progress, and the final
//! summary files.
use crate::env::{self, Machine};
use crate::metrics::{judge_session_ranking, judge_sessions, judge_turns, score};
use crate::record::{
    done_pairs, exclusion, read_results, Evidence, IngestInfo, LedgerEntry, LevelScores,
    QuestionRecord, QuestionTimings, RankedHit, ResultsFile,
};
use crate::summary;
use crate::{AsOfPolicy, ConfigChoice, RunArgs};
use anyhow::{bail, Context as _};
use cairn::{Memory, MemoryConfig, RecallOptions, SessionInput, Timestamp, Unit};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

static STOP: AtomicBool = AtomicBool::new(false);
static HANDLER: OnceLock<bool> = OnceLock::new();

/// Asks a running benchmark to stop after the question in progress (what Ctrl-C does).
/// For callers that install their own Ctrl-C handler: the harness's own handler cannot be
/// installed next to it, so call this from yours.
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

fn install_ctrlc() {
    let ok = HANDLER.get_or_init(|| {
        ctrlc::set_handler(|| {
            if STOP.swap(true, Ordering::SeqCst) {
                eprintln!("\ninterrupted again: exiting now");
                std::process::exit(130);
            }
            eprintln!(
                "\ninterrupt: stopping after the current question (Ctrl-C again to quit at once)"
            );
        })
        .is_ok()
    });
    if !ok {
        tracing::debug!(
            "a Ctrl-C handler is already installed; it should call cairn_bench::request_stop"
        );
    }
}

/// Clears an earlier stop request and installs the Ctrl-C handler (once per process).
pub(crate) fn arm_stop() {
    STOP.store(false, Ordering::SeqCst);
    install_ctrlc();
}

pub(crate) fn stopped() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// One config row: a name and the recall options it runs with (`as_of` is set per
/// question).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigRow {
    pub name: String,
    pub options: RecallOptions,
}

pub(crate) fn config_rows(choice: ConfigChoice) -> Vec<ConfigRow> {
    let defaults = ConfigRow {
        name: "defaults".into(),
        options: RecallOptions::default(),
    };
    let bench = ConfigRow {
        name: "bench".into(),
        options: RecallOptions {
            top_k: 10,
            token_budget: 10_000,
            format: cairn::Format::Raw,
            ..RecallOptions::default()
        },
    };
    match choice {
        ConfigChoice::Defaults => vec![defaults],
        ConfigChoice::Bench => vec![bench],
        ConfigChoice::Both => vec![defaults, bench],
    }
}

/// A space name for a question or conversation id: characters outside
/// `[A-Za-z0-9._:@-]` become `_`, and a short hash of the id is added when anything had
/// to change (so two ids never share a space), within 128 bytes.
pub fn space_name(prefix: &str, id: &str) -> String {
    let clean: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '@') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = format!("{prefix}-{clean}");
    let changed = clean != id || name.len() > 128;
    if changed {
        let h = Sha256::digest(id.as_bytes());
        let tag: String = h[..4].iter().map(|b| format!("{b:02x}")).collect();
        name.truncate(128 - 9);
        name = format!("{name}-{tag}");
    }
    name
}

/// Everything recorded about a run, written to run.json, summary.json and
/// METHODOLOGY.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    pub dataset: String,
    pub data_path: String,
    pub data_sha256: String,
    pub run_label: String,
    pub run_dir: String,
    pub started_at: Timestamp,
    #[serde(default)]
    pub finished_at: Option<Timestamp>,
    pub command_line: Vec<String>,
    /// Command lines of earlier invocations that this run resumed.
    #[serde(default)]
    pub previous_command_lines: Vec<Vec<String>>,
    pub cairn_version: String,
    pub git_sha: String,
    pub git_sha_source: String,
    pub build_time: String,
    pub embedding_model: String,
    pub embedding_dim: usize,
    pub embedding_cache: Option<String>,
    /// Engine and embedder settings in force (`MemoryConfig` without the cache path).
    #[serde(default)]
    pub memory_settings: serde_json::Value,
    pub machine: Machine,
    pub configs: Vec<ConfigRow>,
    pub as_of_policy: String,
    pub as_of_description: String,
    pub limit: Option<usize>,
    pub questions_filter: Vec<String>,
    #[serde(default)]
    pub max_questions_per_conv: Option<usize>,
    pub questions_in_file: usize,
    pub questions_selected: usize,
    pub keep_data: bool,
    pub load_seconds: f64,
    /// Facts about the data found while preparing the run.
    pub dataset_notes: Vec<String>,
    /// Known limitations of this run's protocol.
    pub limitations: Vec<String>,
    /// Reader and judge of the QA rows (runs with `--reader`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qa: Option<crate::qa::QaSetup>,
}

impl RunMeta {
    /// A run's record with the build, the machine and the embedder filled in and every
    /// protocol field empty, for the caller to set what its protocol has.
    pub(crate) fn new(
        dataset: &str,
        run_dir: &Path,
        memory: &Memory,
        embedding_cache: Option<&Path>,
        memory_settings: serde_json::Value,
    ) -> Self {
        Self {
            dataset: dataset.into(),
            data_path: "(generated)".into(),
            data_sha256: "-".into(),
            run_label: run_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            run_dir: run_dir.display().to_string(),
            started_at: chrono::Utc::now(),
            finished_at: None,
            command_line: env::command_line(),
            previous_command_lines: Vec::new(),
            cairn_version: cairn::VERSION.into(),
            git_sha: env::GIT_SHA.into(),
            git_sha_source: env::GIT_SHA_SOURCE.into(),
            build_time: env::BUILD_TIME.into(),
            embedding_model: memory.embedder().model_id().to_string(),
            embedding_dim: memory.embedder().dim(),
            embedding_cache: embedding_cache.map(|c| c.display().to_string()),
            memory_settings,
            machine: Machine::detect(),
            configs: Vec::new(),
            as_of_policy: "none".into(),
            as_of_description: "as_of = none".into(),
            limit: None,
            questions_filter: Vec::new(),
            max_questions_per_conv: None,
            questions_in_file: 0,
            questions_selected: 0,
            keep_data: false,
            load_seconds: 0.0,
            dataset_notes: Vec::new(),
            limitations: Vec::new(),
            qa: None,
        }
    }
}

/// What the dataset protocol hands to [`Run::start`].
pub(crate) struct RunPlan {
    pub dataset: &'static str,
    pub sha256: String,
    pub questions_in_file: usize,
    /// Selected question ids, in run order.
    pub selected: Vec<String>,
    pub load_seconds: f64,
    pub max_questions_per_conv: Option<usize>,
    pub as_of_description: String,
    pub dataset_notes: Vec<String>,
    pub limitations: Vec<String>,
}

/// A question as the shared code sees it.
pub(crate) struct QuestionSpec {
    pub id: String,
    pub qtype: String,
    pub question: String,
    pub answer: Option<String>,
    /// The question's own date as the dataset writes it (shown to a reader).
    pub question_date: Option<String>,
    pub as_of: Option<Timestamp>,
    pub as_of_note: Option<String>,
    /// Known before recall (abstention, adversarial).
    pub exclusion: Option<String>,
    pub evidence: Evidence,
}

pub(crate) struct Run {
    pub dir: PathBuf,
    data_dir: PathBuf,
    results: ResultsFile,
    done: HashSet<(String, String)>,
    memory: Option<Memory>,
    pub rows: Vec<ConfigRow>,
    pub meta: RunMeta,
    pub pb: ProgressBar,
    keep_data: bool,
    selected: Vec<String>,
    pub dataset_label: String,
    qa: Option<crate::qa::Qa>,
}

pub(crate) fn utc_stamp(t: Timestamp) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

pub(crate) fn check_label(label: &str) -> anyhow::Result<()> {
    let ok = !label.is_empty()
        && label != "."
        && label != ".."
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '@'));
    if !ok {
        bail!("--run-label {label:?}: use letters, digits and . _ - + @ (it names a folder)");
    }
    Ok(())
}

pub(crate) fn config_name(c: ConfigChoice) -> &'static str {
    match c {
        ConfigChoice::Defaults => "defaults",
        ConfigChoice::Bench => "bench",
        ConfigChoice::Both => "both",
    }
}

/// Opens the run's memory in `data_dir`: the embedding cache (`--cache`, else the shared
/// default) and engine settings (`--memory-config`, else stock). Returns the memory, the
/// cache path and the settings in force (for METHODOLOGY.md).
pub(crate) fn open_memory(
    data_dir: &Path,
    cache: Option<&Path>,
    memory_config: Option<&Path>,
) -> anyhow::Result<(Memory, Option<PathBuf>, serde_json::Value)> {
    open_memory_in(data_dir, None, cache, memory_config)
}

/// [`open_memory`] on the store `store` names (a `postgres://` URL) when given; the
/// embedding cache file is used by either store.
pub(crate) fn open_memory_in(
    data_dir: &Path,
    store: Option<&str>,
    cache: Option<&Path>,
    memory_config: Option<&Path>,
) -> anyhow::Result<(Memory, Option<PathBuf>, serde_json::Value)> {
    let cache = cache
        .map(Path::to_path_buf)
        .or_else(env::default_embedding_cache);
    let base = match memory_config {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            toml::from_str::<MemoryConfig>(&text)
                .with_context(|| format!("parsing {}", p.display()))?
        }
        None => MemoryConfig::default(),
    };
    let mut config = MemoryConfig {
        embedding_cache: cache.clone(),
        store: store.map(str::to_string).or(base.store.clone()),
        ..base
    };
    // Benches replay public data and drop their spaces when done: the cache keeps the
    // vectors, so a rerun measures a warm ingest (a cold one takes a fresh --cache file).
    // Their spaces are not tenants of each other: a text shared by many questions'
    // haystacks is embedded once.
    config.engine.purge_cache_on_forget = false;
    config.engine.share_embedding_cache = true;
    let memory_settings = serde_json::json!({"embed": &config.embed, "engine": &config.engine});
    let memory = Memory::open_with(data_dir, config).map_err(|e| {
        let hint = if matches!(e, cairn::Error::Model(_)) {
            " (install the embedding model with ./scripts/setup.sh, or set CAIRN_MODEL_DIR)"
        } else {
            ""
        };
        anyhow::anyhow!("opening the memory in {}: {e}{hint}", data_dir.display())
    })?;
    Ok((memory, cache, memory_settings))
}

/// The newest `<prefix>*` folder under `out` (labels end in a sortable UTC stamp).
fn latest_run(out: &Path, prefix: &str) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(out)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    names.pop()
}

impl Run {
    pub fn start(args: &RunArgs, plan: RunPlan) -> anyhow::Result<Self> {
        let now = chrono::Utc::now();
        let prefix = format!("{}-{}-", plan.dataset, config_name(args.config));
        let label = match (&args.run_label, args.resume) {
            (Some(l), _) => l.clone(),
            (None, false) => format!("{prefix}{}", utc_stamp(now)),
            (None, true) => latest_run(&args.out, &prefix).with_context(|| {
                format!(
                    "--resume without --run-label: no earlier run {prefix}* in {}",
                    args.out.display()
                )
            })?,
        };
        check_label(&label)?;
        let dir = args.out.join(&label);
        let results_path = dir.join("results.jsonl");
        let run_json = dir.join("run.json");
        let (existing, bad) = read_results(&results_path)?;
        if !args.resume && (!existing.is_empty() || bad > 0) {
            bail!(
                "{} already holds results: pass --resume to continue that run, or another --run-label",
                dir.display()
            );
        }
        let previous: Option<RunMeta> = if args.resume && run_json.is_file() {
            let text = std::fs::read_to_string(&run_json)
                .with_context(|| format!("reading {}", run_json.display()))?;
            Some(
                serde_json::from_str(&text)
                    .with_context(|| format!("parsing {}", run_json.display()))?,
            )
        } else {
            None
        };
        if let Some(p) = &previous {
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
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let data_dir = dir.join("data");
        let (memory, cache, memory_settings) = open_memory(
            &data_dir,
            args.cache.as_deref(),
            args.memory_config.as_deref(),
        )?;
        let rows = config_rows(args.config);
        let qa = crate::qa::Qa::from_args(&args.llm)?;
        let style = crate::qa::Style::for_dataset(plan.dataset);
        let data_path = std::fs::canonicalize(&args.data).unwrap_or_else(|_| args.data.clone());
        let mut previous_command_lines = Vec::new();
        if let Some(p) = &previous {
            previous_command_lines.extend(p.previous_command_lines.iter().cloned());
            previous_command_lines.push(p.command_line.clone());
        }
        let meta = RunMeta {
            data_path: data_path.display().to_string(),
            data_sha256: plan.sha256,
            started_at: previous.as_ref().map_or(now, |p| p.started_at),
            previous_command_lines,
            configs: rows.clone(),
            as_of_policy: args.as_of.name().into(),
            as_of_description: plan.as_of_description,
            limit: args.limit,
            questions_filter: args.questions.clone(),
            max_questions_per_conv: plan.max_questions_per_conv,
            questions_in_file: plan.questions_in_file,
            questions_selected: plan.selected.len(),
            keep_data: args.keep_data,
            load_seconds: plan.load_seconds,
            dataset_notes: plan.dataset_notes,
            limitations: plan.limitations,
            qa: qa.as_ref().map(|q| q.setup(style)),
            ..RunMeta::new(
                plan.dataset,
                &dir,
                &memory,
                cache.as_deref(),
                memory_settings,
            )
        };
        std::fs::write(&run_json, serde_json::to_string_pretty(&meta)?)
            .with_context(|| format!("writing {}", run_json.display()))?;

        let done = done_pairs(&existing);
        let row_names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        let finished = plan
            .selected
            .iter()
            .filter(|q| {
                row_names
                    .iter()
                    .all(|r| done.contains(&(q.to_string(), r.to_string())))
            })
            .count();
        let pb = ProgressBar::with_draw_target(
            Some(plan.selected.len() as u64),
            ProgressDrawTarget::stderr(),
        );
        pb.set_style(
            ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} ETA {eta_precise} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        pb.set_prefix(label.clone());
        pb.set_position(finished as u64);
        pb.reset_eta();
        if finished > 0 {
            pb.println(format!(
                "resuming {}: {finished} of {} questions already done",
                dir.display(),
                plan.selected.len()
            ));
        }
        STOP.store(false, Ordering::SeqCst);
        install_ctrlc();
        Ok(Self {
            results: ResultsFile::open(&results_path)?,
            dir,
            data_dir,
            done,
            memory: Some(memory),
            rows,
            meta,
            pb,
            keep_data: args.keep_data,
            selected: plan.selected,
            dataset_label: plan.dataset.into(),
            qa,
        })
    }

    pub fn memory(&self) -> &Memory {
        self.memory
            .as_ref()
            .unwrap_or_else(|| unreachable!("memory is open until finish"))
    }

    /// Config rows not yet recorded for this question.
    pub fn pending_rows(&self, question_id: &str) -> Vec<ConfigRow> {
        self.rows
            .iter()
            .filter(|r| {
                !self
                    .done
                    .contains(&(question_id.to_string(), r.name.clone()))
            })
            .cloned()
            .collect()
    }

    /// The pending rows in the order they run for the question at `position`: the order
    /// alternates from question to question, so the query embedding (computed by the first
    /// recall of a question, served from the cache to the next) is charged to each row
    /// equally often.
    pub fn rows_in_order(&self, question_id: &str, position: usize) -> Vec<ConfigRow> {
        let mut rows = self.pending_rows(question_id);
        if position % 2 == 1 {
            rows.reverse();
        }
        rows
    }

    /// Ingests sessions into a fresh space (dropped first if a previous run left it), in
    /// one `ingest_sessions` call, then flushes so everything is searchable; the time
    /// covers both.
    pub fn ingest(
        &self,
        space: &str,
        sessions: Vec<SessionInput>,
        shared: bool,
        skipped_empty_turns: usize,
    ) -> Result<IngestInfo, cairn::Error> {
        let m = self.memory();
        m.forget_space(space)?;
        let messages = sessions.iter().map(|s| s.messages.len()).sum();
        let t = Instant::now();
        let report = m.ingest_sessions(space, sessions)?;
        m.flush()?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        Ok(IngestInfo {
            space: space.into(),
            shared,
            sessions: report.sessions,
            messages,
            units: report.units,
            vectors_computed: report.vectors_computed,
            vectors_cached: report.vectors_cached,
            ms,
            skipped_empty_turns,
        })
    }

    /// Drops a space once its questions are done (unless --keep-data), so every question
    /// is recalled against an index of similar size.
    pub fn release(&self, space: &str) {
        if self.keep_data {
            return;
        }
        if let Err(e) = self.memory().forget_space(space) {
            tracing::warn!(space, error = %e, "could not drop a finished space");
        }
    }

    /// Units per evidence session, and how many cover an evidence turn. `units_of`
    /// memoizes `session_units` across questions of one space.
    pub fn ledger(
        &self,
        space: &str,
        evidence: &Evidence,
        units_of: &mut HashMap<String, Vec<Unit>>,
    ) -> Result<Vec<LedgerEntry>, cairn::Error> {
        let turns: HashSet<(&str, &str)> = evidence
            .turns
            .iter()
            .map(|(s, t)| (s.as_str(), t.as_str()))
            .collect();
        let mut sessions: Vec<&str> = evidence.sessions.iter().map(String::as_str).collect();
        for (s, _) in &evidence.turns {
            if !sessions.contains(&s.as_str()) {
                sessions.push(s);
            }
        }
        let mut out = Vec::new();
        for sid in sessions {
            if !units_of.contains_key(sid) {
                let units = self.memory().session_units(space, sid)?;
                units_of.insert(sid.to_string(), units);
            }
            let units = &units_of[sid];
            let evidence_turn_units = units
                .iter()
                .filter(|u| {
                    u.provenance
                        .message_ids
                        .iter()
                        .any(|m| turns.contains(&(sid, m.as_str())))
                })
                .count();
            out.push(LedgerEntry {
                session_id: sid.to_string(),
                units: units.len(),
                evidence_turn_units,
            });
        }
        Ok(out)
    }

    /// Recalls one question under one row and scores it.
    pub fn recall(
        &self,
        q: &QuestionSpec,
        row: &ConfigRow,
        ingest: &IngestInfo,
        ledger: &[LedgerEntry],
    ) -> QuestionRecord {
        let mut opts = row.options.clone();
        opts.as_of = q.as_of;
        let t = Instant::now();
        let result = self.memory().recall(&ingest.space, &q.question, &opts);
        let wall = t.elapsed().as_secs_f64() * 1000.0;
        let recall = match result {
            Ok(r) => r,
            Err(e) => return self.error_record(q, row, ingest, ledger, &e.to_string()),
        };
        let in_ctx: HashSet<&str> = recall.context_unit_ids.iter().map(String::as_str).collect();
        let mut hits: Vec<RankedHit> = recall
            .hits
            .iter()
            .enumerate()
            .map(|(i, h)| RankedHit {
                rank: i + 1,
                unit_id: h.unit_id.clone(),
                kind: h.kind,
                session_id: h.session_id.clone(),
                turn_ids: h.turn_ids.clone(),
                score: h.score,
                in_context: in_ctx.contains(h.unit_id.as_str()),
                session_relevant: false,
                turn_relevant: false,
            })
            .collect();
        let js = judge_sessions(&hits, &q.evidence.sessions);
        let jt = judge_turns(&hits, &q.evidence.turns);
        for ((h, s), t) in hits.iter_mut().zip(&js).zip(&jt) {
            h.session_relevant = s.relevant();
            h.turn_relevant = t.relevant();
        }
        let avail_s: usize = ledger
            .iter()
            .filter(|l| q.evidence.sessions.contains(&l.session_id))
            .map(|l| l.units)
            .sum();
        let avail_t: usize = ledger.iter().map(|l| l.evidence_turn_units).sum();
        let n_sessions = q.evidence.sessions.len();
        let metrics = LevelScores {
            session: (n_sessions > 0).then(|| score(&js, n_sessions, avail_s)),
            turn: (!q.evidence.turns.is_empty())
                .then(|| score(&jt, q.evidence.turns.len(), avail_t)),
            session_ranking: (n_sessions > 0).then(|| {
                let ranked = judge_session_ranking(&hits, &q.evidence.sessions);
                score(&ranked, n_sessions, n_sessions)
            }),
        };
        let exclusion = q.exclusion.clone().or_else(|| {
            (metrics.session.is_none() && metrics.turn.is_none())
                .then(|| exclusion::NO_EVIDENCE.to_string())
        });
        let qa = self.qa.as_ref().map(|qa| {
            qa.run(
                crate::qa::Style::for_dataset(&self.dataset_label),
                &recall.context,
                &q.question,
                q.question_date.as_deref(),
                q.answer.as_deref().unwrap_or(""),
                &q.qtype,
                q.exclusion.as_deref(),
            )
        });
        QuestionRecord {
            qa,
            exclusion,
            hits,
            context_tokens: recall.context_tokens,
            hits_cut: recall.hits_cut,
            context_unit_ids: recall.context_unit_ids,
            metrics,
            timings: QuestionTimings {
                ingest_ms: ingest.ms,
                recall_wall_ms: wall,
                recall: Some(recall.timings),
            },
            ..self.base_record(q, row, ingest, ledger)
        }
    }

    fn base_record(
        &self,
        q: &QuestionSpec,
        row: &ConfigRow,
        ingest: &IngestInfo,
        ledger: &[LedgerEntry],
    ) -> QuestionRecord {
        QuestionRecord {
            dataset: self.dataset_label.clone(),
            question_id: q.id.clone(),
            question_type: q.qtype.clone(),
            config: row.name.clone(),
            space: ingest.space.clone(),
            question: q.question.clone(),
            answer: q.answer.clone(),
            as_of: q.as_of,
            as_of_note: q.as_of_note.clone(),
            exclusion: q.exclusion.clone(),
            error: None,
            evidence: q.evidence.clone(),
            hits: Vec::new(),
            context_tokens: 0,
            hits_cut: 0,
            context_unit_ids: Vec::new(),
            metrics: LevelScores::default(),
            timings: QuestionTimings {
                ingest_ms: ingest.ms,
                ..Default::default()
            },
            ingest: ingest.clone(),
            ledger: ledger.to_vec(),
            qa: None,
        }
    }

    /// A record for a question that could not be ingested or recalled.
    pub fn error_record(
        &self,
        q: &QuestionSpec,
        row: &ConfigRow,
        ingest: &IngestInfo,
        ledger: &[LedgerEntry],
        error: &str,
    ) -> QuestionRecord {
        self.pb.println(format!("question {}: {error}", q.id));
        QuestionRecord {
            exclusion: Some(exclusion::ERROR.into()),
            error: Some(error.to_string()),
            ..self.base_record(q, row, ingest, ledger)
        }
    }

    pub fn append(&mut self, r: &QuestionRecord) -> anyhow::Result<()> {
        self.results.append(r)?;
        self.done.insert((r.question_id.clone(), r.config.clone()));
        Ok(())
    }

    /// Closes the memory, removes the data folder (unless --keep-data), and writes
    /// summary.json, summary.md and METHODOLOGY.md from everything in results.jsonl.
    /// An interrupted run is an error (after the files are written).
    pub fn finish(mut self) -> anyhow::Result<()> {
        let interrupted = stopped();
        self.pb.finish_and_clear();
        drop(self.memory.take());
        if !self.keep_data && self.data_dir.exists() {
            std::fs::remove_dir_all(&self.data_dir)
                .with_context(|| format!("removing {}", self.data_dir.display()))?;
        }
        let (records, _) = read_results(&self.dir.join("results.jsonl"))?;
        let selected: BTreeSet<&str> = self.selected.iter().map(String::as_str).collect();
        let records: Vec<QuestionRecord> = records
            .into_iter()
            .filter(|r| selected.contains(r.question_id.as_str()))
            .collect();
        let complete = self.selected.iter().all(|q| {
            self.rows
                .iter()
                .all(|r| self.done.contains(&(q.clone(), r.name.clone())))
        });
        self.meta.finished_at = Some(chrono::Utc::now());
        let s = summary::summarize(&self.meta, &records, complete);
        summary::write_files(&self.dir, &s)?;
        std::fs::write(
            self.dir.join("run.json"),
            serde_json::to_string_pretty(&self.meta)?,
        )?;
        eprintln!("{}", summary::short_report(&s));
        eprintln!("wrote {}", self.dir.display());
        if interrupted && !complete {
            bail!(
                "interrupted: {} of {} questions done; rerun with --resume --run-label {} to finish",
                s.questions.done,
                s.questions.selected,
                self.meta.run_label
            );
        }
        Ok(())
    }
}

/// The `--as-of` policy in words, for METHODOLOGY.md.
pub(crate) fn as_of_words(p: AsOfPolicy, lme: bool) -> String {
    match (p, lme) {
        (AsOfPolicy::Question, true) => "as_of = the question date exactly; haystack sessions dated after it are invisible to recall".into(),
        (AsOfPolicy::QuestionOrLater, true) => "as_of = the question date, raised to the latest haystack session date when a haystack session is dated after the question (the data has such sessions, up to ~23.5 h later, often evidence; filtering them out would lose evidence); each adjusted question carries an `as_of_note`".into(),
        (AsOfPolicy::None, true) => "as_of = none (recall as of now)".into(),
        (AsOfPolicy::None, false) => "as_of = none (recall as of now)".into(),
        (_, false) => "as_of = the date of the conversation's last session (LoCoMo questions carry no date of their own)".into(),
    }
}
