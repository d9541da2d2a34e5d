//! The engine: the one place where ingest and recall are orchestrated.
use crate::derive::DERIVE_VERSION;
use crate::embedding::{embed_cached, CachedEmbedError, EmbedCounts};
use crate::pack::{pack, PackInput};
use crate::query::analyze_query;
use crate::rank::{rrf_fuse, second_pass, RankConfig, Ranked};
use crate::{facts, profile};
use cairn_core::{
    EmbedError, Embedder, EmbeddingCache, FactHistory, GroupMessage, Hit, InputError, Recall,
    RecallOptions, RecordStore, SessionInput, SessionRecord, SpaceId, SpaceStats, SpeakerProfile,
    StoreError, TextIndex, TextQuery, Timestamp, Timings, Unit, UnitKind, VectorIndex,
};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use thiserror::Error;

#[path = "enrich.rs"]
mod enrich;
pub use enrich::{enrichment_units, llm_fact_id, EnrichReport};

#[derive(Debug, Error)]
pub enum EngineError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
}

impl From<CachedEmbedError> for EngineError {
    fn from(e: CachedEmbedError) -> Self {
        match e {
            CachedEmbedError::Embed(e) => EngineError::Embed(e),
            CachedEmbedError::Store(e) => EngineError::Store(e),
        }
    }
}

/// The storage and model implementations an engine runs on.
#[derive(Clone)]
pub struct EngineBackends {
    pub records: Arc<dyn RecordStore>,
    pub text: Arc<dyn TextIndex>,
    pub vectors: Arc<dyn VectorIndex>,
    pub embedder: Arc<dyn Embedder>,
    pub cache: Arc<dyn EmbeddingCache>,
    /// Stored LLM readings (enrichment); `None`: the store keeps none.
    pub enrich: Option<Arc<dyn cairn_core::EnrichmentStore>>,
}

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    pub rank: RankConfig,
}

/// What an ingest did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct IngestReport {
    pub sessions: usize,
    /// Sessions that were already stored identically (nothing to do).
    pub unchanged: usize,
    pub messages_added: usize,
    pub units: usize,
    pub vectors_computed: usize,
    pub vectors_cached: usize,
}

impl std::ops::AddAssign<&IngestReport> for IngestReport {
    fn add_assign(&mut self, r: &IngestReport) {
        self.sessions += r.sessions;
        self.unchanged += r.unchanged;
        self.messages_added += r.messages_added;
        self.units += r.units;
        self.vectors_computed += r.vectors_computed;
        self.vectors_cached += r.vectors_cached;
    }
}

/// What `check` found (and, with rebuild, repaired).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct CheckReport {
    pub spaces: usize,
    pub units: usize,
    pub text_reindexed: usize,
    pub vectors_rebuilt: usize,
    pub text_watermark: u64,
    pub vector_watermark: u64,
    pub last_seq: u64,
}

pub struct Engine {
    b: EngineBackends,
    cfg: EngineConfig,
    /// Serializes writers: sequence numbers then reach the indexes in order.
    write: Mutex<()>,
    /// Highest unit sequence handed to the text index (committed or not).
    text_seq: AtomicU64,
}

/// How a record joins what is stored under its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriteMode {
    /// The record is the whole session: new, identical, or the stored one plus messages.
    Whole,
    /// Derive again even if unchanged (rebuilds).
    Rederive,
    /// The record's messages are added after the stored ones (group chats streamed in);
    /// messages already stored are skipped, so sending a day twice is harmless.
    Append,
}

enum Merge {
    New(SessionInput),
    Unchanged,
    Append(SessionInput, usize),
}

fn merge(
    existing: Option<SessionRecord>,
    new: SessionInput,
    space: &SpaceId,
) -> Result<Merge, StoreError> {
    let Some(old) = existing else {
        return Ok(Merge::New(new));
    };
    let old = old.session;
    if old == new {
        return Ok(Merge::Unchanged);
    }
    let same_header = old.occurred_at == new.occurred_at
        && old.group == new.group
        && old.metadata == new.metadata;
    let is_prefix = old.messages.len() < new.messages.len()
        && old.messages.iter().zip(&new.messages).all(|(a, b)| a == b);
    if same_header && is_prefix {
        let added = new.messages.len() - old.messages.len();
        return Ok(Merge::Append(new, added));
    }
    Err(StoreError::Conflict {
        space: space.to_string(),
        session: new.id,
    })
}

/// The stored session followed by the new messages it does not hold yet (same speaker,
/// time and text means already held). New messages without an id are numbered after the
/// stored ones.
fn appended(
    stored: Option<&SessionInput>,
    mut new: SessionInput,
) -> Result<SessionInput, InputError> {
    let mut messages = Vec::new();
    if let Some(stored) = stored {
        new.messages.retain(|m| {
            !stored.messages.iter().any(|s| {
                s.speaker == m.speaker && s.occurred_at == m.occurred_at && s.text == m.text
            })
        });
        messages = stored.messages.clone();
        new.occurred_at = stored.occurred_at;
        new.group = stored.group.clone();
        new.metadata = stored.metadata.clone();
    }
    for mut m in std::mem::take(&mut new.messages) {
        if m.id.is_empty() {
            let mut n = messages.len();
            while messages.iter().any(|x| x.id == n.to_string()) {
                n += 1;
            }
            m.id = n.to_string();
        }
        messages.push(m);
    }
    SessionInput { messages, ..new }.validate()
}

impl Engine {
    /// Opens the engine and heals derived state that a crash left behind.
    pub fn open(b: EngineBackends, cfg: EngineConfig) -> Result<Self, EngineError> {
        let engine = Self {
            b,
            cfg,
            write: Mutex::new(()),
            text_seq: AtomicU64::new(0),
        };
        engine.heal()?;
        engine.rederive_if_rules_changed()?;
        Ok(engine)
    }

    /// Units made by other derivation rules than this build's are derived again from the
    /// record, so an upgrade never serves stale or missing units.
    fn rederive_if_rules_changed(&self) -> Result<(), EngineError> {
        let stored = self.b.records.derive_version()?;
        if stored == DERIVE_VERSION {
            return Ok(());
        }
        if self.b.records.last_seq()? > 0 {
            tracing::info!(
                from = stored,
                to = DERIVE_VERSION,
                "derivation rules changed; re-deriving every unit"
            );
            self.check(true)?;
        }
        self.b.records.set_derive_version(DERIVE_VERSION)?;
        Ok(())
    }

    pub fn config(&self) -> &EngineConfig {
        &self.cfg
    }

    pub fn embedder(&self) -> &dyn Embedder {
        self.b.embedder.as_ref()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.write.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Brings both indexes up to the record store: units written after an index's
    /// watermark are (re)indexed.
    fn heal(&self) -> Result<CheckReport, EngineError> {
        let _w = self.lock();
        let last = self.b.records.last_seq()?;
        let tw = self.b.text.watermark()?;
        let vw = self.b.vectors.watermark()?;
        let mut report = CheckReport {
            last_seq: last,
            text_watermark: tw,
            vector_watermark: vw,
            ..Default::default()
        };
        if tw.min(vw) < last {
            // One read serves both indexes: each takes the units past its own watermark.
            let pending = self.b.records.units_since(tw.min(vw))?;
            let past = |w: u64| -> Vec<Unit> {
                pending
                    .iter()
                    .filter(|(seq, _)| *seq > w)
                    .map(|(_, u)| u.clone())
                    .collect()
            };
            if tw < last {
                let units: Vec<Unit> = past(tw).into_iter().filter(Unit::is_searchable).collect();
                tracing::info!(units = units.len(), "healing text index");
                self.b.text.upsert(&units)?;
                self.b.text.commit(last)?;
                report.text_reindexed = units.len();
            }
            if vw < last {
                let units = past(vw);
                tracing::info!(units = units.len(), "healing vectors");
                report.vectors_rebuilt = self.index_vectors(&units, last)?.computed;
            }
        }
        self.text_seq.store(last, Ordering::SeqCst);
        Ok(report)
    }

    /// Verifies that the derived state matches the record; with `rebuild`, recomputes all
    /// of it from the verbatim sessions (re-deriving units too).
    pub fn check(&self, rebuild: bool) -> Result<CheckReport, EngineError> {
        if !rebuild {
            let mut r = self.heal()?;
            r.spaces = self.b.records.list_spaces()?.len();
            return Ok(r);
        }
        let mut report = CheckReport::default();
        for space in self.b.records.list_spaces()? {
            report.spaces += 1;
            let records = self.b.records.sessions(&space)?;
            {
                let _w = self.lock();
                let old: Vec<String> = self
                    .b
                    .records
                    .space_units(&space)?
                    .into_iter()
                    .map(|u| u.id)
                    .collect();
                self.b.text.remove(&space, &old)?;
                self.b.vectors.remove(&space, &old)?;
            }
            for rec in records {
                let r = self.write_records(vec![(rec, WriteMode::Rederive)])?;
                report.units += r.units;
                report.vectors_rebuilt += r.vectors_computed + r.vectors_cached;
                report.text_reindexed += r.units;
            }
        }
        self.flush()?;
        report.last_seq = self.b.records.last_seq()?;
        report.text_watermark = self.b.text.watermark()?;
        report.vector_watermark = self.b.vectors.watermark()?;
        Ok(report)
    }

    pub fn create_space(&self, space: &SpaceId) -> Result<bool, EngineError> {
        Ok(self.b.records.create_space(space)?)
    }

    pub fn spaces(&self) -> Result<Vec<SpaceId>, EngineError> {
        Ok(self.b.records.list_spaces()?)
    }

    /// Deletes a space and everything derived from it.
    pub fn drop_space(&self, space: &SpaceId) -> Result<bool, EngineError> {
        let _w = self.lock();
        self.b.text.drop_space(space)?;
        self.b.vectors.drop_space(space)?;
        let existed = self.b.records.drop_space(space)?;
        self.b.text.commit(self.text_seq.load(Ordering::SeqCst))?;
        Ok(existed)
    }

    /// Ingests sessions into a space (created if needed). Every session is validated
    /// before anything is written; a session id already stored accepts only appended
    /// messages.
    pub fn ingest_sessions(
        &self,
        space: &SpaceId,
        sessions: Vec<SessionInput>,
    ) -> Result<IngestReport, EngineError> {
        let sessions = sessions
            .into_iter()
            .map(SessionInput::validate)
            .collect::<Result<Vec<_>, _>>()?;
        self.b.records.create_space(space)?;
        let now = chrono::Utc::now();
        let records = sessions
            .into_iter()
            .map(|session| {
                (
                    SessionRecord {
                        space: space.clone(),
                        recorded_at: now,
                        session,
                    },
                    WriteMode::Whole,
                )
            })
            .collect();
        self.write_records(records)
    }

    /// Ingests messages of group chats (any groups, any days). Each group's day is a
    /// session `<group>/<YYYY-MM-DD>` that later messages of that day extend; a message
    /// already stored (same speaker, time and text) is skipped. All messages are
    /// validated before anything is written.
    pub fn ingest_group_messages(
        &self,
        space: &SpaceId,
        messages: Vec<GroupMessage>,
    ) -> Result<IngestReport, EngineError> {
        if messages.is_empty() {
            return Err(InputError::new("group messages", "no messages given").into());
        }
        for (i, m) in messages.iter().enumerate() {
            m.validate(i)?;
        }
        self.b.records.create_space(space)?;
        let now = chrono::Utc::now();
        let records = cairn_core::group::day_sessions(messages)
            .into_iter()
            .map(|session| {
                let record = SessionRecord {
                    space: space.clone(),
                    recorded_at: now,
                    session,
                };
                (record, WriteMode::Append)
            })
            .collect();
        self.write_records(records)
    }

    /// Restores exported records (keeping their `recorded_at`).
    pub fn import(&self, records: Vec<SessionRecord>) -> Result<IngestReport, EngineError> {
        let mut checked = Vec::with_capacity(records.len());
        for mut r in records {
            r.session = r.session.validate()?;
            self.b.records.create_space(&r.space)?;
            checked.push((r, WriteMode::Whole));
        }
        self.write_records(checked)
    }

    /// Writes records (ground state first, one transaction each), then their vectors and
    /// text entries. `force` re-derives even unchanged sessions (rebuild).
    fn write_records(
        &self,
        records: Vec<(SessionRecord, WriteMode)>,
    ) -> Result<IngestReport, EngineError> {
        let _w = self.lock();
        let mut report = IngestReport::default();
        let planned = self.plan_writes(records, &mut report)?;
        // Ground state first, one transaction per session. Whatever was written is
        // indexed even when a later write fails, so it is searchable at once.
        let mut written: Vec<Unit> = Vec::new();
        let mut last = 0;
        let mut failure = None;
        for (record, added) in planned {
            let units = match self.derive_units(&record) {
                Ok(u) => u,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            };
            match self.b.records.put_session(&record, &units) {
                Ok(seq) => {
                    last = seq;
                    report.messages_added += added;
                    report.units += units.len();
                    written.extend(units);
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        if !written.is_empty() {
            let counts = self.index_vectors(&written, last)?;
            report.vectors_computed = counts.computed;
            report.vectors_cached = counts.cached;
            written.retain(Unit::is_searchable);
            self.b.text.upsert(&written)?;
            self.text_seq.store(last, Ordering::SeqCst);
        }
        match failure {
            Some(e) => Err(e.into()),
            None => Ok(report),
        }
    }

    /// Decides what each record becomes (new, appended, unchanged) before anything is
    /// written, so a conflict anywhere in a batch writes nothing. A session named twice in
    /// one batch merges with its earlier occurrence.
    fn plan_writes(
        &self,
        records: Vec<(SessionRecord, WriteMode)>,
        report: &mut IngestReport,
    ) -> Result<Vec<(SessionRecord, usize)>, EngineError> {
        let mut planned: Vec<(SessionRecord, usize)> = Vec::new();
        let mut position: HashMap<(SpaceId, String), usize> = HashMap::new();
        for (mut rec, mode) in records {
            report.sessions += 1;
            let key = (rec.space.clone(), rec.session.id.clone());
            let existing = match position.get(&key) {
                Some(&i) => Some(planned[i].0.clone()),
                None => self.b.records.get_session(&rec.space, &rec.session.id)?,
            };
            let recorded_at = existing.as_ref().map_or(rec.recorded_at, |e| e.recorded_at);
            if mode == WriteMode::Append {
                rec.session = appended(existing.as_ref().map(|e| &e.session), rec.session)?;
            }
            let force = mode == WriteMode::Rederive;
            let (session, added) = match merge(existing, rec.session.clone(), &rec.space)? {
                Merge::New(s) => {
                    let n = s.messages.len();
                    (s, n)
                }
                Merge::Append(s, n) => (s, n),
                Merge::Unchanged if force => (rec.session, 0),
                Merge::Unchanged => {
                    report.unchanged += 1;
                    continue;
                }
            };
            let record = SessionRecord {
                space: rec.space,
                recorded_at,
                session,
            };
            match position.get(&key) {
                Some(&i) => {
                    planned[i].0 = record;
                    planned[i].1 += added;
                }
                None => {
                    position.insert(key, planned.len());
                    planned.push((record, added));
                }
            }
        }
        Ok(planned)
    }

    fn index_vectors(&self, units: &[Unit], watermark: u64) -> Result<EmbedCounts, EngineError> {
        let with_text: Vec<&Unit> = units.iter().filter(|u| u.embed_text.is_some()).collect();
        let texts: Vec<&str> = with_text
            .iter()
            .filter_map(|u| u.embed_text.as_deref())
            .collect();
        let (vectors, counts) =
            embed_cached(self.b.embedder.as_ref(), self.b.cache.as_ref(), &texts)?;
        let mut by_space: BTreeMap<&SpaceId, Vec<(String, Vec<f32>)>> = BTreeMap::new();
        for (u, v) in with_text.iter().zip(vectors) {
            by_space
                .entry(&u.space)
                .or_default()
                .push((u.id.clone(), v));
        }
        if by_space.is_empty() {
            // Nothing to embed, but the watermark still moves past these units.
            if let Some(u) = units.first() {
                self.b.vectors.upsert(&u.space, &[], watermark)?;
            }
        }
        for (space, items) in by_space {
            self.b.vectors.upsert(space, &items, watermark)?;
        }
        Ok(counts)
    }

    /// Makes every ingested unit searchable and the text index durable.
    pub fn flush(&self) -> Result<(), EngineError> {
        if self.b.text.has_pending() {
            let _w = self.lock();
            self.b.text.commit(self.text_seq.load(Ordering::SeqCst))?;
        }
        Ok(())
    }

    fn require_space(&self, space: &SpaceId) -> Result<(), EngineError> {
        if self.b.records.space_exists(space)? {
            Ok(())
        } else {
            Err(StoreError::NoSuchSpace(space.to_string()).into())
        }
    }

    /// Forgets a whole session: its record, units, vectors and index entries.
    pub fn forget_session(&self, space: &SpaceId, session: &str) -> Result<usize, EngineError> {
        self.require_space(space)?;
        let _w = self.lock();
        self.delete_session_locked(space, session)
    }

    /// Deletes a session and everything derived from it; the caller holds the write lock.
    fn delete_session_locked(&self, space: &SpaceId, session: &str) -> Result<usize, EngineError> {
        let ids = self.b.records.delete_session(space, session)?;
        self.b.text.remove(space, &ids)?;
        self.b.vectors.remove(space, &ids)?;
        self.b.text.commit(self.text_seq.load(Ordering::SeqCst))?;
        Ok(ids.len())
    }

    /// Forgets one message: the session is rewritten without it and re-derived.
    pub fn forget_message(
        &self,
        space: &SpaceId,
        session: &str,
        message: &str,
    ) -> Result<usize, EngineError> {
        self.require_space(space)?;
        // Held from the read on: a concurrent append must not be overwritten by the
        // session as read here.
        let _w = self.lock();
        let Some(mut rec) = self.b.records.get_session(space, session)? else {
            return Err(
                StoreError::NotFound(format!("session {session:?} in space {space:?}")).into(),
            );
        };
        let before = rec.session.messages.len();
        rec.session.messages.retain(|m| m.id != message);
        if rec.session.messages.len() == before {
            return Err(StoreError::NotFound(format!(
                "message {message:?} of session {session:?}"
            ))
            .into());
        }
        if rec.session.messages.is_empty() {
            return self.delete_session_locked(space, session);
        }
        let old: Vec<String> = self
            .b
            .records
            .session_units(space, session)?
            .into_iter()
            .map(|u| u.id)
            .collect();
        if let Some(store) = &self.b.enrich {
            store.forget_message(space, session, message)?;
        }
        let mut units = self.derive_units(&rec)?;
        let last = self.b.records.put_session(&rec, &units)?;
        let stale: Vec<String> = old
            .into_iter()
            .filter(|id| !units.iter().any(|u| &u.id == id))
            .collect();
        self.b.text.remove(space, &stale)?;
        self.b.vectors.remove(space, &stale)?;
        self.index_vectors(&units, last)?;
        units.retain(Unit::is_searchable);
        self.b.text.upsert(&units)?;
        self.text_seq.store(last, Ordering::SeqCst);
        self.b.text.commit(last)?;
        Ok(stale.len())
    }

    /// Every session of a space, exactly as ingested.
    pub fn export(&self, space: &SpaceId) -> Result<Vec<SessionRecord>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.sessions(space)?)
    }

    /// The units derived from one session.
    pub fn session_units(&self, space: &SpaceId, session: &str) -> Result<Vec<Unit>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.session_units(space, session)?)
    }

    pub fn stats(&self, space: &SpaceId) -> Result<SpaceStats, EngineError> {
        Ok(self.b.records.stats(space)?)
    }

    /// Recalls evidence for `query` from one space.
    pub fn recall(
        &self,
        space: &SpaceId,
        query: &str,
        opts: &RecallOptions,
    ) -> Result<Recall, EngineError> {
        let t0 = Instant::now();
        opts.validate()?;
        if query.trim().is_empty() {
            return Err(InputError::new("recall", "`query` is empty").into());
        }
        self.require_space(space)?;
        self.flush()?;
        let mut timings = Timings::default();
        let now = opts.as_of.unwrap_or_else(chrono::Utc::now);
        let analysis = analyze_query(query, now);
        let rc = &self.cfg.rank;
        let filtered = opts.speakers.is_some()
            || opts.groups.is_some()
            || opts.sessions.is_some()
            || opts.kinds.is_some()
            || opts.as_of.is_some()
            || opts.since.is_some();
        let pool = if filtered {
            rc.candidates * 4
        } else {
            rc.candidates
        };

        let t = Instant::now();
        let lexical = self.b.text.search(&TextQuery {
            space,
            text: query,
            kinds: None,
            sessions: opts.sessions.as_deref(),
            text_weight: rc.text_weight,
            limit: pool,
        })?;
        timings.lexical_ms = ms(t);

        let t = Instant::now();
        let (qv, _) = embed_cached(self.b.embedder.as_ref(), self.b.cache.as_ref(), &[query])?;
        timings.embed_ms = ms(t);
        let t = Instant::now();
        let dense = match qv.first() {
            Some(v) => self.b.vectors.search(space, v, pool)?,
            None => Vec::new(),
        };
        timings.dense_ms = ms(t);

        let t = Instant::now();
        let fused = rrf_fuse(
            &[(&lexical, rc.lexical_weight), (&dense, rc.dense_weight)],
            rc.rrf_k,
        );
        let ids: Vec<String> = fused.iter().map(|(id, _)| id.clone()).collect();
        let visible = |u: &Unit| visible(u, opts);
        let units: HashMap<String, Unit> = self
            .b
            .records
            .units(space, &ids)?
            .into_iter()
            .filter(visible)
            .map(|u| (u.id.clone(), u))
            .collect();
        let want_containers = opts
            .kinds
            .as_ref()
            .is_none_or(|k| k.contains(&UnitKind::Round));
        let container_ids: Vec<String> = if want_containers {
            let mut c: Vec<String> = units
                .values()
                .filter_map(|u| u.part_of.clone())
                .filter(|c| !units.contains_key(c))
                .collect();
            c.sort();
            c.dedup();
            c
        } else {
            Vec::new()
        };
        let containers: HashMap<String, Unit> = self
            .b
            .records
            .units(space, &container_ids)?
            .into_iter()
            .filter(visible)
            .map(|u| (u.id.clone(), u))
            .collect();
        let episodes_as_hits = opts
            .kinds
            .as_ref()
            .is_some_and(|k| k.contains(&UnitKind::Episode));
        let ranked = second_pass(&fused, &units, &containers, &analysis, rc, episodes_as_hits);
        let ranked: Vec<Ranked> = ranked
            .into_iter()
            .filter(|r| opts.kinds.as_ref().is_none_or(|k| k.contains(&r.unit.kind)))
            .collect();
        let (ranked, superseded) = self.resolve_versions(space, ranked, opts)?;
        let mut top: Vec<Ranked> = ranked.into_iter().take(opts.top_k).collect();
        if let Some(profiles) = self.profiles_for(space, query, opts)? {
            let best = top.first().map_or(1.0, |r| r.score);
            for p in profiles.into_iter().rev() {
                top.insert(
                    0,
                    Ranked {
                        unit: p,
                        score: best,
                    },
                );
            }
            top.truncate(opts.top_k.max(1));
        }
        timings.rank_ms = ms(t);

        let t = Instant::now();
        let refs: Vec<&Unit> = top.iter().map(|r| &r.unit).collect();
        let counter = |s: &str| self.b.embedder.count_tokens(s);
        let packed = pack(&PackInput {
            units: &refs,
            query_words: &analysis.words,
            budget: opts.token_budget,
            format: opts.format,
            count_tokens: &counter,
        });
        timings.pack_ms = ms(t);
        timings.total_ms = ms(t0);
        let hits = top
            .into_iter()
            .map(|r| Hit {
                kind: r.unit.kind,
                text: r.unit.text,
                score: r.score,
                session_id: r.unit.provenance.session_id,
                turn_ids: r.unit.provenance.message_ids,
                speakers: r.unit.provenance.speakers,
                occurred_at: r.unit.occurred_at,
                superseded_by: superseded.get(&r.unit.id).cloned(),
                unit_id: r.unit.id,
            })
            .collect();
        Ok(Recall {
            hits,
            context: packed.context,
            context_tokens: packed.tokens,
            hits_cut: packed.cut,
            context_unit_ids: packed.unit_ids,
            timings,
        })
    }
}

impl Engine {
    /// Every fact of a space stated at or before `as_of`.
    fn facts(&self, space: &SpaceId, as_of: Option<Timestamp>) -> Result<Vec<Unit>, EngineError> {
        let mut facts = self.b.records.topic_units(space, "fact:")?;
        if let Some(as_of) = as_of {
            facts.retain(|f| f.occurred_at.is_none_or(|t| t <= as_of));
        }
        Ok(facts)
    }

    /// Puts what each hit states into its version chain (as of the recall time): a hit
    /// stating a value that was later replaced gets the current version ranked just
    /// above it (unless a better hit already shows it), and every hit stating a
    /// versioned value gets a note saying whether it is current or superseded. Returns
    /// the superseded hits with the fact unit that replaced them.
    fn resolve_versions(
        &self,
        space: &SpaceId,
        ranked: Vec<Ranked>,
        opts: &RecallOptions,
    ) -> Result<(Vec<Ranked>, HashMap<String, String>), EngineError> {
        let mut superseded = HashMap::new();
        // Hits far below the cut cannot reach the context; only the window that can is
        // resolved.
        let window = opts.top_k * 2;
        if !self.any_states_a_fact(space, &ranked[..window.min(ranked.len())])? {
            return Ok((ranked, superseded));
        }
        let facts = self.facts(space, opts.as_of)?;
        let mut stated_in: HashMap<(&str, &str), Vec<&Unit>> = HashMap::new();
        for f in &facts {
            if let (Some(s), Some(m)) = (
                f.provenance.session_id.as_deref(),
                f.provenance.message_ids.first(),
            ) {
                stated_in.entry((s, m.as_str())).or_default().push(f);
            }
        }
        let shown = |out: &[Ranked], f: &Unit| {
            out.iter().any(|o| {
                o.unit.provenance.session_id == f.provenance.session_id
                    && f.provenance
                        .message_ids
                        .iter()
                        .all(|m| o.unit.provenance.message_ids.contains(m))
            })
        };
        let mut out: Vec<Ranked> = Vec::with_capacity(ranked.len() + 2);
        for (i, mut r) in ranked.into_iter().enumerate() {
            let sid = r.unit.provenance.session_id.clone().unwrap_or_default();
            let stated: Vec<&Unit> = if i >= window {
                Vec::new()
            } else if r.unit.kind == UnitKind::Fact {
                facts.iter().filter(|f| f.id == r.unit.id).collect()
            } else {
                r.unit
                    .provenance
                    .message_ids
                    .iter()
                    .filter_map(|m| stated_in.get(&(sid.as_str(), m.as_str())))
                    .flatten()
                    .copied()
                    .collect()
            };
            let mut notes: Vec<String> = Vec::new();
            for f in stated {
                let chain = facts::chain_of(f, &facts);
                let Some(note) = facts::version_note(f, &chain) else {
                    continue;
                };
                if !notes.contains(&note) {
                    notes.push(note);
                }
                let Some(newest) = chain.last().filter(|n| n.id != f.id && visible(n, opts)) else {
                    continue;
                };
                superseded.insert(r.unit.id.clone(), newest.id.clone());
                if !shown(&out, newest) {
                    let mut current = (*newest).clone();
                    if let Some(n) = facts::version_note(newest, &chain) {
                        current.text = format!("{}\n{n}", current.text);
                    }
                    out.push(Ranked {
                        unit: current,
                        score: r.score,
                    });
                }
            }
            if !notes.is_empty() {
                r.unit.text = format!("{}\n{}", r.unit.text, notes.join("\n"));
            }
            out.push(r);
        }
        // A unit met again later in the list keeps its first place only.
        let mut seen = std::collections::HashSet::new();
        out.retain(|r| seen.insert(r.unit.id.clone()));
        Ok((out, superseded))
    }

    /// Whether any of `hits` is or contains a message that states a fact: a point lookup
    /// of the first fact id each message would have, so recall reads the space's facts
    /// only when they matter.
    fn any_states_a_fact(&self, space: &SpaceId, hits: &[Ranked]) -> Result<bool, EngineError> {
        let mut ids = Vec::new();
        for r in hits {
            if r.unit.kind == UnitKind::Fact {
                return Ok(true);
            }
            if let Some(sid) = &r.unit.provenance.session_id {
                for m in &r.unit.provenance.message_ids {
                    ids.push(facts::first_fact_id(sid, m));
                    ids.push(llm_fact_id(sid, m, 0));
                }
            }
        }
        Ok(!self.b.records.units(space, &ids)?.is_empty())
    }

    /// Profiles of the people a question is about (named in it, or given as `speakers`),
    /// as units for the context; `None` when the question is not about a person.
    fn profiles_for(
        &self,
        space: &SpaceId,
        query: &str,
        opts: &RecallOptions,
    ) -> Result<Option<Vec<Unit>>, EngineError> {
        if !profile::asks_about_person(query) {
            return Ok(None);
        }
        let known = self.speakers(space)?;
        let mut named = profile::named_speakers(query, &known);
        if named.is_empty() {
            named = opts.speakers.clone().unwrap_or_default();
        }
        if named.is_empty() {
            return Ok(None);
        }
        let contributions = self.b.records.topic_units(space, "speaker:")?;
        let units: Vec<Unit> = named
            .iter()
            .take(2)
            .filter_map(|name| profile::build_profile(name, &contributions))
            .map(|p| Unit {
                id: format!("profile:{}", p.speaker),
                space: space.clone(),
                kind: UnitKind::Profile,
                text: p.summary.clone(),
                key: String::new(),
                embed_text: None,
                provenance: cairn_core::Provenance {
                    speakers: vec![p.speaker.clone()],
                    group: None,
                    ..Default::default()
                },
                part_of: None,
                occurred_at: p.last_seen,
                recorded_at: chrono::Utc::now(),
                detail: None,
            })
            .collect();
        Ok((!units.is_empty()).then_some(units))
    }

    /// The version chain of the subject best matching `subject`, as of a time.
    pub fn history(
        &self,
        space: &SpaceId,
        subject: &str,
        as_of: Option<Timestamp>,
    ) -> Result<Option<FactHistory>, EngineError> {
        self.require_space(space)?;
        if subject.trim().is_empty() {
            return Err(InputError::new("history", "`subject` is empty").into());
        }
        Ok(facts::history(subject, &self.facts(space, as_of)?))
    }

    /// What is known about a speaker of the space.
    pub fn profile(
        &self,
        space: &SpaceId,
        speaker: &str,
    ) -> Result<Option<SpeakerProfile>, EngineError> {
        self.require_space(space)?;
        let contributions = self.b.records.topic_units(space, "speaker:")?;
        Ok(profile::build_profile(speaker, &contributions))
    }

    /// Everyone who wrote in, or was described in, the space.
    pub fn speakers(&self, space: &SpaceId) -> Result<Vec<String>, EngineError> {
        self.require_space(space)?;
        Ok(self
            .b
            .records
            .topics(space, "speaker:")?
            .into_iter()
            .filter_map(|t| t.strip_prefix("speaker:").map(String::from))
            .collect())
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// Whether options let a unit be seen.
fn visible(u: &Unit, opts: &RecallOptions) -> bool {
    if let (Some(as_of), Some(t)) = (opts.as_of, u.occurred_at) {
        if t > as_of {
            return false;
        }
    }
    if let (Some(since), Some(t)) = (opts.since, u.occurred_at) {
        if t < since {
            return false;
        }
    }
    if let Some(kinds) = &opts.kinds {
        // A turn stays visible when rounds are wanted: it credits its round.
        let credits_round = u.kind == UnitKind::Turn && kinds.contains(&UnitKind::Round);
        if !(kinds.contains(&u.kind) || credits_round) {
            return false;
        }
    }
    if let Some(sessions) = &opts.sessions {
        if !u
            .provenance
            .session_id
            .as_ref()
            .is_some_and(|s| sessions.contains(s))
        {
            return false;
        }
    }
    if let Some(speakers) = &opts.speakers {
        if !u.provenance.speakers.iter().any(|s| speakers.contains(s)) {
            return false;
        }
    }
    if let Some(groups) = &opts.groups {
        if !u
            .provenance
            .group
            .as_ref()
            .is_some_and(|g| groups.contains(g))
        {
            return false;
        }
    }
    true
}
