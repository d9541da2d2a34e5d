use crate::Error;
use cairn_core::{
    AppendInput, Embedder, EntityDetail, EntitySummary, FactHistory, GroupMessage, InputError,
    KeyRecords, Partition, Recall, RecallOptions, RememberInput, ScopeOptions, SessionInput,
    SessionRecord, SpaceId, SpaceStats, SpeakerProfile, TrajectoryRecord, Warning,
};
use cairn_embed::EmbedConfig;
use cairn_engine::{
    CheckReport, Engine, EngineBackends, EngineConfig, ForgetReport, IngestReport,
    MessageForgetReport, PartitionForgetReport, Remembered, TextCommitter, WriteOptions,
};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Settings of a [`Memory`]: the embedding model, ranking, and where the embedding cache
/// lives.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    pub embed: EmbedConfig,
    pub engine: EngineConfig,
    /// Embedding cache file; defaults to `embedding-cache.sqlite3` in the data directory.
    /// Point several data directories at one file to share it.
    pub embedding_cache: Option<PathBuf>,
    /// An OpenAI-compatible LLM (optional: nothing on the default path needs one). Used
    /// for enrichment of the spaces that switch it on.
    pub llm: Option<cairn_llm::LlmConfig>,
    pub enrichment: crate::enrich::EnrichmentConfig,
    /// Where the memory lives: `None`, the data directory (embedded store); a
    /// `postgres://` URL, that PostgreSQL database (see [`Memory::open_postgres`]).
    pub store: Option<String>,
    /// Embedded store: a space of more vectors than this is searched through an HNSW
    /// graph (saved in `hnsw/`), a smaller one exactly. Default 50,000.
    pub ann_threshold: Option<usize>,
}

/// A memory store: one embedded data directory, or a PostgreSQL database
/// ([`Memory::open_postgres`]).
pub struct Memory {
    pub(crate) engine: Arc<Engine>,
    /// The LLM fact reader when `[llm]` is configured.
    pub(crate) enricher: Option<Arc<crate::enrich::LlmFactReader>>,
    /// Keeps enrichment caught up in the background (stopped and joined on drop).
    worker: Option<crate::enrich::Worker>,
    /// Commits the text index in the background (stopped and joined on drop).
    committer: Option<TextCommitter>,
    dir: PathBuf,
    /// API key rows kept by the store: `keys.sqlite3` in the data directory, or the
    /// database's rows (PostgreSQL: shared by every server on it).
    keys: Arc<dyn KeyRecords>,
}

pub(crate) fn space(name: &str) -> Result<SpaceId, Error> {
    Ok(SpaceId::new(name)?)
}

impl Memory {
    /// The API key rows of this memory's store (the data directory's, or the
    /// database's: every server on it shares them).
    pub fn key_records(&self) -> Arc<dyn KeyRecords> {
        self.keys.clone()
    }

    /// A memory over the backends a store opened (see `open.rs`).
    pub(crate) fn with_backends(
        dir: PathBuf,
        config: MemoryConfig,
        keys: Arc<dyn KeyRecords>,
        b: EngineBackends,
    ) -> Result<Self, Error> {
        let engine = Arc::new(Engine::open(b, config.engine)?);
        let enricher = match &config.llm {
            Some(llm) => Some(Arc::new(crate::enrich::LlmFactReader::new(
                cairn_llm::LlmClient::new(llm.clone())
                    .map_err(|e| InputError::new("llm", e.to_string()))?,
            ))),
            None => None,
        };
        let worker = match &enricher {
            Some(e) if config.enrichment.background => Some(crate::enrich::Worker::start(
                engine.clone(),
                e.clone(),
                config.enrichment.clone(),
            )),
            _ => None,
        };
        Ok(Self {
            committer: TextCommitter::start(engine.clone()),
            engine,
            enricher,
            worker,
            dir,
            keys,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn embedder(&self) -> &dyn Embedder {
        self.engine.embedder()
    }

    pub fn create_space(&self, name: &str) -> Result<bool, Error> {
        Ok(self.engine.create_space(&space(name)?)?)
    }

    pub fn spaces(&self) -> Result<Vec<SpaceId>, Error> {
        Ok(self.engine.spaces()?)
    }

    pub fn ingest_session(
        &self,
        space_name: &str,
        session: SessionInput,
    ) -> Result<IngestReport, Error> {
        self.ingest_sessions(space_name, vec![session])
    }

    /// Ingests several sessions at once (embedding them in shared batches). All are
    /// validated before any is written.
    pub fn ingest_sessions(
        &self,
        space_name: &str,
        sessions: Vec<SessionInput>,
    ) -> Result<IngestReport, Error> {
        self.ingest_sessions_with(space_name, sessions, &WriteOptions::default())
    }

    /// [`Memory::ingest_sessions`] with write options (an idempotency key). The batch is
    /// written in one transaction.
    pub fn ingest_sessions_with(
        &self,
        space_name: &str,
        sessions: Vec<SessionInput>,
        opts: &WriteOptions,
    ) -> Result<IngestReport, Error> {
        let report = self
            .engine
            .writes()
            .ingest_sessions(&space(space_name)?, sessions, opts)?;
        self.nudge_enrichment();
        Ok(report)
    }

    /// Appends messages to a session, creating it on first use (see [`AppendInput`]):
    /// one atomic read-check-write, also across servers sharing a database.
    pub fn append(
        &self,
        space_name: &str,
        input: AppendInput,
        opts: &WriteOptions,
    ) -> Result<IngestReport, Error> {
        let report = self
            .engine
            .writes()
            .append(&space(space_name)?, input, opts)?;
        self.nudge_enrichment();
        Ok(report)
    }

    /// Keeps what an agent asks to remember: a note in plain words or conversation turns
    /// (see [`RememberInput`]), appended to the session it names or to a new one; the
    /// answer names the session.
    pub fn remember(
        &self,
        space_name: &str,
        input: RememberInput,
        opts: &WriteOptions,
    ) -> Result<Remembered, Error> {
        let kept = self
            .engine
            .writes()
            .remember(&space(space_name)?, input, opts)?;
        self.nudge_enrichment();
        Ok(kept)
    }

    /// Ingests group-chat messages (any groups, any days; typically one day of every
    /// group at a time). Each group's day becomes the session `<group>/<YYYY-MM-DD>`;
    /// a message sent twice is stored once.
    pub fn ingest_group_messages(
        &self,
        space_name: &str,
        messages: Vec<GroupMessage>,
    ) -> Result<IngestReport, Error> {
        self.ingest_group_messages_with(space_name, messages, &WriteOptions::default())
    }

    /// [`Memory::ingest_group_messages`] with write options (an idempotency key).
    pub fn ingest_group_messages_with(
        &self,
        space_name: &str,
        messages: Vec<GroupMessage>,
        opts: &WriteOptions,
    ) -> Result<IngestReport, Error> {
        let report =
            self.engine
                .writes()
                .ingest_group_messages(&space(space_name)?, messages, opts)?;
        self.nudge_enrichment();
        Ok(report)
    }

    /// Switches LLM enrichment on or off for a space (stored; off keeps what was read).
    /// It runs only with an `[llm]` configured: in the background while the memory is
    /// open, or on [`Memory::enrich_now`]. Ingest never waits for it.
    pub fn set_enrichment(&self, space_name: &str, on: bool) -> Result<(), Error> {
        self.engine
            .writes()
            .set_enrichment(&space(space_name)?, on)?;
        self.nudge_enrichment();
        Ok(())
    }

    /// Spaces with enrichment switched on.
    pub fn enrichment_spaces(&self) -> Result<Vec<SpaceId>, Error> {
        Ok(self.engine.writes().enrichment_spaces()?)
    }

    /// Runs enrichment now, in this thread, until nothing is pending, the LLM is
    /// unavailable, or `max_messages` were read. An error when no `[llm]` is configured.
    pub fn enrich_now(&self, max_messages: usize) -> Result<cairn_engine::EnrichReport, Error> {
        let Some(e) = &self.enricher else {
            return Err(
                InputError::new("llm", "no LLM is configured ([llm] in cairn.toml)").into(),
            );
        };
        Ok(self
            .engine
            .writes()
            .enrich_pending(e.as_ref(), max_messages, &|| false)?)
    }

    /// Calls and tokens the enrichment LLM used since the memory was opened.
    pub fn llm_usage(&self) -> Option<cairn_llm::Usage> {
        self.enricher.as_ref().map(|e| e.client().usage())
    }

    fn nudge_enrichment(&self) {
        if let Some(w) = &self.worker {
            w.wake.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// The versions of the fact subject best matching `subject` (oldest first, the last
    /// current), among the facts `scope` sees (its `as_of`, filter, sessions...). `None`
    /// when no fact it sees has that subject; an error when several end-user partitions
    /// it sees have one (name whose with a filter).
    pub fn history(
        &self,
        space_name: &str,
        subject: &str,
        scope: &ScopeOptions,
    ) -> Result<Option<FactHistory>, Error> {
        Ok(self
            .engine
            .knowledge()
            .history(&space(space_name)?, subject, &scope.scope()?)?)
    }

    /// What `scope` shows about a speaker: style, roles, skills, topics and what they
    /// said of themself (their personal facts' current values), with the messages that
    /// show them. `None` for a name it does not know.
    pub fn profile(
        &self,
        space_name: &str,
        speaker: &str,
        scope: &ScopeOptions,
    ) -> Result<Option<SpeakerProfile>, Error> {
        Ok(self
            .engine
            .knowledge()
            .profile(&space(space_name)?, speaker, &scope.scope()?)?)
    }

    /// The entities (people, places, organizations, things) the messages `scope` sees
    /// name, most linked first; with `search`, only those whose name or an alias contains
    /// it. Derived from the units: forgetting a source forgets what it said of them.
    pub fn entities(
        &self,
        space_name: &str,
        search: Option<&str>,
        scope: &ScopeOptions,
    ) -> Result<Vec<EntitySummary>, Error> {
        Ok(self
            .engine
            .knowledge()
            .entities(&space(space_name)?, search, &scope.scope()?)?)
    }

    /// One entity by name or alias, with its mentions, relations and timeline as `scope`
    /// sees them. `None` for a name it does not know.
    pub fn entity(
        &self,
        space_name: &str,
        name: &str,
        scope: &ScopeOptions,
    ) -> Result<Option<EntityDetail>, Error> {
        Ok(self
            .engine
            .knowledge()
            .entity(&space(space_name)?, name, &scope.scope()?)?)
    }

    /// Everyone who wrote in, or was described in, what `scope` sees of a space.
    pub fn speakers(&self, space_name: &str, scope: &ScopeOptions) -> Result<Vec<String>, Error> {
        Ok(self
            .engine
            .knowledge()
            .speakers(&space(space_name)?, &scope.scope()?)?)
    }

    /// What a read with `scope` should tell its caller (`Recall::warnings` holds them for
    /// recall): a key of its metadata filter that no session it may see carries
    /// (`unknown_filter_key`; a misspelt key matches nothing, silently, without it). Every
    /// read route and tool that takes a filter answers these beside its answer.
    pub fn filter_warnings(
        &self,
        space_name: &str,
        scope: &ScopeOptions,
    ) -> Result<Vec<Warning>, Error> {
        Ok(self
            .engine
            .filter_warnings(&space(space_name)?, &scope.scope()?)?)
    }

    pub fn recall(
        &self,
        space_name: &str,
        query: &str,
        options: &RecallOptions,
    ) -> Result<Recall, Error> {
        Ok(self
            .engine
            .retrieval()
            .recall(&space(space_name)?, query, options)?)
    }

    /// Vectors of `texts` with the memory's embedding model, through its embedding cache
    /// under the space's keys: as passages (how unit text is embedded) or, with `query`,
    /// as recall embeds a question. For comparing the memory with other retrieval on the
    /// same model (the benchmark's peers) or scoring text against it.
    pub fn embed(
        &self,
        space_name: &str,
        texts: &[&str],
        query: bool,
    ) -> Result<Vec<Vec<f32>>, Error> {
        Ok(self.engine.embed(&space(space_name)?, texts, query)?)
    }

    /// Forgets a session (record, units, vectors, index entries, cached vectors of its
    /// text); returns units removed.
    pub fn forget_session(&self, space_name: &str, session: &str) -> Result<usize, Error> {
        Ok(self
            .engine
            .forgetting()
            .forget_session(&space(space_name)?, session)?)
    }

    /// Forgets a memory unit by forgetting what it was derived from (its messages, or its
    /// trajectory), in one write; profiles are refused (forget the speaker's messages).
    pub fn forget_unit(&self, space_name: &str, unit_id: &str) -> Result<ForgetReport, Error> {
        Ok(self
            .engine
            .forgetting()
            .forget_unit(&space(space_name)?, unit_id)?)
    }

    /// Forgets one message of a session; the session's units are derived again.
    pub fn forget_message(
        &self,
        space_name: &str,
        session: &str,
        message: &str,
    ) -> Result<usize, Error> {
        Ok(self
            .engine
            .forgetting()
            .forget_message(&space(space_name)?, session, message)?)
    }

    /// Forgets one message and, with `exchange`, the reply to it (the next message, when
    /// another speaker wrote it); the report names the messages that went.
    pub fn forget_message_with(
        &self,
        space_name: &str,
        session: &str,
        message: &str,
        exchange: bool,
    ) -> Result<MessageForgetReport, Error> {
        Ok(self.engine.forgetting().forget_message_with(
            &space(space_name)?,
            session,
            message,
            exchange,
        )?)
    }

    /// Forgets every session of an end-user partition (`{"user_id": "u1"}`: a user's
    /// data-protection request) and everything derived from them, in one write; a
    /// partition holding no session answers a report of zeros.
    pub fn forget_partition(
        &self,
        space_name: &str,
        partition: &Partition,
    ) -> Result<PartitionForgetReport, Error> {
        Ok(self
            .engine
            .forgetting()
            .forget_partition(&space(space_name)?, partition)?)
    }

    /// Forgets a whole space; false if it did not exist.
    pub fn forget_space(&self, space_name: &str) -> Result<bool, Error> {
        Ok(self.engine.forgetting().drop_space(&space(space_name)?)?)
    }

    /// The sessions of a space exactly as ingested.
    pub fn sessions(&self, space_name: &str) -> Result<Vec<SessionRecord>, Error> {
        Ok(self
            .engine
            .writes()
            .knowledge()
            .export(&space(space_name)?)?)
    }

    /// Writes a space as JSONL: one [`SessionRecord`] per line, then one
    /// [`TrajectoryRecord`] per line; returns the line count. Records are read and
    /// written one at a time ([`cairn_engine::Knowledge::export_each`]): the export holds one
    /// record's line, never the whole space.
    pub fn export(&self, space_name: &str, out: impl Write) -> Result<usize, Error> {
        self.export_within(space_name, None, out)
    }

    /// [`Memory::export`] of one end-user partition's sessions only (no trajectory: a
    /// trajectory belongs to no partition), when `within` is given.
    pub fn export_within(
        &self,
        space_name: &str,
        within: Option<&Partition>,
        mut out: impl Write,
    ) -> Result<usize, Error> {
        let sp = space(space_name)?;
        let io = |source: std::io::Error| Error::Io {
            context: "export".into(),
            source,
        };
        self.engine
            .writes()
            .knowledge()
            .export_each(&sp, within, |record| {
                let line = match &record {
                    cairn_engine::Exported::Session(r) => serde_json::to_vec(r),
                    cairn_engine::Exported::Trajectory(r) => serde_json::to_vec(r),
                }
                .map_err(|e| io(e.into()))?;
                out.write_all(&line).map_err(io)?;
                out.write_all(b"\n").map_err(io)
            })
    }

    /// Reads an export back (session and trajectory lines), each record into the space
    /// it names. Every line is parsed and validated before anything is written.
    pub fn import(&self, input: impl BufRead) -> Result<IngestReport, Error> {
        self.import_with(input, None, &WriteOptions::default())
    }

    /// [`Memory::import`], with every record going into `into` when given (an export of
    /// one space restored as another), and write options.
    pub fn import_with(
        &self,
        input: impl BufRead,
        into: Option<&str>,
        opts: &WriteOptions,
    ) -> Result<IngestReport, Error> {
        self.import_within(input, into, None, opts)
    }

    /// [`Memory::import_with`] into one end-user partition when `within` is given: every
    /// session is tagged with it (one naming another value of its keys is refused, naming
    /// the line) and a trajectory line is refused (a trajectory belongs to no partition).
    pub fn import_within(
        &self,
        input: impl BufRead,
        into: Option<&str>,
        within: Option<&Partition>,
        opts: &WriteOptions,
    ) -> Result<IngestReport, Error> {
        let into = into.map(space).transpose()?;
        let mut sessions = Vec::new();
        let mut session_lines = Vec::new();
        let mut trajectories = Vec::new();
        let mut trajectory_lines = Vec::new();
        for (i, line) in input.lines().enumerate() {
            let line = line.map_err(|e| Error::Io {
                context: format!("import line {}", i + 1),
                source: e,
            })?;
            if line.trim().is_empty() {
                continue;
            }
            let bad = |e: serde_json::Error| {
                InputError::new(format!("line {}", i + 1), e.to_string()).at(format!("lines[{i}]"))
            };
            let v: serde_json::Value = serde_json::from_str(&line).map_err(bad)?;
            let named = |s: &SpaceId| -> Result<SpaceId, Error> {
                match &into {
                    Some(into) => Ok(into.clone()),
                    // A space an export line names is input like any other name.
                    None => SpaceId::new(s.as_str()).map_err(|e| {
                        e.within(format!("line {}", i + 1))
                            .at(format!("lines[{i}].space"))
                            .into()
                    }),
                }
            };
            if v.get("trajectory").is_some() {
                if within.is_some() {
                    return Err(InputError::new(
                        format!("line {}", i + 1),
                        "a trajectory belongs to no end-user partition; this import is into one",
                    )
                    .at(format!("lines[{i}]"))
                    .into());
                }
                let mut r = serde_json::from_value::<TrajectoryRecord>(v).map_err(bad)?;
                r.space = named(&r.space)?;
                trajectories.push(r);
                trajectory_lines.push(i);
            } else {
                let mut r = serde_json::from_value::<SessionRecord>(v).map_err(bad)?;
                r.space = named(&r.space)?;
                if let Some(p) = within {
                    r.session.metadata = p.stamp(&r.session.metadata).map_err(|e| {
                        e.within(format!("line {}", i + 1))
                            .nested(&format!("lines[{i}].session"))
                    })?;
                }
                sessions.push(r);
                session_lines.push(i);
            }
        }
        // Nothing is written unless every line is valid and none conflicts.
        session_lines.extend(trajectory_lines);
        self.engine
            .writes()
            .import(sessions, trajectories, opts)
            .map_err(|e| on_lines(e, &session_lines))
    }

    /// The memory units derived from one session (turns, rounds, ...).
    pub fn session_units(
        &self,
        space_name: &str,
        session: &str,
    ) -> Result<Vec<cairn_core::Unit>, Error> {
        Ok(self
            .engine
            .writes()
            .knowledge()
            .session_units(&space(space_name)?, session)?)
    }

    pub fn stats(&self, space_name: &str) -> Result<SpaceStats, Error> {
        Ok(self.engine.stats(&space(space_name)?)?)
    }

    /// Bytes on disk of everything this memory stores: the data directory, or for
    /// PostgreSQL the database (all its spaces, free space included).
    pub fn disk_bytes(&self) -> Result<u64, Error> {
        match self.engine.store_disk_bytes()? {
            Some(n) => Ok(n),
            None => Ok(dir_size(&self.dir)),
        }
    }

    /// Checks derived state against the verbatim record; `rebuild` recomputes all of it.
    pub fn check(&self, rebuild: bool) -> Result<CheckReport, Error> {
        Ok(self.engine.check(rebuild)?)
    }

    /// Makes everything ingested searchable and durable in every index.
    pub fn flush(&self) -> Result<(), Error> {
        Ok(self.engine.flush()?)
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // Stop and join the background threads first: they hold the engine.
        drop(self.worker.take());
        drop(self.committer.take());
        if let Err(e) = self.engine.flush() {
            tracing::warn!(error = %e, "flushing the text index on close failed; it will be healed on next open");
        }
    }
}

/// An import error naming its record by position (among the sessions, then the
/// trajectories), renamed after the line it came from (`[2].session.id` of the record on
/// line 7 becomes `lines[6].session.id`).
fn on_lines(e: cairn_engine::EngineError, lines: &[usize]) -> Error {
    let rename = |field: &mut Option<String>, record: &mut String| {
        let Some(f) = field.as_deref() else { return };
        let Some((k, rest)) = f.strip_prefix('[').and_then(|r| r.split_once(']')) else {
            return;
        };
        if let Some(line) = k.parse::<usize>().ok().and_then(|k| lines.get(k)) {
            *field = Some(format!("lines[{line}]{rest}"));
            *record = format!("line {}, {record}", line + 1);
        }
    };
    match e {
        cairn_engine::EngineError::Input(mut i) => {
            rename(&mut i.field, &mut i.record);
            Error::Input(i)
        }
        cairn_engine::EngineError::Conflict(mut c) => {
            rename(&mut c.field, &mut c.record);
            Error::Conflict(c)
        }
        other => other.into(),
    }
}

/// Bytes of every file under `p` (links not followed; 0 when it does not exist): what a
/// data directory, or one of its parts, takes on disk.
pub fn dir_size(p: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        return 0;
    };
    if meta.is_dir() {
        std::fs::read_dir(p)
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| dir_size(&e.path())).sum())
            .unwrap_or(0)
    } else {
        meta.len()
    }
}
