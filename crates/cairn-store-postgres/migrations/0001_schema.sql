-- Cairn's PostgreSQL schema, version 1. Every table that holds data of a space has the
-- space as the leading column of its primary key and references `spaces` (ON DELETE
-- CASCADE), so the schema can be distributed by space id unchanged (e.g. Citus
-- `create_distributed_table(..., 'space')`). Two tables are store-wide by design:
-- `cairn_meta` (sequence counter, watermarks, versions) and `embedding_cache` (shared by
-- all spaces, keyed by model and text hash); they would be reference tables.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE cairn_meta(
    key text COLLATE "C" PRIMARY KEY,
    num bigint NOT NULL DEFAULT 0,
    txt text NOT NULL DEFAULT '');
INSERT INTO cairn_meta(key) VALUES
    ('last_seq'), ('derive_version'), ('text_watermark'), ('vector_watermark'), ('vector_model');

CREATE TABLE spaces(
    space text COLLATE "C" PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now());

CREATE TABLE sessions(
    space text COLLATE "C" NOT NULL REFERENCES spaces(space) ON DELETE CASCADE,
    id text COLLATE "C" NOT NULL,
    ord bigint NOT NULL,
    recorded_at text NOT NULL,
    body text NOT NULL,
    PRIMARY KEY(space, id));

CREATE TABLE units(
    space text COLLATE "C" NOT NULL REFERENCES spaces(space) ON DELETE CASCADE,
    id text COLLATE "C" NOT NULL,
    kind text NOT NULL,
    session_id text COLLATE "C",
    trajectory_id text COLLATE "C",
    topic text COLLATE "C",
    seq bigint NOT NULL,
    body text NOT NULL,
    PRIMARY KEY(space, id));
CREATE INDEX units_by_seq ON units(seq);
CREATE INDEX units_by_space_seq ON units(space, seq);
CREATE INDEX units_by_session ON units(space, session_id);
CREATE INDEX units_by_topic ON units(space, topic) WHERE topic IS NOT NULL;
CREATE INDEX units_by_trajectory ON units(space, trajectory_id) WHERE trajectory_id IS NOT NULL;

CREATE TABLE trajectories(
    space text COLLATE "C" NOT NULL REFERENCES spaces(space) ON DELETE CASCADE,
    id text COLLATE "C" NOT NULL,
    ord bigint NOT NULL,
    recorded_at text NOT NULL,
    summary text NOT NULL,
    body bytea NOT NULL,
    PRIMARY KEY(space, id));
-- Observations are stored once per space and distinct text (gzip), keyed by SHA-256.
CREATE TABLE observations(
    space text COLLATE "C" NOT NULL REFERENCES spaces(space) ON DELETE CASCADE,
    hash text COLLATE "C" NOT NULL,
    body bytea NOT NULL,
    PRIMARY KEY(space, hash));
CREATE TABLE trajectory_observations(
    space text COLLATE "C" NOT NULL REFERENCES spaces(space) ON DELETE CASCADE,
    trajectory_id text COLLATE "C" NOT NULL,
    hash text COLLATE "C" NOT NULL,
    PRIMARY KEY(space, trajectory_id, hash));
CREATE INDEX trajectory_observations_by_hash ON trajectory_observations(space, hash);

-- The lexical index: one row per searchable unit, key weighted A, full text weighted B.
CREATE TABLE text_entries(
    space text COLLATE "C" NOT NULL REFERENCES spaces(space) ON DELETE CASCADE,
    unit_id text COLLATE "C" NOT NULL,
    kind text NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    tsv tsvector NOT NULL,
    PRIMARY KEY(space, unit_id));
CREATE INDEX text_entries_tsv ON text_entries USING gin(tsv);

-- Unit vectors. The column has no fixed dimension; the store creates the HNSW index
-- for the embedding model's dimension when it opens (`vectors_hnsw_<dim>`).
CREATE TABLE vectors(
    space text COLLATE "C" NOT NULL REFERENCES spaces(space) ON DELETE CASCADE,
    unit_id text COLLATE "C" NOT NULL,
    vec vector NOT NULL,
    PRIMARY KEY(space, unit_id));

CREATE TABLE embedding_cache(
    model text COLLATE "C" NOT NULL,
    key bytea NOT NULL,
    vec bytea NOT NULL,
    PRIMARY KEY(model, key));

CREATE TABLE enrich_spaces(
    space text COLLATE "C" PRIMARY KEY REFERENCES spaces(space) ON DELETE CASCADE);
CREATE TABLE enrichments(
    space text COLLATE "C" NOT NULL REFERENCES spaces(space) ON DELETE CASCADE,
    session_id text COLLATE "C" NOT NULL,
    message_id text COLLATE "C" NOT NULL,
    model text COLLATE "C" NOT NULL,
    n bigserial NOT NULL,
    body text NOT NULL,
    PRIMARY KEY(space, session_id, message_id, model));
-- Deleting a session deletes its enrichments (an append rewrites the row in place and
-- keeps them).
CREATE FUNCTION enrichments_follow_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM enrichments WHERE space = OLD.space AND session_id = OLD.id;
    RETURN OLD;
END $$;
CREATE TRIGGER enrichments_follow_sessions AFTER DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION enrichments_follow_sessions();
