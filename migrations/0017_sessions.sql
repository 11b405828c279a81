-- The session table joins the schema (it was created by the session store
-- at start-up), with its expiry as Unix seconds on every backend. Records
-- written by the old store kept a date text there; they are converted, and
-- any that cannot be read count as expired.
CREATE TABLE IF NOT EXISTS tower_sessions (
    id TEXT PRIMARY KEY NOT NULL,
    data BLOB NOT NULL,
    expiry_date INTEGER NOT NULL
);
UPDATE tower_sessions
SET expiry_date = coalesce(CAST(strftime('%s', expiry_date) AS INTEGER), 0)
WHERE typeof(expiry_date) = 'text';
CREATE INDEX IF NOT EXISTS tower_sessions_by_expiry ON tower_sessions (expiry_date);
