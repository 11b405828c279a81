-- Crowd quality (docs/crowd.md): check items inside bundles, the
-- comprehension check before a bundle, screening out, and a researcher
-- discarding a flagged participant's copy. SQLite cannot change a CHECK in
-- place, so `leases` is rebuilt (foreign keys deferred, as in 0007).
PRAGMA defer_foreign_keys = ON;

DROP VIEW counted_answers;
CREATE TABLE leases_before_quality AS SELECT * FROM leases;
DROP TABLE leases;
-- `screened_out`: ended by failed attention checks; `discarded`: a researcher
-- gave a flagged participant's place back. Both keep their answers, marked
-- by the state, and neither counts.
CREATE TABLE leases (
    id         INTEGER PRIMARY KEY,
    study_id   INTEGER NOT NULL,
    bundle     INTEGER NOT NULL,
    user_id    INTEGER NOT NULL UNIQUE REFERENCES users(id),
    state      TEXT NOT NULL CHECK (state IN ('active', 'completed', 'timed_out', 'returned', 'extra',
                                              'screened_out', 'discarded')),
    leased_at  INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    ended_at   INTEGER,
    FOREIGN KEY (study_id, bundle) REFERENCES bundles(study_id, bundle)
);
INSERT INTO leases (id, study_id, bundle, user_id, state, leased_at, expires_at, ended_at)
    SELECT id, study_id, bundle, user_id, state, leased_at, expires_at, ended_at FROM leases_before_quality;
DROP TABLE leases_before_quality;
CREATE INDEX leases_by_bundle ON leases (study_id, bundle, state);
CREATE INDEX leases_by_state ON leases (study_id, state, expires_at);

-- A check item is a task like any other (same answer path, same
-- durability), marked by its kind and the stored value that passes it.
ALTER TABLE tasks ADD COLUMN check_kind TEXT CHECK (check_kind IN ('gold', 'attention'));
ALTER TABLE tasks ADD COLUMN check_answer TEXT;
CREATE INDEX tasks_checks ON tasks (id) WHERE check_kind IS NOT NULL;

-- The comprehension check and screening out, per participant. A participant
-- screened out by the comprehension check never held a lease.
ALTER TABLE participants ADD COLUMN comprehension_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE participants ADD COLUMN comprehension_passed_at INTEGER;
ALTER TABLE participants ADD COLUMN screened_out_at INTEGER;
ALTER TABLE participants ADD COLUMN screened_out_reason TEXT
    CHECK (screened_out_reason IN ('attention_checks', 'comprehension'));

-- The answers every report counts: not check items, and not those of
-- participants whose lease ended without a counted copy.
CREATE VIEW counted_answers AS
    SELECT a.* FROM answers a
    WHERE NOT EXISTS (
        SELECT 1 FROM leases l
        WHERE l.user_id = a.user_id AND l.state NOT IN ('active', 'completed')
    )
    AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = a.task_id AND t.check_kind IS NOT NULL);

-- Every answered check item, for flags, the dashboard and the approve list.
CREATE VIEW check_answers AS
    SELECT a.task_id, a.study_id, a.user_id, a.instance_id, t.check_kind, t.check_answer, a.value,
           (a.value = t.check_answer) AS correct, a.elapsed_ms, a.answered_at
    FROM answers a JOIN tasks t ON t.id = a.task_id
    WHERE t.check_kind IS NOT NULL;
