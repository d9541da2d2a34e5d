//! API key rows of an embedded data directory: `keys.sqlite3`, a file of its own beside
//! `records.sqlite3`, so `cairn keys` can create and revoke keys while a server holds the
//! records (keys are read on every request: a change takes effect at once).
use crate::sqlite::db_err;
use cairn_core::{KeyRecords, KeyRow, StoreError};
use rusqlite::{params, Connection, OptionalExtension, Row};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// File name of the key rows inside the data directory.
pub const KEYS_FILE: &str = "keys.sqlite3";

/// The key rows of one data directory.
pub struct SqliteKeyRecords {
    conn: Mutex<Connection>,
    path: PathBuf,
}

const COLUMNS: &str = "id, hash, spaces, read_only, label, created_at, revoked_at, partition";

impl SqliteKeyRecords {
    /// Opens (creating if needed) `keys.sqlite3` in `dir`.
    /// On a directory that cannot be written, the keys it holds are read (none when it
    /// holds no key file) and every change is refused.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| crate::io_err(dir, e))?;
        let path = dir.join(KEYS_FILE);
        let conn = if crate::disk::is_read_only(dir) {
            Self::read_only(&path)?
        } else {
            let conn = Connection::open(&path).map_err(|e| db_err(path.display(), e))?;
            conn.execute_batch(&format!(
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA busy_timeout=5000;
                 PRAGMA secure_delete=ON; {TABLE}"
            ))
            .map_err(|e| db_err(path.display(), e))?;
            add_partition_column(&conn).map_err(|e| db_err(path.display(), e))?;
            conn
        };
        Ok(Self {
            conn: Mutex::new(conn),
            path,
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic mid-statement leaves SQLite consistent (the statement rolls back).
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        db_err(self.path.display(), e)
    }
}

/// Files made before keys could be pinned to a partition gain its column (NULL: not
/// pinned), so their keys keep working.
const TABLE: &str = "CREATE TABLE IF NOT EXISTS keys(
    id TEXT PRIMARY KEY, hash BLOB NOT NULL, spaces TEXT NOT NULL,
    read_only INTEGER NOT NULL, label TEXT, created_at TEXT NOT NULL,
    revoked_at TEXT, partition TEXT);";

impl SqliteKeyRecords {
    fn read_only(path: &Path) -> Result<Connection, StoreError> {
        if path.exists() {
            return crate::sqlite::connect_read_only(path);
        }
        let conn = Connection::open_in_memory().map_err(|e| db_err("memory", e))?;
        conn.execute_batch(TABLE).map_err(|e| db_err("memory", e))?;
        Ok(conn)
    }
}

fn add_partition_column(conn: &Connection) -> rusqlite::Result<()> {
    let has: bool = conn.query_row(
        "SELECT COUNT(*) > 0 FROM pragma_table_info('keys') WHERE name = 'partition'",
        [],
        |r| r.get(0),
    )?;
    if !has {
        conn.execute_batch("ALTER TABLE keys ADD COLUMN partition TEXT")?;
    }
    Ok(())
}

fn row(r: &Row<'_>) -> rusqlite::Result<(KeyRow, String)> {
    Ok((
        KeyRow {
            id: r.get(0)?,
            hash: r.get(1)?,
            spaces: Vec::new(),
            read_only: r.get(3)?,
            label: r.get(4)?,
            created_at: r.get(5)?,
            revoked_at: r.get(6)?,
            partition: r.get(7)?,
        },
        r.get(2)?,
    ))
}

/// The row with its space list decoded (stored as a JSON array).
fn decoded((mut k, spaces): (KeyRow, String)) -> Result<KeyRow, StoreError> {
    k.spaces = serde_json::from_str(&spaces)
        .map_err(|e| StoreError::Corrupt(format!("key {}: space list: {e}", k.id)))?;
    Ok(k)
}

impl KeyRecords for SqliteKeyRecords {
    fn insert(&self, k: &KeyRow) -> Result<(), StoreError> {
        let spaces = serde_json::to_string(&k.spaces)
            .map_err(|e| StoreError::Backend(format!("key {}: {e}", k.id)))?;
        self.conn()
            .execute(
                "INSERT INTO keys(id, hash, spaces, read_only, label, created_at, revoked_at,
                                  partition)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    k.id,
                    k.hash,
                    spaces,
                    k.read_only,
                    k.label,
                    k.created_at,
                    k.revoked_at,
                    k.partition
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    fn list(&self) -> Result<Vec<KeyRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM keys ORDER BY created_at, id"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], row)
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        rows.into_iter().map(decoded).collect()
    }

    fn revoke(&self, id: &str, at: &str) -> Result<bool, StoreError> {
        let n = self
            .conn()
            .execute(
                "UPDATE keys SET revoked_at=?2 WHERE id=?1 AND revoked_at IS NULL",
                params![id, at],
            )
            .map_err(|e| self.err(e))?;
        Ok(n > 0)
    }

    fn live(&self, id: &str) -> Result<Option<KeyRow>, StoreError> {
        self.conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM keys WHERE id=?1 AND revoked_at IS NULL"),
                params![id],
                row,
            )
            .optional()
            .map_err(|e| self.err(e))?
            .map(decoded)
            .transpose()
    }
}
