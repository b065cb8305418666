-- Where the daemon lists the account's key pair among its own (0: first),
-- so that of two daemons starting together each owns the key pairs it
-- lists first (see service.Fleet); -1 on a record of a daemon that did not
-- say.
ALTER TABLE standbys ADD COLUMN pair_rank INTEGER NOT NULL DEFAULT -1;
