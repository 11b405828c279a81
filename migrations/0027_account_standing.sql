-- An account's standing (src/accounts/standing.rs): `session_epoch` grows
-- when its sessions are ended (a new password, a new role, `hardneg user
-- sign-out`), and a session made under an older epoch no longer counts;
-- a `disabled` account logs in nowhere and keeps no session.
ALTER TABLE users ADD COLUMN session_epoch BIGINT NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN disabled BIGINT NOT NULL DEFAULT 0;
