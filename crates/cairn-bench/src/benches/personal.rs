//! The personal-memory suite (`cairn bench personal`): each conversation ingested into
//! a fresh space, its personal facts scored against the suite's, its questions recalled
//! (the first hit must state the current value). With `--llm`, a second config row has
//! the LLM enrichment on, side by side with the patterns alone.
use crate::args::RunFolderArgs;
use crate::datasets::personal::{self, Conversation, BUILT_IN};
use crate::records::personal::{
    ConversationRecord, ExpectedOutcome, ExtractedOutcome, QuestionOutcome,
};
use crate::records::ResultsFile;
use crate::report::personal::{render_methodology, render_summary, summarize};
use crate::run::{arm_stop, open_memory, space_name, stopped, ConfigRow, RunFolder, RunMeta};
use crate::scoring::personal::{first_hit_states, matches, words};
use anyhow::Context as _;
use cairn::{
    AppendInput, FactDetail, LlmConfig, Memory, Message, RecallOptions, Role, SessionInput,
    UnitDetail, UnitKind, WriteOptions,
};
use clap::Args;
use std::path::PathBuf;

/// `cairn bench personal` options.
#[derive(Debug, Clone, Args)]
pub struct PersonalArgs {
    /// Suite files to run instead of the built-in dev, holdout and holdout2 (each is a
    /// split of its own, named by its file name).
    #[arg(long = "suite", value_name = "FILE")]
    pub suites: Vec<PathBuf>,
    /// An OpenAI-compatible server (`URL,MODEL`) whose enrichment runs as a second config
    /// row beside the patterns alone.
    #[arg(long, value_name = "URL,MODEL")]
    pub llm: Option<String>,
    /// Hits per question.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub top_k: usize,
    /// Token budget of each recall.
    #[arg(long, default_value_t = 600, value_name = "N")]
    pub token_budget: usize,
    /// Relevance floor of each recall (a cosine; -1 turns it off) [default: the stock
    /// floor].
    #[arg(long, value_name = "COSINE", allow_hyphen_values = true)]
    pub min_relevance: Option<f32>,
    /// Where the run goes and what it reads: shared by every bench.
    #[command(flatten)]
    pub run: RunFolderArgs,
}

pub(crate) fn run(args: &PersonalArgs) -> anyhow::Result<()> {
    let conversations = load(args)?;
    let folder = RunFolder::fresh(
        &args.run.out,
        RunFolder::label(args.run.run_label.as_ref(), "personal"),
        "",
    )?;
    let (memory, rows, mut meta) = open_rows(&folder, args)?;
    meta.configs = rows.clone();
    meta.data_path = suite_names(args).join(", ");
    meta.questions_in_file = conversations.iter().map(|c| c.questions.len()).sum();
    meta.questions_selected = meta.questions_in_file;
    folder.write_meta(&meta)?;
    arm_stop();
    let mut results = ResultsFile::open(&folder.results())?;
    let mut records = Vec::new();
    for c in &conversations {
        for row in &rows {
            if stopped() {
                break;
            }
            let llm = row.name.ends_with("+llm");
            let r = converse(&memory, c, row, llm)?;
            results.append(&r)?;
            records.push(r);
        }
    }
    drop(memory);
    if !args.run.keep_data {
        folder.remove_data()?;
    }
    meta.finished_at = Some(chrono::Utc::now());
    write_reports(args, &folder, &meta, &conversations, &records)?;
    eprintln!("wrote {}", folder.dir.display());
    if stopped() {
        anyhow::bail!("interrupted");
    }
    Ok(())
}

/// The memory the run asks, its config rows (the patterns alone, and with `--llm` the
/// patterns with the LLM enrichment, whose memory this then is), and the run's meta.
fn open_rows(
    folder: &RunFolder,
    args: &PersonalArgs,
) -> anyhow::Result<(Memory, Vec<ConfigRow>, RunMeta)> {
    let (mut memory, cache, settings) = open_memory(
        &folder.data_dir,
        args.run.cache.as_deref(),
        args.run.memory_config.as_deref(),
    )?;
    let options = RecallOptions {
        top_k: args.top_k,
        token_budget: args.token_budget,
        min_relevance: args.min_relevance.unwrap_or(cairn::DEFAULT_MIN_RELEVANCE),
        ..RecallOptions::default()
    };
    let mut rows = vec![ConfigRow {
        name: "patterns".into(),
        options: options.clone(),
        peer: None,
    }];
    let meta = RunMeta::new("personal", &folder.dir, &memory, cache.as_deref(), settings);
    if let Some(spec) = &args.llm {
        drop(memory);
        memory = open_with_llm(folder, args, spec)?;
        rows.push(ConfigRow {
            name: "patterns+llm".into(),
            options,
            peer: None,
        });
    }
    Ok((memory, rows, meta))
}

/// The summary, its markdown, METHODOLOGY.md and the finished `run.json`.
fn write_reports(
    args: &PersonalArgs,
    folder: &RunFolder,
    meta: &RunMeta,
    conversations: &[Conversation],
    records: &[ConversationRecord],
) -> anyhow::Result<()> {
    let s = summarize(meta, records);
    let values = [
        ("suite_files", suite_names(args).join(", ")),
        ("conversations", conversations.len().to_string()),
        (
            "expected_facts",
            conversations
                .iter()
                .flat_map(|c| &c.sessions)
                .flat_map(|s| &s.turns)
                .map(|t| t.facts.len())
                .sum::<usize>()
                .to_string(),
        ),
        ("questions", meta.questions_in_file.to_string()),
    ];
    crate::report::write_files(
        &folder.dir,
        &[
            ("summary.json", serde_json::to_string_pretty(&s)?),
            ("summary.md", render_summary(&s)),
            ("METHODOLOGY.md", render_methodology(&s, &values)),
            ("run.json", serde_json::to_string_pretty(meta)?),
        ],
    )
}

fn suite_names(args: &PersonalArgs) -> Vec<String> {
    if args.suites.is_empty() {
        return BUILT_IN.iter().map(|(s, _)| format!("{s}.txt")).collect();
    }
    args.suites
        .iter()
        .map(|p| p.display().to_string())
        .collect()
}

/// The conversations of the suite files (the built-in ones by default).
pub fn load(args: &PersonalArgs) -> anyhow::Result<Vec<Conversation>> {
    let mut out = Vec::new();
    if args.suites.is_empty() {
        for (split, text) in BUILT_IN {
            out.extend(personal::parse(text, split)?);
        }
    }
    for path in &args.suites {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let split = path
            .file_stem()
            .map_or("suite".into(), |s| s.to_string_lossy().into_owned());
        out.extend(personal::parse(&text, &split)?);
    }
    Ok(out)
}

/// The memory with an LLM for the `patterns+llm` row (enrichment run on demand).
fn open_with_llm(folder: &RunFolder, args: &PersonalArgs, spec: &str) -> anyhow::Result<Memory> {
    let (mut config, _, _) = crate::run::memory::bench_config(
        None,
        args.run.cache.as_deref(),
        args.run.memory_config.as_deref(),
    )?;
    config.llm = Some(LlmConfig::from_spec(spec)?);
    config.enrichment.background = false;
    Memory::open_with(&folder.data_dir, config).map_err(|e| anyhow::anyhow!("opening: {e}"))
}

/// One conversation through one config row, scored.
fn converse(
    memory: &Memory,
    c: &Conversation,
    row: &ConfigRow,
    llm: bool,
) -> anyhow::Result<ConversationRecord> {
    let space = space_name(&format!("personal-{}-", row.name.replace('+', "-")), &c.id);
    let (dated, session_ids) = ingest_conversation(memory, &space, c)?;
    let llm_facts = if llm {
        // Switched on once the space exists (the first ingest makes it); the enricher
        // reads every message its model has not read yet, so nothing written before is
        // missed.
        memory.set_enrichment(&space, true)?;
        memory.enrich_now(usize::MAX)?;
        memory.flush()?;
        count_llm_facts(memory, &space, &session_ids)?
    } else {
        memory.flush()?;
        0
    };
    let (extracted, expected) = score_extraction(memory, &space, c, &session_ids)?;
    let questions = c
        .questions
        .iter()
        .map(|q| ask(memory, &space, row, q))
        .collect::<anyhow::Result<Vec<_>>>()?;
    memory.forget_space(&space)?;
    Ok(ConversationRecord {
        conversation: c.id.clone(),
        split: c.split.clone(),
        config: row.name.clone(),
        dated_at_recording: dated,
        llm_facts,
        extracted,
        expected,
        questions,
    })
}

/// The conversation's sessions written to `space` in order (a dated one ingested, an
/// undated one appended): how many messages were dated at recording, and the session ids.
fn ingest_conversation(
    memory: &Memory,
    space: &str,
    c: &Conversation,
) -> anyhow::Result<(usize, Vec<String>)> {
    let mut dated = 0;
    let mut session_ids = Vec::new();
    for (i, s) in c.sessions.iter().enumerate() {
        let id = format!("{}-{i}", c.id);
        let messages: Vec<Message> = s
            .turns
            .iter()
            .enumerate()
            .map(|(j, t)| Message {
                id: j.to_string(),
                role: Some(if t.user { Role::User } else { Role::Assistant }),
                speaker: None,
                text: t.text.clone(),
                occurred_at: None,
                metadata: serde_json::Value::Null,
            })
            .collect();
        let report = match s.date {
            Some(date) => memory.ingest_sessions(
                space,
                vec![SessionInput {
                    id: id.clone(),
                    occurred_at: Some(date),
                    group: None,
                    messages,
                    metadata: serde_json::Value::Null,
                }],
            )?,
            None => memory.append(
                space,
                AppendInput {
                    session_id: id.clone(),
                    messages,
                    occurred_at: None,
                    group: None,
                    metadata: serde_json::Value::Null,
                },
                &WriteOptions::default(),
            )?,
        };
        dated += report.dated_at_recording;
        session_ids.push(id);
    }
    Ok((dated, session_ids))
}

/// One question recalled with the row's options (as of the question's time, if it has
/// one), and what the first hit, the context and the card state.
fn ask(
    memory: &Memory,
    space: &str,
    row: &ConfigRow,
    q: &personal::Question,
) -> anyhow::Result<QuestionOutcome> {
    let mut options = row.options.clone();
    options.scope.as_of = q.as_of.or(row.options.scope.as_of);
    let r = memory.recall(space, &q.question, &options)?;
    let have = words(&r.context);
    let card: Vec<&str> = r.card.iter().map(|l| l.statement.as_str()).collect();
    let on_card = words(&card.join(" "));
    let card_holds = |v: &str| {
        let w = words(v);
        !w.is_empty() && w.iter().all(|w| on_card.contains(w))
    };
    Ok(QuestionOutcome {
        question: q.question.clone(),
        as_of: q.as_of.map(|t| t.to_rfc3339()),
        current: q.current.clone(),
        earlier: q.earlier.clone(),
        first_hit_current: first_hit_states(&r.hits, &q.current),
        context_current: words(&q.current).iter().all(|w| have.contains(w)),
        card_current: card_holds(&q.current),
        card_earlier: q.earlier.as_deref().is_some_and(card_holds),
        first_hit: r.hits.first().map(|h| h.text.clone()),
    })
}

/// The session's fact units with a personal detail, with their message.
fn personal_facts(
    memory: &Memory,
    space: &str,
    session: &str,
) -> anyhow::Result<Vec<(String, FactDetail)>> {
    Ok(memory
        .session_units(space, session)?
        .into_iter()
        .filter(|u| u.kind == UnitKind::Fact)
        .filter_map(|u| match u.detail {
            Some(UnitDetail::Fact(d)) if d.person.is_some() => {
                Some((u.provenance.message_ids.first()?.clone(), d))
            }
            _ => None,
        })
        .collect())
}

fn score_extraction(
    memory: &Memory,
    space: &str,
    c: &Conversation,
    session_ids: &[String],
) -> anyhow::Result<(Vec<ExtractedOutcome>, Vec<ExpectedOutcome>)> {
    let mut extracted = Vec::new();
    let mut expected = Vec::new();
    for (s, sid) in c.sessions.iter().zip(session_ids) {
        let got = personal_facts(memory, space, sid)?;
        for (j, turn) in s.turns.iter().enumerate() {
            let message = j.to_string();
            let mine: Vec<&FactDetail> = got
                .iter()
                .filter(|(m, _)| *m == message)
                .map(|(_, d)| d)
                .collect();
            for d in &mine {
                extracted.push(ExtractedOutcome {
                    session: sid.clone(),
                    message: message.clone(),
                    category: d.category.map_or("-".into(), |c| c.as_str().into()),
                    subject: d.subject.clone(),
                    value: d.value.clone(),
                    negated: d.negated,
                    correct: turn.facts.iter().any(|e| matches(e, d)),
                });
            }
            for e in &turn.facts {
                expected.push(ExpectedOutcome {
                    session: sid.clone(),
                    message: message.clone(),
                    category: e.category.as_str().into(),
                    about: e.about.clone(),
                    value: e.value.clone(),
                    negated: e.negated,
                    found: mine.iter().any(|d| matches(e, d)),
                });
            }
        }
    }
    Ok((extracted, expected))
}

fn count_llm_facts(memory: &Memory, space: &str, sessions: &[String]) -> anyhow::Result<usize> {
    let mut n = 0;
    for s in sessions {
        n += memory
            .session_units(space, s)?
            .iter()
            .filter(|u| u.id.starts_with("fact:llm:"))
            .count();
    }
    Ok(n)
}
