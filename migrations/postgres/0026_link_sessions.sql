-- The sessions a participant's link arrivals without a session cookie
-- started, newest last (space-separated ids): the oldest past the cap is
-- ended, so re-posting the join form with a known PROLIFIC_PID cannot add
-- session rows without bound (src/crowd/sessions.rs).
ALTER TABLE participants ADD COLUMN link_sessions TEXT NOT NULL DEFAULT '';
