-- A daemon that lists an account but cannot serve it yet (its keys
-- rejected, another process holding its lease, its engine stopped on an
-- error) says why on its standby row, since when, and when it tries
-- again: empty while it is only waiting to own it.
ALTER TABLE standbys ADD COLUMN not_served TEXT NOT NULL DEFAULT '';
ALTER TABLE standbys ADD COLUMN not_served_since TEXT NOT NULL DEFAULT '';
ALTER TABLE standbys ADD COLUMN retry_at TEXT NOT NULL DEFAULT '';
