-- Kinds that ask several questions about one instance (the human baseline:
-- two image-to-text and two text-to-image queries) need one task per
-- question, so the query joins the task's identity. SQLite cannot change a
-- UNIQUE constraint in place: the table is rebuilt. Foreign keys are
-- deferred so answers may point at task ids that are briefly absent; the
-- same ids are back before COMMIT.
PRAGMA defer_foreign_keys = ON;

CREATE TABLE tasks_before_query AS SELECT * FROM tasks;
DROP TABLE tasks;

CREATE TABLE tasks (
    id          INTEGER PRIMARY KEY,
    study_id    INTEGER NOT NULL REFERENCES studies(id),
    user_id     INTEGER NOT NULL REFERENCES users(id),
    instance_id INTEGER NOT NULL REFERENCES instances(id),
    query       INTEGER NOT NULL DEFAULT 0,
    position    INTEGER NOT NULL,
    seed        INTEGER NOT NULL,
    done        INTEGER NOT NULL DEFAULT 0,
    lease_until INTEGER,
    UNIQUE (study_id, user_id, instance_id, query)
);
INSERT INTO tasks (id, study_id, user_id, instance_id, position, seed, done, lease_until)
    SELECT id, study_id, user_id, instance_id, position, seed, done, lease_until FROM tasks_before_query;
DROP TABLE tasks_before_query;
CREATE INDEX tasks_queue ON tasks (study_id, user_id, done, position);
