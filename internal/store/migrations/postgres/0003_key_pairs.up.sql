-- One process at a time owns the accounts of a key pair (see SQLite's
-- 0012).
ALTER TABLE leases ADD COLUMN pacing_key TEXT NOT NULL DEFAULT '';
ALTER TABLE leases ADD COLUMN process TEXT NOT NULL DEFAULT '';
CREATE INDEX leases_pacing_key ON leases (pacing_key);
