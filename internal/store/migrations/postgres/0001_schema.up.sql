-- The schema of SQLite's migrations 0001-0010 in one step, for Postgres.
-- Times are the same sortable UTC text as on SQLite (see store.formatTime),
-- so every query compares and orders them the same way on both databases.

-- Workflows: one row per locate request or credit-back, with the write-ahead
-- intent (the client id it sends) recorded before anything is sent.
CREATE TABLE workflows (
    id                 TEXT PRIMARY KEY,
    kind               TEXT NOT NULL,
    account            TEXT NOT NULL,
    symbol             TEXT NOT NULL,
    requested          BIGINT NOT NULL,
    quantity           BIGINT NOT NULL,
    quote_req_id       TEXT NOT NULL UNIQUE,
    state              TEXT NOT NULL,
    policy             TEXT NOT NULL DEFAULT '{}',
    locate_type        TEXT NOT NULL DEFAULT '',
    accepted_id        TEXT NOT NULL DEFAULT '',
    price              TEXT NOT NULL DEFAULT '',
    legs               TEXT NOT NULL DEFAULT '{}',
    offered_at         TEXT NOT NULL DEFAULT '',
    expires_at         TEXT NOT NULL DEFAULT '',
    sent_at            TEXT NOT NULL DEFAULT '',
    reason             TEXT NOT NULL DEFAULT '',
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    version            BIGINT NOT NULL DEFAULT 1,
    asker              TEXT NOT NULL DEFAULT '',
    lost_quote_req_id  TEXT NOT NULL DEFAULT '',
    cause              TEXT NOT NULL DEFAULT '',
    resends            BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX workflows_open ON workflows (account, state);
CREATE INDEX workflows_symbol ON workflows (account, symbol, created_at);

-- Transitions: append-only log of every state change and the row behind it.
CREATE TABLE transitions (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
    seq       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account   TEXT NOT NULL,
    taken_at  TEXT NOT NULL,
    rows      TEXT NOT NULL
);
CREATE INDEX inventory_snapshots_account ON inventory_snapshots (account, seq);

-- Cash-ledger rows as synced from the broker (see SQLite's 0002).
CREATE TABLE cash_entries (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dedupe_key  TEXT NOT NULL UNIQUE,
    account     TEXT NOT NULL,
    entry_date  TEXT NOT NULL,
    cash_type   TEXT NOT NULL,
    currency    TEXT NOT NULL DEFAULT '',
    deposit     TEXT NOT NULL DEFAULT '0',
    withdraw    TEXT NOT NULL DEFAULT '0',
    note        TEXT NOT NULL DEFAULT '',
    occurrence  BIGINT NOT NULL DEFAULT 0,
    synced_at   TEXT NOT NULL
);
CREATE INDEX cash_entries_account_date ON cash_entries (account, entry_date, seq);

-- Job runs (see SQLite's 0003).
CREATE TABLE job_runs (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job         TEXT NOT NULL,
    kind        TEXT NOT NULL,
    account     TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    ended_at    TEXT NOT NULL DEFAULT '',
    outcome     TEXT NOT NULL,
    detail      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX job_runs_job ON job_runs (job, id);
CREATE INDEX job_runs_outcome ON job_runs (outcome);

-- Orders locator placed, with their write-ahead intent (see SQLite's 0004).
CREATE TABLE orders (
    client_order_id     TEXT PRIMARY KEY,
    broker_order_id     TEXT NOT NULL DEFAULT '',
    account             TEXT NOT NULL,
    symbol              TEXT NOT NULL,
    side                TEXT NOT NULL,
    open_close          TEXT NOT NULL,
    order_type          TEXT NOT NULL,
    time_in_force       TEXT NOT NULL,
    quantity            BIGINT NOT NULL,
    limit_price         TEXT NOT NULL DEFAULT '',
    route               TEXT NOT NULL DEFAULT '',
    locate_workflow_id  TEXT NOT NULL DEFAULT '',
    state               TEXT NOT NULL,
    order_status        TEXT NOT NULL DEFAULT '',
    executed            BIGINT NOT NULL DEFAULT 0,
    price_avg           TEXT NOT NULL DEFAULT '',
    code                TEXT NOT NULL DEFAULT '',
    text                TEXT NOT NULL DEFAULT '',
    reason              TEXT NOT NULL DEFAULT '',
    created_at          TEXT NOT NULL,
    sent_at             TEXT NOT NULL DEFAULT '',
    updated_at          TEXT NOT NULL,
    version             BIGINT NOT NULL DEFAULT 1
);
CREATE INDEX orders_account_state ON orders (account, state);

CREATE TABLE order_transitions (
    seq              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    client_order_id  TEXT NOT NULL REFERENCES orders (client_order_id),
    from_state       TEXT NOT NULL,
    to_state         TEXT NOT NULL,
    event            TEXT NOT NULL,
    reason           TEXT NOT NULL DEFAULT '',
    at               TEXT NOT NULL
);
CREATE INDEX order_transitions_order ON order_transitions (client_order_id, seq);

-- One leader row per account: the owner, where it takes requests, and its
-- term, which grows at every change of owner and fences the owner's writes.
-- Times here are written from the database's clock (see store.leaseNow).
CREATE TABLE leases (
    account    TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    pid        BIGINT NOT NULL,
    host       TEXT NOT NULL,
    endpoint   TEXT NOT NULL,
    since      TEXT NOT NULL,
    heartbeat  TEXT NOT NULL,
    expires    TEXT NOT NULL,
    term       BIGINT NOT NULL DEFAULT 0,
    address    TEXT NOT NULL DEFAULT '',  -- https://host:port for other hosts
    pin        TEXT NOT NULL DEFAULT ''   -- SHA-256 of the owner's TLS public key
);

-- Pacing per key pair (see SQLite's 0006).
CREATE TABLE pacing (
    key          TEXT PRIMARY KEY,
    last_request TEXT NOT NULL
);

-- Daemons standing by to take an account over (see SQLite's 0010).
CREATE TABLE standbys (
    account    TEXT NOT NULL,
    process    TEXT NOT NULL,
    pid        BIGINT NOT NULL,
    host       TEXT NOT NULL,
    since      TEXT NOT NULL,
    expires    TEXT NOT NULL,
    PRIMARY KEY (account, process)
);
