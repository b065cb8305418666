-- What the account detail last showed an owner reading it with the key
-- pair pacing_key: writes allowed in env (its accountType's environment,
-- the account Active). A takeover goes on from its predecessor's check
-- (store.Store.EnvChecked) rather than read the detail again from a
-- bucket the dead owner may just have emptied.
CREATE TABLE account_checks (
    account    TEXT PRIMARY KEY,
    pacing_key TEXT NOT NULL,
    env        TEXT NOT NULL
);
