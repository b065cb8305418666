-- Order transitions: the append-only log of every state change of an order,
-- as the transitions table is for workflows (orders go through the same
-- pipeline: grouped commit, retry path, transition log).
CREATE TABLE order_transitions (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    client_order_id  TEXT NOT NULL REFERENCES orders (client_order_id),
    from_state       TEXT NOT NULL,
    to_state         TEXT NOT NULL,
    event            TEXT NOT NULL,
    reason           TEXT NOT NULL DEFAULT '',
    at               TEXT NOT NULL
);
CREATE INDEX order_transitions_order ON order_transitions (client_order_id, seq);
