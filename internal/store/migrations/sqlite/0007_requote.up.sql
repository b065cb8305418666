-- A quote lost on the way is sent again once under a new quote_req_id; the
-- lost one's id is kept here while its late rows are watched for (to be
-- cancelled, or taken if offered first).
ALTER TABLE workflows ADD COLUMN lost_quote_req_id TEXT NOT NULL DEFAULT '';
