-- When an owner last drew on the broker's buckets of a key pair (keyed by a
-- hash of the key pair, never the key id): the next owner, perhaps another
-- process a moment later, starts its pacer as if its buckets were emptied
-- then, since the broker's buckets still hold those requests.
CREATE TABLE pacing (
    key          TEXT PRIMARY KEY,
    last_request TEXT NOT NULL
);
