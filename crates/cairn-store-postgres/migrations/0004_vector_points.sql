-- Each distinct vector of a space is stored once, as a point of the HNSW graph; units
-- name their point. Chat repeats itself ("thanks!", a bot's template), and an HNSW graph
-- holding thousands of identical elements traps its search among them: at 1M generated
-- units (573k vectors, 39k distinct) pgvector returned 100 copies of one vector at
-- cosine 0.29 while 14k vectors were closer. A point is the MD5 of the vector's text
-- form (identity, not security). The HNSW index on `vector_points` is created by the
-- store when it opens, for the embedding model's dimension.
CREATE TABLE vector_points(
    space text COLLATE "C" NOT NULL REFERENCES spaces(space) ON DELETE CASCADE,
    point bytea NOT NULL,
    vec vector NOT NULL,
    PRIMARY KEY(space, point));

ALTER TABLE vectors ADD COLUMN point bytea;
UPDATE vectors SET point = decode(md5(vec::text), 'hex');
INSERT INTO vector_points(space, point, vec)
    SELECT DISTINCT ON (space, point) space, point, vec FROM vectors ORDER BY space, point;
ALTER TABLE vectors ALTER COLUMN point SET NOT NULL;
-- Drops the HNSW index built on this column, too.
ALTER TABLE vectors DROP COLUMN vec;
-- A point's units in id order (search expands each point to a bounded run of them).
CREATE INDEX vectors_by_point ON vectors(space, point, unit_id);
