//! What one read may see: its [`Scope`], validated once where a request comes in and handed
//! to every stage and route, so a scoped request answers as if the space held only the
//! records its scope sees.
//!
//! A scope narrows by time (`as_of`, `since`), by source (`sessions`, `groups`, the
//! metadata `filter` over session headers), by who took part (`speakers`) and by what is
//! shown (`kinds`). One rule decides what a unit is seen by ([`Scope::sees`] for what
//! recall, facts, profiles and entities are computed from, [`Scope::shows`] for the
//! hits); the metadata filter is decided per session by the engine, which knows the
//! headers.
//!
//! **Partitions.** Derived knowledge (version chains, profiles, entities) never joins
//! records of two end users. A session's partition is read from its metadata
//! ([`PARTITION_KEYS`]: Mem0's `user_id` and `agent_id`, and `namespace`, which the
//! LangGraph adapter writes), stamped on every unit derived from it
//! ([`crate::Provenance::partition`]), and a chain, a profile or an entity holds units
//! of one partition only, whatever the request's scope.
use crate::{InputError, Timestamp, Unit, UnitKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashSet;

/// The session metadata keys whose values make a session's partition (see the module
/// docs). A session with none of them is in the one unnamed partition.
pub const PARTITION_KEYS: &[&str] = &["user_id", "agent_id", "namespace"];

/// The partition of a session with this metadata: the canonical JSON of the
/// [`PARTITION_KEYS`] it holds (`{"user_id":"u1"}`), `None` when it holds none.
pub fn partition_of(metadata: &Value) -> Option<String> {
    let Value::Object(m) = metadata else {
        return None;
    };
    let mut out = serde_json::Map::new();
    for k in PARTITION_KEYS {
        if let Some(v) = m.get(*k).filter(|v| !v.is_null()) {
            out.insert((*k).to_string(), v.clone());
        }
    }
    // serde_json's map keeps keys sorted (no `preserve_order`), so equal partitions
    // print equally.
    (!out.is_empty()).then(|| Value::Object(out).to_string())
}

/// The narrowing options of a read as they arrive (plain data; the filter still JSON).
/// [`ScopeOptions::scope`] checks them and gives the [`Scope`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScopeOptions {
    /// See the world as of this time: units that occurred later are invisible, and
    /// undated units recorded later too.
    pub as_of: Option<Timestamp>,
    /// Only units that occurred at or after this time (undated ones stay).
    pub since: Option<Timestamp>,
    /// Only units of these sessions.
    pub sessions: Option<Vec<String>>,
    /// Only units with at least one of these speakers.
    pub speakers: Option<Vec<String>>,
    /// Only units of these groups.
    pub groups: Option<Vec<String>>,
    /// Only units of these kinds are shown (what is known is computed from every kind).
    pub kinds: Option<Vec<UnitKind>>,
    /// Only units of sessions whose header matches this metadata filter
    /// ([`crate::filter`]).
    pub filter: Option<Value>,
    /// Only sessions of this end-user partition: an object of [`PARTITION_KEYS`] and
    /// values (`{"user_id":"u1"}`), admitting the sessions whose metadata holds each
    /// value. A key pinned to a partition sets it on every request it makes, whatever
    /// the request says; a request may set it too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<Value>,
}

impl ScopeOptions {
    /// A scope of time alone: the world as of `as_of` (`None`: now).
    pub fn as_of(as_of: Option<Timestamp>) -> Self {
        Self {
            as_of,
            ..Default::default()
        }
    }

    /// Checks the options (a filter's errors name its path, `filter.and[1].op`).
    pub fn scope(&self) -> Result<Scope, InputError> {
        if let (Some(since), Some(as_of)) = (self.since, self.as_of) {
            if since > as_of {
                return Err(InputError::new("scope", "`since` is later than `as_of`").at("since"));
            }
        }
        for (field, list) in [
            ("sessions", &self.sessions),
            ("speakers", &self.speakers),
            ("groups", &self.groups),
        ] {
            let n = list.as_ref().map_or(0, Vec::len);
            if n > crate::bounds::MAX_FILTER_LIST_VALUES {
                return Err(InputError::new(
                    "scope",
                    format!(
                        "`{field}` lists {n} values; at most {} are accepted",
                        crate::bounds::MAX_FILTER_LIST_VALUES
                    ),
                )
                .at(field));
            }
        }
        let filter = self
            .filter
            .as_ref()
            .map(crate::Filter::parse_sessions)
            .transpose()?;
        let partition = self.partition.as_ref().map(Partition::parse).transpose()?;
        Ok(Scope {
            as_of: self.as_of,
            since: self.since,
            sessions: self.sessions.clone(),
            speakers: self.speakers.clone(),
            groups: self.groups.clone(),
            kinds: self.kinds.clone(),
            filter: filter.map(|f| (f, self.filter.clone().unwrap_or(Value::Null))),
            partition,
        })
    }
}

/// An end-user partition as a scope names it ([`ScopeOptions::partition`]): some of the
/// [`PARTITION_KEYS`] with their values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition(serde_json::Map<String, Value>);

impl Partition {
    /// Checks a partition: a non-empty object of [`PARTITION_KEYS`] with non-null values
    /// (errors name `partition` and the key).
    pub fn parse(v: &Value) -> Result<Self, InputError> {
        let bad = |msg: String| Err(InputError::new("scope", msg).at("partition"));
        let Value::Object(m) = v else {
            return bad(format!(
                "a partition is an object of {} and their values, e.g. {{\"user_id\": \"u1\"}}",
                PARTITION_KEYS.join(", ")
            ));
        };
        if m.is_empty() {
            return bad("a partition names at least one of its keys".into());
        }
        for (k, val) in m {
            if !PARTITION_KEYS.contains(&k.as_str()) {
                return bad(format!(
                    "{k:?} is not a partition key ({})",
                    PARTITION_KEYS.join(", ")
                ));
            }
            if val.is_null() {
                return bad(format!("partition key {k:?} has no value"));
            }
        }
        Ok(Self(m.clone()))
    }

    /// Whether a session with this metadata is in the partition: it holds each value.
    pub fn holds(&self, metadata: &Value) -> bool {
        self.0.iter().all(|(k, v)| metadata.get(k) == Some(v))
    }

    /// The partition as JSON (its keys sorted).
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }

    /// The values a session written through this partition must carry: its own metadata
    /// with the partition's keys added. A metadata naming another value of one of them
    /// is refused (naming the key).
    pub fn stamp(&self, metadata: &Value) -> Result<Value, InputError> {
        let mut out = match metadata {
            Value::Null => serde_json::Map::new(),
            Value::Object(m) => m.clone(),
            _ => return Ok(metadata.clone()),
        };
        for (k, v) in &self.0 {
            match out.get(k) {
                Some(have) if have != v => {
                    return Err(InputError::new(
                        "metadata",
                        format!("this key writes only to its own partition; {k:?} names another"),
                    )
                    .at(format!("metadata.{k}")))
                }
                _ => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        Ok(Value::Object(out))
    }
}

/// A scope's `sessions` and `groups` lists as sets ([`Scope::session_lists`]).
pub struct SessionLists<'a> {
    sessions: Option<HashSet<&'a str>>,
    groups: Option<HashSet<&'a str>>,
}

impl SessionLists<'_> {
    /// Whether a session (by id and group) is one the lists admit.
    pub fn admits(&self, id: &str, group: Option<&str>) -> bool {
        self.sessions.as_ref().is_none_or(|s| s.contains(id))
            && self
                .groups
                .as_ref()
                .is_none_or(|gs| group.is_some_and(|g| gs.contains(g)))
    }
}

/// A checked scope (see the module docs). `Scope::default()` narrows nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    pub as_of: Option<Timestamp>,
    pub since: Option<Timestamp>,
    pub sessions: Option<Vec<String>>,
    pub speakers: Option<Vec<String>>,
    pub groups: Option<Vec<String>>,
    pub kinds: Option<Vec<UnitKind>>,
    /// The parsed metadata filter, with the JSON it was parsed from.
    pub filter: Option<(crate::Filter, Value)>,
    /// Only sessions of this end-user partition (a pinned key's).
    pub partition: Option<Partition>,
}

impl Scope {
    /// A scope of time alone (the knowledge reads' `as_of`).
    pub fn as_of(as_of: Option<Timestamp>) -> Self {
        Self {
            as_of,
            ..Default::default()
        }
    }

    /// Whether the scope narrows anything.
    pub fn narrows(&self) -> bool {
        self.narrows_records() || self.kinds.is_some()
    }

    /// Whether the scope narrows what is known (anything but `kinds`).
    pub fn narrows_records(&self) -> bool {
        self.as_of.is_some()
            || self.since.is_some()
            || self.narrows_sessions()
            || self.speakers.is_some()
    }

    /// Whether only some sessions are seen (and so no trajectory).
    pub fn narrows_sessions(&self) -> bool {
        self.sessions.is_some()
            || self.groups.is_some()
            || self.filter.is_some()
            || self.partition.is_some()
    }

    /// Whether a session's filter document (see [`crate::filter::session_document`]) passes
    /// the metadata filter and the partition.
    pub fn admits_document(&self, doc: &Value) -> bool {
        self.filter.as_ref().is_none_or(|(f, _)| f.matches(doc))
            && self
                .partition
                .as_ref()
                .is_none_or(|p| p.holds(doc.get("metadata").unwrap_or(&Value::Null)))
    }

    /// Whether a session with this id and group may be seen, the metadata filter aside
    /// (the engine evaluates it on the session's header).
    pub fn admits_session(&self, id: &str, group: Option<&str>) -> bool {
        self.session_lists().admits(id, group)
    }

    /// The `sessions` and `groups` lists hashed, for checking many sessions.
    pub fn session_lists(&self) -> SessionLists<'_> {
        fn set(l: &Option<Vec<String>>) -> Option<HashSet<&str>> {
            l.as_ref().map(|l| l.iter().map(String::as_str).collect())
        }
        SessionLists {
            sessions: set(&self.sessions),
            groups: set(&self.groups),
        }
    }

    /// Whether the scope's time window holds a moment: at or before `as_of`, at or after
    /// `since`. `occurred` is when it happened (`None`: undated), `recorded` when Cairn
    /// recorded it. An undated record is seen once recorded; `since` keeps it.
    pub fn in_time(&self, occurred: Option<Timestamp>, recorded: Timestamp) -> bool {
        self.as_of.is_none_or(|a| occurred.unwrap_or(recorded) <= a)
            && self.since.is_none_or(|s| occurred.is_none_or(|t| t >= s))
    }

    /// The one rule of what a unit is seen by, the metadata filter aside (decided per
    /// session, see [`Scope::admits_session`]): in the time window, of an admitted
    /// session and group, with one of the speakers. Everything a request computes
    /// (candidates, facts and their chains, profiles, entities, counts) is computed from
    /// units this admits.
    pub fn sees(&self, u: &Unit) -> bool {
        if !self.in_time(u.occurred_at, u.recorded_at) {
            return false;
        }
        if self.narrows_sessions() {
            let Some(sid) = u.provenance.session_id.as_deref() else {
                return false;
            };
            if !self.admits_session(sid, u.provenance.group.as_deref()) {
                return false;
            }
        }
        self.speakers
            .as_ref()
            .is_none_or(|sp| u.provenance.speakers.iter().any(|s| sp.contains(s)))
    }

    /// Whether a unit of a kind may be a hit: one of `kinds` (a turn also when rounds
    /// are asked for: it credits its round).
    pub fn shows_kind(&self, kind: UnitKind) -> bool {
        self.kinds.as_ref().is_none_or(|k| {
            k.contains(&kind) || (kind == UnitKind::Turn && k.contains(&UnitKind::Round))
        })
    }

    /// [`Scope::sees`] and [`Scope::shows_kind`].
    pub fn shows(&self, u: &Unit) -> bool {
        self.shows_kind(u.kind) && self.sees(u)
    }

    /// The message-level form of the rule, for what is computed from messages (profile
    /// contributions a scope cuts into): a message of `speaker` at these times.
    pub fn sees_message(
        &self,
        speaker: &str,
        occurred: Option<Timestamp>,
        recorded: Timestamp,
    ) -> bool {
        self.in_time(occurred, recorded)
            && self
                .speakers
                .as_ref()
                .is_none_or(|sp| sp.iter().any(|s| s == speaker))
    }

    /// A text naming the scope exactly (equal scopes, equal texts): the key of caches of
    /// what was computed for it.
    pub fn fingerprint(&self) -> String {
        serde_json::json!([
            self.as_of.map(|t| t.to_rfc3339()),
            self.since.map(|t| t.to_rfc3339()),
            self.sessions,
            self.speakers,
            self.groups,
            self.kinds,
            self.filter.as_ref().map(|(_, v)| v.to_string()),
            self.partition.as_ref().map(Partition::to_value),
        ])
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_are_bounded_naming_the_field_and_looked_up_by_hash() {
        let many: Vec<String> = (0..=crate::bounds::MAX_FILTER_LIST_VALUES)
            .map(|i| format!("s{i}"))
            .collect();
        for field in ["sessions", "speakers", "groups"] {
            let mut o = ScopeOptions::default();
            match field {
                "sessions" => o.sessions = Some(many.clone()),
                "speakers" => o.speakers = Some(many.clone()),
                _ => o.groups = Some(many.clone()),
            }
            let e = o.scope().unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{e}");
        }
        let o = ScopeOptions {
            sessions: Some(many[..crate::bounds::MAX_FILTER_LIST_VALUES].to_vec()),
            groups: Some(vec!["g".into()]),
            ..Default::default()
        };
        let scope = o.scope().unwrap();
        let lists = scope.session_lists();
        assert!(lists.admits("s9999", Some("g")));
        assert!(!lists.admits("s9999", None));
        assert!(!lists.admits("s10000", Some("g")));
        assert!(scope.admits_session("s0", Some("g")));
    }

    #[test]
    fn partitions_read_the_mem0_ids_and_the_namespace() {
        assert_eq!(partition_of(&Value::Null), None);
        assert_eq!(partition_of(&json!({"source": "x"})), None);
        assert_eq!(
            partition_of(&json!({"user_id": "u1", "source": "x"})).as_deref(),
            Some(r#"{"user_id":"u1"}"#)
        );
        assert_eq!(
            partition_of(&json!({"user_id": "u1", "agent_id": 7})),
            partition_of(&json!({"agent_id": 7, "user_id": "u1"})),
        );
        assert_ne!(
            partition_of(&json!({"user_id": "u1"})),
            partition_of(&json!({"user_id": "u1", "agent_id": "a"})),
        );
        assert_eq!(
            partition_of(&json!({"namespace": ["users", "u1"]})).as_deref(),
            Some(r#"{"namespace":["users","u1"]}"#)
        );
    }

    #[test]
    fn undated_units_are_seen_once_recorded() {
        let t = |s: &str| crate::time::parse_timestamp(s).unwrap();
        let s = Scope::as_of(Some(t("2020-01-01")));
        assert!(!s.in_time(None, t("2024-01-01")), "recorded later");
        assert!(s.in_time(None, t("2019-01-01")));
        assert!(s.in_time(Some(t("2019-06-01")), t("2024-01-01")));
        assert!(!s.in_time(Some(t("2020-06-01")), t("2019-01-01")));
    }

    #[test]
    fn bad_options_name_their_field() {
        let t = |s: &str| crate::time::parse_timestamp(s).unwrap();
        let e = ScopeOptions {
            since: Some(t("2021-01-01")),
            as_of: Some(t("2020-01-01")),
            ..Default::default()
        }
        .scope()
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("since"), "{e}");
        let e = ScopeOptions {
            filter: Some(json!({"user_id": {"near": 1}})),
            ..Default::default()
        }
        .scope()
        .unwrap_err();
        assert!(e.to_string().contains("filter.user_id.near"), "{e}");
    }
}
