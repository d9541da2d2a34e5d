//! The retrieval protocol: a run folder that resumes question by question, spaces
//! ingested through the public API, every question recalled once per config row and
//! scored at session and turn level ([`crate::scoring::retrieval`]), one record per
//! (question, row) appended to `results.jsonl`, and the summary files at the end.
mod judging;
mod plan;
mod setup;

use judging::{exclusion_of, judge, judged, messages_twice};
pub use plan::{QuestionSpec, RunPlan};
use setup::{
    existing_results, previous_command_lines, previous_meta, resolve_label, run_rows, with_ids_note,
};

use crate::args::RunArgs;
use crate::datasets::off_topic;
use crate::peers::{self, Doc, PeerIndex};
use crate::protocol::ids::OpaqueIds;
use crate::qa::{Qa, Style};
use crate::records::retrieval::{
    done_pairs, read_results, CardCitation, Evidence, IngestInfo, LedgerEntry, LevelScores,
    QuestionRecord, QuestionTimings, RankedHit,
};
use crate::records::ResultsFile;
use crate::report::retrieval as report;
use crate::run::rows::in_order;
use crate::run::{arm_stop, open_memory, progress, stopped};
use crate::run::{ConfigRow, RunMeta};
use crate::scoring::exclusion;
use anyhow::{bail, Context as _};
use cairn::{Memory, SessionInput, Unit, UnitKind};
use indicatif::ProgressBar;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `--shared-space`: a user's sessions as one shared space holds them, their ids under the
/// user's (two users' histories may hold the same session) and `metadata.user_id` set.
pub fn tag_user(user: &str, sessions: Vec<SessionInput>) -> Vec<SessionInput> {
    sessions
        .into_iter()
        .map(|mut s| {
            s.id = user_session(user, &s.id);
            let mut meta = match std::mem::take(&mut s.metadata) {
                serde_json::Value::Object(m) => m,
                _ => serde_json::Map::new(),
            };
            meta.insert("user_id".into(), user.into());
            s.metadata = serde_json::Value::Object(meta);
            s
        })
        .collect()
}

fn user_session(user: &str, session: &str) -> String {
    format!("{user}/{session}")
}

/// `--shared-space`: a question of `user` as the shared space asks it: its evidence under
/// the user's session ids ([`tag_user`]), its recalls filtered to the user.
pub fn for_user(user: &str, mut q: QuestionSpec) -> QuestionSpec {
    let e = &mut q.evidence;
    e.sessions = e.sessions.iter().map(|s| user_session(user, s)).collect();
    e.turns = e
        .turns
        .iter()
        .map(|(s, t)| (user_session(user, s), t.clone()))
        .collect();
    q.filter = Some(serde_json::json!({ "user_id": user }));
    q
}

/// A retrieval run in progress.
pub struct Run {
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
    qa: Option<Qa>,
    /// The renaming of the dataset's ids (identity with `--keep-ids`).
    pub ids: OpaqueIds,
    /// The peers' index of each space ingested and not yet released (with peer rows).
    peers: HashMap<String, PeerIndex>,
    /// `--off-topic` sources, how many of each to ask a space, and the spaces asked so far.
    off_topic: Vec<off_topic::Source>,
    off_topic_per_space: usize,
    off_topic_spaces: usize,
}

impl Run {
    pub fn start(args: &RunArgs, plan: RunPlan) -> anyhow::Result<Self> {
        let now = chrono::Utc::now();
        let label = resolve_label(args, plan.dataset)?;
        let dir = args.run.out.join(&label);
        let results_path = dir.join("results.jsonl");
        let run_json = dir.join("run.json");
        let existing = existing_results(&results_path, &dir, args.resume)?;
        let previous = previous_meta(&dir, args, &plan)?;
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let data_dir = dir.join("data");
        let (memory, cache, memory_settings) = open_memory(
            &data_dir,
            args.run.cache.as_deref(),
            args.run.memory_config.as_deref(),
        )?;
        let rows = run_rows(args);
        let off_topic = off_topic::load(&args.off_topic)?;
        let qa = Qa::from_args(&args.llm)?;
        let style = Style::for_dataset(plan.dataset);
        let data_path = std::fs::canonicalize(&args.data).unwrap_or_else(|_| args.data.clone());
        let meta = RunMeta {
            data_path: data_path.display().to_string(),
            data_sha256: plan.sha256,
            started_at: previous.as_ref().map_or(now, |p| p.started_at),
            previous_command_lines: previous_command_lines(previous.as_ref()),
            configs: rows.clone(),
            as_of_policy: args.as_of.name().into(),
            as_of_description: plan.as_of_description,
            limit: args.limit,
            questions_filter: args.questions.clone(),
            max_questions_per_conv: plan.max_questions_per_conv,
            questions_in_file: plan.questions_in_file,
            questions_selected: plan.selected.len(),
            keep_data: args.run.keep_data,
            load_seconds: plan.load_seconds,
            dataset_notes: with_ids_note(plan.dataset_notes, args.keep_ids),
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
        let pb = progress::bar(plan.selected.len(), &label);
        Self::show_resumed(&pb, &dir, &rows, &done, &plan.selected);
        arm_stop();
        Ok(Self {
            results: ResultsFile::open(&results_path)?,
            dir,
            data_dir,
            done,
            memory: Some(memory),
            rows,
            meta,
            pb,
            keep_data: args.run.keep_data,
            selected: plan.selected,
            dataset_label: plan.dataset.into(),
            qa,
            ids: OpaqueIds::new(!args.keep_ids),
            peers: HashMap::new(),
            off_topic,
            off_topic_per_space: args.off_topic_per_space,
            off_topic_spaces: 0,
        })
    }

    /// Starts the bar at the questions a resumed run already finished (every row done).
    fn show_resumed(
        pb: &ProgressBar,
        dir: &Path,
        rows: &[ConfigRow],
        done: &HashSet<(String, String)>,
        selected: &[String],
    ) {
        let finished = selected
            .iter()
            .filter(|q| {
                rows.iter()
                    .all(|r| done.contains(&(q.to_string(), r.name.clone())))
            })
            .count();
        pb.set_position(finished as u64);
        pb.reset_eta();
        if finished > 0 {
            pb.println(format!(
                "resuming {}: {finished} of {} questions already done",
                dir.display(),
                selected.len()
            ));
        }
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
        in_order(self.pending_rows(question_id), position)
    }

    /// Ingests sessions into a fresh space (dropped first if a previous run left it), in
    /// one `ingest_sessions` call, then flushes so everything is searchable; the time
    /// covers both.
    pub fn ingest(
        &mut self,
        space: &str,
        sessions: Vec<SessionInput>,
        shared: bool,
        skipped_empty_turns: usize,
    ) -> Result<IngestInfo, cairn::Error> {
        self.index_peers(space, || peers::docs_of_sessions(&sessions));
        let m = self.memory();
        m.forget_space(space)?;
        let messages = sessions.iter().map(|s| s.messages.len()).sum();
        let sessions = self.ids.sessions(sessions);
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

    /// `--shared-space`: adds a user's sessions to the shared space (tagged, see
    /// [`tag_user`]) in one `ingest_sessions` call, then flushes; the time covers both.
    pub fn ingest_user(
        &self,
        space: &str,
        user: &str,
        sessions: Vec<SessionInput>,
        skipped_empty_turns: usize,
    ) -> Result<IngestInfo, cairn::Error> {
        let m = self.memory();
        let messages = sessions.iter().map(|s| s.messages.len()).sum();
        let sessions = self.ids.sessions(tag_user(user, sessions));
        let t = Instant::now();
        let report = m.ingest_sessions(space, sessions)?;
        m.flush()?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        Ok(IngestInfo {
            space: space.into(),
            shared: true,
            sessions: report.sessions,
            messages,
            units: report.units,
            vectors_computed: report.vectors_computed,
            vectors_cached: report.vectors_cached,
            ms,
            skipped_empty_turns,
        })
    }

    /// Indexes a space's turns (under the dataset's ids) for the peer rows, if any.
    pub fn index_peers(&mut self, space: &str, docs: impl FnOnce() -> Vec<Doc>) {
        if self.rows.iter().any(|r| r.peer.is_some()) {
            let index = PeerIndex::new(self.memory(), space, docs());
            self.peers.insert(space.to_string(), index);
        }
    }

    /// Drops a space once its questions are done (unless --keep-data), so every question
    /// is recalled against an index of similar size.
    pub fn release(&mut self, space: &str) {
        self.peers.remove(space);
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
        // The memory's names of the evidence turns.
        let turns: HashSet<(String, String)> = evidence
            .turns
            .iter()
            .map(|(s, t)| (self.ids.memory_session(s), self.ids.memory_message(s, t)))
            .collect();
        let mut sessions: Vec<&str> = evidence.sessions.iter().map(String::as_str).collect();
        for (s, _) in &evidence.turns {
            if !sessions.contains(&s.as_str()) {
                sessions.push(s);
            }
        }
        let mut out = Vec::new();
        for sid in sessions {
            let named = self.ids.memory_session(sid);
            if !units_of.contains_key(sid) {
                let units = self.memory().session_units(space, &named)?;
                units_of.insert(sid.to_string(), units);
            }
            let units = &units_of[sid];
            let evidence_turn_units = units
                .iter()
                .filter(|u| {
                    u.provenance
                        .message_ids
                        .iter()
                        .any(|m| turns.contains(&(named.clone(), m.clone())))
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
        opts.scope.as_of = q.as_of;
        if q.filter.is_some() {
            opts.scope.filter.clone_from(&q.filter);
        }
        let t = Instant::now();
        let result = self.memory().recall(&ingest.space, &q.question, &opts);
        let wall = t.elapsed().as_secs_f64() * 1000.0;
        let mut recall = match result {
            Ok(r) => r,
            Err(e) => return self.error_record(q, row, ingest, ledger, &e.to_string()),
        };
        for hits in [&mut recall.hits, &mut recall.extra_hits] {
            *hits = std::mem::take(hits)
                .into_iter()
                .map(|h| self.ids.original_hit(h))
                .collect();
        }
        let (hits, metrics) = judged(&recall, q, ledger);
        let exclusion = exclusion_of(q, &metrics);
        let qa = self.qa.as_ref().map(|qa| {
            qa.run(
                Style::for_dataset(&self.dataset_label),
                &recall.context,
                &q.question,
                q.question_date.as_deref(),
                q.answer.as_deref().unwrap_or(""),
                &q.qtype,
                q.exclusion.as_deref(),
            )
        });
        let card = recall
            .card
            .iter()
            .map(|l| {
                let (session_id, message_id) =
                    self.ids.original_message(&l.session_id, &l.message_id);
                CardCitation {
                    category: l.category.as_str().to_string(),
                    session_id,
                    message_id,
                }
            })
            .collect();
        QuestionRecord {
            qa,
            exclusion,
            card,
            messages_twice: messages_twice(&hits),
            hits,
            context_tokens: recall.context_tokens,
            hits_cut: recall.hits_cut,
            context_unit_ids: recall.context_unit_ids,
            no_relevant_memory: recall.no_relevant_memory,
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
            no_relevant_memory: false,
            messages_twice: 0,
            card: Vec::new(),
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

    /// Asks one question under `rows` and appends a record per row: recalled and scored
    /// when the question's space was ingested (`ingest`) and its ledger reads, else an
    /// error record per row naming what failed. `units` memoizes the ledger's
    /// `session_units` across the questions of one space.
    pub fn ask(
        &mut self,
        q: &QuestionSpec,
        rows: &[ConfigRow],
        ingest: &Result<IngestInfo, String>,
        failed: &IngestInfo,
        units: &mut HashMap<String, Vec<Unit>>,
    ) -> anyhow::Result<()> {
        let info = match ingest {
            Ok(info) => info,
            Err(e) => return self.fail(q, rows, failed, &format!("ingest: {e}")),
        };
        let ledger = match self.ledger(&info.space, &q.evidence, units) {
            Ok(l) => l,
            Err(e) => return self.fail(q, rows, info, &format!("ledger: {e}")),
        };
        for row in rows {
            let r = match row.peer {
                Some(_) => self.peer_record(q, row, info, &ledger),
                None => self.recall(q, row, info, &ledger),
            };
            self.append(&r)?;
        }
        Ok(())
    }

    /// Answers one question with a peer recipe over the space's turns, packed within the
    /// row's budget, and scores it as a recall.
    fn peer_record(
        &mut self,
        q: &QuestionSpec,
        row: &ConfigRow,
        ingest: &IngestInfo,
        ledger: &[LedgerEntry],
    ) -> QuestionRecord {
        let (Some(peer), Some(memory), Some(index)) = (
            row.peer,
            self.memory.as_ref(),
            self.peers.get_mut(&ingest.space),
        ) else {
            return self.error_record(q, row, ingest, ledger, "no peer index for this space");
        };
        let t = Instant::now();
        let ranked = match index.rank(memory, peer, &q.question) {
            Ok(r) => r,
            Err(e) => return self.error_record(q, row, ingest, ledger, &e.to_string()),
        };
        let (packed, tokens) = index.pack(&ranked, row.options.token_budget);
        let wall = t.elapsed().as_secs_f64() * 1000.0;
        let shown: HashSet<usize> = packed.iter().copied().collect();
        let last = packed.iter().max().map_or(0, |&p| p + 1);
        let hits: Vec<RankedHit> = ranked
            .iter()
            .take(last.max(10))
            .enumerate()
            .map(|(i, &d)| {
                let doc = &index.docs[d];
                RankedHit {
                    rank: i + 1,
                    unit_id: format!("turn:{}:{}", doc.session, doc.message),
                    kind: UnitKind::Turn,
                    session_id: Some(doc.session.clone()),
                    turn_ids: vec![doc.message.clone()],
                    score: 0.0,
                    in_context: shown.contains(&i),
                    context_turn_ids: None,
                    relevance: None,
                    session_relevant: false,
                    turn_relevant: false,
                    features: None,
                }
            })
            .collect();
        let context_unit_ids = hits
            .iter()
            .filter(|h| h.in_context)
            .map(|h| h.unit_id.clone())
            .collect();
        let (hits, metrics) = judge(hits, q, ledger);
        QuestionRecord {
            exclusion: exclusion_of(q, &metrics),
            messages_twice: messages_twice(&hits),
            hits,
            context_tokens: tokens,
            context_unit_ids,
            metrics,
            timings: QuestionTimings {
                ingest_ms: ingest.ms,
                recall_wall_ms: wall,
                recall: None,
            },
            ..self.base_record(q, row, ingest, ledger)
        }
    }

    /// Asks the space its share of the off-topic questions (`--off-topic`) under every
    /// row of the memory (peers cannot say they found nothing), one record each.
    pub fn ask_off_topic(&mut self, space: &str, ingest: &IngestInfo) -> anyhow::Result<()> {
        let nth = self.off_topic_spaces;
        self.off_topic_spaces += 1;
        let asked = off_topic::for_space(&self.off_topic, nth, self.off_topic_per_space);
        let rows: Vec<ConfigRow> = self
            .rows
            .iter()
            .filter(|r| r.peer.is_none())
            .cloned()
            .collect();
        for a in asked {
            let q = QuestionSpec {
                id: format!("off-topic:{space}:{}:{}", a.source, a.index),
                qtype: format!("off-topic {}", a.source),
                question: a.question,
                answer: None,
                question_date: None,
                as_of: None,
                as_of_note: None,
                exclusion: Some(exclusion::OFF_TOPIC.into()),
                evidence: Evidence::default(),
                filter: None,
            };
            for row in self.pending_rows(&q.id) {
                if rows.contains(&row) {
                    let r = self.recall(&q, &row, ingest, &[]);
                    self.append(&r)?;
                }
            }
        }
        Ok(())
    }

    fn fail(
        &mut self,
        q: &QuestionSpec,
        rows: &[ConfigRow],
        info: &IngestInfo,
        error: &str,
    ) -> anyhow::Result<()> {
        for row in rows {
            let r = self.error_record(q, row, info, &[], error);
            self.append(&r)?;
        }
        Ok(())
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
        let off_topic = Some(exclusion::OFF_TOPIC);
        let records: Vec<QuestionRecord> = records
            .into_iter()
            .filter(|r| {
                selected.contains(r.question_id.as_str()) || r.exclusion.as_deref() == off_topic
            })
            .collect();
        let complete = self.selected.iter().all(|q| {
            self.rows
                .iter()
                .all(|r| self.done.contains(&(q.clone(), r.name.clone())))
        });
        self.meta.finished_at = Some(chrono::Utc::now());
        let s = report::summarize(&self.meta, &records, complete);
        report::write_files(&self.dir, &s)?;
        std::fs::write(
            self.dir.join("run.json"),
            serde_json::to_string_pretty(&self.meta)?,
        )?;
        eprintln!("{}", report::short_report(&s));
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
