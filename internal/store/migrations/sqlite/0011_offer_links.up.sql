-- The offers a person was told of with signed answer links (package
-- answerlink), one row per offer (its workflow and its leg's quoteReqID).
-- noticed_at is written when the owner raises the notification, so an owner
-- started later (a restart, a handover) does not raise it again; used_at and
-- used_answer when one of the offer's links is used, before the answer is
-- given, so the offer's links answer at most once, whatever happens after.
CREATE TABLE offer_links (
    account      TEXT NOT NULL,
    workflow_id  TEXT NOT NULL,
    quote_req_id TEXT NOT NULL,
    noticed_at   TEXT NOT NULL DEFAULT '',
    used_at      TEXT NOT NULL DEFAULT '',
    used_answer  TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (account, workflow_id, quote_req_id)
);
