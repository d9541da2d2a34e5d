//! Ingest of sessions and group messages: planning (new, appended, unchanged,
//! conflicting), then the one write path every session write takes: derive, embed, store
//! ground state + units (+ the request's receipt) in one transaction, index.
use cairn_core::{
    ConflictError, GroupMessage, InputError, Message, Receipt, SessionInput, SessionRecord,
    SessionWrite, SpaceId, Stale, Timestamp, Unit,
};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;

use super::advance::Written;
use super::error::EngineError;
use super::receipt::{Request, WriteOptions};
use super::reports::IngestReport;
use super::services::Writes;
use super::vectors::EmbeddedUnits;

/// How a record joins what is stored under its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WriteMode {
    /// The record is the whole session: new, identical, or the stored one plus messages.
    Whole,
    /// Derive again even if unchanged (rebuilds).
    Rederive,
    /// Records exported before, restored as they were (their messages keep whatever
    /// times they had).
    Restore,
    /// The record's messages are added after the stored ones (group chats streamed in);
    /// messages already stored are skipped, so sending a day twice is harmless.
    Append,
}

enum Merge {
    New(SessionInput),
    Unchanged,
    Append(SessionInput, usize),
}

fn merge(existing: Option<SessionRecord>, new: SessionInput) -> Result<Merge, ConflictError> {
    let Some(old) = existing else {
        return Ok(Merge::New(new));
    };
    let old = old.session;
    if old == new {
        return Ok(Merge::Unchanged);
    }
    let rec = format!("session {:?}", new.id);
    for (field, differs) in [
        ("occurred_at", old.occurred_at != new.occurred_at),
        ("group", old.group != new.group),
        ("metadata", old.metadata != new.metadata),
    ] {
        if differs {
            return Err(ConflictError::new(
                rec,
                format!("is stored with a different `{field}` (forget it first to replace it)"),
            )
            .at(field));
        }
    }
    if let Some(i) = old
        .messages
        .iter()
        .zip(&new.messages)
        .position(|(a, b)| a != b)
    {
        return Err(ConflictError::new(
            rec,
            format!("message {i} differs from the stored one; ingest only appends to a session (forget it first to replace it)"),
        )
        .at(format!("messages[{i}]")));
    }
    if new.messages.len() < old.messages.len() {
        return Err(ConflictError::new(
            rec,
            format!(
                "holds {} messages, fewer than the {} stored; ingest only appends (forget it first to replace it)",
                new.messages.len(),
                old.messages.len()
            ),
        )
        .at("messages"));
    }
    let added = new.messages.len() - old.messages.len();
    Ok(Merge::Append(new, added))
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
        // Looked up, not compared with each stored message: a day of a busy group holds
        // thousands.
        let held: std::collections::HashSet<_> = stored
            .messages
            .iter()
            .map(|s| (&s.speaker, s.occurred_at, &s.text))
            .collect();
        new.messages
            .retain(|m| !held.contains(&(&m.speaker, m.occurred_at, &m.text)));
        messages = stored.messages.clone();
        new.occurred_at = stored.occurred_at;
        new.group = stored.group.clone();
        new.metadata = stored.metadata.clone();
    }
    push_numbered(&mut messages, std::mem::take(&mut new.messages));
    SessionInput { messages, ..new }.validate()
}

/// Gives every message of `session` that has no time (neither its own nor the
/// session's) the time it is recorded, `now`, and returns how many it dated. A message
/// that `held` (the session's stored messages) holds at the same place, equal but for
/// the time it was dated with, is the same message sent again: it keeps that time.
pub(super) fn date_undated(session: &mut SessionInput, held: &[Message], now: Timestamp) -> usize {
    if session.occurred_at.is_some() {
        return 0;
    }
    let mut dated = 0;
    for (i, m) in session.messages.iter_mut().enumerate() {
        if m.occurred_at.is_some() {
            continue;
        }
        match held.get(i) {
            Some(h) if same_but_undated(h, m) => m.occurred_at = h.occurred_at,
            _ => {
                m.occurred_at = Some(now);
                dated += 1;
            }
        }
    }
    dated
}

/// Whether `new` (sent without a time) is `held` sent again.
pub(super) fn same_but_undated(held: &Message, new: &Message) -> bool {
    new.occurred_at.is_none()
        && held.id == new.id
        && held.role == new.role
        && held.speaker == new.speaker
        && held.text == new.text
        && held.metadata == new.metadata
}

/// Adds `new` after `messages`, giving each message without an id its position in the
/// session (or the next number no message holds yet).
pub(super) fn push_numbered(messages: &mut Vec<Message>, new: Vec<Message>) {
    let mut taken: std::collections::HashSet<String> =
        messages.iter().map(|m| m.id.clone()).collect();
    for mut m in new {
        if m.id.is_empty() {
            let mut n = messages.len();
            while taken.contains(&n.to_string()) {
                n += 1;
            }
            m.id = n.to_string();
        }
        taken.insert(m.id.clone());
        messages.push(m);
    }
}

/// What one record of a write becomes.
pub(super) struct Planned {
    pub(super) record: SessionRecord,
    /// Messages it adds.
    pub(super) added: usize,
    /// A session of that id is stored (its units are compared with the new ones).
    pub(super) stored: bool,
    /// Write every unit even if derived as stored (a rebuild with new rules).
    pub(super) rewrite_all: bool,
    /// The stored session had this many messages and `record` holds them, unchanged,
    /// followed by the new ones: only the end of the session is derived again.
    pub(super) appended_to: Option<usize>,
}

/// Units derived again, and the stored units of the same derivation.
type Derived = (Vec<Unit>, Vec<Unit>);

/// A session's units against the stored ones: what to write, what stays, what goes.
pub(super) struct Changes {
    record: SessionRecord,
    /// New or changed units.
    pub(super) units: Vec<Unit>,
    /// Stored units no longer derived (removed from the indexes; the store drops them).
    pub(super) stale: Vec<String>,
    /// Changed units whose index entries stay as they are (`Unit::indexed_alike` the
    /// stored one: only their place or times moved).
    entries_kept: HashSet<String>,
}

impl Changes {
    /// `derived` against `stored`, the stored units the same derivation covers (all of
    /// the session's, or those of an append's window).
    pub(super) fn of(
        record: SessionRecord,
        derived: Vec<Unit>,
        stored: Vec<Unit>,
        all: bool,
    ) -> Self {
        let derived_ids: std::collections::HashSet<&str> =
            derived.iter().map(|u| u.id.as_str()).collect();
        let stale: Vec<String> = stored
            .iter()
            .filter(|u| !derived_ids.contains(u.id.as_str()))
            .map(|u| u.id.clone())
            .collect();
        let stored: HashMap<String, Unit> = stored.into_iter().map(|u| (u.id.clone(), u)).collect();
        let units: Vec<Unit> = derived
            .into_iter()
            .filter(|u| all || stored.get(&u.id) != Some(u))
            .collect();
        let entries_kept = units
            .iter()
            .filter(|u| stored.get(&u.id).is_some_and(|s| s.indexed_alike(u)))
            .map(|u| u.id.clone())
            .collect();
        Self {
            record,
            units,
            stale,
            entries_kept,
        }
    }

    /// The changed units whose index entries changed too: those the indexes take again.
    pub(super) fn reindexed(&self) -> impl Iterator<Item = &Unit> {
        self.units
            .iter()
            .filter(|u| !self.entries_kept.contains(&u.id))
    }
}

impl Changes {
    /// The write as the record store takes it: the changed units, the stale ones dropped.
    pub(super) fn write(&self) -> SessionWrite<'_> {
        SessionWrite {
            record: &self.record,
            units: &self.units,
            stale: Stale::Only(&self.stale),
        }
    }

    /// The write as the derived caches follow it (`advance.rs`).
    pub(super) fn written(&self) -> Written<'_> {
        Written {
            space: &self.record.space,
            session: &self.record.session.id,
            record: Some(&self.record),
            units: &self.units,
            removed: &self.stale,
        }
    }
}

/// A batch's sessions, each validated; error paths start at the list (`[2].messages`).
fn validated(sessions: Vec<SessionInput>) -> Result<Vec<SessionInput>, InputError> {
    sessions
        .into_iter()
        .enumerate()
        .map(|(i, s)| s.validate().map_err(|e| e.nested(&format!("[{i}]"))))
        .collect()
}

impl Writes<'_> {
    /// Ingests sessions into a space (created if needed). Every session is validated
    /// before anything is written, and the batch is written in one transaction; a session
    /// id already stored accepts only appended messages.
    pub fn ingest_sessions(
        &self,
        space: &SpaceId,
        sessions: Vec<SessionInput>,
        opts: &WriteOptions,
    ) -> Result<IngestReport, EngineError> {
        let request = Request::new(space, opts, "sessions", &sessions)?;
        let sessions = validated(sessions)?;
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
        self.write_records(records, request.as_ref())
    }

    /// Ingests messages of group chats (any groups, any days). Each group's day is a
    /// session `<group>/<YYYY-MM-DD>` that later messages of that day extend; a message
    /// already stored (same speaker, time and text) is skipped. All messages are
    /// validated before anything is written.
    pub fn ingest_group_messages(
        &self,
        space: &SpaceId,
        messages: Vec<GroupMessage>,
        opts: &WriteOptions,
    ) -> Result<IngestReport, EngineError> {
        let request = Request::new(space, opts, "group_messages", &messages)?;
        if messages.is_empty() {
            return Err(InputError::new("group messages", "no messages given")
                .at("messages")
                .into());
        }
        for (i, m) in messages.iter().enumerate() {
            m.validate(i).map_err(|e| e.nested(&format!("[{i}]")))?;
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
        self.write_records(records, request.as_ref())
    }

    /// The one write path of sessions, under the write lock (its vectors embedded before
    /// it, see `staged.rs`): a request already answered is answered again; otherwise
    /// plan (nothing is written if any record conflicts), derive, embed, then store every record, its units and the request's receipt in
    /// one transaction, and index what was written.
    pub(super) fn write_records(
        &self,
        records: Vec<(SessionRecord, WriteMode)>,
        request: Option<&Request>,
    ) -> Result<IngestReport, EngineError> {
        let _staged = self.stage_sessions(&records);
        let _w = self.lock()?;
        if let Some(report) = request
            .map(|r| r.replay(self.b.records.as_ref()))
            .transpose()?
            .flatten()
        {
            return Ok(report);
        }
        self.write_records_locked(records, request)
    }

    /// [`Writes::write_records`] for a caller that holds the write lock and has checked
    /// for a replay. Only what changed is written and indexed: a unit derived exactly as
    /// stored stays as it is (an append to a long session touches its new turns and
    /// rounds, the episode they join and the aggregates, not the rest).
    pub(super) fn write_records_locked(
        &self,
        records: Vec<(SessionRecord, WriteMode)>,
        request: Option<&Request>,
    ) -> Result<IngestReport, EngineError> {
        let mut report = IngestReport::default();
        let planned = self.plan_writes(records, &mut report)?;
        self.write_planned(planned, &mut report, request)?;
        Ok(report)
    }

    /// Derives, embeds and stores planned session writes, with the request's receipt
    /// (holding `report` as it stands once they are counted) in the same transaction;
    /// the caller holds the write lock.
    pub(super) fn write_planned(
        &self,
        planned: Vec<Planned>,
        report: &mut IngestReport,
        request: Option<&Request>,
    ) -> Result<(), EngineError> {
        let mut changes: Vec<Changes> = Vec::with_capacity(planned.len());
        for p in planned {
            report.messages_added += p.added;
            let c = self.changes_of(p)?;
            report.units += c.units.len();
            changes.push(c);
        }
        let written: Vec<Unit> = changes.iter().flat_map(|c| c.units.clone()).collect();
        // Vectors are computed before the transaction, so the receipt stored with it
        // holds the whole answer (a retry gets exactly what the first call got).
        let embedded = self.embed_units(&written)?;
        report.vectors_computed = embedded.counts.computed;
        report.vectors_cached = embedded.counts.cached;
        let receipts: Vec<_> = request.map(|r| r.receipt(report)).into_iter().collect();
        self.commit_changes(&changes, embedded, &receipts)
    }

    /// A planned record's units against the stored ones.
    pub(super) fn changes_of(&self, p: Planned) -> Result<Changes, EngineError> {
        if let Some((derived, stored)) = self.appended_units(&p)? {
            return Ok(Changes::of(p.record, derived, stored, false));
        }
        let derived = self.derive_units(&p.record)?;
        let stored = match p.stored {
            true => self
                .b
                .records
                .session_units(&p.record.space, &p.record.session.id)?,
            false => Vec::new(),
        };
        Ok(Changes::of(p.record, derived, stored, p.rewrite_all))
    }

    /// The units an append derives from the end of the session alone (see `tail.rs`),
    /// with the stored units they replace; `None` when it must be derived whole: not an
    /// append, a rebuild, LLM readings (their units read the whole session), or an end
    /// that reaches too far back.
    fn appended_units(&self, p: &Planned) -> Result<Option<Derived>, EngineError> {
        let Some(stored_len) = p.appended_to.filter(|_| !p.rewrite_all) else {
            return Ok(None);
        };
        let rec = &p.record;
        if self.has_readings(rec)? {
            return Ok(None);
        }
        let from = stored_len.saturating_sub(crate::tail::APPEND_LOOKBACK);
        let stored = self
            .b
            .records
            .session_tail(&rec.space, &rec.session.id, from as u32)?;
        let derived = crate::tail::derive_appended(
            &rec.space,
            &rec.session,
            rec.recorded_at,
            stored_len,
            &stored,
        );
        let Some((units, window)) = derived else {
            return Ok(None);
        };
        let stored = stored.into_iter().filter(|u| window.covers(u)).collect();
        Ok(Some((units, stored)))
    }

    /// Stores the changes and the receipts in one transaction (acknowledged from here),
    /// then indexes what changed; the caller holds the write lock.
    pub(super) fn commit_changes(
        &self,
        changes: &[Changes],
        embedded: EmbeddedUnits,
        receipts: &[Receipt],
    ) -> Result<(), EngineError> {
        let writes: Vec<SessionWrite<'_>> = changes.iter().map(Changes::write).collect();
        self.hold_reserve()?;
        let before = self.before_write(changes.iter().map(|c| &c.record.space))?;
        let last = self.b.records.put_sessions(&writes, receipts)?;
        // What is cached of the spaces follows the write (`advance.rs`), before the next
        // request can need it.
        let written: Vec<Written<'_>> = changes.iter().map(Changes::written).collect();
        self.advance_derived(before, &written);
        // Acknowledged from here: what follows is derived state (`index_after_commit`).
        self.index_after_commit(|| {
            for c in changes.iter().filter(|c| !c.stale.is_empty()) {
                self.b.text.remove(&c.record.space, &c.stale)?;
                self.b.vectors.remove(&c.record.space, &c.stale)?;
            }
            let written: Vec<Unit> = changes.iter().flat_map(|c| c.units.clone()).collect();
            if written.is_empty() {
                return Ok(());
            }
            self.store_vectors(&written, embedded, last)?;
            let searchable: Vec<Unit> = written.into_iter().filter(Unit::is_searchable).collect();
            self.b.text.upsert(&searchable)?;
            self.text_seq.store(last, Ordering::SeqCst);
            Ok(())
        });
        Ok(())
    }

    /// Decides what each record becomes (new, appended, unchanged) before anything is
    /// written, so a conflict anywhere in a batch writes nothing. A session named twice in
    /// one batch merges with its earlier occurrence.
    pub(super) fn plan_writes(
        &self,
        records: Vec<(SessionRecord, WriteMode)>,
        report: &mut IngestReport,
    ) -> Result<Vec<Planned>, EngineError> {
        let mut planned: Vec<Planned> = Vec::new();
        let mut position: HashMap<(SpaceId, String), usize> = HashMap::new();
        for (index, (mut rec, mode)) in records.into_iter().enumerate() {
            report.sessions += 1;
            let key = (rec.space.clone(), rec.session.id.clone());
            let existing = match position.get(&key) {
                Some(&i) => Some(planned[i].record.clone()),
                None => self.b.records.get_session(&rec.space, &rec.session.id)?,
            };
            let stored = existing.is_some();
            if mode == WriteMode::Whole {
                let held = existing.as_ref().map(|e| e.session.messages.as_slice());
                report.dated_at_recording +=
                    date_undated(&mut rec.session, held.unwrap_or(&[]), rec.recorded_at);
            }
            let recorded_at = existing.as_ref().map_or(rec.recorded_at, |e| e.recorded_at);
            if mode == WriteMode::Append {
                rec.session = appended(existing.as_ref().map(|e| &e.session), rec.session)?;
            }
            let force = mode == WriteMode::Rederive;
            let merged = merge(existing, rec.session.clone()).map_err(|mut e| {
                // Whole-session writes come in input order: name the record's place.
                if matches!(mode, WriteMode::Whole | WriteMode::Restore) {
                    e.field = Some(match e.field.take() {
                        Some(f) => format!("[{index}].{f}"),
                        None => format!("[{index}]"),
                    });
                }
                e
            })?;
            let appended_to = match &merged {
                Merge::Append(s, n) => Some(s.messages.len() - n),
                _ => None,
            };
            let (session, added) = match merged {
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
                    planned[i].record = record;
                    planned[i].added += added;
                    planned[i].rewrite_all |= force;
                }
                None => {
                    position.insert(key, planned.len());
                    planned.push(Planned {
                        record,
                        added,
                        stored,
                        rewrite_all: force,
                        appended_to,
                    });
                }
            }
        }
        Ok(planned)
    }
}
