-- Each space's write count (`RecordStore::generation`), moved by the database itself on
-- every statement that writes or removes rows of the space, so every server's caches of
-- a space's derived state go stale exactly when that space changes: a write to one space
-- leaves every other space's caches warm, and no write path can forget to move it.
-- Statement-level triggers: one upsert per space a statement touches, not one per row.
CREATE TABLE space_writes(
    space text COLLATE "C" PRIMARY KEY,
    n bigint NOT NULL);

CREATE FUNCTION cairn_count_space_writes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        EXECUTE format(
            'INSERT INTO space_writes(space, n) SELECT %I, 1 FROM touched GROUP BY 1
             ON CONFLICT (space) DO UPDATE SET n = space_writes.n + 1', TG_ARGV[0]);
    ELSE
        EXECUTE format(
            'INSERT INTO space_writes(space, n) SELECT %I, 1 FROM gone GROUP BY 1
             ON CONFLICT (space) DO UPDATE SET n = space_writes.n + 1', TG_ARGV[0]);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER spaces_insert_counted AFTER INSERT ON spaces REFERENCING NEW TABLE AS touched
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes('space');
CREATE TRIGGER spaces_update_counted AFTER UPDATE ON spaces REFERENCING NEW TABLE AS touched
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes('space');
CREATE TRIGGER spaces_delete_counted AFTER DELETE ON spaces REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes('space');
CREATE TRIGGER sessions_insert_counted AFTER INSERT ON sessions REFERENCING NEW TABLE AS touched
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes('space');
CREATE TRIGGER sessions_update_counted AFTER UPDATE ON sessions REFERENCING NEW TABLE AS touched
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes('space');
CREATE TRIGGER sessions_delete_counted AFTER DELETE ON sessions REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes('space');
CREATE TRIGGER units_insert_counted AFTER INSERT ON units REFERENCING NEW TABLE AS touched
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes('space');
CREATE TRIGGER units_update_counted AFTER UPDATE ON units REFERENCING NEW TABLE AS touched
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes('space');
CREATE TRIGGER units_delete_counted AFTER DELETE ON units REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes('space');
CREATE TRIGGER trajectories_insert_counted AFTER INSERT ON trajectories REFERENCING NEW TABLE AS touched
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes('space');
CREATE TRIGGER trajectories_update_counted AFTER UPDATE ON trajectories REFERENCING NEW TABLE AS touched
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes('space');
CREATE TRIGGER trajectories_delete_counted AFTER DELETE ON trajectories REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes('space');
