-- The removal log (issue 54): a forget removes a unit's row in one transaction and its
-- text entry and vector in later ones, so a crash in between left the forgotten unit
-- searchable for good (the forget could not be retried: its rows were gone). Every
-- removed unit row is logged in the removal's own transaction with a sequence number
-- drawn from `last_seq`, the counter units are numbered from, so the indexes' watermarks
-- are behind it until they have applied it, and healing removes it
-- (`RecordStore::removals_since`). Ids only, never text; pruned once both watermarks
-- have passed (`RecordStore::prune_removals`). No reference to `spaces`: a dropped
-- space's removals must outlive it.
CREATE TABLE unit_removals(
    seq bigint PRIMARY KEY,
    space text COLLATE "C" NOT NULL,
    unit_id text COLLATE "C" NOT NULL);

-- One statement-level trigger: the rows a statement removed get consecutive numbers
-- past `last_seq`, which moves past them (its row is the writers' lock, so numbers stay
-- disjoint and commit-ordered across processes). An upsert of a unit is no removal.
CREATE FUNCTION cairn_log_unit_removals() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
    last bigint;
BEGIN
    SELECT count(*) INTO n FROM changed;
    IF n = 0 THEN
        RETURN NULL;
    END IF;
    UPDATE cairn_meta SET num = num + n WHERE key = 'last_seq' RETURNING num INTO last;
    INSERT INTO unit_removals(seq, space, unit_id)
        SELECT last - n + row_number() OVER (ORDER BY space, id), space, id FROM changed;
    RETURN NULL;
END $$;

CREATE TRIGGER units_delete_logged AFTER DELETE ON units REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_log_unit_removals();
