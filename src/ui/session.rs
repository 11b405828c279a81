//! Who is logged in: the header, logout, and the helper every server
//! function uses to find its caller.
use crate::api_types::Me;
use leptos::prelude::*;
use leptos_router::components::A;

#[cfg(feature = "ssr")]
pub async fn caller() -> Result<(crate::state::AppState, crate::accounts::SessionUser), ServerFnError> {
    let state = expect_context::<crate::state::AppState>();
    let session: tower_sessions::Session = leptos_axum::extract().await?;
    let user = crate::accounts::current_user(&session).await.ok_or_else(|| ServerFnError::new("not logged in"))?;
    Ok((state, user))
}

/// The caller, who must be a researcher or an admin.
#[cfg(feature = "ssr")]
pub async fn researcher() -> Result<(crate::state::AppState, crate::accounts::SessionUser), ServerFnError> {
    let (state, user) = caller().await?;
    if !user.role.may_research() {
        return Err(ServerFnError::new("researchers and admins only"));
    }
    Ok((state, user))
}

/// Maps a service error to a server-function error with its message.
#[cfg(feature = "ssr")]
pub fn sfn_error(e: crate::error::ServiceError) -> ServerFnError {
    ServerFnError::new(e.to_string())
}

#[server(prefix = "/sfn")]
pub async fn current_me() -> Result<Option<Me>, ServerFnError> {
    Ok(caller().await.ok().map(|(_, u)| Me {
        username: u.username.clone(),
        role: u.role.as_str().to_string(),
        home: u.role.home().to_string(),
    }))
}

#[server(prefix = "/sfn")]
pub async fn logout() -> Result<(), ServerFnError> {
    let session: tower_sessions::Session = leptos_axum::extract().await?;
    crate::accounts::log_out(&session).await.map_err(|e| ServerFnError::new(e.to_string()))?;
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
