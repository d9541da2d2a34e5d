//! Appends to one session, and the receipts that make any write safe to retry.
//!
//! An append is a read-check-write of the stored session, so it runs entirely under the
//! engine's write lock (this process's mutex plus the store's lock on other processes):
//! two appends through two servers on one database cannot interleave.
use cairn_core::{
    AppendInput, ConflictError, InputError, Message, Receipt, SessionInput, SessionRecord, SpaceId,
    RECEIPT_TTL_HOURS,
};
use sha2::{Digest, Sha256};

use super::ingest::WriteMode;
use super::{Engine, EngineError, IngestReport};

/// Longest accepted idempotency key, in bytes.
pub const MAX_IDEMPOTENCY_KEY: usize = 255;

/// How a write is to be carried out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// A key the caller chose for this request: a retry with the same key and the same
    /// input (within [`RECEIPT_TTL_HOURS`]) is answered with the first answer and writes
    /// nothing; the same key with another input is refused.
    pub idempotency_key: Option<String>,
}

impl WriteOptions {
    pub fn with_key(key: impl Into<String>) -> Self {
        Self {
            idempotency_key: Some(key.into()),
        }
    }
}

/// A write request that named an idempotency key: its space, key and fingerprint (the
/// operation and its whole input, hashed).
#[derive(Debug, Clone)]
pub(super) struct Request {
    space: SpaceId,
    key: String,
    fingerprint: String,
}

impl Request {
    /// `None` when the caller named no key.
    pub(super) fn new(
        space: &SpaceId,
        opts: &WriteOptions,
        operation: &str,
        input: &impl serde::Serialize,
    ) -> Result<Option<Self>, InputError> {
        let Some(key) = &opts.idempotency_key else {
            return Ok(None);
        };
        if key.is_empty()
            || key.len() > MAX_IDEMPOTENCY_KEY
            || !key.bytes().all(|b| b.is_ascii_graphic())
        {
            return Err(InputError::new(
                "idempotency key",
                format!("must be 1 to {MAX_IDEMPOTENCY_KEY} visible ASCII characters"),
            )
            .at("idempotency_key"));
        }
        let body = serde_json::to_vec(input)
            .map_err(|e| InputError::new("idempotency key", format!("input: {e}")))?;
        let mut h = Sha256::new();
        h.update(operation.as_bytes());
        h.update(b"\0");
        h.update(&body);
        let fingerprint = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Ok(Some(Self {
            space: space.clone(),
            key: key.clone(),
            fingerprint,
        }))
    }

    pub(super) fn receipt(&self, report: &IngestReport) -> Receipt {
        Receipt {
            space: self.space.clone(),
            key: self.key.clone(),
            fingerprint: self.fingerprint.clone(),
            response: serde_json::to_string(report).unwrap_or_default(),
            recorded_at: chrono::Utc::now(),
        }
    }
}

impl Engine {
    /// The first answer to a request already made with this key, if one was kept; an
    /// error when the key was used for another input. The caller holds the write lock.
    pub(super) fn replay(&self, r: &Request) -> Result<Option<IngestReport>, EngineError> {
        let Some(receipt) = self.b.records.receipt(&r.space, &r.key)? else {
            return Ok(None);
        };
        let age = chrono::Utc::now() - receipt.recorded_at;
        if age > chrono::Duration::hours(RECEIPT_TTL_HOURS) {
            return Ok(None);
        }
        if receipt.fingerprint != r.fingerprint {
            return Err(EngineError::IdempotencyKeyReused(r.key.clone()));
        }
        let mut report: IngestReport = serde_json::from_str(&receipt.response)
            .map_err(|e| cairn_core::StoreError::Corrupt(format!("receipt: {e}")))?;
        report.replayed = true;
        Ok(Some(report))
    }

    /// Appends messages to a session, creating it on first use (see [`AppendInput`]).
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
        let _w = self.lock()?;
        if let Some(report) = request
            .as_ref()
            .map(|r| self.replay(r))
            .transpose()?
            .flatten()
        {
            return Ok(report);
        }
        let stored = self.b.records.get_session(space, &input.session_id)?;
        let record = match stored {
            None => SessionRecord {
                space: space.clone(),
                recorded_at: chrono::Utc::now(),
                session: probe,
            },
            Some(rec) => extended(rec, input)?,
        };
        self.write_records_locked(vec![(record, WriteMode::Whole)], request.as_ref())
    }
}

/// The stored session with `input`'s messages after its own: header fields given must
/// equal the stored ones; a message whose id is stored must equal the stored message
/// (and is skipped); new messages without an id get their position in the session.
fn extended(rec: SessionRecord, input: AppendInput) -> Result<SessionRecord, EngineError> {
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
    for (i, m) in input.messages.into_iter().enumerate() {
        match session
            .messages
            .iter()
            .find(|x| !m.id.is_empty() && x.id == m.id)
        {
            Some(x) if *x == m => {}
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
    super::ingest::push_numbered(&mut session.messages, added);
    Ok(SessionRecord {
        space,
        recorded_at,
        session: session.validate()?,
    })
}
