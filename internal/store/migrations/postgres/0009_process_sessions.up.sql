-- The processes that hold a session of their own while they live, with a
-- session-level advisory lock named for the process (store.Attend): the
-- server ends the session when the process dies, and the lock goes with
-- it, so another process tells a dead owner from a live one at once
-- (store.Store.Session). A process not listed (a locator from before this
-- migration) is known dead only by its lease lapsing.
CREATE TABLE process_sessions (
    process TEXT PRIMARY KEY,
    since   TEXT NOT NULL
);
