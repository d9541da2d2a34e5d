//! Forgetting: a session, some of its messages (one, or an exchange: a message and the
//! reply to it), a memory unit, or every session of an end-user partition, each in one
//! write under the write lock, with every derived copy (units, index entries, vectors,
//! cached vectors of the text) removed too.
use cairn_core::{
    InputError, Message, Partition, SessionRecord, SpaceId, StoreError, Unit, UnitKind,
};
use std::sync::atomic::Ordering;

use super::advance::Written;
use super::error::EngineError;
use super::ingest::Changes;
use super::services::Forgetting;
use super::state::WriteLock;

/// Ids of profile units (stored contributions and the profiles recall computes) start so.
pub(crate) const PROFILE_PREFIX: &str = "profile:";

/// What forgetting a memory unit removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ForgetReport {
    pub unit_id: String,
    /// The session whose messages were forgotten.
    pub session_id: Option<String>,
    /// The messages forgotten (the ones the unit cites).
    pub forgotten_messages: Vec<String>,
    /// The session was forgotten whole: it had no message left.
    pub forgotten_session: bool,
    /// The trajectory forgotten (a slice, event or note stands for its whole run).
    pub trajectory_id: Option<String>,
    pub forgotten_trajectory: bool,
    /// Units removed, the forgotten unit included.
    pub removed_units: usize,
}

/// What forgetting a message (or an exchange) removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct MessageForgetReport {
    pub session_id: String,
    /// The messages forgotten, in session order: the one named, and with `exchange` the
    /// reply to it when it has one.
    pub forgotten_messages: Vec<String>,
    /// The session was forgotten whole: it had no message left.
    pub forgotten_session: bool,
    /// Units removed (units derived again without the messages are not counted).
    pub removed_units: usize,
}

/// What forgetting an end-user partition removed (all zero when it held no session).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PartitionForgetReport {
    /// Sessions forgotten: every session whose metadata the partition holds.
    pub sessions: usize,
    /// Messages those sessions held.
    pub messages: usize,
    /// Units removed (turns, rounds, episodes, facts, profile contributions...).
    pub units: usize,
}

impl Forgetting<'_> {
    /// Deletes a space and everything derived from it.
    pub fn drop_space(&self, space: &SpaceId) -> Result<bool, EngineError> {
        let w = self.lock_to_forget()?;
        if self.b.records.space_exists(space)? {
            self.purge_cached(&self.b.records.space_units(space)?, &[])?;
        }
        // The record first: its removals are logged, so a crash before the indexes
        // commit theirs heals on open (the other order left indexes emptied of units
        // still stored).
        let existed = self.b.records.drop_space(space)?;
        self.b.text.drop_space(space)?;
        self.b.vectors.drop_space(space)?;
        self.removals_applied(space)?;
        self.scrub(w)?;
        self.forgotten();
        Ok(existed)
    }

    /// Forgets every session of an end-user partition of a space (a data-protection
    /// request: Mem0's `delete_all(user_id=...)`), and so everything derived from them:
    /// units, facts, profile contributions, entity mentions, vectors, index entries and
    /// cached vectors. One write lock and one scrub for all of them, so N sessions do not
    /// cost N rewrites of the text index. A partition holding no session is no error: the
    /// report is all zero (the user may have been forgotten already).
    pub fn forget_partition(
        &self,
        space: &SpaceId,
        partition: &Partition,
    ) -> Result<PartitionForgetReport, EngineError> {
        self.require_space(space)?;
        // Held from the listing on: a session of the partition ingested meanwhile would
        // otherwise be missed, or one read here be rewritten by a concurrent append.
        let w = self.lock_to_forget()?;
        let held: Vec<_> = self
            .b
            .records
            .session_headers(space)?
            .into_iter()
            .filter(|h| partition.holds(&h.metadata))
            .collect();
        if held.is_empty() {
            self.forgotten();
            return Ok(PartitionForgetReport::default());
        }
        let ids: Vec<String> = held.iter().map(|h| h.id.clone()).collect();
        let report = PartitionForgetReport {
            sessions: held.len(),
            messages: held.iter().map(|h| h.messages).sum(),
            units: self.delete_sessions_locked(space, &ids)?,
        };
        self.scrub(w)?;
        self.forgotten();
        Ok(report)
    }

    /// Forgets a whole session: its record, units, vectors and index entries.
    pub fn forget_session(&self, space: &SpaceId, session: &str) -> Result<usize, EngineError> {
        self.require_space(space)?;
        let w = self.lock_to_forget()?;
        let removed = self.delete_session_locked(space, session)?;
        self.scrub(w)?;
        self.forgotten();
        Ok(removed)
    }

    /// After a forget's deletions are committed, before it is acknowledged: the stores
    /// make them unreadable in their files (the embedded one checkpoints and empties its
    /// write-ahead logs and merges away the text index's deleted documents; see
    /// `RecordStore::scrub`). Takes the write lock `w` the forget held and releases it
    /// before the text index's rewrite: that waits for a merge of the segments holding
    /// the forgotten entries, which other writes (another space's append) need not wait
    /// for; the forget is still acknowledged only once it is done (issue 54).
    pub(super) fn scrub(&self, w: WriteLock<'_>) -> Result<(), EngineError> {
        // Before the checkpoint, so the log of the ids removed is gone from the files too.
        self.prune_removals()?;
        self.b.records.scrub()?;
        self.b.cache.scrub()?;
        drop(w);
        self.b.text.scrub()?;
        Ok(())
    }

    /// Deletes a session and everything derived from it, cached vectors of its text
    /// included; the caller holds the write lock.
    fn delete_session_locked(&self, space: &SpaceId, session: &str) -> Result<usize, EngineError> {
        self.delete_sessions_locked(space, &[session.to_string()])
    }

    /// Deletes sessions and everything derived from them: each record with its units in
    /// a transaction of its own, then the index entries of all of them at once (one text
    /// commit, not one per session). The caller holds the write lock.
    fn delete_sessions_locked(
        &self,
        space: &SpaceId,
        sessions: &[String],
    ) -> Result<usize, EngineError> {
        let mut ids = Vec::new();
        for session in sessions {
            let before = self.b.records.session_units(space, session)?;
            let generation = self.writes().before_write([space])?;
            let removed = self.b.records.delete_session(space, session)?;
            self.writes().advance_derived(
                generation,
                &[Written {
                    space,
                    session,
                    record: None,
                    units: &[],
                    removed: &removed,
                }],
            );
            ids.extend(removed);
            self.purge_cached(&before, &[])?;
        }
        self.b.text.remove_forgotten(space, &ids)?;
        self.b.vectors.remove(space, &ids)?;
        self.removals_applied(space)?;
        Ok(ids.len())
    }

    /// Forgets one message: the session is rewritten without it and re-derived.
    pub fn forget_message(
        &self,
        space: &SpaceId,
        session: &str,
        message: &str,
    ) -> Result<usize, EngineError> {
        self.forget_messages(space, session, &[message.to_string()])
            .map(|(removed, _)| removed)
    }

    /// Forgets one message and, with `exchange`, the reply to it: the next message of the
    /// session when another speaker wrote it (another role; for messages without one,
    /// another speaker name). So "I moved to Lisbon" takes "Congratulations on the move
    /// to Lisbon!" with it, and nothing the reply repeated stays in memories, export or
    /// entities. A message with no reply after it is forgotten alone.
    pub fn forget_message_with(
        &self,
        space: &SpaceId,
        session: &str,
        message: &str,
        exchange: bool,
    ) -> Result<MessageForgetReport, EngineError> {
        self.require_space(space)?;
        let w = self.lock_to_forget()?;
        let rec = self.stored_session(space, session)?;
        let messages = &rec.session.messages;
        let mut ids = vec![message.to_string()];
        // An unknown message is refused by `forget_from`, as for any forget of messages.
        let reply = messages
            .iter()
            .position(|m| m.id == message)
            .filter(|_| exchange)
            .and_then(|at| messages.get(at + 1).filter(|r| answers(r, &messages[at])));
        ids.extend(reply.map(|r| r.id.clone()));
        let (removed_units, forgotten_session) = self.forget_from(space, rec, &ids)?;
        self.scrub(w)?;
        self.forgotten();
        Ok(MessageForgetReport {
            session_id: session.to_string(),
            forgotten_messages: ids,
            forgotten_session,
            removed_units,
        })
    }

    /// Forgets messages of one session in one write: the session is rewritten without
    /// them and re-derived, or deleted when none is left. Returns the units removed and
    /// whether the session went. Every message must be stored.
    pub fn forget_messages(
        &self,
        space: &SpaceId,
        session: &str,
        messages: &[String],
    ) -> Result<(usize, bool), EngineError> {
        self.require_space(space)?;
        // Held from the read on: a concurrent append must not be overwritten by the
        // session as read here.
        let w = self.lock_to_forget()?;
        let forgotten = self.forget_messages_locked(space, session, messages)?;
        self.scrub(w)?;
        self.forgotten();
        Ok(forgotten)
    }

    fn forget_messages_locked(
        &self,
        space: &SpaceId,
        session: &str,
        messages: &[String],
    ) -> Result<(usize, bool), EngineError> {
        let rec = self.stored_session(space, session)?;
        self.forget_from(space, rec, messages)
    }

    /// A stored session, or the store's `NotFound` naming it.
    fn stored_session(&self, space: &SpaceId, session: &str) -> Result<SessionRecord, EngineError> {
        self.b.records.get_session(space, session)?.ok_or_else(|| {
            StoreError::NotFound(format!("session {session:?} in space {space:?}")).into()
        })
    }

    /// [`Forgetting::forget_messages_locked`] of a session already read (`rec`).
    fn forget_from(
        &self,
        space: &SpaceId,
        mut rec: SessionRecord,
        messages: &[String],
    ) -> Result<(usize, bool), EngineError> {
        let session = rec.session.id.clone();
        let session = session.as_str();
        if let Some(m) = messages
            .iter()
            .find(|m| !rec.session.messages.iter().any(|x| &x.id == *m))
        {
            return Err(
                StoreError::NotFound(format!("message {m:?} of session {session:?}")).into(),
            );
        }
        rec.session.messages.retain(|m| !messages.contains(&m.id));
        if rec.session.messages.is_empty() {
            return Ok((self.delete_session_locked(space, session)?, true));
        }
        let before = self.b.records.session_units(space, session)?;
        if let Some(store) = &self.b.enrich {
            for m in messages {
                store.forget_message(space, session, m)?;
            }
        }
        let derived = self.writes().derive_units(&rec)?;
        // Cached vectors of texts no unit holds any more go (checked against every unit
        // derived, changed or not).
        self.purge_cached(&before, &derived)?;
        // Only what the forget changed is written, and only the units that held a
        // forgotten message (removed, or derived again without it) are indexed again. A
        // unit derived exactly as stored, or moved up the session but holding what it
        // held, holds nothing forgotten: its entries stay where they are, so the scrub
        // rewrites only the segments holding what changed, not every segment holding
        // some unit of a long session (issue 52).
        let changes = Changes::of(rec, derived, before, false);
        let generation = self.writes().before_write([space])?;
        let last = self.b.records.put_sessions(&[changes.write()], &[])?;
        self.writes()
            .advance_derived(generation, &[changes.written()]);
        // Of the units written, those whose entries changed: a unit after the forgotten
        // messages moved up the session but holds what it held.
        let reindexed: Vec<Unit> = changes.reindexed().cloned().collect();
        let replaced: Vec<String> = changes
            .stale
            .iter()
            .cloned()
            .chain(reindexed.iter().map(|u| u.id.clone()))
            .collect();
        self.b.text.remove_forgotten(space, &replaced)?;
        self.b.vectors.remove(space, &changes.stale)?;
        let (text_mark, vector_mark) = self.forget_marks(last)?;
        if reindexed.is_empty() {
            self.b.vectors.upsert(space, &[], vector_mark)?;
        } else {
            self.index_vectors(&reindexed, vector_mark)?;
        }
        let searchable: Vec<Unit> = reindexed.into_iter().filter(Unit::is_searchable).collect();
        self.b
            .text
            .upsert(&searchable)
            .inspect_err(|_| self.lagging())?;
        self.text_seq.store(text_mark, Ordering::SeqCst);
        self.commit_text(text_mark)?;
        Ok((changes.stale.len(), false))
    }

    /// Forgets a memory unit by forgetting what it was derived from, so its text cannot
    /// come back from the verbatim record: the messages it cites (the session goes when
    /// none is left), or for a trajectory unit the whole trajectory. A profile is a
    /// summary of a speaker's messages, not a statement of its own: it is refused, and
    /// the error says what to forget instead.
    pub fn forget_unit(&self, space: &SpaceId, unit_id: &str) -> Result<ForgetReport, EngineError> {
        self.require_space(space)?;
        let w = self.lock_to_forget()?;
        let unit = self
            .b
            .records
            .units(space, &[unit_id.to_string()])?
            .into_iter()
            .next();
        let is_profile = unit
            .as_ref()
            .map_or(unit_id.starts_with(PROFILE_PREFIX), |u| {
                u.kind == UnitKind::Profile
            });
        if is_profile {
            return Err(EngineError::NotDeletable(format!(
                "memory {unit_id:?}: a profile is computed from a speaker's messages and cannot be forgotten on its own; forget those messages or sessions"
            )));
        }
        let Some(unit) = unit else {
            return Err(StoreError::NotFound(format!("memory {unit_id:?}")).into());
        };
        let mut report = ForgetReport {
            unit_id: unit.id.clone(),
            session_id: unit.provenance.session_id.clone(),
            trajectory_id: unit.provenance.trajectory_id.clone(),
            ..Default::default()
        };
        match (&unit.provenance.session_id, &unit.provenance.trajectory_id) {
            (Some(session), _) if !unit.provenance.message_ids.is_empty() => {
                let (removed, whole) =
                    self.forget_messages_locked(space, session, &unit.provenance.message_ids)?;
                report.forgotten_messages = unit.provenance.message_ids.clone();
                report.forgotten_session = whole;
                report.removed_units = removed;
            }
            (None, Some(trajectory)) => {
                report.removed_units = self
                    .trajectories()
                    .delete_trajectory_locked(space, trajectory)?;
                report.forgotten_trajectory = true;
            }
            _ => {
                return Err(InputError::new(
                    format!("memory {unit_id:?}"),
                    "cites no message or trajectory to forget",
                )
                .into())
            }
        }
        self.scrub(w)?;
        self.forgotten();
        Ok(report)
    }
}

/// Whether `next` is a reply to `m`: written by another speaker (another role when both
/// have one, else another speaker name).
fn answers(next: &Message, m: &Message) -> bool {
    match (next.role, m.role) {
        (Some(a), Some(b)) => a != b,
        _ => next.speaker_name() != m.speaker_name(),
    }
}
