-- Job runs: one row per run of a scheduled job (locator run), written when it
-- starts (outcome 'running') and completed when it ends, so a run cut short by
-- a crash stays visible as one that never finished.
CREATE TABLE job_runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    job         TEXT NOT NULL,              -- the job's name in the config
    kind        TEXT NOT NULL,              -- locate, credit-back-unused, ledger-sync, reconcile
    account     TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    ended_at    TEXT NOT NULL DEFAULT '',   -- empty while running
    outcome     TEXT NOT NULL,              -- running, ok, failed
    detail      TEXT NOT NULL DEFAULT ''    -- what the run did, or why it failed
);
CREATE INDEX job_runs_job ON job_runs (job, id);
CREATE INDEX job_runs_outcome ON job_runs (outcome);
