//! The record store's handle, apart from its parts (`records.rs`: sessions and units,
//! `trajectories.rs`: trajectory rows), so each part can name it without the other.
use crate::PgStore;

/// Sessions, trajectories and units in PostgreSQL.
pub struct PgRecordStore {
    pub(crate) db: PgStore,
}

impl PgRecordStore {
    pub fn new(db: PgStore) -> Self {
        Self { db }
    }
}
