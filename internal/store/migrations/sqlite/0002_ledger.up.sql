-- Cash-ledger rows as synced from the broker. The broker gives them no id, so
-- the ledger package derives dedupe_key from the row's content and its
-- occurrence among identical rows of the same day (see ledger/doc.go); the
-- UNIQUE constraint makes a re-sync insert nothing twice.
CREATE TABLE cash_entries (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    dedupe_key  TEXT NOT NULL UNIQUE,
    account     TEXT NOT NULL,
    entry_date  TEXT NOT NULL,              -- calendar date, YYYY-MM-DD
    cash_type   TEXT NOT NULL,              -- as received; unknown labels kept
    currency    TEXT NOT NULL DEFAULT '',
    deposit     TEXT NOT NULL DEFAULT '0',  -- decimal text
    withdraw    TEXT NOT NULL DEFAULT '0',  -- decimal text
    note        TEXT NOT NULL DEFAULT '',
    occurrence  INTEGER NOT NULL DEFAULT 0, -- index among identical rows of the day
    synced_at   TEXT NOT NULL               -- when this row was first stored
);
CREATE INDEX cash_entries_account_date ON cash_entries (account, entry_date, seq);
