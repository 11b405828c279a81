-- The order answers reached the writer within one second (answered_at is
-- whole seconds): `resolve = "first"` and every "earliest first" read go by
-- answered_at, then arrival, then task id. The writer stamps arrival with
-- the microseconds since the Unix epoch, strictly increasing within a
-- server; answers stored before this version, and seeded ones, have 0.
ALTER TABLE answers ADD COLUMN arrival BIGINT NOT NULL DEFAULT 0;
DROP INDEX answers_by_instance;
CREATE INDEX answers_by_instance ON answers (study_id, instance_id, answered_at, arrival, task_id, user_id, value);
-- A view's `a.*` is expanded when it is made: list the new column too.
CREATE OR REPLACE VIEW counted_answers AS
    SELECT a.* FROM answers a
    WHERE a.user_id NOT IN (SELECT l.user_id FROM leases l WHERE l.state NOT IN ('active', 'completed'))
    AND a.task_id NOT IN (SELECT t.id FROM tasks t WHERE t.check_kind IS NOT NULL);
