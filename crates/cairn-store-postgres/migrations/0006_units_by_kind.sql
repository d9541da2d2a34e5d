-- A recall asking for kinds (a trajectory inspection: slices, events, notes) counts them
-- here before it searches: without it, such a recall of a space without them scanned it.
CREATE INDEX units_by_kind ON units(space, kind);
