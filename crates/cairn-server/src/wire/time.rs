//! Times as requests carry them.
use crate::error::ApiError;

/// A time from a request field or parameter (every shape the library reads), an error
/// naming the field.
pub fn parse_time(raw: &str, field: &str) -> Result<cairn::Timestamp, ApiError> {
    cairn::parse_timestamp(raw).map_err(|e| ApiError::invalid(field, e.problem))
}
