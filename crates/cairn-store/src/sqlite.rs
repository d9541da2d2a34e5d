use cairn_core::StoreError;
use rusqlite::Connection;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

/// A SQLite connection shared by the record store and the vector index, so a unit and its
/// vector live in one file and one transaction log.
#[derive(Clone)]
pub struct Shared(Arc<Mutex<Connection>>);

impl Shared {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| crate::io_err(parent, e))?;
        }
        let conn = Connection::open(path).map_err(|e| db_err(path.display(), e))?;
        // WAL + FULL: a commit is on disk when it returns, so an acknowledged write
        // survives a kill or a power cut. secure_delete: forgotten text is overwritten in
        // the file, not left in free pages. A 64 MiB page cache keeps the upper B-tree
        // levels of a large space in memory (recall reads ~200 units by id per call).
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;
             PRAGMA busy_timeout=10000; PRAGMA secure_delete=ON; PRAGMA cache_size=-65536;",
        )
        .map_err(|e| db_err(path.display(), e))?;
        Ok(Self(Arc::new(Mutex::new(conn))))
    }

    pub fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent (transactions
        // roll back), so a poisoned lock is safe to reuse.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub fn db_err(ctx: impl std::fmt::Display, e: rusqlite::Error) -> StoreError {
    StoreError::Backend(format!("sqlite ({ctx}): {e}"))
}

pub fn be<T>(r: rusqlite::Result<T>) -> Result<T, StoreError> {
    r.map_err(|e| db_err("query", e))
}
