//! Enrichment by an optional LLM, asynchronous and never on the ingest path: ingest writes
//! the record and the LLM-free units and returns; [`Writes::enrich_pending`] (run by a
//! background worker, or on demand) later asks an [`Enricher`] to read the messages of
//! spaces that have enrichment switched on, stores each reading verbatim (the
//! `EnrichmentStore`), and re-derives the session so the readings become `fact` units
//! (`fact:llm:<session>:<message>:<n>`) that join version chains, `history` and recall
//! like pattern facts. Rebuilds derive the same units from the stored readings without
//! calling the LLM again. A server that is down leaves messages pending; the worker
//! tries again later.
use super::error::EngineError;
use super::services::Writes;
use crate::derive::derive_session_units;
use crate::facts::subject_key;
use cairn_core::{
    EnrichInput, Enricher, Enrichment, FactDetail, Provenance, Role, SessionRecord, SpaceId,
    StoreError, Unit, UnitDetail, UnitKind,
};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;

/// What one enrichment pass did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct EnrichReport {
    /// Spaces with enrichment on.
    pub spaces: usize,
    /// Messages read by the LLM in this pass.
    pub messages_read: usize,
    /// Facts it found.
    pub facts: usize,
    /// Messages whose answer could not be used (recorded; not asked again).
    pub failed: usize,
    /// Sessions re-derived with their new facts.
    pub sessions_updated: usize,
    /// Messages still waiting (the pass hit its limit, was stopped, or the LLM is away).
    pub pending: bool,
    /// Why the pass stopped early: the LLM is unreachable or failing (retried later).
    pub unavailable: Option<String>,
}

/// The id of the `n`th fact an LLM read from a message.
pub fn llm_fact_id(session: &str, message: &str, n: usize) -> String {
    format!("fact:llm:{session}:{message}:{n}")
}

/// Fact units from stored readings of a session (the newest reading of each message that
/// is still in the session). `units` are the session's other units (a fact credits the
/// exchange its message belongs to).
pub fn enrichment_units(rec: &SessionRecord, readings: &[Enrichment], units: &[Unit]) -> Vec<Unit> {
    let mut newest: HashMap<&str, &Enrichment> = HashMap::new();
    for e in readings {
        let keep = newest
            .get(e.message_id.as_str())
            .is_none_or(|n| n.created_at <= e.created_at);
        if keep {
            newest.insert(&e.message_id, e);
        }
    }
    let s = &rec.session;
    let mut out = Vec::new();
    for (pos, m) in s.messages.iter().enumerate() {
        let Some(e) = newest.get(m.id.as_str()) else {
            continue;
        };
        let part_of = units
            .iter()
            .find(|u| u.kind == UnitKind::Turn && u.provenance.message_ids == [m.id.clone()])
            .and_then(|t| t.part_of.clone());
        for (n, f) in e.facts.iter().enumerate() {
            let key = subject_key(&f.subject);
            if key.is_empty() || f.value.trim().is_empty() {
                continue;
            }
            out.push(Unit {
                id: llm_fact_id(&s.id, &m.id, n),
                space: rec.space.clone(),
                kind: UnitKind::Fact,
                text: format!(
                    "{}: {}: {} (read by {})",
                    m.speaker_name(),
                    f.subject,
                    f.value,
                    e.model
                ),
                key: format!("{} {}", f.subject, f.value),
                embed_text: None,
                provenance: Provenance::of_message(s, m, pos),
                part_of: part_of.clone(),
                occurred_at: s.message_time(m),
                recorded_at: rec.recorded_at,
                detail: Some(UnitDetail::Fact(FactDetail {
                    subject: f.subject.clone(),
                    subject_key: key,
                    value: f.value.clone(),
                    revision: false,
                    ..Default::default()
                })),
            });
        }
    }
    crate::derive::stamp_partition(&mut out, &s.metadata);
    out
}

impl Writes<'_> {
    /// Every unit of a session: the LLM-free derivation plus the facts of its stored
    /// LLM readings.
    pub(super) fn derive_units(&self, rec: &SessionRecord) -> Result<Vec<Unit>, StoreError> {
        let mut units = derive_session_units(&rec.space, &rec.session, rec.recorded_at);
        if let Some(store) = &self.b.enrich {
            let readings = store.of_session(&rec.space, &rec.session.id)?;
            if !readings.is_empty() {
                let llm = enrichment_units(rec, &readings, &units);
                units.extend(llm);
            }
        }
        Ok(units)
    }

    /// Whether the session has stored LLM readings (units derived from them).
    pub(super) fn has_readings(&self, rec: &SessionRecord) -> Result<bool, StoreError> {
        match &self.b.enrich {
            Some(store) => Ok(!store.of_session(&rec.space, &rec.session.id)?.is_empty()),
            None => Ok(false),
        }
    }

    /// Switches enrichment on or off for a space (off keeps what was read).
    pub fn set_enrichment(&self, space: &SpaceId, on: bool) -> Result<(), EngineError> {
        self.require_space(space)?;
        match &self.b.enrich {
            Some(store) => Ok(store.set_enabled(space, on)?),
            None => Err(StoreError::Backend("this store keeps no enrichments".into()).into()),
        }
    }

    /// Spaces with enrichment on.
    pub fn enrichment_spaces(&self) -> Result<Vec<SpaceId>, EngineError> {
        match &self.b.enrich {
            Some(store) => Ok(store.enabled_spaces()?),
            None => Ok(Vec::new()),
        }
    }

    /// One enrichment pass: reads at most `max_messages` pending messages (not yet read by
    /// this enricher's model; assistant messages are skipped, as for pattern facts) of
    /// every space with enrichment on, stores the readings and re-derives their sessions.
    /// The LLM is called without holding the write lock, so ingest and recall go on.
    /// Stops early, leaving messages pending, when `stop()` says so or the LLM is away.
    pub fn enrich_pending(
        &self,
        enricher: &dyn Enricher,
        max_messages: usize,
        stop: &dyn Fn() -> bool,
    ) -> Result<EnrichReport, EngineError> {
        let mut report = EnrichReport::default();
        let Some(store) = self.b.enrich.clone() else {
            return Ok(report);
        };
        let model = enricher.model_id().to_string();
        let spaces = store.enabled_spaces()?;
        report.spaces = spaces.len();
        for space in spaces {
            for rec in self.b.records.sessions(&space)? {
                let done: HashSet<String> = store
                    .of_session(&space, &rec.session.id)?
                    .into_iter()
                    .filter(|e| e.model == model)
                    .map(|e| e.message_id)
                    .collect();
                let pending: Vec<_> = rec
                    .session
                    .messages
                    .iter()
                    .filter(|m| m.role != Some(Role::Assistant) && !done.contains(&m.id))
                    .collect();
                let mut wrote = false;
                let mut halt = false;
                for m in pending {
                    if stop() || report.messages_read + report.failed >= max_messages {
                        report.pending = true;
                        halt = true;
                        break;
                    }
                    let input = EnrichInput {
                        speaker: m.speaker_name(),
                        occurred_at: rec.session.message_time(m),
                        text: &m.text,
                    };
                    let (facts, error) = match enricher.read_facts(&input) {
                        Ok(f) => (f, None),
                        Err(e) if e.transient => {
                            report.pending = true;
                            report.unavailable = Some(e.message);
                            halt = true;
                            break;
                        }
                        Err(e) => (Vec::new(), Some(e.message)),
                    };
                    if error.is_some() {
                        report.failed += 1;
                    } else {
                        report.messages_read += 1;
                        report.facts += facts.len();
                    }
                    store.put(&Enrichment {
                        space: space.clone(),
                        session_id: rec.session.id.clone(),
                        message_id: m.id.clone(),
                        model: model.clone(),
                        facts,
                        error,
                        created_at: chrono::Utc::now(),
                    })?;
                    wrote = true;
                }
                if wrote {
                    self.rederive_session(&space, &rec.session.id)?;
                    report.sessions_updated += 1;
                }
                if halt {
                    return Ok(report);
                }
            }
        }
        Ok(report)
    }

    /// Derives a stored session's units again (with its enrichments) and re-indexes them;
    /// reads the session under the write lock, so a concurrent append is never lost.
    fn rederive_session(&self, space: &SpaceId, session: &str) -> Result<(), EngineError> {
        let _w = self.lock()?;
        let Some(rec) = self.b.records.get_session(space, session)? else {
            return Ok(()); // forgotten meanwhile
        };
        self.hold_reserve()?;
        let old: Vec<String> = self
            .b
            .records
            .session_units(space, session)?
            .into_iter()
            .map(|u| u.id)
            .collect();
        let mut units = self.derive_units(&rec)?;
        let last = self.b.records.put_session(&rec, &units)?;
        let stale: Vec<String> = old
            .into_iter()
            .filter(|id| !units.iter().any(|u| &u.id == id))
            .collect();
        self.index_after_commit(|| {
            self.b.text.remove(space, &stale)?;
            self.b.vectors.remove(space, &stale)?;
            self.index_vectors(&units, last)?;
            units.retain(Unit::is_searchable);
            self.b.text.upsert(&units)?;
            self.text_seq.store(last, Ordering::SeqCst);
            Ok(())
        });
        Ok(())
    }
}
