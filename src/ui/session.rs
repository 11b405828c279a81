//! Who is logged in: the header, logout, and the helper every server
//! function uses to find its caller.
use crate::api_types::Me;
use leptos::prelude::*;
use leptos_router::components::A;

/// The logged-in user, if any; sets no status (pages ask this too).
#[cfg(feature = "ssr")]
async fn who() -> Result<(crate::state::AppState, Option<crate::accounts::SessionUser>), ServerFnError> {
    let state = expect_context::<crate::state::AppState>();
    let session: tower_sessions::Session = leptos_axum::extract().await?;
    let user = crate::accounts::current_user(&session).await;
    Ok((state, user))
}

/// The caller; not logged in is 401.
#[cfg(feature = "ssr")]
pub async fn caller() -> Result<(crate::state::AppState, crate::accounts::SessionUser), ServerFnError> {
    match who().await? {
        (state, Some(user)) => Ok((state, user)),
        (_, None) => Err(sfn_error(crate::error::ServiceError::Unauthorized)),
    }
}

/// The caller, who must be a researcher or an admin (else 403).
#[cfg(feature = "ssr")]
pub async fn researcher() -> Result<(crate::state::AppState, crate::accounts::SessionUser), ServerFnError> {
    let (state, user) = caller().await?;
    if !user.role.may_research() {
        return Err(sfn_error(crate::error::ServiceError::Forbidden("researchers and admins only".into())));
    }
    Ok((state, user))
}

/// The caller, who must be an admin (else 403).
#[cfg(feature = "ssr")]
pub async fn admin() -> Result<(crate::state::AppState, crate::accounts::SessionUser), ServerFnError> {
    let (state, user) = caller().await?;
    if !user.role.may_administer() {
        return Err(sfn_error(crate::error::ServiceError::Forbidden("admins only".into())));
    }
    Ok((state, user))
}

/// Maps a service error to a server-function error the way the API maps it:
/// the same status on a `/sfn/` call, the same message, internal details
/// only in the log. A page rendering on the server keeps its own status, and
/// so does a plain form post (no JavaScript yet), which leptos answers with a
/// redirect back to the form.
#[cfg(feature = "ssr")]
pub fn sfn_error(e: crate::error::ServiceError) -> ServerFnError {
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
        }
    }
    ServerFnError::new(e.public_message())
}

#[server(prefix = "/sfn")]
pub async fn current_me() -> Result<Option<Me>, ServerFnError> {
    Ok(who().await?.1.map(|u| Me {
        username: u.username.clone(),
        role: u.role.as_str().to_string(),
        home: u.role.home().to_string(),
    }))
}

#[server(prefix = "/sfn")]
pub async fn logout() -> Result<(), ServerFnError> {
    let session: tower_sessions::Session = leptos_axum::extract().await?;
    crate::accounts::log_out(&session).await.map_err(|e| sfn_error(e.into()))?;
    leptos_axum::redirect("/login");
    Ok(())
}

#[component]
pub fn Header() -> impl IntoView {
    // Refetched on navigation: logging in or out changes who is here
    // without a full page load.
    let location = leptos_router::hooks::use_location();
    let me = Resource::new(move || location.pathname.get(), |_| current_me());
    let logout = ServerAction::<Logout>::new();
    view! {
        <header class="top">
            <A href="/" attr:class="brand">"hardneg"</A>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    me.await.ok().flatten().map(|me| view! {
                        <nav aria-label="Areas" class="areas">
                            {crate::domain::role::Role::parse(&me.role).map(|r| r.areas()).unwrap_or_default().into_iter().map(|(href, text)| {
                                view! { <A href=href>{text}</A> }
                            }).collect_view()}
                        </nav>
                        <nav aria-label="Account">
                            <span class="who">{me.username.clone()} " (" {me.role.clone()} ")"</span>
                            <ActionForm action=logout>
                                <button type="submit" class="link">"Log out"</button>
                            </ActionForm>
                        </nav>
                    })
                })}
            </Suspense>
        </header>
    }
}
