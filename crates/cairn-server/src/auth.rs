//! API keys and who may touch which space.
//!
//! A key is `cairn_<id>_<secret>`: `id` (12 hex digits) is public and finds the row,
//! `secret` is 32 random bytes. Only SHA-256 of the whole token is stored, compared in
//! constant time; the token itself is shown once, on creation. The rows live in the
//! storage backend (`cairn::KeyRecords`: `keys.sqlite3` in an embedded data directory,
//! PostgreSQL's `api_keys` shared by every server) and are read on every request, so keys
//! created or revoked by `cairn keys` while the server runs take effect at once.
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
        }
    }

    pub fn can_see(&self, space: &str) -> bool {
        match &self.access {
            Access::All => true,
            Access::Spaces(s) => s.iter().any(|x| x == space),
        }
    }

    /// Refuses with 403 unless the caller may do `need` in `space`. A space outside the
    /// key's list is refused the same way whether or not it exists, so a key cannot probe
    /// for other tenants' spaces.
    pub fn require(&self, space: &str, need: Need) -> Result<(), ApiError> {
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
        Ok(())
    }
}

/// A key as listed (never with its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyInfo {
    pub id: String,
    pub spaces: Vec<String>,
    pub read_only: bool,
    pub label: Option<String>,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

/// A key just created: the only moment its token exists outside the caller's hands.
#[derive(Debug, Clone, Serialize)]
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

    /// Creates a key for `spaces` (at least one; names are validated as space names).
    pub fn create(
        &self,
        spaces: &[String],
        read_only: bool,
        label: Option<&str>,
    ) -> Result<NewKey, ServerError> {
        if spaces.is_empty() {
            return Err(ServerError::Config(
                "a key needs at least one --space".into(),
            ));
        }
        for s in spaces {
            cairn::SpaceId::new(s.as_str()).map_err(|e| ServerError::Config(e.to_string()))?;
        }
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
        })?;
        Ok(NewKey {
            token,
            info: KeyInfo {
                id,
                spaces: spaces.to_vec(),
                read_only,
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
        let row = self
            .records
            .live(id)?
            .map(|k| (k.hash, k.spaces, k.read_only));
        let Some((stored, spaces, read_only)) = row else {
            return Ok(None);
        };
        if !bool::from(stored.as_slice().ct_eq(&hash(token)[..])) {
            return Ok(None);
        }
        Ok(Some(Principal {
            key_id: id.to_string(),
            access: Access::Spaces(spaces),
            read_only,
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
        let k = ks.create(&["alice".into()], true, Some("bot")).unwrap();
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
        assert!(ks.create(&[], false, None).is_err());
        assert!(ks.create(&["a/b".into()], false, None).is_err());
        assert!(secrets_equal("abc", "abc") && !secrets_equal("abc", "abd"));
    }
}
