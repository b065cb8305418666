-- A workflow's account is matched whatever its case (broker ids are
-- case-insensitive, and a workflow is stored under the spelling its
-- caller used): the cash ledger's check of each account reads only that
-- account's fills by this index, where it read every account's and kept
-- its own (at 10,000 accounts, each account's sync scanned 10,000).
CREATE INDEX workflows_account_fold ON workflows (lower(account), kind, created_at);
