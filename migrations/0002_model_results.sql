-- A model's per-instance results on a dataset: imported from a file or
-- (later) scored in-process. Re-importing the same name replaces the run.
CREATE TABLE model_runs (
    id         INTEGER PRIMARY KEY,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    name       TEXT NOT NULL,
    source     TEXT NOT NULL, -- file name, or the scorer
    device     TEXT,          -- where scoring ran (cpu, cuda:0), when in-process
    created_at INTEGER NOT NULL,
    UNIQUE (dataset_id, name)
);

CREATE TABLE model_outcomes (
    run_id      INTEGER NOT NULL REFERENCES model_runs(id),
    instance_id INTEGER NOT NULL REFERENCES instances(id),
    ipos2t      INTEGER NOT NULL,
    ineg2t      INTEGER NOT NULL,
    tpos2i      INTEGER NOT NULL,
    tneg2i      INTEGER NOT NULL,
    PRIMARY KEY (run_id, instance_id)
) WITHOUT ROWID;
