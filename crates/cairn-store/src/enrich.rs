//! Stored LLM readings (enrichments) and the per-space enrichment switch, in the records
//! database. Deleting a session (or its space) deletes its enrichments (a trigger; a
//! session rewritten in place by an append keeps them).
use crate::sqlite::{be, Shared};
use cairn_core::{Enrichment, EnrichmentStore, SpaceId, StoreError};
use rusqlite::params;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS enrich_spaces(
    space TEXT PRIMARY KEY REFERENCES spaces(name) ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS enrichments(
    space TEXT NOT NULL REFERENCES spaces(name) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    model TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY(space, session_id, message_id, model));
CREATE TRIGGER IF NOT EXISTS enrichments_follow_sessions AFTER DELETE ON sessions
BEGIN
    DELETE FROM enrichments WHERE space = old.space AND session_id = old.id;
END;
";

/// Enrichments in the records database (`records.sqlite3`).
pub struct SqliteEnrichmentStore {
    db: Shared,
}

impl SqliteEnrichmentStore {
    pub fn new(db: Shared) -> Result<Self, StoreError> {
        be(db.lock().execute_batch(SCHEMA))?;
        Ok(Self { db })
    }

    /// The readings of a data directory that cannot be written (its tables as they are).
    pub fn read_only(db: Shared) -> Self {
        Self { db }
    }
}

impl EnrichmentStore for SqliteEnrichmentStore {
    fn set_enabled(&self, space: &SpaceId, on: bool) -> Result<(), StoreError> {
        let conn = self.db.lock();
        if on {
            let exists: bool = be(conn.query_row(
                "SELECT EXISTS(SELECT 1 FROM spaces WHERE name=?1)",
                params![space.as_str()],
                |r| r.get(0),
            ))?;
            if !exists {
                return Err(StoreError::NoSuchSpace(space.to_string()));
            }
            be(conn.execute(
                "INSERT OR IGNORE INTO enrich_spaces(space) VALUES (?1)",
                params![space.as_str()],
            ))?;
        } else {
            be(conn.execute(
                "DELETE FROM enrich_spaces WHERE space=?1",
                params![space.as_str()],
            ))?;
        }
        Ok(())
    }

    fn enabled_spaces(&self) -> Result<Vec<SpaceId>, StoreError> {
        let conn = self.db.lock();
        let mut stmt = be(conn.prepare("SELECT space FROM enrich_spaces ORDER BY space"))?;
        let names: Vec<String> = be(be(stmt.query_map([], |r| r.get(0)))?.collect())?;
        names.into_iter().map(SpaceId::from_store).collect()
    }

    fn put(&self, e: &Enrichment) -> Result<(), StoreError> {
        let body =
            serde_json::to_string(e).map_err(|e| StoreError::Backend(format!("encode: {e}")))?;
        be(self.db.lock().execute(
            "INSERT OR REPLACE INTO enrichments(space, session_id, message_id, model, body) VALUES (?1,?2,?3,?4,?5)",
            params![e.space.as_str(), e.session_id, e.message_id, e.model, body],
        ))?;
        Ok(())
    }

    fn of_session(&self, space: &SpaceId, session: &str) -> Result<Vec<Enrichment>, StoreError> {
        let conn = self.db.lock();
        let mut stmt = be(conn.prepare(
            "SELECT body FROM enrichments WHERE space=?1 AND session_id=?2 ORDER BY rowid",
        ))?;
        let bodies: Vec<String> =
            be(be(stmt.query_map(params![space.as_str(), session], |r| r.get(0)))?.collect())?;
        bodies
            .iter()
            .map(|b| {
                serde_json::from_str(b).map_err(|e| StoreError::Corrupt(format!("enrichment: {e}")))
            })
            .collect()
    }

    fn forget_message(
        &self,
        space: &SpaceId,
        session: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        be(self.db.lock().execute(
            "DELETE FROM enrichments WHERE space=?1 AND session_id=?2 AND message_id=?3",
            params![space.as_str(), session, message],
        ))?;
        Ok(())
    }
}
