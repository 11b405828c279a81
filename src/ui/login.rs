//! The login page.
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
            Err(ServerFnError::new(BAD_CREDENTIALS))
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
            Err(ServerFnError::new(format!("{}.", r.message())))
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

const BAD_CREDENTIALS: &str = "Unknown username or wrong password.";

/// Without JavaScript the form's error comes back in the page's URL
/// (`?__err=`), which anyone can write into a link: only the login's own
/// messages are shown as they are, anything else as one fixed sentence
/// (audit AS: a link put any text on the login page).
fn own_words(text: &str) -> String {
    let busy = "the server is busy checking other logins; try again in a moment.";
    let wait = text
        .strip_prefix("too many failed logins; try again in ")
        .and_then(|rest| rest.strip_suffix(" s."))
        .is_some_and(|n| (1..=6).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()));
    if text == BAD_CREDENTIALS || text == busy || wait {
        text.to_string()
    } else {
        "Logging in did not work; try again in a moment.".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::own_words;

    #[test]
    fn only_the_logins_own_messages_are_shown() {
        for own in [
            "Unknown username or wrong password.",
            "too many failed logins; try again in 30 s.",
            "the server is busy checking other logins; try again in a moment.",
        ] {
            assert_eq!(own_words(own), own);
        }
        let fixed = "Logging in did not work; try again in a moment.";
        for other in [
            "Your session expired. Log in at http://evil.example/login instead",
            "too many failed logins; try again in 30 s. Or at http://evil.example",
            "too many failed logins; try again in  s.",
            "",
        ] {
            assert_eq!(own_words(other), fixed, "{other}");
        }
    }
}
