-- One owner per account: the live process that alone drives the account's
-- workflows holds its lease, renewed by heartbeats in immediate
-- transactions; another process finds the owner here and hands it requests
-- at endpoint (a local socket beside the database).
CREATE TABLE leases (
    account    TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,   -- random id of the owning run
    pid        INTEGER NOT NULL,
    host       TEXT NOT NULL,
    endpoint   TEXT NOT NULL,   -- where the owner takes requests
    since      TEXT NOT NULL,
    heartbeat  TEXT NOT NULL,
    expires    TEXT NOT NULL
);

-- Who asked for each workflow (a process, for `locator status`).
ALTER TABLE workflows ADD COLUMN asker TEXT NOT NULL DEFAULT '';
