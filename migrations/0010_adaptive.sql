-- Adaptive overlap ([assignment.adaptive], docs/study-spec.md): the study's
-- settings, and per item how many answers it has been asked for and, once
-- it gets no more, why and what it settled on.
CREATE TABLE adaptive_studies (
    study_id INTEGER PRIMARY KEY REFERENCES studies(id),
    settings TEXT NOT NULL -- JSON of domain::adaptive::Adaptive
);

-- `collecting`: its `wanted` answers are not all in; `waiting`: a link
-- study's item that needs another answer and is in no bundle yet;
-- `stopped`: no more answers (`reason` says why).
CREATE TABLE adaptive_items (
    study_id    INTEGER NOT NULL REFERENCES studies(id),
    instance_id INTEGER NOT NULL REFERENCES instances(id),
    wanted      INTEGER NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('collecting', 'waiting', 'stopped')),
    reason      TEXT CHECK (reason IN ('agreed', 'confident', 'max')),
    answers     INTEGER,
    value       TEXT,
    posterior   REAL,
    PRIMARY KEY (study_id, instance_id)
) WITHOUT ROWID;
CREATE INDEX adaptive_items_by_state ON adaptive_items (study_id, state);
