//! Rows' bodies: records and units are stored as JSON text (trajectories and observations
//! gzip'd), exactly as the embedded store keeps them, so a record round-trips every field
//! of its input.
use cairn_core::{StoreError, Unit};
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use serde::Serialize;
use std::io::{Read, Write};

pub(crate) fn to_json<T: Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Backend(format!("encode: {e}")))
}

/// Decodes a stored row. Stored JSON was written by Cairn from validated input, so its
/// depth is bounded by what validation allows; the parser's own limit (128 levels, meant
/// for untrusted input) is lifted so that records accepted before metadata depth was
/// bounded (nested up to the wire parser's limit, plus the record's own levels) stay
/// readable, listable and exportable.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    s: &str,
    what: &str,
) -> Result<T, StoreError> {
    let mut de = serde_json::Deserializer::from_str(s);
    de.disable_recursion_limit();
    <T as serde::Deserialize>::deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

pub(crate) fn units_of(rows: Vec<String>) -> Result<Vec<Unit>, StoreError> {
    rows.iter().map(|b| from_json(b, "unit")).collect()
}

pub(crate) fn gzip(bytes: &[u8]) -> Result<Vec<u8>, StoreError> {
    let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes)
        .and_then(|_| enc.finish())
        .map_err(|e| StoreError::Backend(format!("compress: {e}")))
}

pub(crate) fn gunzip(bytes: &[u8], what: &str) -> Result<String, StoreError> {
    let mut out = String::new();
    GzDecoder::new(bytes)
        .read_to_string(&mut out)
        .map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))?;
    Ok(out)
}
