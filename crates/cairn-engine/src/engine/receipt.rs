//! Request receipts: what makes any write safe to retry. A write that names an
//! idempotency key is fingerprinted (operation and whole input); a retry with the same key
//! and input is answered with the first answer, the same key with another input refused.
use cairn_core::{InputError, Receipt, SpaceId, RECEIPT_TTL_HOURS};
use sha2::{Digest, Sha256};

use super::error::EngineError;
use super::reports::IngestReport;

use cairn_core::bounds::MAX_IDEMPOTENCY_KEY;

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
        let fingerprint = hex::encode(h.finalize());
        Ok(Some(Self {
            space: space.clone(),
            key: key.clone(),
            fingerprint,
        }))
    }

    pub(super) fn key(&self) -> &str {
        &self.key
    }

    /// Whether `other` is this request again: the same operation and input.
    pub(super) fn same_input(&self, other: &Request) -> bool {
        self.fingerprint == other.fingerprint
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

    /// The first answer to a request already made with this key, if one was kept; an
    /// error when the key was used for another input. The caller holds the write lock.
    pub(super) fn replay(
        &self,
        records: &dyn cairn_core::RecordStore,
    ) -> Result<Option<IngestReport>, EngineError> {
        let Some(receipt) = records.receipt(&self.space, &self.key)? else {
            return Ok(None);
        };
        let age = chrono::Utc::now() - receipt.recorded_at;
        if age > chrono::Duration::hours(RECEIPT_TTL_HOURS) {
            return Ok(None);
        }
        if receipt.fingerprint != self.fingerprint {
            return Err(EngineError::IdempotencyKeyReused(self.key.clone()));
        }
        let mut report: IngestReport = serde_json::from_str(&receipt.response)
            .map_err(|e| cairn_core::StoreError::Corrupt(format!("receipt: {e}")))?;
        report.replayed = true;
        Ok(Some(report))
    }
}
