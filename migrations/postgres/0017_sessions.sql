-- The session table (SQLite's 0017): expiry as Unix seconds.
CREATE TABLE tower_sessions (
    id TEXT PRIMARY KEY NOT NULL,
    data BYTEA NOT NULL,
    expiry_date BIGINT NOT NULL
);
CREATE INDEX tower_sessions_by_expiry ON tower_sessions (expiry_date);
