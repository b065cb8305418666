-- The owner's MAC of each row's request part (workflow.RowKey), keyed by
-- a key derived from the account's secret: a row whose MAC does not verify
-- is refused, never acted on. Rows written before this migration have
-- none ('').
ALTER TABLE workflows ADD COLUMN mac TEXT NOT NULL DEFAULT '';
ALTER TABLE orders ADD COLUMN mac TEXT NOT NULL DEFAULT '';
-- The accounts whose rows predate the MACs: the first owner of each that
-- starts with the key MACs the account's open rows once and removes the
-- account from here (store.AdoptMACs). An account not listed, such as one
-- first used after this migration, never has a row without a MAC blessed.
CREATE TABLE row_macs_pending (
    account TEXT PRIMARY KEY
);
INSERT INTO row_macs_pending (account)
    SELECT account FROM workflows UNION SELECT account FROM orders;
-- The rows an owner refused at its start because their MAC did not
-- verify, as `locator status` lists them; each start of an account's owner
-- replaces the account's list.
CREATE TABLE refused_rows (
    account    TEXT NOT NULL,
    kind       TEXT NOT NULL,
    id         TEXT NOT NULL,
    symbol     TEXT NOT NULL,
    reason     TEXT NOT NULL,
    refused_at TEXT NOT NULL,
    PRIMARY KEY (kind, id)
);
