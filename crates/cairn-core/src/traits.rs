//! The seams of the architecture: what a storage backend and an embedder must provide.
//! The engine is written against these traits only, so the embedded store and a server
//! backend (PostgreSQL) are interchangeable.
use crate::{
    AgentState, SessionHeader, SessionRecord, SpaceId, Timestamp, TrajectoryRecord,
    TrajectorySummary, Unit, UnitKind,
};
use std::collections::BTreeMap;
use thiserror::Error;

/// Errors of storage backends (records, text index, vector index, embedding cache).
#[derive(Debug, Clone, Error)]
pub enum StoreError {
    #[error("space {0:?} does not exist")]
    NoSuchSpace(String),
    #[error("{0} not found")]
    NotFound(String),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// The store is held by another process (the embedded store has one owner).
    #[error("{0}")]
    Busy(String),
    /// The store's disk (or quota) is full: nothing of the failed write was stored.
    /// The message names where and says what the operator can do.
    #[error("{0}")]
    Full(String),
    /// The store's files cannot be written (a read-only file system or directory).
    #[error("{0}")]
    ReadOnly(String),
    #[error("storage backend: {0}")]
    Backend(String),
}

impl StoreError {
    /// The store could not write for lack of space or permission (not a fault of the
    /// request, nor of what is stored): reads of what is committed still answer.
    pub fn is_unwritable(&self) -> bool {
        matches!(self, StoreError::Full(_) | StoreError::ReadOnly(_))
    }
}

/// Errors of embedding backends.
#[derive(Debug, Clone, Error)]
#[error("embedder: {0}")]
pub struct EmbedError(pub String);

/// Counts of one space.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SpaceStats {
    pub space: String,
    pub sessions: usize,
    pub messages: usize,
    #[serde(default)]
    pub trajectories: usize,
    pub units: usize,
    pub units_by_kind: BTreeMap<String, usize>,
    /// An estimate of the bytes the space's rows take in the store: records, units,
    /// trajectories with their observations, vectors (not the files of indexes shared
    /// by every space, nor the embedding cache).
    #[serde(default)]
    pub disk_bytes: u64,
    /// When the space's newest session or trajectory was recorded (an append to a
    /// session keeps the session's first time); `None` for an empty space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_recorded_at: Option<crate::Timestamp>,
}

/// One session to store with the units derived from it: `units` are written (new or
/// changed, replacing stored units of the same id, with fresh sequence numbers) and the
/// stored units `stale` names are deleted; every other stored unit of the session stays
/// as it is (neither rewritten nor re-indexed).
#[derive(Debug, Clone, Copy)]
pub struct SessionWrite<'a> {
    pub record: &'a SessionRecord,
    pub units: &'a [Unit],
    pub stale: Stale<'a>,
}

/// Which stored units of a session a [`SessionWrite`] deletes.
#[derive(Debug, Clone, Copy)]
pub enum Stale<'a> {
    /// Every unit not written: the session's units become exactly the ones written.
    AllOthers,
    /// These ids (an append knows what it replaced without reading the whole session).
    Only(&'a [String]),
}

/// How long a request's receipt is kept: a client retrying within this time gets the
/// first answer again instead of a second write.
pub const RECEIPT_TTL_HOURS: i64 = 24;

/// What the store keeps of a write request that named an idempotency key: the request's
/// fingerprint and the answer given, so a retry is answered without writing again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub space: SpaceId,
    pub key: String,
    /// SHA-256 (hex) of the request as the engine saw it.
    pub fingerprint: String,
    /// The answer, as JSON.
    pub response: String,
    pub recorded_at: Timestamp,
}

/// Which units of a space a listing wants, and which page of them. Units are listed in a
/// stable order (occurrence time, session, position in it, id; undated units last), so
/// offset pages do not shuffle between requests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnitQuery {
    pub kinds: Option<Vec<UnitKind>>,
    /// Only units of these sessions.
    pub sessions: Option<Vec<String>>,
    /// Only units this speaker took part in.
    pub speaker: Option<String>,
    /// Only units that occurred at or after this time, by recall's rule
    /// ([`crate::Scope::in_time`]): undated ones stay.
    pub since: Option<Timestamp>,
    /// Only units that occurred at or before this time (undated ones are left out).
    pub until: Option<Timestamp>,
    /// Only units seen as of this time, by recall's rule ([`crate::Scope::in_time`]):
    /// occurred by then, or undated and recorded by then.
    pub as_of: Option<Timestamp>,
    pub offset: usize,
    pub limit: usize,
}

/// The parts of a listing's order, one after the other, each a range of the stores'
/// listing index (space, occurrence time, session, position, id) read in that index's
/// order: a page read part by part ([`UnitQuery::page_by_parts`]) costs its offset and
/// length, where one `ORDER BY` over the whole order sorted every matching row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListingPart {
    /// Dated units, by (time, session, position, id).
    Dated,
    /// Undated units of no session (a trajectory's), by (position, id).
    UndatedOutsideSessions,
    /// Undated units of a session, by (session, position, id).
    UndatedInSessions,
}

impl ListingPart {
    pub const ALL: [ListingPart; 3] = [
        ListingPart::Dated,
        ListingPart::UndatedOutsideSessions,
        ListingPart::UndatedInSessions,
    ];

    /// The part as SQL over the units table's listing columns (`occurred_us`,
    /// `session_id`, `position`, `id`), the same in both backends: the condition that
    /// selects its rows, and its order. SQLite reads each part as a range of the listing
    /// index in that index's order (no temporary b-tree in its query plan).
    pub fn sql(self) -> (&'static str, &'static str) {
        match self {
            ListingPart::Dated => (
                "occurred_us IS NOT NULL",
                "occurred_us, session_id NULLS FIRST, position, id",
            ),
            ListingPart::UndatedOutsideSessions => {
                ("occurred_us IS NULL AND session_id IS NULL", "position, id")
            }
            ListingPart::UndatedInSessions => (
                "occurred_us IS NULL AND session_id IS NOT NULL",
                "session_id, position, id",
            ),
        }
    }
}

impl UnitQuery {
    /// This query's page, read part by part: `fetch(part, offset, limit)` reads up to
    /// `limit` rows of one part from its `offset`; `count(part)` counts a part's rows and
    /// is asked only when the part has none at a non-zero offset (the page starts after
    /// it).
    pub fn page_by_parts<T, E>(
        &self,
        mut fetch: impl FnMut(ListingPart, usize, usize) -> Result<Vec<T>, E>,
        mut count: impl FnMut(ListingPart) -> Result<usize, E>,
    ) -> Result<Vec<T>, E> {
        let (mut offset, mut rows) = (self.offset, Vec::new());
        for part in ListingPart::ALL {
            let need = self.limit.saturating_sub(rows.len());
            if need == 0 {
                break;
            }
            let got = fetch(part, offset, need)?;
            if !got.is_empty() {
                // Fewer than asked: the part ends here, the next starts at its first row.
                offset = 0;
                rows.extend(got);
            } else if offset > 0 {
                offset = offset.saturating_sub(count(part)?);
            }
        }
        Ok(rows)
    }
}

/// A page of a unit listing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnitPage {
    pub units: Vec<Unit>,
    /// Units matching the query across all pages.
    pub total: usize,
}

/// Ground state (sources) and derived units. A write of a session and its units is one
/// transaction: acknowledged means durable.
///
/// Every unit write gets a sequence number, increasing across the whole store. Derived
/// indexes remember the highest sequence they absorbed (their watermark), so whatever a
/// crash left unindexed is found with [`RecordStore::units_since`] and healed on open.
pub trait RecordStore: Send + Sync {
    /// Creates the space if needed; true if it was created.
    fn create_space(&self, space: &SpaceId) -> Result<bool, StoreError>;
    fn space_exists(&self, space: &SpaceId) -> Result<bool, StoreError>;
    fn list_spaces(&self) -> Result<Vec<SpaceId>, StoreError>;
    /// Deletes the space with every source and unit in it; false if it did not exist.
    fn drop_space(&self, space: &SpaceId) -> Result<bool, StoreError>;
    fn get_session(&self, space: &SpaceId, id: &str) -> Result<Option<SessionRecord>, StoreError>;
    /// Stores the session record and replaces its derived units, atomically. Returns the
    /// sequence number of the last unit written.
    fn put_session(&self, record: &SessionRecord, units: &[Unit]) -> Result<u64, StoreError> {
        let write = SessionWrite {
            record,
            units,
            stale: Stale::AllOthers,
        };
        self.put_sessions(&[write], &[])
    }
    /// Stores sessions with their units and the receipts of the requests that asked for
    /// them, all in one transaction (one durable write for a batch, or for a group of
    /// concurrent appends). Returns the sequence number of the last unit written. Every
    /// session's space must exist. Receipts replace any of the same (space, key) and
    /// expired receipts of those spaces are dropped.
    fn put_sessions(
        &self,
        writes: &[SessionWrite<'_>],
        receipts: &[Receipt],
    ) -> Result<u64, StoreError>;
    /// The receipt of an earlier request with this idempotency key, expired or not.
    fn receipt(&self, space: &SpaceId, key: &str) -> Result<Option<Receipt>, StoreError>;
    /// The headers of every session of a space in ingest order (no messages read).
    fn session_headers(&self, space: &SpaceId) -> Result<Vec<SessionHeader>, StoreError>;
    /// A page of a space's units, filtered and ordered by the store.
    fn list_units(&self, space: &SpaceId, query: &UnitQuery) -> Result<UnitPage, StoreError>;
    /// What of a space's stored rows (sessions, units, trajectories) does not decode: one
    /// line per row (`session "s1": ...`). Empty when every record is readable.
    fn decode_failures(&self, space: &SpaceId) -> Result<Vec<String>, StoreError>;
    /// Deletes a session and its units; returns the deleted unit ids (empty if absent).
    fn delete_session(&self, space: &SpaceId, id: &str) -> Result<Vec<String>, StoreError>;
    /// Stores a trajectory and replaces its derived units, atomically (like
    /// [`RecordStore::put_session`]). Observations repeated across states and
    /// trajectories may be stored once.
    fn put_trajectory(&self, record: &TrajectoryRecord, units: &[Unit]) -> Result<u64, StoreError>;
    fn get_trajectory(
        &self,
        space: &SpaceId,
        id: &str,
    ) -> Result<Option<TrajectoryRecord>, StoreError>;
    /// State `index` of a trajectory with how many states it has (`None`: no such
    /// trajectory; `(n, None)`: no such state). A backend that keeps observations apart
    /// reads that state's only: one state of a long run costs its own page, not the run's.
    fn trajectory_state(
        &self,
        space: &SpaceId,
        id: &str,
        index: usize,
    ) -> Result<Option<(usize, Option<AgentState>)>, StoreError> {
        Ok(self.get_trajectory(space, id)?.map(|r| {
            let n = r.trajectory.states.len();
            (n, r.trajectory.states.into_iter().nth(index))
        }))
    }
    /// Deletes a trajectory and its units; returns the deleted unit ids.
    fn delete_trajectory(&self, space: &SpaceId, id: &str) -> Result<Vec<String>, StoreError>;
    /// All trajectories of a space in insert order.
    fn trajectories(&self, space: &SpaceId) -> Result<Vec<TrajectoryRecord>, StoreError>;
    /// The manifest of a space: one summary per trajectory, in insert order.
    fn trajectory_summaries(&self, space: &SpaceId) -> Result<Vec<TrajectorySummary>, StoreError>;
    /// All sessions of a space in ingest order.
    fn sessions(&self, space: &SpaceId) -> Result<Vec<SessionRecord>, StoreError>;
    /// Units by id, in the order asked; unknown ids are skipped.
    fn units(&self, space: &SpaceId, ids: &[String]) -> Result<Vec<Unit>, StoreError>;
    /// [`RecordStore::units`] with the text of the units of `kinds` left empty: what
    /// recall ranks by (keys, provenance, times), without reading verbatim text that may
    /// run to kilobytes a message and that recall shows for only a few units, whose text
    /// [`RecordStore::unit_texts`] then reads. A store may skip reading it (the embedded
    /// one keeps unit text in a column of its own); this default reads and drops it.
    /// The key of such a unit may come back as only its [`Unit::key_head`], all that
    /// ranking reads of it (a turn's key is its whole text).
    fn units_without_text(
        &self,
        space: &SpaceId,
        ids: &[String],
        kinds: &[UnitKind],
    ) -> Result<Vec<Unit>, StoreError> {
        let mut units = self.units(space, ids)?;
        crate::unit::drop_texts(&mut units, kinds);
        Ok(units)
    }
    /// The text of units by id; unknown ids are left out.
    fn unit_texts(
        &self,
        space: &SpaceId,
        ids: &[String],
    ) -> Result<std::collections::HashMap<String, String>, StoreError> {
        Ok(self
            .units(space, ids)?
            .into_iter()
            .map(|u| (u.id, u.text))
            .collect())
    }
    fn session_units(&self, space: &SpaceId, session: &str) -> Result<Vec<Unit>, StoreError>;
    /// The ids of the units of these sessions, or `None` when they are more than `max`
    /// (recall searches a scope of few sessions exactly among its own vectors). Stores
    /// override this to read the ids alone.
    fn unit_ids_of_sessions(
        &self,
        space: &SpaceId,
        sessions: &[String],
        max: usize,
    ) -> Result<Option<Vec<String>>, StoreError> {
        let mut ids = Vec::new();
        for s in sessions {
            ids.extend(self.session_units(space, s)?.into_iter().map(|u| u.id));
            if ids.len() > max {
                return Ok(None);
            }
        }
        Ok(Some(ids))
    }
    /// The ids of the units of these kinds, or `None` when they are more than `max` or
    /// the store cannot tell without reading them (recall then searches the space's
    /// vector index and checks what it finds). A recall asking for kinds the space holds
    /// few of searches exactly among their own vectors, so a kind the space lacks costs
    /// nothing however large the space. Stores with a kind column override this.
    fn unit_ids_of_kinds(
        &self,
        _space: &SpaceId,
        _kinds: &[UnitKind],
        _max: usize,
    ) -> Result<Option<Vec<String>>, StoreError> {
        Ok(None)
    }
    /// What an append to a session re-derives from: its units whose first position is at
    /// least `from`, and all its facts (a later message may revise any of them). Stores
    /// override this to read no more than that.
    fn session_tail(
        &self,
        space: &SpaceId,
        session: &str,
        from: u32,
    ) -> Result<Vec<Unit>, StoreError> {
        let mut units = self.session_units(space, session)?;
        units.retain(|u| u.provenance.first_position >= from || u.kind == UnitKind::Fact);
        Ok(units)
    }
    /// The units derived from one trajectory (slices, events, its note), oldest first.
    fn trajectory_units(&self, space: &SpaceId, trajectory: &str) -> Result<Vec<Unit>, StoreError>;
    /// Units written after sequence `seq`, with their sequence numbers, oldest first.
    fn units_since(&self, seq: u64) -> Result<Vec<(u64, Unit)>, StoreError>;
    /// Every unit of a space (rebuilds).
    fn space_units(&self, space: &SpaceId) -> Result<Vec<Unit>, StoreError>;
    /// Units of a space whose [`Unit::topic`] starts with `prefix`, oldest first.
    fn topic_units(&self, space: &SpaceId, prefix: &str) -> Result<Vec<Unit>, StoreError>;
    /// Distinct topics of a space starting with `prefix`.
    fn topics(&self, space: &SpaceId, prefix: &str) -> Result<Vec<String>, StoreError>;
    /// The last sequence number handed out: to a unit written, and, where the backend
    /// logs removals ([`RecordStore::removals_since`]), to a unit removed.
    fn last_seq(&self) -> Result<u64, StoreError>;
    /// Units removed after sequence `seq`, oldest first: `(sequence, space, unit id)`.
    /// A backend whose indexes are not removed from in the removal's own transaction logs
    /// every removal of a unit (a forget, a re-derivation dropping a stale unit, a
    /// dropped space) in that transaction, with a sequence number of its own, so an index
    /// whose watermark is behind it still holds the unit and healing removes it: a crash
    /// between the record's removal and the indexes' cannot leave it searchable. Ids
    /// only, never text. Default: none logged.
    fn removals_since(&self, _seq: u64) -> Result<Vec<(u64, SpaceId, String)>, StoreError> {
        Ok(Vec::new())
    }
    /// Drops the removals logged up to `seq` (every index has applied them).
    fn prune_removals(&self, _seq: u64) -> Result<(), StoreError> {
        Ok(())
    }
    /// A number that grows whenever a row of `space` (the space itself, a session, a
    /// unit, a trajectory) is written or removed, by any process sharing the store, so
    /// caches of a space's derived reads can tell they are stale. It moves for that space
    /// only: a write to one space never makes another's caches cold, so no request of a
    /// space costs more, or takes longer, because of what another space did.
    fn generation(&self, space: &SpaceId) -> Result<u64, StoreError>;
    /// The version of the derivation rules the stored units were made with (0: unknown).
    fn derive_version(&self) -> Result<u32, StoreError>;
    fn set_derive_version(&self, version: u32) -> Result<(), StoreError>;
    /// An estimate of the bytes a space's rows take (see [`SpaceStats::disk_bytes`]).
    fn space_bytes(&self, space: &SpaceId) -> Result<u64, StoreError>;
    /// How many units of each kind a space holds (counted by the store, no unit read).
    fn unit_counts(&self, space: &SpaceId) -> Result<BTreeMap<String, usize>, StoreError>;
    /// Counts of one space, from its session headers (no message is read), trajectory
    /// summaries, unit counts and bytes: one definition for every backend.
    fn stats(&self, space: &SpaceId) -> Result<SpaceStats, StoreError> {
        if !self.space_exists(space)? {
            return Err(StoreError::NoSuchSpace(space.to_string()));
        }
        let headers = self.session_headers(space)?;
        let trajectories = self.trajectory_summaries(space)?;
        let units_by_kind = self.unit_counts(space)?;
        let newest = headers.iter().map(|h| h.recorded_at);
        Ok(SpaceStats {
            space: space.to_string(),
            sessions: headers.len(),
            messages: headers.iter().map(|h| h.messages).sum(),
            trajectories: trajectories.len(),
            units: units_by_kind.values().sum(),
            units_by_kind,
            disk_bytes: self.space_bytes(space)?,
            last_recorded_at: newest
                .chain(trajectories.iter().map(|t| t.recorded_at))
                .max(),
        })
    }
    /// Keeps the writers of every other process sharing this store waiting until the
    /// returned guard drops, so the engine's read-check-write steps (appends, forgets,
    /// index watermarks) are atomic across processes as its own mutex makes them within
    /// one. `None`: nothing to hold (one process owns the store).
    fn lock_writers(&self) -> Result<Option<Box<dyn Send>>, StoreError> {
        Ok(None)
    }
    /// Bytes the whole store occupies where only it can tell (a database server's
    /// files); `None`: it lives in the data directory, which the caller can measure.
    fn disk_bytes(&self) -> Result<Option<u64>, StoreError> {
        Ok(None)
    }
    /// Makes what committed deletions removed unreadable in the store's own files; a
    /// forget calls it before it is acknowledged. Default: nothing (a backend whose
    /// files keep deleted rows until its own maintenance says so in its docs).
    fn scrub(&self) -> Result<(), StoreError> {
        Ok(())
    }
    /// Makes sure the store's reserve of disk space is held before a write: a backend
    /// that keeps one (the embedded store: a file in its data directory) re-creates it
    /// when it is missing, and answers [`StoreError::Full`] when the disk has no room
    /// for it, so writes stop while a forget still has room to run. Default: nothing
    /// (a database server manages its own disk).
    fn hold_reserve(&self) -> Result<(), StoreError> {
        Ok(())
    }
    /// Gives the reserve's space back to the file system, for a forget to run in on a
    /// full disk; [`RecordStore::hold_reserve`] takes it again. Default: nothing.
    fn release_reserve(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// What to look for in the lexical index. Every query names its space: there is no way
/// to search across spaces.
#[derive(Debug, Clone)]
pub struct TextQuery<'a> {
    pub space: &'a SpaceId,
    pub text: &'a str,
    pub kinds: Option<&'a [UnitKind]>,
    pub sessions: Option<&'a [String]>,
    /// Weight of a match in a unit's full text relative to a match in its key (1.0).
    pub text_weight: f32,
    pub limit: usize,
}

/// Lexical (BM25) index over units.
pub trait TextIndex: Send + Sync {
    /// Adds or replaces units. Visible to search after [`TextIndex::commit`].
    fn upsert(&self, units: &[Unit]) -> Result<(), StoreError>;
    fn remove(&self, space: &SpaceId, unit_ids: &[String]) -> Result<(), StoreError>;
    /// [`TextIndex::remove`] of what a forget removes (also entries replaced by the
    /// forget's re-derivation: their old text is forgotten), which the next
    /// [`TextIndex::scrub`] must make unreadable; a plain removal (a stale unit whose
    /// source is still stored) need not be. Default: a removal.
    fn remove_forgotten(&self, space: &SpaceId, unit_ids: &[String]) -> Result<(), StoreError> {
        self.remove(space, unit_ids)
    }
    /// Removes a whole space, forgotten like [`TextIndex::remove_forgotten`].
    fn drop_space(&self, space: &SpaceId) -> Result<(), StoreError>;
    /// Makes pending changes durable and searchable, recording `watermark` (the highest
    /// unit sequence number absorbed). A failed commit (or upsert) may drop what was
    /// pending: the index is then as of its last commit, and its watermark says so, so
    /// the caller indexes again every unit past it.
    fn commit(&self, watermark: u64) -> Result<(), StoreError>;
    /// True if there are changes not yet committed.
    fn has_pending(&self) -> bool;
    /// Whether a search reads what is pending without a commit first (the embedded
    /// index keeps it searchable up to a size, `text_pending.rs` in `cairn-store`); a
    /// reader commits first when this says no.
    fn searches_pending(&self) -> bool {
        false
    }
    fn watermark(&self) -> Result<u64, StoreError>;
    /// Unit ids with BM25 scores, best first.
    fn search(&self, query: &TextQuery<'_>) -> Result<Vec<(String, f32)>, StoreError>;
    /// Entries of a space in the committed index (`None`: the backend cannot count);
    /// `check` compares it with the units of the record.
    fn count(&self, _space: &SpaceId) -> Result<Option<usize>, StoreError> {
        Ok(None)
    }
    /// The unit ids of a space's entries in the committed index (`None`: the backend
    /// cannot list them); what opening compares with the record when
    /// [`TextIndex::count`] disagrees with it.
    fn ids(&self, _space: &SpaceId) -> Result<Option<Vec<String>>, StoreError> {
        Ok(None)
    }
    /// Rewrites what holds committed forgotten removals so that their words are gone from
    /// the index's files (see [`RecordStore::scrub`]). Default: nothing.
    fn scrub(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// Dense vectors of units, searched by cosine similarity (vectors are unit length).
pub trait VectorIndex: Send + Sync {
    /// Adds or replaces vectors, durably, and records `watermark`.
    fn upsert(
        &self,
        space: &SpaceId,
        items: &[(String, Vec<f32>)],
        watermark: u64,
    ) -> Result<(), StoreError>;
    fn remove(&self, space: &SpaceId, unit_ids: &[String]) -> Result<(), StoreError>;
    fn drop_space(&self, space: &SpaceId) -> Result<(), StoreError>;
    fn watermark(&self) -> Result<u64, StoreError>;
    /// Unit ids with cosine similarity, best first.
    fn search(
        &self,
        space: &SpaceId,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(String, f32)>, StoreError>;
    /// Exact cosine similarity of `query` to each of `unit_ids` that has a vector (in no
    /// particular order; units without a vector are left out). Recall uses it to give
    /// candidates found only by words their meaning score, too.
    fn similarities(
        &self,
        space: &SpaceId,
        query: &[f32],
        unit_ids: &[String],
    ) -> Result<Vec<(String, f32)>, StoreError>;
    fn len(&self, space: &SpaceId) -> Result<usize, StoreError>;
    /// Drops what the index derived from `space`'s vectors beyond the vectors themselves
    /// (the embedded store's saved search graph), so a rebuild makes it again from them.
    fn reset_derived(&self, _space: &SpaceId) -> Result<(), StoreError> {
        Ok(())
    }
}

/// Persistent cache of embeddings keyed by (model id, hash of the normalized text), shared
/// by all spaces, so the same text is never embedded twice.
pub trait EmbeddingCache: Send + Sync {
    fn get(&self, model: &str, keys: &[[u8; 32]]) -> Result<Vec<Option<Vec<f32>>>, StoreError>;
    fn put(&self, model: &str, items: &[([u8; 32], Vec<f32>)]) -> Result<(), StoreError>;
    /// Drops entries (a forgotten source must leave no vector of its text behind).
    fn remove(&self, model: &str, keys: &[[u8; 32]]) -> Result<(), StoreError>;
    /// Makes removed entries unreadable in the cache's files (see
    /// [`RecordStore::scrub`]). Default: nothing.
    fn scrub(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// A sentence-embedding model.
pub trait Embedder: Send + Sync {
    /// Identifies the model and its settings; part of the embedding cache key.
    fn model_id(&self) -> &str;
    fn dim(&self) -> usize;
    /// Unit-length vectors, one per text, in order: the texts stored and searched for
    /// (passages).
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Unit-length vectors of search queries. Models trained with distinct query and
    /// passage inputs (e5's `query: ` and `passage: ` prefixes) embed a question
    /// differently from a stored text; the default embeds both alike.
    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed(texts)
    }
    /// Whether [`Embedder::embed_queries`] differs from [`Embedder::embed`]: queries then
    /// get embedding-cache entries of their own.
    fn asymmetric(&self) -> bool {
        false
    }
    /// Tokens of `text` under the model's tokenizer (used for token budgets).
    fn count_tokens(&self, text: &str) -> usize;
    /// Whether the tokens of texts joined by whitespace are exactly the sum of their
    /// tokens (a tokenizer that splits at whitespace before anything else, as BERT's
    /// WordPiece does). Packing then adds up its entries' counts instead of counting the
    /// joined context again (half its tokenizer time on a full context); the default
    /// recounts.
    fn whitespace_additive(&self) -> bool {
        false
    }
}

/// A stored API key: the server makes tokens and hashes them; a backend keeps the rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRow {
    pub id: String,
    /// SHA-256 of the whole token (the token itself is never stored).
    pub hash: Vec<u8>,
    pub spaces: Vec<String>,
    pub read_only: bool,
    pub label: Option<String>,
    pub created_at: String,
    pub revoked_at: Option<String>,
    /// The end-user partition the key is pinned to, as canonical JSON
    /// (`{"user_id":"u1"}`); `None`: the key sees its spaces whole.
    pub partition: Option<String>,
}

/// API key rows kept by a storage backend (PostgreSQL: every server on the database
/// sees the same keys). Store-wide: a key may span spaces.
pub trait KeyRecords: Send + Sync {
    fn insert(&self, row: &KeyRow) -> Result<(), StoreError>;
    /// Every key, revoked ones included, by creation time then id.
    fn list(&self) -> Result<Vec<KeyRow>, StoreError>;
    /// Marks a live key revoked at `at`; false if no live key has that id.
    fn revoke(&self, id: &str, at: &str) -> Result<bool, StoreError>;
    /// The key with that id if it is live (not revoked).
    fn live(&self, id: &str) -> Result<Option<KeyRow>, StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every page of parts of any sizes (empty ones too) is the slice of their
    /// concatenation at its offset.
    #[test]
    fn a_page_by_parts_is_the_slice_of_the_whole_order() {
        for sizes in [
            [0, 0, 0],
            [3, 0, 2],
            [0, 4, 0],
            [2, 2, 2],
            [0, 0, 5],
            [1, 0, 0],
        ] {
            let part = |p: ListingPart| {
                let i = ListingPart::ALL.iter().position(|&q| q == p).unwrap_or(0);
                (i, sizes[i])
            };
            let whole: Vec<(usize, usize)> = (0..3)
                .flat_map(|i| (0..sizes[i]).map(move |j| (i, j)))
                .collect();
            for limit in 0..8 {
                for offset in (0..whole.len() + 3).chain([usize::MAX]) {
                    let q = UnitQuery {
                        offset,
                        limit,
                        ..Default::default()
                    };
                    let page = q
                        .page_by_parts(
                            |p, from, n| {
                                let (i, len) = part(p);
                                Ok::<_, ()>((from.min(len)..len).take(n).map(|j| (i, j)).collect())
                            },
                            |p| Ok(part(p).1),
                        )
                        .unwrap();
                    let start = offset.min(whole.len());
                    let want = &whole[start..start.saturating_add(limit).min(whole.len())];
                    assert_eq!(page, want, "sizes {sizes:?} offset {offset} limit {limit}");
                }
            }
        }
    }
}
