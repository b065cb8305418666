-- The offers a person was told of with signed answer links (see SQLite's
-- 0011): one row per offer, noticed once, its links used once.
CREATE TABLE offer_links (
    account      TEXT NOT NULL,
    workflow_id  TEXT NOT NULL,
    quote_req_id TEXT NOT NULL,
    noticed_at   TEXT NOT NULL DEFAULT '',
    used_at      TEXT NOT NULL DEFAULT '',
    used_answer  TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (account, workflow_id, quote_req_id)
);
