-- Workflows: one row per locate request or credit-back, with the write-ahead
-- intent (the client id it sends) recorded before anything is sent.
CREATE TABLE workflows (
    id            TEXT PRIMARY KEY,
    kind          TEXT NOT NULL,
    account       TEXT NOT NULL,
    symbol        TEXT NOT NULL,
    requested     INTEGER NOT NULL,          -- shares the caller asked for
    quantity      INTEGER NOT NULL,          -- shares quoted or sold (0 when nothing is sent)
    quote_req_id  TEXT NOT NULL UNIQUE,      -- the client id sent to the broker
    state         TEXT NOT NULL,
    policy        TEXT NOT NULL DEFAULT '{}', -- JSON cost policy
    locate_type   TEXT NOT NULL DEFAULT '',  -- credit-back type string, or the filled leg's type
    accepted_id   TEXT NOT NULL DEFAULT '',  -- the leg id accepted (id or id.SU)
    price         TEXT NOT NULL DEFAULT '',  -- price per share of the offer taken (decimal)
    legs          TEXT NOT NULL DEFAULT '{}', -- JSON: last history row per leg id
    offered_at    TEXT NOT NULL DEFAULT '',
    expires_at    TEXT NOT NULL DEFAULT '',
    sent_at       TEXT NOT NULL DEFAULT '',  -- when the quote or sell left
    reason        TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    version       INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX workflows_open ON workflows (account, state);
CREATE INDEX workflows_symbol ON workflows (account, symbol, created_at);

-- Transitions: append-only log of every state change and the row behind it.
CREATE TABLE transitions (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow_id  TEXT NOT NULL REFERENCES workflows (id),
    from_state   TEXT NOT NULL,
    to_state     TEXT NOT NULL,
    event        TEXT NOT NULL,
    reason       TEXT NOT NULL DEFAULT '',
    raw_row      TEXT NOT NULL DEFAULT '',
    at           TEXT NOT NULL
);
CREATE INDEX transitions_workflow ON transitions (workflow_id, seq);

-- Inventory snapshots: what the broker said the account held, when.
CREATE TABLE inventory_snapshots (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    account   TEXT NOT NULL,
    taken_at  TEXT NOT NULL,
    rows      TEXT NOT NULL  -- JSON array of inventory rows as received
);
CREATE INDEX inventory_snapshots_account ON inventory_snapshots (account, seq);
