//! An account's standing, checked on every request: a session is the
//! account's only while the account is not disabled and, for a password
//! account, has the session's role and epoch (`users.session_epoch` grows
//! when its sessions are ended: a new password, a new role, `hardneg user
//! sign-out`). The CLI changes the table and a running server sees it
//! within [`FRESH`]: each account's row is read at most once in that time,
//! so the answer's hot path costs a map lookup, not a query.
use super::SessionUser;
use crate::domain::ids::UserId;
use crate::domain::role::Role;
use crate::error::ServiceError;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a read of an account's row is trusted.
pub const FRESH: Duration = Duration::from_secs(2);

/// Accounts remembered at most; past it the map starts again (a flood of
/// new participants costs one read each, as it did).
const REMEMBERED: usize = 100_000;

/// (epoch, disabled, role), as read at the instant (no role: none known).
type Row = (i64, bool, Option<Role>, Instant);

struct Standing {
    db: AnyPool,
    rows: Mutex<HashMap<UserId, Row>>,
}

static STANDING: OnceLock<Standing> = OnceLock::new();

/// Checks sessions against `db` from now on (`hardneg serve`); without it
/// (a command, a unit test) every session stands.
pub fn watch(db: AnyPool) {
    let _ = STANDING.set(Standing { db, rows: Mutex::new(HashMap::new()) });
}

/// Whether the session's user still stands. A database out of reach is
/// `Unavailable` (503), as a session that cannot be read is.
pub async fn stands(user: &SessionUser) -> Result<bool, ServiceError> {
    let Some(s) = STANDING.get() else { return Ok(true) };
    let cached = s.rows.lock().unwrap_or_else(|e| e.into_inner()).get(&user.id).copied();
    let row = match cached {
        Some(row) if row.3.elapsed() < FRESH => row,
        _ => {
            let read: Option<(i64, i64, String)> =
                sqlx::query_as("SELECT session_epoch, disabled, role FROM users WHERE id = $1")
                    .bind(user.id)
                    .fetch_optional(&s.db)
                    .await?;
            // An account deleted from the table stands nowhere.
            let row = read.map_or((i64::MIN, true, None, Instant::now()), |(epoch, disabled, role)| {
                (epoch, disabled != 0, Role::parse(&role), Instant::now())
            });
            let mut rows = s.rows.lock().unwrap_or_else(|e| e.into_inner());
            if rows.len() >= REMEMBERED {
                rows.clear();
            }
            rows.insert(user.id, row);
            row
        }
    };
    Ok(standing_of(user, (row.0, row.1, row.2)))
}

/// The rule: never when disabled; a participant (no password, no role to
/// change) otherwise always; a password account with the same role and epoch.
fn standing_of(user: &SessionUser, (epoch, disabled, role): (i64, bool, Option<Role>)) -> bool {
    !disabled && (user.role.is_participant() || (Some(user.role) == role && user.epoch == epoch))
}

/// What `hardneg user` changes: each ends the account's sessions, but
/// `Enable`, which lets it log in again.
pub enum Change {
    Disable,
    Enable,
    SignOut,
    Role(crate::domain::role::Role),
    PasswordHash(String),
}

/// Applies `change` to account `username`; Err when there is no such account.
pub async fn change(db: &AnyPool, username: &str, change: Change) -> Result<(), ServiceError> {
    let (sql, text): (&str, Option<String>) = match change {
        Change::Disable => ("UPDATE users SET disabled = 1, session_epoch = session_epoch + 1 WHERE username = $1", None),
        Change::Enable => ("UPDATE users SET disabled = 0 WHERE username = $1", None),
        Change::SignOut => ("UPDATE users SET session_epoch = session_epoch + 1 WHERE username = $1", None),
        Change::Role(role) => (
            "UPDATE users SET role = $2, session_epoch = session_epoch + 1 WHERE username = $1 AND role <> 'participant'",
            Some(role.as_str().to_string()),
        ),
        Change::PasswordHash(hash) => (
            "UPDATE users SET password_hash = $2, session_epoch = session_epoch + 1
             WHERE username = $1 AND role <> 'participant'",
            Some(hash),
        ),
    };
    let mut q = sqlx::query(sql).bind(username);
    if let Some(t) = text {
        q = q.bind(t);
    }
    if q.execute(db).await?.rows_affected() == 0 {
        return Err(ServiceError::NotFound(format!("no account {username:?} (participants have no password or role)")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(role: Role, epoch: i64) -> SessionUser {
        SessionUser { id: UserId::new(3), username: "u".into(), role, epoch }
    }

    #[test]
    fn a_session_stands_while_its_account_keeps_its_role_and_epoch_and_is_not_disabled() {
        assert!(standing_of(&user(Role::Researcher, 2), (2, false, Some(Role::Researcher))));
        assert!(!standing_of(&user(Role::Researcher, 1), (2, false, Some(Role::Researcher))), "signed out since");
        assert!(!standing_of(&user(Role::Researcher, 2), (2, false, Some(Role::Annotator))), "another role now");
        assert!(!standing_of(&user(Role::Researcher, 2), (2, true, Some(Role::Researcher))), "disabled");
        assert!(
            standing_of(&user(Role::Participant, 0), (5, false, Some(Role::Participant))),
            "no epoch for participants"
        );
        assert!(!standing_of(&user(Role::Participant, 0), (0, true, Some(Role::Participant))));
        assert!(!standing_of(&user(Role::Admin, 0), (i64::MIN, true, None)), "a deleted account");
    }
}
