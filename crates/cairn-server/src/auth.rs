//! API keys and who may touch which space.
//!
//! A key is `cairn_<id>_<secret>`: `id` (12 hex digits) is public and finds the row,
//! `secret` is 32 random bytes. Only SHA-256 of the whole token is stored, compared in
//! constant time; the token itself is shown once, on creation. The rows live in the
//! storage backend (`cairn::KeyRecords`: `keys.sqlite3` in an embedded data directory,
//! PostgreSQL's `api_keys` shared by every server) and are read on every request, so keys
//! created or revoked by `cairn keys` while the server runs take effect at once.
//!
//! A key may be **pinned to an end-user partition** (`{"user_id":"u1"}`): a chat product
//! that keeps its users in one space gives each user's agent such a key, and the scope is
//! no longer the caller's to remember. A route takes a pinned key only through
//! [`Principal::require_in`], which hands it the [`Pin`] to apply: reads are scoped to the
//! partition whatever the request says, writes are tagged with it (naming another value
//! is refused), a record outside it is answered as absent. Every other route refuses a
//! pinned key ([`Principal::require`]), so a route cannot leak by forgetting the pin.
use crate::error::{ApiError, ServerError};
use axum::http::StatusCode;
use cairn::{KeyRecords, KeyRow};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// Shortest admin key accepted: anything shorter is guessable.
pub const MIN_ADMIN_KEY_LEN: usize = 24;

/// Which spaces a caller may see.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Every space (the admin key, or a server run without auth on loopback).
    All,
    /// Only these spaces.
    Spaces(Vec<String>),
}

/// What an authenticated request may do. Inserted into request extensions by the auth
/// middleware; every handler that names a space checks it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Principal {
    /// Key id, `admin`, or `local` (stdio MCP / no-auth server).
    pub key_id: String,
    pub access: Access,
    pub read_only: bool,
    /// The end-user partition the key is pinned to (see the module docs).
    #[serde(serialize_with = "partition_json")]
    pub partition: Option<cairn::Partition>,
}

fn partition_json<S: serde::Serializer>(
    p: &Option<cairn::Partition>,
    s: S,
) -> Result<S::Ok, S::Error> {
    p.as_ref().map(cairn::Partition::to_value).serialize(s)
}

/// What a pinned key adds to every request of a route that takes one (see the module
/// docs); nothing for any other key.
#[derive(Debug, Clone, Default)]
pub struct Pin(Option<cairn::Partition>);

impl Pin {
    /// The partition, if the key is pinned.
    pub fn partition(&self) -> Option<&cairn::Partition> {
        self.0.as_ref()
    }

    /// A read's scope held inside the partition. A request that names a partition itself
    /// must name the key's own (it learns nothing of another).
    pub fn scope(&self, mut o: cairn::ScopeOptions) -> Result<cairn::ScopeOptions, ApiError> {
        let Some(p) = &self.0 else {
            return Ok(o);
        };
        if let Some(asked) = &o.partition {
            self.admits(&cairn::Partition::parse(asked).map_err(cairn::Error::from)?)?;
        }
        o.partition = Some(p.to_value());
        Ok(o)
    }

    /// Refuses a partition a pinned key may not name: any but its own (`403
    /// outside_partition`). Any partition for a key that is not pinned.
    pub fn admits(&self, asked: &cairn::Partition) -> Result<(), ApiError> {
        match &self.0 {
            Some(p) if p != asked => Err(outside()),
            _ => Ok(()),
        }
    }

    /// A written session's metadata tagged with the partition (see
    /// [`cairn::Partition::stamp`]).
    pub fn metadata(&self, m: serde_json::Value) -> Result<serde_json::Value, ApiError> {
        match &self.0 {
            None => Ok(m),
            Some(p) => Ok(p.stamp(&m).map_err(cairn::Error::from)?),
        }
    }

    /// Whether a session with this metadata is the caller's to see.
    pub fn holds(&self, metadata: &serde_json::Value) -> bool {
        self.0.as_ref().is_none_or(|p| p.holds(metadata))
    }

    /// Whether a unit is the caller's to see: its session's partition (stamped on the
    /// unit) is in the pin's. A trajectory's units belong to no partition.
    pub fn holds_unit(&self, u: &cairn::Unit) -> bool {
        let Some(p) = &self.0 else {
            return true;
        };
        u.provenance
            .partition
            .as_deref()
            .and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok())
            .is_some_and(|m| p.holds(&m))
    }
}

/// The refusal of a request that names a partition other than its key's.
fn outside() -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "outside_partition",
        "this key is pinned to a partition; the request names another",
    )
}

/// What a request needs of a space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    Read,
    Write,
}

impl Principal {
    pub fn admin(name: &str) -> Self {
        Self {
            key_id: name.to_string(),
            access: Access::All,
            read_only: false,
            partition: None,
        }
    }

    pub fn can_see(&self, space: &str) -> bool {
        match &self.access {
            Access::All => true,
            Access::Spaces(s) => s.iter().any(|x| x == space),
        }
    }

    /// Refuses with 403 unless the caller may do `need` in `space` with the whole space in
    /// view: a key pinned to a partition is refused (`pinned_key`), as on every route that
    /// has no partition-aware form.
    pub fn require(&self, space: &str, need: Need) -> Result<(), ApiError> {
        self.require_in(space, need)?;
        if self.partition.is_some() {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "pinned_key",
                "this key is pinned to a partition and this request reads or writes the whole space",
            ));
        }
        Ok(())
    }

    /// Refuses with 403 unless the caller may do `need` in `space`; the [`Pin`] is what the
    /// route must apply. A space outside the key's list is refused the same way whether or
    /// not it exists, so a key cannot probe for other tenants' spaces.
    pub fn require_in(&self, space: &str, need: Need) -> Result<Pin, ApiError> {
        if !self.can_see(space) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                format!("this key has no access to space {space:?}"),
            ));
        }
        if need == Need::Write && self.read_only {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "read_only_key",
                "this key is read-only",
            ));
        }
        Ok(Pin(self.partition.clone()))
    }
}

/// A key as listed (never with its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct KeyInfo {
    pub id: String,
    pub spaces: Vec<String>,
    pub read_only: bool,
    /// The end-user partition the key is pinned to (`{"user_id":"u1"}`), if any.
    #[schema(value_type = Option<Object>)]
    pub partition: Option<serde_json::Value>,
    pub label: Option<String>,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

/// A key just created: the only moment its token exists outside the caller's hands.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct NewKey {
    pub token: String,
    #[serde(flatten)]
    pub info: KeyInfo,
}

/// The key store: the rows of the memory's storage backend (`keys.sqlite3` in an
/// embedded data directory; PostgreSQL's `api_keys`, shared by every server on the
/// database). This file makes tokens and checks them; the backend keeps the rows.
pub struct KeyStore {
    records: Arc<dyn KeyRecords>,
}

fn hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn random(n: usize) -> Result<Vec<u8>, ServerError> {
    let mut buf = vec![0u8; n];
    getrandom::fill(&mut buf).map_err(|e| ServerError::Random(e.to_string()))?;
    Ok(buf)
}

/// Compares two secrets in constant time (through their hashes, so lengths leak nothing).
pub fn secrets_equal(a: &str, b: &str) -> bool {
    hash(a).ct_eq(&hash(b)).into()
}

impl KeyStore {
    /// The key rows of the embedded data directory `dir` (`keys.sqlite3`).
    pub fn open(dir: &Path) -> Result<Self, ServerError> {
        Ok(Self::with_records(cairn::Memory::embedded_key_records(
            dir,
        )?))
    }

    /// Keys kept by a storage backend ([`cairn::Memory::key_records`],
    /// [`cairn::Memory::postgres_key_records`]).
    pub fn with_records(records: Arc<dyn KeyRecords>) -> Self {
        Self { records }
    }

    /// The keys of `memory`'s store.
    pub fn for_memory(memory: &cairn::Memory) -> Self {
        Self::with_records(memory.key_records())
    }

    /// Creates a key for `spaces` (at least one; names are validated as space names),
    /// pinned to `partition` when given (checked as [`cairn::Partition::parse`]).
    pub fn create(
        &self,
        spaces: &[String],
        read_only: bool,
        label: Option<&str>,
        partition: Option<&serde_json::Value>,
    ) -> Result<NewKey, ServerError> {
        if spaces.is_empty() {
            return Err(ServerError::Config(
                "a key needs at least one --space".into(),
            ));
        }
        for s in spaces {
            cairn::SpaceId::new(s.as_str()).map_err(|e| ServerError::Config(e.to_string()))?;
        }
        let partition = partition
            .map(cairn::Partition::parse)
            .transpose()
            .map_err(|e| ServerError::Config(e.to_string()))?
            .map(|p| p.to_value());
        let id = hex::encode(&random(6)?);
        let token = format!("cairn_{id}_{}", hex::encode(&random(32)?));
        let created_at = chrono::Utc::now().to_rfc3339();
        self.records.insert(&KeyRow {
            id: id.clone(),
            hash: hash(&token).to_vec(),
            spaces: spaces.to_vec(),
            read_only,
            label: label.map(str::to_string),
            created_at: created_at.clone(),
            revoked_at: None,
            partition: partition.as_ref().map(|p| p.to_string()),
        })?;
        Ok(NewKey {
            token,
            info: KeyInfo {
                id,
                spaces: spaces.to_vec(),
                read_only,
                partition,
                label: label.map(str::to_string),
                created_at,
                revoked_at: None,
            },
        })
    }

    pub fn list(&self) -> Result<Vec<KeyInfo>, ServerError> {
        Ok(self
            .records
            .list()?
            .into_iter()
            .map(|k| KeyInfo {
                partition: k
                    .partition
                    .as_deref()
                    .and_then(|j| serde_json::from_str(j).ok()),
                id: k.id,
                spaces: k.spaces,
                read_only: k.read_only,
                label: k.label,
                created_at: k.created_at,
                revoked_at: k.revoked_at,
            })
            .collect())
    }

    /// Revokes a key by id; false if no live key has that id.
    pub fn revoke(&self, id: &str) -> Result<bool, ServerError> {
        let at = chrono::Utc::now().to_rfc3339();
        Ok(self.records.revoke(id, &at)?)
    }

    /// The principal of a live key, or None for anything else (unknown, revoked,
    /// malformed: the caller answers 401 alike).
    pub fn authenticate(&self, token: &str) -> Result<Option<Principal>, ServerError> {
        let Some(id) = token
            .strip_prefix("cairn_")
            .and_then(|rest| rest.split_once('_'))
            .map(|(id, _)| id)
        else {
            return Ok(None);
        };
        let Some(row) = self.records.live(id)? else {
            return Ok(None);
        };
        if !bool::from(row.hash.as_slice().ct_eq(&hash(token)[..])) {
            return Ok(None);
        }
        // A stored pin that no longer reads as one fails closed: the key is refused, never
        // widened to its whole spaces.
        let partition = match row.partition.as_deref() {
            None => None,
            Some(j) => Some(
                serde_json::from_str(j)
                    .ok()
                    .and_then(|v| cairn::Partition::parse(&v).ok())
                    .ok_or_else(|| {
                        ServerError::Config(format!("key {id}: its partition {j:?} is unreadable"))
                    })?,
            ),
        };
        Ok(Some(Principal {
            key_id: id.to_string(),
            access: Access::Spaces(row.spaces),
            read_only: row.read_only,
            partition,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_hashed_scoped_and_revocable() {
        let dir = tempfile::tempdir().unwrap();
        let ks = KeyStore::open(dir.path()).unwrap();
        let k = ks
            .create(&["alice".into()], true, Some("bot"), None)
            .unwrap();
        let p = ks.authenticate(&k.token).unwrap().unwrap();
        assert_eq!(p.access, Access::Spaces(vec!["alice".into()]));
        assert!(p.read_only);
        assert!(p.require("alice", Need::Read).is_ok());
        assert_eq!(
            p.require("alice", Need::Write).unwrap_err().code,
            "read_only_key"
        );
        assert_eq!(p.require("bob", Need::Read).unwrap_err().code, "forbidden");
        // A wrong secret with a right id is refused.
        let forged = format!("cairn_{}_{}", k.info.id, "0".repeat(64));
        assert!(ks.authenticate(&forged).unwrap().is_none());
        assert!(ks.authenticate("garbage").unwrap().is_none());
        // The token is not in the file.
        let raw = std::fs::read(dir.path().join(cairn::KEYS_FILE)).unwrap();
        let secret = k.token.rsplit('_').next().unwrap();
        assert!(!String::from_utf8_lossy(&raw).contains(secret));
        assert!(ks.revoke(&k.info.id).unwrap());
        assert!(ks.authenticate(&k.token).unwrap().is_none());
        assert!(!ks.revoke(&k.info.id).unwrap());
        assert!(ks.create(&[], false, None, None).is_err());
        assert!(ks.create(&["a/b".into()], false, None, None).is_err());
        assert!(secrets_equal("abc", "abc") && !secrets_equal("abc", "abd"));
    }

    #[test]
    fn a_pinned_key_is_refused_where_the_whole_space_is_read_and_pins_its_reads() {
        let dir = tempfile::tempdir().unwrap();
        let ks = KeyStore::open(dir.path()).unwrap();
        let pin = serde_json::json!({"user_id": "u1"});
        let k = ks.create(&["app".into()], false, None, Some(&pin)).unwrap();
        assert_eq!(k.info.partition, Some(pin.clone()));
        assert_eq!(ks.list().unwrap()[0].partition, Some(pin.clone()));
        let p = ks.authenticate(&k.token).unwrap().unwrap();
        assert_eq!(p.require("app", Need::Read).unwrap_err().code, "pinned_key");
        let held = p.require_in("app", Need::Read).unwrap();
        let scope = held.scope(cairn::ScopeOptions::default()).unwrap();
        assert_eq!(scope.partition, Some(pin.clone()));
        let other = cairn::ScopeOptions {
            partition: Some(serde_json::json!({"user_id": "u2"})),
            ..Default::default()
        };
        assert_eq!(held.scope(other).unwrap_err().code, "outside_partition");
        let tagged = held
            .metadata(serde_json::json!({"source": "chat"}))
            .unwrap();
        assert_eq!(
            tagged,
            serde_json::json!({"source": "chat", "user_id": "u1"})
        );
        assert!(held.metadata(serde_json::json!({"user_id": "u2"})).is_err());
        assert!(held.holds(&serde_json::json!({"user_id": "u1", "agent_id": "a"})));
        assert!(!held.holds(&serde_json::json!({"user_id": "u2"})));
        assert!(!held.holds(&serde_json::Value::Null));
        // A partition must name partition keys.
        let bad = serde_json::json!({"userid": "u1"});
        assert!(ks.create(&["app".into()], false, None, Some(&bad)).is_err());
    }
}
