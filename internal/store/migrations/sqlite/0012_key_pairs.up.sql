-- The broker's rate limits are per key pair, so one process at a time owns
-- the accounts of a key pair (see store.KeyPairHeldError): a lease names
-- the buckets its owner draws on (a hash of the key pair and the broker's
-- address, no key id) and the process that owns it (a random id per run;
-- the owner column is one per account).
ALTER TABLE leases ADD COLUMN pacing_key TEXT NOT NULL DEFAULT '';
ALTER TABLE leases ADD COLUMN process TEXT NOT NULL DEFAULT '';
CREATE INDEX leases_pacing_key ON leases (pacing_key);
