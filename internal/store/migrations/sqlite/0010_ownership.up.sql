-- Each change of an account's owner starts a new term: the owner's writes
-- carry it and fail once the term is no longer current (fencing), so an
-- owner that stalled past its lease cannot write after another took over.
-- A released lease keeps its row (lapsed) so terms only ever grow.
ALTER TABLE leases ADD COLUMN term INTEGER NOT NULL DEFAULT 0;
-- Where followers on other hosts reach the owner (https://host:port, empty
-- when it serves only its machine's socket), and the SHA-256 of its TLS
-- certificate's public key, which they pin: the database vouches for it.
ALTER TABLE leases ADD COLUMN address TEXT NOT NULL DEFAULT '';
ALTER TABLE leases ADD COLUMN pin TEXT NOT NULL DEFAULT '';

-- Daemons standing by to take an account over when its owner goes (serve
-- --standby): `locator status` lists them, and a command whose owner went
-- away leaves the account to them rather than taking it for its run.
CREATE TABLE standbys (
    account    TEXT NOT NULL,
    process    TEXT NOT NULL,   -- random id of the standing-by run
    pid        INTEGER NOT NULL,
    host       TEXT NOT NULL,
    since      TEXT NOT NULL,
    expires    TEXT NOT NULL,   -- lapses without a renewal, as a lease
    PRIMARY KEY (account, process)
);
