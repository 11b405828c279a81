-- Prolific from hardneg (docs/prolific.md). No token is ever stored here.

-- A link study published on Prolific: its Prolific id once the draft exists.
CREATE TABLE prolific_studies (
    study_id      INTEGER PRIMARY KEY REFERENCES studies(id),
    prolific_id   TEXT UNIQUE,
    -- hardneg's name for it on Prolific (internal_name): a retried publish finds its draft by it.
    internal_name TEXT NOT NULL UNIQUE,
    status        TEXT,                       -- Prolific's study status as last read
    places        INTEGER NOT NULL,           -- total_available_places as last sent or read
    reward_cents  INTEGER NOT NULL,
    fee           REAL NOT NULL DEFAULT 0,     -- Prolific's fee as a fraction of rewards, from its cost
    counts        TEXT,                       -- Prolific's submission counts (JSON) as last read
    synced_at     INTEGER,
    created_at    INTEGER NOT NULL
);

-- Prolific's submissions of a study as last synced; SESSION_ID = submission_id.
CREATE TABLE prolific_submissions (
    study_id         INTEGER NOT NULL REFERENCES studies(id),
    submission_id    TEXT NOT NULL,
    participant_id   TEXT NOT NULL,
    status           TEXT NOT NULL,
    study_code       TEXT,
    return_requested INTEGER NOT NULL DEFAULT 0,
    seen_at          INTEGER NOT NULL,
    PRIMARY KEY (study_id, submission_id)
);
CREATE INDEX prolific_submissions_by_participant ON prolific_submissions (study_id, participant_id);

-- Every remote action, written before it is sent (the outbox's states: src/domain/prolific/outbox.rs).
CREATE TABLE prolific_outbox (
    id            INTEGER PRIMARY KEY,
    study_id      INTEGER NOT NULL REFERENCES studies(id),
    action        TEXT NOT NULL,
    idem_key      TEXT NOT NULL UNIQUE,
    payload       TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'unconfirmed', 'done', 'failed')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    not_before    INTEGER NOT NULL DEFAULT 0,  -- ms since the epoch
    claimed_until INTEGER NOT NULL DEFAULT 0,  -- ms; a sending row past it lost its sender
    sent_at       INTEGER,               -- ms; when it was last sent
    remote_id     TEXT,
    last_status   INTEGER,
    last_error    TEXT,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX prolific_outbox_open ON prolific_outbox (state, not_before);

-- Every call to Prolific: what, when, how it went. No token, no body.
CREATE TABLE prolific_calls (
    id        INTEGER PRIMARY KEY,
    at        INTEGER NOT NULL,   -- ms since the epoch
    method    TEXT NOT NULL,
    path      TEXT NOT NULL,
    status    INTEGER,            -- none: no answer (network error or time-out)
    millis    INTEGER NOT NULL,
    outbox_id INTEGER,
    error     TEXT
);

-- Bonuses: one per submission and round; set up (bulk id stored), then paid.
CREATE TABLE prolific_bonuses (
    study_id      INTEGER NOT NULL REFERENCES studies(id),
    submission_id TEXT NOT NULL,
    round         TEXT NOT NULL,
    amount_cents  INTEGER NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('planned', 'set_up', 'paid')),
    bulk_id       TEXT,
    outbox_id     INTEGER,
    PRIMARY KEY (study_id, submission_id, round)
);

-- Webhook event ids already taken, so a duplicate delivery triggers nothing twice.
CREATE TABLE prolific_webhook_events (
    event_id    TEXT PRIMARY KEY,
    received_at INTEGER NOT NULL
);

-- Participant groups hardneg made, by name (one per benchmark).
CREATE TABLE prolific_groups (
    name      TEXT PRIMARY KEY,
    remote_id TEXT NOT NULL
);
