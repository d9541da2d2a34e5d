//! The scope of a read as the wire takes it: one definition, flattened into every request
//! that narrows what it sees (HTTP `RecallRequest`, the MCP tools that read), and turned
//! into the library's [`cairn::ScopeOptions`] in one place ([`ScopeWire::options`]). A new
//! scope field is a field of the library's options and one here; the OpenAPI document and
//! the MCP input schemas follow from the derives.
use super::doc::FilterDoc;
use super::time::parse_time;
use crate::error::ApiError;
use cairn::UnitKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// What a read sees (every field narrows; none: the whole space as it is now).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, ToSchema, JsonSchema)]
#[serde(default)]
pub struct ScopeWire {
    /// As of this date: what occurred later is invisible, undated records recorded later too, and relative dates in a query ("last week") resolve against it (default now).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of: Option<String>,
    /// Only what occurred at or after this date (with `as_of`, a time range; undated records stay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Only what these sessions (conversations) hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Vec<String>>,
    /// Only what at least one of these speakers took part in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speakers: Option<Vec<String>>,
    /// Only what these group chats hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
    /// Only memories of these kinds are shown (what is known is computed from every kind).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<String>>)]
    #[schemars(with = "Option<Vec<String>>")]
    pub kinds: Option<Vec<UnitKind>>,
    /// Only what the sessions whose metadata matches this filter hold, e.g. `{"user_id": "u1"}`, as if the space held nothing else.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<FilterDoc>)]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub filter: Option<Value>,
    /// Only sessions of this end user's partition, e.g. `{"user_id": "u1"}` (keys `user_id`, `agent_id`, `namespace`; a session is in it when its metadata holds each value). A key pinned to a partition is held in it whatever this says, and naming another is refused (403 `outside_partition`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub partition: Option<Value>,
}

impl ScopeWire {
    /// The library's options: times parsed here (any date shape the library reads, an
    /// error naming the field), everything else checked by the library.
    pub fn options(&self) -> Result<cairn::ScopeOptions, ApiError> {
        let time = |raw: &Option<String>, field| raw.as_deref().map(|t| parse_time(t, field));
        Ok(cairn::ScopeOptions {
            as_of: time(&self.as_of, "as_of").transpose()?,
            since: time(&self.since, "since").transpose()?,
            sessions: self.sessions.clone(),
            speakers: self.speakers.clone(),
            groups: self.groups.clone(),
            kinds: self.kinds.clone(),
            filter: self.filter.clone(),
            partition: self.partition.clone(),
        })
    }

    /// [`ScopeWire::options`], checked now: the knowledge reads refuse a bad scope before
    /// they look at the space (recall leaves the check to the library, after the key's
    /// partition is applied).
    pub fn checked_options(&self) -> Result<cairn::ScopeOptions, ApiError> {
        let scope = self.options()?;
        scope
            .scope()
            .map_err(|e| ApiError::from(cairn::Error::from(e)))?;
        Ok(scope)
    }

    /// Where a body's error lies when serde could not say: a flattened struct's fields are
    /// buffered before they are read, so their errors carry no path. The scope is the one
    /// flattened part of the bodies; read alone, its error names the field
    /// (`sessions: invalid type ...`).
    pub(super) fn locate_error(body: &Value) -> Option<(String, String)> {
        let Value::Object(_) = body else {
            return None;
        };
        match serde_path_to_error::deserialize::<_, ScopeWire>(body) {
            Ok(_) => None,
            Err(e) => Some((e.path().to_string(), e.into_inner().to_string())),
        }
    }
}
