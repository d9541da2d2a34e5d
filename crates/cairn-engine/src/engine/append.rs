//! Appends to one session (the receipts that make them safe to retry are `receipt.rs`'s).
//!
//! An append is a read-check-write of the stored session, so it runs entirely under the
//! engine's write lock (this process's mutex plus the store's lock on other processes):
//! two appends through two servers on one database cannot interleave.
use cairn_core::{
    AppendInput, ConflictError, InputError, Message, SessionInput, SessionRecord, SpaceId,
    Timestamp, Unit,
};

use super::error::EngineError;
use super::ingest::Planned;
use super::receipt::{Request, WriteOptions};
use super::reports::IngestReport;
use super::services::Writes;
use super::waiting::Pending;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

impl Writes<'_> {
    /// Appends messages to a session, creating it on first use (see [`AppendInput`]).
    ///
    /// Appends are group-committed: each waits for the write lock, and whoever takes it
    /// writes every append queued by then (to any sessions) in one transaction, each
    /// still checked on its own against what precedes it. An append answered by an
    /// earlier holder of the lock returns that answer.
    pub fn append(
        &self,
        space: &SpaceId,
        input: AppendInput,
        opts: &WriteOptions,
    ) -> Result<IngestReport, EngineError> {
        let request = Request::new(space, opts, "append", &input)?;
        if input.messages.is_empty() {
            return Err(InputError::new("append", "field `messages` is empty")
                .at("messages")
                .into());
        }
        // The input alone must be a valid session (ids, texts, header), paths as sent.
        let probe = SessionInput {
            id: input.session_id.clone(),
            occurred_at: input.occurred_at,
            group: input.group.clone(),
            messages: input.messages.clone(),
            metadata: input.metadata.clone(),
        };
        let probe = probe.validate().map_err(|mut e| {
            if e.field.as_deref() == Some("id") {
                e.field = Some("session_id".into());
            }
            e
        })?;
        self.b.records.create_space(space)?;
        let mine = Arc::new(Pending {
            space: space.clone(),
            input,
            new_session: probe,
            request,
            answer: Mutex::new(None),
        });
        // Embedded before the lock (see `staged.rs`); kept until this append is answered,
        // whoever writes it.
        let _staged = self.stage_append(&mine);
        self.appends.push(mine.clone());
        let _w = self.lock()?;
        if let Some(answer) = mine.take() {
            return answer;
        }
        let batch = self.appends.drain();
        self.append_batch(&batch);
        mine.take().unwrap_or_else(|| {
            Err(cairn_core::StoreError::Backend("append left unanswered".into()).into())
        })
    }

    /// The session append `p` makes of what is stored now, and how many messages the
    /// stored one holds (`None`: not stored); `None` when it would be refused.
    pub(super) fn dry_run(&self, p: &Pending) -> Option<(SessionRecord, Option<usize>)> {
        let stored = self
            .b
            .records
            .get_session(&p.space, &p.input.session_id)
            .ok()?;
        let stored_len = stored.as_ref().map(|r| r.session.messages.len());
        let record = match stored {
            None => SessionRecord {
                space: p.space.clone(),
                recorded_at: chrono::Utc::now(),
                session: p.new_session.clone(),
            },
            // The time it dates new messages with does not change what is embedded.
            Some(rec) => extended(rec, p.input.clone(), chrono::Utc::now()).ok()?.0,
        };
        Some((record, stored_len))
    }

    /// Writes a batch of appends; every one of them gets its answer. The caller holds
    /// the write lock.
    ///
    /// Exactly once per idempotency key: receipts are written with the batch, so a
    /// retry queued in the same batch as its first try finds no receipt yet. The first
    /// append of a key in the batch is written; a later one with the same input gets
    /// its answer (as a replay), one with another input is refused.
    fn append_batch(&self, batch: &[Arc<Pending>]) {
        let mut groups: Vec<Group> = Vec::new();
        let mut firsts: HashMap<(&SpaceId, &str), &Arc<Pending>> = HashMap::new();
        let mut retries: Vec<(&Arc<Pending>, &Arc<Pending>)> = Vec::new();
        for p in batch {
            match p
                .request
                .as_ref()
                .map(|r| r.replay(self.b.records.as_ref()))
                .transpose()
            {
                Ok(Some(Some(report))) => p.answer(Ok(report)),
                Err(e) => p.answer(Err(e)),
                _ => {
                    if let Some(r) = &p.request {
                        match firsts.entry((&p.space, r.key())) {
                            Entry::Occupied(first) => {
                                let first = *first.get();
                                if first.request.as_ref().is_some_and(|f| f.same_input(r)) {
                                    retries.push((p, first));
                                } else {
                                    let key = r.key().to_string();
                                    p.answer(Err(EngineError::IdempotencyKeyReused(key)));
                                }
                                continue;
                            }
                            Entry::Vacant(v) => {
                                v.insert(p);
                            }
                        }
                    }
                    match groups
                        .iter_mut()
                        .find(|g| g.space == p.space && g.session == p.input.session_id)
                    {
                        Some(g) => g.members.push(p.clone()),
                        None => groups.push(Group {
                            space: p.space.clone(),
                            session: p.input.session_id.clone(),
                            members: vec![p.clone()],
                        }),
                    }
                }
            }
        }
        let sessions: Vec<Merged> = groups.into_iter().filter_map(|g| self.merged(g)).collect();
        if let Err(e) = self.commit_appends(&sessions) {
            for (p, _, _) in sessions.iter().flat_map(|s| &s.members) {
                p.answer(Err(e.clone()));
            }
        }
        for (retry, first) in retries {
            retry.answer(match first.peek() {
                Some(Ok(mut report)) => {
                    report.replayed = true;
                    Ok(report)
                }
                Some(Err(e)) => Err(e),
                None => {
                    Err(cairn_core::StoreError::Backend("append left unanswered".into()).into())
                }
            });
        }
    }

    /// A session with its group's appends applied in order; an append that does not fit
    /// what precedes it is answered with its error and left out. `None` when none fits.
    fn merged(&self, g: Group) -> Option<Merged> {
        let stored = match self.b.records.get_session(&g.space, &g.session) {
            Ok(s) => s,
            Err(e) => {
                let e = EngineError::from(e);
                g.members.iter().for_each(|p| p.answer(Err(e.clone())));
                return None;
            }
        };
        let stored_len = stored.as_ref().map(|r| r.session.messages.len());
        let mut current = stored;
        let mut members = Vec::new();
        let now = chrono::Utc::now();
        for p in g.members {
            let before = current.as_ref().map_or(0, |r| r.session.messages.len());
            let next = match current.clone() {
                None => {
                    let mut session = p.new_session.clone();
                    let dated = super::ingest::date_undated(&mut session, &[], now);
                    let rec = SessionRecord {
                        space: g.space.clone(),
                        recorded_at: now,
                        session,
                    };
                    Ok((rec, dated))
                }
                Some(rec) => extended(rec, p.input.clone(), now),
            };
            match next {
                Ok((rec, dated)) => {
                    let added = rec.session.messages.len() - before;
                    current = Some(rec);
                    members.push((p, added, dated));
                }
                Err(e) => p.answer(Err(e)),
            }
        }
        let record = current?;
        (!members.is_empty()).then_some(Merged {
            record,
            stored_len,
            members,
        })
    }

    /// Derives each session's changes, embeds all of them in one call, then stores all
    /// of them with every receipt in one transaction and answers each append. Counts of
    /// units and vectors in an answer are those of its session's write.
    fn commit_appends(&self, sessions: &[Merged]) -> Result<(), EngineError> {
        let changes = sessions
            .iter()
            .map(|s| {
                self.changes_of(Planned {
                    record: s.record.clone(),
                    added: 0,
                    stored: s.stored_len.is_some(),
                    rewrite_all: false,
                    appended_to: s.stored_len,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let units: Vec<&[Unit]> = changes.iter().map(|c| c.units.as_slice()).collect();
        let (embedded, counts) = self.embed_groups(&units)?;
        let mut answers = Vec::new();
        let mut receipts = Vec::new();
        for ((s, c), n) in sessions.iter().zip(&changes).zip(counts) {
            for (p, added, dated) in &s.members {
                let report = IngestReport {
                    sessions: 1,
                    unchanged: usize::from(*added == 0),
                    messages_added: *added,
                    dated_at_recording: *dated,
                    units: c.units.len(),
                    vectors_computed: n.computed,
                    vectors_cached: n.cached,
                    ..Default::default()
                };
                receipts.extend(p.request.as_ref().map(|r| r.receipt(&report)));
                answers.push((p.clone(), report));
            }
        }
        self.commit_changes(&changes, embedded, &receipts)?;
        for (p, report) in answers {
            p.answer(Ok(report));
        }
        Ok(())
    }
}

/// Appends of one batch to one session.
struct Group {
    space: SpaceId,
    session: String,
    members: Vec<Arc<Pending>>,
}

/// A session with a batch's appends applied, and each append with the messages it added.
struct Merged {
    record: SessionRecord,
    /// Messages of the session as stored, if it was (the record extends them).
    stored_len: Option<usize>,
    /// Each append, with the messages it added and how many of them it dated.
    members: Vec<(Arc<Pending>, usize, usize)>,
}

/// The stored session with `input`'s messages after its own: header fields given must
/// equal the stored ones; a message whose id is stored must equal the stored message
/// (and is skipped; one sent without a time matches the stored one dated when it was
/// recorded); new messages without an id get their position in the session, and those
/// without a time (nor a session time) get `now`. Returns the record and how many
/// messages it dated.
fn extended(
    rec: SessionRecord,
    input: AppendInput,
    now: Timestamp,
) -> Result<(SessionRecord, usize), EngineError> {
    let SessionRecord {
        space,
        recorded_at,
        mut session,
    } = rec;
    let what = format!("session {:?}", session.id);
    let differs = [
        (
            "occurred_at",
            input.occurred_at.is_some() && input.occurred_at != session.occurred_at,
        ),
        (
            "group",
            input.group.is_some() && input.group != session.group,
        ),
        (
            "metadata",
            !input.metadata.is_null() && input.metadata != session.metadata,
        ),
    ];
    if let Some((field, _)) = differs.iter().find(|(_, d)| *d) {
        return Err(ConflictError::new(
            what,
            format!("is stored with a different `{field}`; omit it to append"),
        )
        .at(*field)
        .into());
    }
    let mut added: Vec<Message> = Vec::new();
    let by_id: std::collections::HashMap<&str, usize> = session
        .messages
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id.as_str(), i))
        .collect();
    for (i, m) in input.messages.into_iter().enumerate() {
        let stored = (!m.id.is_empty())
            .then(|| by_id.get(m.id.as_str()))
            .flatten()
            .map(|&j| &session.messages[j]);
        match stored {
            Some(x) if *x == m || super::ingest::same_but_undated(x, &m) => {}
            Some(_) => {
                return Err(ConflictError::new(
                    what,
                    format!(
                    "message id {:?} is stored with other content (forget it first to replace it)",
                    m.id
                ),
                )
                .at(format!("messages[{i}]"))
                .into())
            }
            None => added.push(m),
        }
    }
    let mut dated = 0;
    if session.occurred_at.is_none() {
        for m in added.iter_mut().filter(|m| m.occurred_at.is_none()) {
            m.occurred_at = Some(now);
            dated += 1;
        }
    }
    super::ingest::push_numbered(&mut session.messages, added);
    let rec = SessionRecord {
        space,
        recorded_at,
        session: session.validate()?,
    };
    Ok((rec, dated))
}
