-- Every decision on a disputed item and every reopening of one, in order:
-- `adjudications` holds the decision that stands (none once reopened), and
-- this log keeps the ones undone beside it (issue 13: undo).
CREATE TABLE adjudication_log (
    id          INTEGER PRIMARY KEY,
    study_id    INTEGER NOT NULL REFERENCES studies(id),
    instance_id INTEGER NOT NULL REFERENCES instances(id),
    action      TEXT NOT NULL CHECK (action IN ('settled', 'reopened')),
    -- settled: the value decided; reopened: the value undone.
    value       TEXT NOT NULL,
    user_id     INTEGER NOT NULL REFERENCES users(id),
    at          INTEGER NOT NULL
);
CREATE INDEX adjudication_log_item ON adjudication_log (study_id, instance_id, id);

INSERT INTO adjudication_log (study_id, instance_id, action, value, user_id, at)
SELECT study_id, instance_id, 'settled', value, user_id, decided_at FROM adjudications;
