-- Each space's write count (`RecordStore::generation`), moved by the database itself on
-- every statement that writes or removes rows of the space, so every server's caches of
-- a space's derived state go stale exactly when that space changes: a write to one space
-- leaves every other space's caches warm, and no write path can forget to move it.
-- Statement-level triggers: one upsert per space a statement touches, not one per row.
CREATE TABLE space_writes(
    space text COLLATE "C" PRIMARY KEY,
    n bigint NOT NULL);

-- Counts the spaces of the rows a statement wrote or removed: every trigger below names
-- its transition table `changed` (the NEW TABLE of an insert or update, the OLD TABLE of
-- a delete), so one function serves them all.
CREATE FUNCTION cairn_count_space_writes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO space_writes(space, n) SELECT DISTINCT space, 1 FROM changed
        ON CONFLICT (space) DO UPDATE SET n = space_writes.n + 1;
    RETURN NULL;
END $$;

-- A trigger with transition tables takes one event, so three per table.
CREATE TRIGGER spaces_insert_counted AFTER INSERT ON spaces REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes();
CREATE TRIGGER spaces_update_counted AFTER UPDATE ON spaces REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes();
CREATE TRIGGER spaces_delete_counted AFTER DELETE ON spaces REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes();
CREATE TRIGGER sessions_insert_counted AFTER INSERT ON sessions REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes();
CREATE TRIGGER sessions_update_counted AFTER UPDATE ON sessions REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes();
CREATE TRIGGER sessions_delete_counted AFTER DELETE ON sessions REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes();
CREATE TRIGGER units_insert_counted AFTER INSERT ON units REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes();
CREATE TRIGGER units_update_counted AFTER UPDATE ON units REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes();
CREATE TRIGGER units_delete_counted AFTER DELETE ON units REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes();
CREATE TRIGGER trajectories_insert_counted AFTER INSERT ON trajectories REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes();
CREATE TRIGGER trajectories_update_counted AFTER UPDATE ON trajectories REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes();
CREATE TRIGGER trajectories_delete_counted AFTER DELETE ON trajectories REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_count_space_writes();
