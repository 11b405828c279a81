//! Accounts, password hashing and the session-backed current user.
pub mod standing;

use crate::domain::ids::UserId;
use crate::domain::role::Role;
use crate::login_limits::{LoginLimits, Refused};
use argon2::password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use serde::{Deserialize, Serialize};
use sqlx::AnyPool;
use tower_sessions::Session;

const SESSION_KEY: &str = "user";

/// What a session remembers about who is logged in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionUser {
    pub id: UserId,
    pub username: String,
    pub role: Role,
    /// The account's `session_epoch` at login: a later one ends the session
    /// ([`standing`]). Participants have none (0).
    #[serde(default)]
    pub epoch: i64,
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("username must be 1-64 characters of letters, digits, '.', '-' or '_'")]
    BadUsername,
    #[error("password must be at least 8 characters")]
    WeakPassword,
    #[error("user {0:?} already exists")]
    Exists(String),
    #[error("unknown username or wrong password")]
    BadCredentials,
    #[error(transparent)]
    Db(#[from] sqlx::Error),
    #[error("session store: {0}")]
    Session(String),
    #[error("password hashing: {0}")]
    Hash(String),
    #[error("{}", .0.message())]
    Refused(Refused),
}

/// Written here, not in `error.rs`: the error type sits below the features.
impl From<AuthError> for crate::error::ServiceError {
    fn from(e: AuthError) -> Self {
        use crate::error::ServiceError;
        match e {
            AuthError::BadCredentials => ServiceError::BadCredentials,
            AuthError::BadUsername | AuthError::WeakPassword => ServiceError::Invalid(e.to_string()),
            AuthError::Exists(_) => ServiceError::Conflict(e.to_string()),
            AuthError::Refused(r) => ServiceError::Refused(r),
            // The database out of reach is a 503 the client may retry, as on every other route.
            AuthError::Db(db) => ServiceError::from(db),
            AuthError::Session(_) | AuthError::Hash(_) => ServiceError::internal("accounts", e),
        }
    }
}

pub fn valid_username(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

pub fn hash_password(password: &str) -> Result<String, AuthError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| AuthError::Hash(e.to_string()))
}

fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
        .unwrap_or(false)
}

pub async fn add_user(db: &AnyPool, username: &str, role: Role, password: &str) -> Result<i64, AuthError> {
    if !valid_username(username) {
        return Err(AuthError::BadUsername);
    }
    if password.chars().count() < 8 {
        return Err(AuthError::WeakPassword);
    }
    let pw = password.to_string();
    let hash =
        tokio::task::spawn_blocking(move || hash_password(&pw)).await.map_err(|e| AuthError::Hash(e.to_string()))??;
    let res = sqlx::query_scalar::<_, i64>(
        "INSERT INTO users (username, role, password_hash, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(username)
    .bind(role.as_str())
    .bind(hash)
    .bind(crate::store::db::now_secs())
    .fetch_one(db)
    .await;
    match res {
        Ok(id) => Ok(id),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(AuthError::Exists(username.into())),
        Err(e) => Err(e.into()),
    }
}

/// Checks credentials within the login limits (`login_limits`): every login,
/// API or page, goes through here. Unknown users cost as much as wrong
/// passwords, so response times do not reveal which usernames exist.
pub async fn check_credentials(
    limits: &LoginLimits,
    db: &AnyPool,
    username: &str,
    password: &str,
    address: std::net::IpAddr,
) -> Result<SessionUser, AuthError> {
    let username = username.trim();
    let permit = limits.admit(username, address).await.map_err(AuthError::Refused)?;
    let result = verify_user(db, username, password).await;
    drop(permit);
    match &result {
        Ok(_) => limits.succeeded(username, address),
        Err(AuthError::BadCredentials) => limits.failed(valid_username(username).then_some(username), address),
        Err(_) => {}
    }
    result
}

async fn verify_user(db: &AnyPool, username: &str, password: &str) -> Result<SessionUser, AuthError> {
    let row: Option<(i64, String, String, i64, i64)> =
        sqlx::query_as("SELECT id, role, password_hash, session_epoch, disabled FROM users WHERE username = $1")
            .bind(username)
            .fetch_optional(db)
            .await?;
    // A disabled account costs a check as an unknown one does, and fails alike.
    let (id, role, hash, epoch) = match row {
        Some((id, role, hash, epoch, 0)) => (id, role, hash, epoch),
        _ => (0, String::new(), dummy_hash().to_string(), 0),
    };
    let pw = password.to_string();
    let ok = tokio::task::spawn_blocking(move || verify_password(&pw, &hash))
        .await
        .map_err(|e| AuthError::Hash(e.to_string()))?;
    match (ok, Role::parse(&role)) {
        // Participants have no password; their hash never verifies, and this says so twice.
        (true, Some(role)) if id != 0 && !role.is_participant() => {
            Ok(SessionUser { id: UserId::new(id), username: username.to_string(), role, epoch })
        }
        _ => Err(AuthError::BadCredentials),
    }
}

fn dummy_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| hash_password("not a real password").unwrap_or_default())
}

pub async fn log_in(session: &Session, user: &SessionUser) -> Result<(), AuthError> {
    // A new id on login defeats session fixation. A visitor who came without
    // a session cookie has an id nobody else knows and nothing stored under
    // it yet: cycling would only delete a row that is not there (a write,
    // and on SQLite a turn at the writer's gate, in every link arrival).
    if session.id().is_some() {
        session.cycle_id().await.map_err(|e| AuthError::Session(e.to_string()))?;
    }
    session.insert(SESSION_KEY, user).await.map_err(|e| AuthError::Session(e.to_string()))
}

pub async fn log_out(session: &Session) -> Result<(), AuthError> {
    session.flush().await.map_err(|e| AuthError::Session(e.to_string()))
}

/// Every account, by role then name (the admin page and `GET /api/v1/users`);
/// participants are listed per study (`GET /api/v1/studies/{id}/participants`).
pub async fn list_users(db: &AnyPool) -> Result<Vec<crate::api_types::UserSummary>, sqlx::Error> {
    let rows: Vec<(crate::domain::ids::UserId, String, String)> =
        sqlx::query_as("SELECT id, username, role FROM users WHERE role != 'participant' ORDER BY role, username")
            .fetch_all(db)
            .await?;
    Ok(rows.into_iter().map(|(id, username, role)| crate::api_types::UserSummary { id, username, role }).collect())
}

/// The session's user. A session that cannot be read (its store, the
/// database, cut for a moment: a PostgreSQL restart) is not "logged out":
/// one retry, then 503, so a participant's cookie is not taken for none.
/// A session whose account was disabled, signed out, or given another role
/// or password since is no user's ([`standing`]).
pub async fn current_user(session: &Session) -> Result<Option<SessionUser>, crate::error::ServiceError> {
    let user = match session.get::<SessionUser>(SESSION_KEY).await {
        Ok(user) => user,
        Err(first) => {
            tracing::warn!("reading a session failed, trying again: {first}");
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            session.get::<SessionUser>(SESSION_KEY).await.map_err(|e| {
                tracing::error!("reading a session failed twice: {e}");
                crate::error::ServiceError::Unavailable(crate::api_types::SESSION_UNREADABLE.into())
            })?
        }
    };
    match user {
        Some(u) if !standing::stands(&u).await? => Ok(None),
        other => Ok(other),
    }
}

/// A fresh random password for generated accounts (demo users).
pub fn generate_password() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::rngs::OsRng;
    (0..16).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The database out of reach at a login is the 503 every route gives
    /// (a verifier's login got a 500 while PostgreSQL was down).
    #[test]
    fn a_database_out_of_reach_is_a_503_not_an_internal_error() {
        use crate::error::ServiceError;
        for e in [sqlx::Error::PoolTimedOut, sqlx::Error::PoolClosed] {
            let said = ServiceError::from(AuthError::Db(e));
            assert_eq!(said.status(), axum::http::StatusCode::SERVICE_UNAVAILABLE, "{said:?}");
            assert_eq!(said.public_message(), crate::api_types::DB_UNREACHABLE);
        }
        let other = ServiceError::from(AuthError::Db(sqlx::Error::RowNotFound));
        assert_eq!(other.status(), axum::http::StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[test]
    fn hashes_verify_only_the_right_password() {
        let h = hash_password("correct horse").unwrap();
        assert!(h.starts_with("$argon2"));
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("wrong horse", &h));
        assert!(!verify_password("correct horse", "not a hash"));
    }

    #[test]
    fn usernames_are_restricted() {
        assert!(valid_username("ana.b-c_1"));
        assert!(!valid_username(""));
        assert!(!valid_username("a b"));
        assert!(!valid_username("../etc"));
        assert!(!valid_username(&"x".repeat(65)));
    }

    #[test]
    fn generated_passwords_are_long_and_differ() {
        let (a, b) = (generate_password(), generate_password());
        assert_eq!(a.len(), 16);
        assert_ne!(a, b);
    }
}
