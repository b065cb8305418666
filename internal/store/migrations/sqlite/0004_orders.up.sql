-- Orders locator placed: the write-ahead intent (clientOrderId and what the
-- order says) is stored before the POST leaves, and updated with what the
-- broker answered, so a crash between the two is settled by looking the id up
-- at the broker, never by sending again (DESIGN.md rule 1).
CREATE TABLE orders (
    client_order_id     TEXT PRIMARY KEY,            -- the id generated and sent
    broker_order_id     TEXT NOT NULL DEFAULT '',    -- the id answered, when the broker rewrote it
    account             TEXT NOT NULL,
    symbol              TEXT NOT NULL,
    side                TEXT NOT NULL,               -- Buy or Sell
    open_close          TEXT NOT NULL,               -- Open or Close
    order_type          TEXT NOT NULL,
    time_in_force       TEXT NOT NULL,
    quantity            INTEGER NOT NULL,
    limit_price         TEXT NOT NULL DEFAULT '',    -- decimal text, as sent
    route               TEXT NOT NULL DEFAULT '',    -- as sent, or as paper assigned it when none was
    locate_workflow_id  TEXT NOT NULL DEFAULT '',    -- the locate that covers a short
    state               TEXT NOT NULL,               -- intent, unknown, pending, working, filled, ...
    order_status        TEXT NOT NULL DEFAULT '',    -- the broker's last orderStatus
    executed            INTEGER NOT NULL DEFAULT 0,
    price_avg           TEXT NOT NULL DEFAULT '',
    code                TEXT NOT NULL DEFAULT '',    -- rejection code (R06, R95, ...)
    text                TEXT NOT NULL DEFAULT '',    -- the broker's text
    reason              TEXT NOT NULL DEFAULT '',    -- why the state is what it is, for a person
    created_at          TEXT NOT NULL,
    sent_at             TEXT NOT NULL DEFAULT '',
    updated_at          TEXT NOT NULL,
    version             INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX orders_account_state ON orders (account, state);
