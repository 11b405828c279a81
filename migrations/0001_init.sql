-- Accounts. Sessions live in the tower-sessions table created by its store.
CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE,
    role          TEXT NOT NULL CHECK (role IN ('admin', 'researcher', 'annotator')),
    password_hash TEXT NOT NULL,
    created_at    INTEGER NOT NULL
);

-- Content-addressed image store: files live under the data dir by hash.
CREATE TABLE images (
    hash        TEXT PRIMARY KEY CHECK (length(hash) = 64),
    mime        TEXT NOT NULL,
    width       INTEGER NOT NULL,
    height      INTEGER NOT NULL,
    bytes       INTEGER NOT NULL,
    has_display INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE datasets (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    normalize  TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE instances (
    id                    INTEGER PRIMARY KEY,
    dataset_id            INTEGER NOT NULL REFERENCES datasets(id),
    key                   TEXT NOT NULL,
    caption               TEXT NOT NULL,
    negative_caption      TEXT NOT NULL,
    caption_orig          TEXT NOT NULL,
    negative_caption_orig TEXT NOT NULL,
    neg_type              TEXT NOT NULL,
    subtype               TEXT NOT NULL,
    positive_image        TEXT REFERENCES images(hash),
    UNIQUE (dataset_id, key)
);

-- The generated candidate negative images of an instance (BiVLC: four).
-- known_match is the ground truth when it is known (demo data), else NULL.
CREATE TABLE candidates (
    instance_id INTEGER NOT NULL REFERENCES instances(id),
    slot        INTEGER NOT NULL,
    image       TEXT NOT NULL REFERENCES images(hash),
    known_match INTEGER,
    PRIMARY KEY (instance_id, slot)
) WITHOUT ROWID;

CREATE TABLE studies (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    kind         TEXT NOT NULL,
    dataset_id   INTEGER NOT NULL REFERENCES datasets(id),
    instructions TEXT NOT NULL,
    annotators   TEXT NOT NULL, -- JSON: "all" or ["name", ...]
    rule         TEXT NOT NULL, -- JSON of the assignment rule
    seed         INTEGER NOT NULL,
    spec         TEXT NOT NULL, -- the spec as written, for provenance
    spec_hash    TEXT NOT NULL,
    created_at   INTEGER NOT NULL
);

CREATE TABLE study_items (
    study_id    INTEGER NOT NULL REFERENCES studies(id),
    instance_id INTEGER NOT NULL REFERENCES instances(id),
    PRIMARY KEY (study_id, instance_id)
) WITHOUT ROWID;

-- One row per (annotator, item) the plan hands out. lease_until is for rules
-- that hand items out on demand and reclaim them when a lease expires.
CREATE TABLE tasks (
    id          INTEGER PRIMARY KEY,
    study_id    INTEGER NOT NULL REFERENCES studies(id),
    user_id     INTEGER NOT NULL REFERENCES users(id),
    instance_id INTEGER NOT NULL REFERENCES instances(id),
    position    INTEGER NOT NULL,
    seed        INTEGER NOT NULL,
    done        INTEGER NOT NULL DEFAULT 0,
    lease_until INTEGER,
    UNIQUE (study_id, user_id, instance_id)
);
CREATE INDEX tasks_queue ON tasks (study_id, user_id, done, position);

-- An annotator's place in a study; counters kept by the answer writer so
-- progress is one row read however long the study is.
CREATE TABLE participations (
    study_id INTEGER NOT NULL REFERENCES studies(id),
    user_id  INTEGER NOT NULL REFERENCES users(id),
    total    INTEGER NOT NULL,
    done     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (study_id, user_id)
) WITHOUT ROWID;

-- One answer per task: the primary key makes a double submit a no-op.
CREATE TABLE answers (
    task_id     INTEGER PRIMARY KEY REFERENCES tasks(id),
    study_id    INTEGER NOT NULL,
    user_id     INTEGER NOT NULL,
    instance_id INTEGER NOT NULL,
    option_id   TEXT NOT NULL,  -- as shown: "A".."D", "none"
    value       TEXT NOT NULL,  -- as stored by the kind: candidate slot or "none"
    shown_order TEXT NOT NULL,  -- JSON array: underlying order behind the shown options
    elapsed_ms  INTEGER NOT NULL,
    answered_at INTEGER NOT NULL
);
CREATE INDEX answers_by_study ON answers (study_id, user_id);
