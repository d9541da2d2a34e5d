//! The record store's SQLite schema: its tables, the migrations between versions, and the
//! triggers that count each space's writes and log every unit removed.
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS spaces(name TEXT PRIMARY KEY, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions(
    space TEXT NOT NULL REFERENCES spaces(name) ON DELETE CASCADE,
    id TEXT NOT NULL,
    ord INTEGER NOT NULL,
    recorded_at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY(space, id));
CREATE TABLE IF NOT EXISTS units(
    space TEXT NOT NULL REFERENCES spaces(name) ON DELETE CASCADE,
    id TEXT NOT NULL,
    session_id TEXT,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    topic TEXT,
    trajectory_id TEXT,
    kind TEXT,
    occurred_us INTEGER,
    position INTEGER,
    text TEXT,
    long_key TEXT,
    PRIMARY KEY(space, id));
CREATE INDEX IF NOT EXISTS units_by_seq ON units(seq);
CREATE INDEX IF NOT EXISTS units_by_session ON units(space, session_id);
-- A new session's place is MAX(ord) + 1: without this index that read every session body
-- of the space on every write.
CREATE INDEX IF NOT EXISTS sessions_by_order ON sessions(space, ord);
INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', '6'), ('last_seq', '0');
";

/// Schema changes, in order: `MIGRATIONS[i]` takes version `i + 1` to `i + 2`. Each runs
/// in one transaction. Units made by older derivation rules are re-derived by the engine
/// (the derive version is unknown after a migration).
pub(crate) const MIGRATIONS: &[&str] = &[
    "ALTER TABLE units ADD COLUMN topic TEXT;
     UPDATE meta SET value='2' WHERE key='schema_version';
     DELETE FROM meta WHERE key='derive_version';",
    "ALTER TABLE units ADD COLUMN trajectory_id TEXT;
     UPDATE meta SET value='3' WHERE key='schema_version';
     DELETE FROM meta WHERE key='derive_version';",
    // Listing columns (filled by the re-derivation the unknown derive version causes)
    // and request receipts.
    "ALTER TABLE units ADD COLUMN kind TEXT;
     ALTER TABLE units ADD COLUMN occurred_us INTEGER;
     ALTER TABLE units ADD COLUMN position INTEGER;
     UPDATE meta SET value='4' WHERE key='schema_version';
     DELETE FROM meta WHERE key='derive_version';",
    // A unit's text in a column of its own, after the body, so that reading what recall
    // ranks by never reads it (see `UNIT_COLUMNS`). Rows written before keep their text
    // in the body (the column is NULL) and read the same.
    "ALTER TABLE units ADD COLUMN text TEXT;
     UPDATE meta SET value='5' WHERE key='schema_version';",
    // A key longer than its head in a column of its own, the body keeping the head, so
    // that the lean read recall ranks by decodes a bounded body (a turn's key is its
    // whole text). Rows written before keep their whole key in the body (NULL here).
    "ALTER TABLE units ADD COLUMN long_key TEXT;
     UPDATE meta SET value='6' WHERE key='schema_version';",
];
pub(crate) const SCHEMA_VERSION: &str = "6";

/// Indexes on columns that migrations add, and tables added after version 1.
pub(crate) const LATE_INDEXES: &str = "
CREATE INDEX IF NOT EXISTS units_by_topic ON units(space, topic) WHERE topic IS NOT NULL;
CREATE INDEX IF NOT EXISTS units_by_trajectory ON units(space, trajectory_id)
    WHERE trajectory_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS units_listed ON units(space, occurred_us, session_id, position, id);
-- A recall asking for kinds (a trajectory inspection: slices, events, notes) counts them
-- here before it searches: without it, such a recall of a space without them scanned it.
CREATE INDEX IF NOT EXISTS units_by_kind ON units(space, kind);
CREATE TABLE IF NOT EXISTS receipts(
    space TEXT NOT NULL REFERENCES spaces(name) ON DELETE CASCADE,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    response TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    PRIMARY KEY(space, key));";

/// Each space's write count, moved by the database itself on every row of the space
/// written or removed (see [`RecordStore::generation`]): caches of a space's derived
/// state compare it, so a write to one space leaves every other space's caches warm, and
/// no write path can forget to move it. Triggers, not code in each write function.
///
/// [`RecordStore::generation`]: cairn_core::RecordStore::generation
pub(crate) const SPACE_WRITES: &str = "
CREATE TABLE IF NOT EXISTS space_writes(space TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;";

/// Every unit removed, by whatever statement (a forget, a re-derivation's stale units, a
/// trajectory written again, a dropped space's cascade), logged in the removal's own
/// transaction with a sequence number of its own from `last_seq`: the text index and the
/// vectors are separate commits after it, so a process killed between them leaves their
/// watermarks behind this number, and healing on open removes the unit from them (see
/// [`RecordStore::removals_since`]). A trigger, so that no write path can forget it.
/// `INSERT OR REPLACE` of a unit fires no delete trigger (`recursive_triggers` is off):
/// a unit written again is not removed. Ids only, never text; pruned once both
/// watermarks have passed.
///
/// [`RecordStore::removals_since`]: cairn_core::RecordStore::removals_since
pub(crate) const UNIT_REMOVALS: &str = "
CREATE TABLE IF NOT EXISTS unit_removals(
    seq INTEGER PRIMARY KEY,
    space TEXT NOT NULL,
    unit_id TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS units_delete_logged AFTER DELETE ON units BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'last_seq';
    INSERT INTO unit_removals(seq, space, unit_id)
        SELECT CAST(value AS INTEGER), OLD.space, OLD.id FROM meta WHERE key = 'last_seq';
END;";

/// The triggers of [`SPACE_WRITES`], one per table and event. No conflict clause in
/// their bodies: SQLite applies the outer statement's instead (the `INSERT OR REPLACE`
/// of a unit would make an `INSERT OR IGNORE` here replace the count with 0).
pub(crate) fn space_write_triggers() -> String {
    let mut sql = String::new();
    for (table, space) in [
        ("spaces", "name"),
        ("sessions", "space"),
        ("units", "space"),
        ("trajectories", "space"),
    ] {
        for (event, row) in [("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD")] {
            let name = format!("{table}_{}_counted", event.to_lowercase());
            sql.push_str(&format!(
                "CREATE TRIGGER IF NOT EXISTS {name} AFTER {event} ON {table} BEGIN
                   INSERT INTO space_writes(space, n) SELECT {row}.{space}, 0
                     WHERE NOT EXISTS (SELECT 1 FROM space_writes WHERE space = {row}.{space});
                   UPDATE space_writes SET n = n + 1 WHERE space = {row}.{space};
                 END;\n"
            ));
        }
    }
    sql
}
