-- Unit listings filtered and paged by the database (occurrence time and position as
-- columns), and request receipts (idempotent writes). The units' new columns are filled
-- by the re-derivation that the reset derive version causes on the next open.
ALTER TABLE units ADD COLUMN occurred_us bigint;
ALTER TABLE units ADD COLUMN position bigint;
CREATE INDEX units_listed ON units(space, occurred_us, session_id, position, id);
UPDATE cairn_meta SET num = 0 WHERE key = 'derive_version';

CREATE TABLE receipts(
    space text COLLATE "C" NOT NULL REFERENCES spaces(space) ON DELETE CASCADE,
    key text COLLATE "C" NOT NULL,
    fingerprint text NOT NULL,
    response text NOT NULL,
    -- RFC 3339, UTC, microseconds: fixed width, so text order is time order.
    recorded_at text NOT NULL,
    PRIMARY KEY(space, key));
