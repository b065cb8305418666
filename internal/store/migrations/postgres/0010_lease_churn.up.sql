-- Every live lease is rewritten several times a second (its renewal):
-- at 10,000 leases the table grew to 117 MB of dead rows and a renewal's
-- scan took half a second. Pages kept three quarters empty let each
-- renewal write the row's new version beside the old one (a HOT update,
-- pruned as the page is next read), vacuum comes as soon as a thousand
-- rows are dead, and a renewal finds its owners' rows by index.
ALTER TABLE leases SET (fillfactor = 25, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0);
CREATE INDEX leases_owner ON leases (owner);
ALTER TABLE standbys SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0);
