-- Each change of an account's owner starts a new term: the owner's writes
-- carry it and fail once the term is no longer current (fencing), so an
-- owner that stalled past its lease cannot write after another took over.
-- A released lease keeps its row (lapsed) so terms only ever grow.
ALTER TABLE leases ADD COLUMN term INTEGER NOT NULL DEFAULT 0;
