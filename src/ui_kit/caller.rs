//! Who is calling: the helpers every server function uses to find its
//! caller and check the role, and the same for a form post or an API
//! handler (`Caller`, an axum extractor).
use crate::accounts::{self, SessionUser};
use crate::error::ServiceError;
use crate::state::AppState;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use leptos::prelude::*;
use tower_sessions::Session;

/// The logged-in user, if any; sets no status (pages ask this too).
pub async fn who() -> Result<(AppState, Option<SessionUser>), ServerFnError> {
    let state = expect_context::<AppState>();
    let session: tower_sessions::Session = leptos_axum::extract().await?;
    // A session that cannot be read is the page's 503 too, not a 200 saying so.
    let user = accounts::current_user(&session).await.map_err(|e| match e {
        ServiceError::Unavailable(_) => subject_error(e),
        e => sfn_error(e),
    })?;
    Ok((state, user))
}

/// The caller; not logged in is 401.
pub async fn caller() -> Result<(AppState, SessionUser), ServerFnError> {
    match who().await? {
        (state, Some(user)) => Ok((state, user)),
        (_, None) => Err(sfn_error(ServiceError::Unauthorized)),
    }
}

/// [`caller`] for a page's subject loader: not logged in is the page's 401 ([`subject_error`]).
pub async fn subject_caller() -> Result<(AppState, SessionUser), ServerFnError> {
    match who().await? {
        (state, Some(user)) => Ok((state, user)),
        (_, None) => Err(subject_error(ServiceError::Unauthorized)),
    }
}

/// The caller, who must be a researcher or an admin (else 403).
pub async fn researcher() -> Result<(AppState, SessionUser), ServerFnError> {
    let (state, user) = caller().await?;
    if !user.role.may_research() {
        return Err(sfn_error(ServiceError::Forbidden("researchers and admins only".into())));
    }
    Ok((state, user))
}

/// The caller, who must be an admin (else 403).
pub async fn admin() -> Result<(AppState, SessionUser), ServerFnError> {
    let (state, user) = caller().await?;
    if !user.role.may_administer() {
        return Err(sfn_error(ServiceError::Forbidden("admins only".into())));
    }
    Ok((state, user))
}

/// Maps a service error to a server-function error the way the API maps it:
/// the same status on a `/sfn/` call, the same message, internal details
/// only in the log. A page rendering on the server keeps its own status, and
/// so does a plain form post (no JavaScript yet), which leptos answers with a
/// redirect back to the form.
pub fn sfn_error(e: ServiceError) -> ServerFnError {
    let called = use_context::<axum::http::request::Parts>().is_some_and(|p| {
        let html = p
            .headers
            .get(axum::http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/html"));
        p.uri.path().starts_with("/sfn/") && !html
    });
    if called {
        if let Some(options) = use_context::<leptos_axum::ResponseOptions>() {
            options.set_status(e.status());
            if let ServiceError::Unavailable(_) = &e {
                let wait = axum::http::HeaderValue::from(crate::api_types::RETRY_AFTER_SECS);
                options.insert_header(axum::http::header::RETRY_AFTER, wait);
            }
        }
    }
    ServerFnError::new(e.public_message())
}

/// [`sfn_error`] for the server function that loads a page's subject (the
/// study of `/take/{id}`): a page rendered on the server that cannot show
/// it answers with the error's status (404 for an id that names nothing, 403
/// for a study that is not the caller's), not a 200 that says so. Only pages
/// rendered whole before sending (`SsrMode::Async`) can set it this late.
pub fn subject_error(e: ServiceError) -> ServerFnError {
    let page = use_context::<axum::http::request::Parts>()
        .is_some_and(|p| p.method == axum::http::Method::GET && !p.uri.path().starts_with("/sfn/"));
    if page {
        if let Some(options) = use_context::<leptos_axum::ResponseOptions>() {
            options.set_status(e.status());
            if let ServiceError::Unavailable(_) = &e {
                let wait = axum::http::HeaderValue::from(crate::api_types::RETRY_AFTER_SECS);
                options.insert_header(axum::http::header::RETRY_AFTER, wait);
            }
        }
    }
    sfn_error(e)
}

/// The logged-in caller; 401 when there is none.
pub struct Caller(pub SessionUser);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ServiceError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let session = Session::from_request_parts(parts, state)
            .await
            .map_err(|(_, why)| ServiceError::Internal(format!("session layer missing: {why}")))?;
        accounts::current_user(&session).await?.map(Caller).ok_or(ServiceError::Unauthorized)
    }
}

/// A caller who may research; checked before the request's path, query and
/// body are read, so that a caller without the role learns nothing of them.
pub struct Researcher(pub SessionUser);

impl<S: Send + Sync> FromRequestParts<S> for Researcher {
    type Rejection = ServiceError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Caller::from_request_parts(parts, state).await?.researcher().map(Researcher)
    }
}

/// A caller who may answer surveys (an annotator or a participant), checked
/// like [`Researcher`] before the path, query and body are read.
pub struct Annotates(pub SessionUser);

impl<S: Send + Sync> FromRequestParts<S> for Annotates {
    type Rejection = ServiceError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Caller(user) = Caller::from_request_parts(parts, state).await?;
        if !(user.role.may_annotate() || user.role.is_participant()) {
            return Err(ServiceError::Forbidden("only annotators answer surveys".into()));
        }
        Ok(Annotates(user))
    }
}

/// A participant who arrived by a study link, checked like [`Researcher`]
/// before the path, query and body are read (the participant routes).
pub struct Participant(pub SessionUser);

impl<S: Send + Sync> FromRequestParts<S> for Participant {
    type Rejection = ServiceError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Caller(user) = Caller::from_request_parts(parts, state).await?;
        crate::studies::link::participants_only(&user)?;
        Ok(Participant(user))
    }
}

/// [`Researcher`] for the admin's routes.
pub struct Admin(pub SessionUser);

impl<S: Send + Sync> FromRequestParts<S> for Admin {
    type Rejection = ServiceError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Caller::from_request_parts(parts, state).await?.admin().map(Admin)
    }
}

impl Caller {
    pub fn researcher(self) -> Result<SessionUser, ServiceError> {
        if self.0.role.may_research() {
            Ok(self.0)
        } else {
            Err(ServiceError::Forbidden("researchers and admins only".into()))
        }
    }

    pub fn admin(self) -> Result<SessionUser, ServiceError> {
        if self.0.role.may_administer() {
            Ok(self.0)
        } else {
            Err(ServiceError::Forbidden("admins only".into()))
        }
    }
}
