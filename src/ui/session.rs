//! Who is logged in: the header and logout. The helpers every server
//! function uses to find its caller are in `ui_kit::caller`.
use crate::api_types::Me;
use crate::domain::role::Role;
use leptos::prelude::*;
use leptos_router::components::A;

#[cfg(feature = "ssr")]
use crate::ui_kit::caller::who;
#[cfg(feature = "ssr")]
pub use crate::ui_kit::caller::{admin, caller, researcher, sfn_error, subject_caller, subject_error};

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
    // without a full page load. A participant gets no account controls: it
    // has no password to log back in with, and leaves by "Return this study".
    let location = leptos_router::hooks::use_location();
    let me = Resource::new(move || location.pathname.get(), |_| current_me());
    let logout = ServerAction::<Logout>::new();
    view! {
        <header class="top">
            <A href="/" attr:class="brand">"hardneg"</A>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    let me = me.await.ok().flatten();
                    me.filter(|me| me.role != Role::Participant.as_str()).map(|me| view! {
                        <nav aria-label="Areas" class="areas">
                            {Role::parse(&me.role).map(|r| r.areas()).unwrap_or_default().into_iter().map(|(href, text)| {
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
