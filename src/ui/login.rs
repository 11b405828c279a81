//! The login page.
use crate::domain::login_words::own_words;
use leptos::prelude::*;

#[server(prefix = "/sfn")]
pub async fn login(username: String, password: String) -> Result<(), ServerFnError> {
    use crate::accounts;
    use crate::ui::session::sfn_error;
    let state = expect_context::<crate::state::AppState>();
    let session: tower_sessions::Session = leptos_axum::extract().await?;
    let axum::Extension(crate::login_limits::ClientAddr(client)) = leptos_axum::extract().await?;
    match accounts::check_credentials(&state.logins, &state.db, &username, &password, client).await {
        Ok(user) => {
            accounts::log_in(&session, &user).await.map_err(|e| sfn_error(e.into()))?;
            leptos_axum::redirect(user.role.home());
            Ok(())
        }
        Err(accounts::AuthError::BadCredentials) => {
            sfn_error(crate::error::ServiceError::BadCredentials);
            Err(ServerFnError::new(crate::domain::login_words::BAD_CREDENTIALS))
        }
        Err(accounts::AuthError::Refused(r)) => {
            // The page shows the message; the status and Retry-After are for clients.
            if let Some(res) = use_context::<leptos_axum::ResponseOptions>() {
                res.set_status(if matches!(r, crate::login_limits::Refused::Busy) {
                    axum::http::StatusCode::SERVICE_UNAVAILABLE
                } else {
                    axum::http::StatusCode::TOO_MANY_REQUESTS
                });
                res.insert_header(axum::http::header::RETRY_AFTER, r.retry_after().into());
            }
            Err(ServerFnError::new(r.sentence()))
        }
        Err(e) => Err(sfn_error(e.into())),
    }
}

#[component]
pub fn LoginPage() -> impl IntoView {
    let action = ServerAction::<Login>::new();
    let error = move || action.value().get().and_then(|r| r.err()).map(|e| own_words(&super::error_text(&e)));
    view! {
        <section class="login">
            <leptos_meta::Title text="Log in"/>
            <h1>"Log in"</h1>
            <ActionForm action=action>
                <label>"Username" <input type="text" name="username" autocomplete="username" required autofocus/></label>
                <label>"Password" <input type="password" name="password" autocomplete="current-password" required/></label>
                <button type="submit" disabled=move || action.pending().get()>"Log in"</button>
            </ActionForm>
            <p class="error" role="alert">{error}</p>
        </section>
    }
}
