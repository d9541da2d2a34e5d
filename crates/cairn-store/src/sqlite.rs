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
        // Memory-mapped reads: a read of a page the cache lacks is a load from the OS's
        // page cache, not a `pread` copying it; reads of a whole space (stats, export)
        // otherwise spent half their CPU in those copies once the file outgrew the page
        // cache, and grew 2.3-2.7x per doubling there (docs/reliability.md). Writes still
        // go through the WAL; SQLite caps the size at its compile-time maximum.
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;
             PRAGMA busy_timeout=10000; PRAGMA secure_delete=ON; PRAGMA cache_size=-65536;
             PRAGMA mmap_size=1099511627776;",
        )
        .map_err(|e| db_err(path.display(), e))?;
        Ok(Self(Arc::new(Mutex::new(conn))))
    }

    /// Opens `path` for reading only, on a data directory that cannot be written: every
    /// write is refused (`SQLITE_READONLY`, told apart by [`db_err`]).
    pub fn open_read_only(path: &Path) -> Result<Self, StoreError> {
        let conn = connect_read_only(path)?;
        conn.execute_batch("PRAGMA cache_size=-65536; PRAGMA mmap_size=1099511627776;")
            .map_err(|e| db_err(path.display(), e))?;
        Ok(Self(Arc::new(Mutex::new(conn))))
    }

    /// A database in memory with `schema`: what a read-only directory that holds no such
    /// file reads (nothing).
    pub fn in_memory(schema: &str) -> Result<Self, StoreError> {
        let conn = Connection::open_in_memory().map_err(|e| db_err("memory", e))?;
        conn.execute_batch(schema)
            .map_err(|e| db_err("memory", e))?;
        Ok(Self(Arc::new(Mutex::new(conn))))
    }

    /// Copies the write-ahead log into the database file and empties it. With
    /// `secure_delete` the database's copy of deleted content is already overwritten, but
    /// the log still holds the pages as they were before (and the original inserts) until
    /// a checkpoint; after this, neither file holds what was deleted.
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        let conn = self.lock();
        // This process holds the only connection, so nothing reads an older snapshot;
        // another process (a `cairn check` beside a server) can, briefly.
        for _ in 0..50 {
            let busy: i64 =
                be(conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0)))?;
            if busy == 0 {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Err(StoreError::Busy(
            "the write-ahead log could not be checkpointed: another process is reading the database".into(),
        ))
    }

    pub fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent (transactions
        // roll back), so a poisoned lock is safe to reuse.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A SQLite error, with a full disk (`SQLITE_FULL`, and the shared-memory file that
/// could not grow) and a read-only file or directory (`SQLITE_READONLY`) told apart.
pub fn db_err(ctx: impl std::fmt::Display, e: rusqlite::Error) -> StoreError {
    use crate::disk::{unwritable, Unwritable};
    use rusqlite::ffi;
    let kind = match &e {
        rusqlite::Error::SqliteFailure(f, _) => match f.code {
            ffi::ErrorCode::DiskFull => Some(Unwritable::Full),
            ffi::ErrorCode::ReadOnly => Some(Unwritable::ReadOnly),
            _ if f.extended_code == ffi::SQLITE_IOERR_SHMSIZE => Some(Unwritable::Full),
            _ => None,
        },
        _ => None,
    };
    match kind {
        Some(kind) => unwritable(kind, format_args!("sqlite ({ctx}): {e}")),
        None => StoreError::Backend(format!("sqlite ({ctx}): {e}")),
    }
}

pub fn be<T>(r: rusqlite::Result<T>) -> Result<T, StoreError> {
    r.map_err(|e| db_err("query", e))
}

/// A connection that only reads `path`, a database in WAL mode on a directory that
/// cannot be written. SQLite reads such a database through its `-shm` index of the
/// write-ahead log, which it cannot create here: with a log left (a process stopped
/// without closing), both files must be there; with none (closed cleanly: everything is
/// in the database file), the file is opened `immutable`, read as it is.
pub fn connect_read_only(path: &Path) -> Result<Connection, StoreError> {
    use rusqlite::OpenFlags;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let wal = std::path::PathBuf::from(format!("{}-wal", path.display()));
    let logged = std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0);
    let conn = if logged {
        Connection::open_with_flags(path, flags)
    } else {
        let uri = format!(
            "file:{}?immutable=1",
            path.display()
                .to_string()
                .replace('%', "%25")
                .replace('?', "%3f")
                .replace('#', "%23")
        );
        Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)
    };
    conn.map_err(|e| db_err(path.display(), e))
}
