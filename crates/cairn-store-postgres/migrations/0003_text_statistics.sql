-- Statistics of the lexical index for BM25's inverse document frequency: the number of
-- indexed units of each space and, per space and lexeme, how many of them hold it.
-- Maintained by every write of `text_entries` in the same statement (derived state like
-- the index itself: a rebuild of the index rebuilds them).
CREATE TABLE text_spaces(
    space text COLLATE "C" PRIMARY KEY REFERENCES spaces(space) ON DELETE CASCADE,
    docs bigint NOT NULL);
CREATE TABLE text_terms(
    space text COLLATE "C" NOT NULL REFERENCES spaces(space) ON DELETE CASCADE,
    term text COLLATE "C" NOT NULL,
    df bigint NOT NULL,
    PRIMARY KEY(space, term));

INSERT INTO text_spaces(space, docs)
    SELECT space, count(*) FROM text_entries GROUP BY space;
INSERT INTO text_terms(space, term, df)
    SELECT space, term, count(*)
      FROM text_entries, unnest(tsvector_to_array(tsv)) AS term
     GROUP BY space, term;
