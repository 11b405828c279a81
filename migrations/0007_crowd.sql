-- Crowd studies by link (docs/crowd.md). Participants are users with the
-- role 'participant' (no password: their hash never verifies). SQLite
-- cannot change a CHECK in place, so `users` is rebuilt as in 0006, with
-- foreign keys deferred so the rows that point at users survive.
PRAGMA defer_foreign_keys = ON;

CREATE TABLE users_before_crowd AS SELECT * FROM users;
DROP TABLE users;
CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE,
    role          TEXT NOT NULL CHECK (role IN ('admin', 'researcher', 'annotator', 'participant')),
    password_hash TEXT NOT NULL,
    created_at    INTEGER NOT NULL
);
INSERT INTO users (id, username, role, password_hash, created_at)
    SELECT id, username, role, password_hash, created_at FROM users_before_crowd;
DROP TABLE users_before_crowd;

-- A link study's join link. Rotating replaces the token; closing stops arrivals.
CREATE TABLE study_links (
    study_id        INTEGER PRIMARY KEY REFERENCES studies(id),
    token           TEXT NOT NULL UNIQUE,
    open            INTEGER NOT NULL DEFAULT 1,
    completion_code TEXT NOT NULL,
    full_code       TEXT,
    settings        TEXT NOT NULL, -- JSON of the spec's [link] table as parsed
    created_at      INTEGER NOT NULL
);

-- One per arrival: the platform's ids (personal data: exported only on request).
CREATE TABLE participants (
    user_id          INTEGER PRIMARY KEY REFERENCES users(id),
    study_id         INTEGER NOT NULL REFERENCES studies(id),
    number           INTEGER NOT NULL,
    platform_pid     TEXT NOT NULL,
    platform_study   TEXT,
    platform_session TEXT,
    arrived_at       INTEGER NOT NULL,
    consented_at     INTEGER,
    instructed_at    INTEGER,
    practice_done    INTEGER NOT NULL DEFAULT 0,
    UNIQUE (study_id, platform_pid),
    UNIQUE (study_id, number)
);

-- Made once at study creation: what one participant gets.
CREATE TABLE bundles (
    study_id      INTEGER NOT NULL REFERENCES studies(id),
    bundle        INTEGER NOT NULL,
    copies_wanted INTEGER NOT NULL,
    paired        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (study_id, bundle)
) WITHOUT ROWID;

CREATE TABLE bundle_items (
    study_id    INTEGER NOT NULL,
    bundle      INTEGER NOT NULL,
    position    INTEGER NOT NULL,
    instance_id INTEGER NOT NULL REFERENCES instances(id),
    query       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (study_id, bundle, position),
    FOREIGN KEY (study_id, bundle) REFERENCES bundles(study_id, bundle)
) WITHOUT ROWID;

-- A participant's hold on a bundle. `active` and `completed` count against
-- the bundle's wanted copies; `timed_out` and `returned` gave the place
-- back; `extra` finished after its place was given back (kept, not counted).
CREATE TABLE leases (
    id         INTEGER PRIMARY KEY,
    study_id   INTEGER NOT NULL,
    bundle     INTEGER NOT NULL,
    user_id    INTEGER NOT NULL UNIQUE REFERENCES users(id),
    state      TEXT NOT NULL CHECK (state IN ('active', 'completed', 'timed_out', 'returned', 'extra')),
    leased_at  INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    ended_at   INTEGER,
    FOREIGN KEY (study_id, bundle) REFERENCES bundles(study_id, bundle)
);
CREATE INDEX leases_by_bundle ON leases (study_id, bundle, state);
CREATE INDEX leases_by_state ON leases (study_id, state, expires_at);

-- The answers every report counts: all but those of participants whose
-- lease ended without a counted copy (timed out, returned, extra).
CREATE VIEW counted_answers AS
    SELECT a.* FROM answers a
    WHERE NOT EXISTS (
        SELECT 1 FROM leases l
        WHERE l.user_id = a.user_id AND l.state NOT IN ('active', 'completed')
    );
