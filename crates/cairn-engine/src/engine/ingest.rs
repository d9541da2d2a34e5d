//! Ingest of sessions and group messages: planning (new, appended, unchanged,
//! conflicting), writing ground state with its units, and forgetting.
use cairn_core::{
    GroupMessage, InputError, SessionInput, SessionRecord, SpaceId, StoreError, Unit,
};
use std::collections::HashMap;
use std::sync::atomic::Ordering;

use super::{Engine, EngineError, IngestReport};

/// How a record joins what is stored under its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WriteMode {
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
    pub(super) fn write_records(
        &self,
        records: Vec<(SessionRecord, WriteMode)>,
    ) -> Result<IngestReport, EngineError> {
        let _w = self.lock()?;
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
        self.index_written(written, last, &mut report)?;
        match failure {
            Some(e) => Err(e.into()),
            None => Ok(report),
        }
    }

    /// Decides what each record becomes (new, appended, unchanged) before anything is
    /// written, so a conflict anywhere in a batch writes nothing. A session named twice in
    /// one batch merges with its earlier occurrence.
    pub(super) fn plan_writes(
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

    /// Forgets a whole session: its record, units, vectors and index entries.
    pub fn forget_session(&self, space: &SpaceId, session: &str) -> Result<usize, EngineError> {
        self.require_space(space)?;
        let _w = self.lock()?;
        self.delete_session_locked(space, session)
    }

    /// Deletes a session and everything derived from it, cached vectors of its text
    /// included; the caller holds the write lock.
    pub(super) fn delete_session_locked(
        &self,
        space: &SpaceId,
        session: &str,
    ) -> Result<usize, EngineError> {
        let before = self.b.records.session_units(space, session)?;
        let ids = self.b.records.delete_session(space, session)?;
        self.purge_cached(&before, &[])?;
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
        let _w = self.lock()?;
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
        let before = self.b.records.session_units(space, session)?;
        let old: Vec<String> = before.iter().map(|u| u.id.clone()).collect();
        if let Some(store) = &self.b.enrich {
            store.forget_message(space, session, message)?;
        }
        let mut units = self.derive_units(&rec)?;
        let last = self.b.records.put_session(&rec, &units)?;
        self.purge_cached(&before, &units)?;
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
}
