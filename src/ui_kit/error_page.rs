//! Error pages for people (403, 404 from the form posts, 500), in the
//! app's page shell (`page.rs`), built without the Leptos app: they answer
//! where no page renders (the page guard, a form post, a panic). Internal
//! details stay in the log (`ServiceError::public_message`).
use super::page;
use crate::accounts::SessionUser;
use crate::error::ServiceError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use leptos::prelude::*;

/// What an error page says: a heading, one sentence, one link on.
pub struct ErrorPage<'a> {
    pub status: StatusCode,
    pub title: &'a str,
    pub message: &'a str,
    pub link: (&'a str, &'a str),
    pub who: Option<&'a SessionUser>,
}

impl ErrorPage<'_> {
    pub fn html(&self) -> String {
        let (code, message) = (self.status.as_u16(), self.message.to_string());
        let (href, label, title) = (self.link.0.to_string(), self.link.1.to_string(), self.title.to_string());
        page::document(
            self.title,
            self.who,
            view! {
                <section class="error-page" data-status=code>
                    <h1>{title}</h1>
                    <p>{message}</p>
                    <p><a href=href>{label}</a></p>
                </section>
            },
        )
    }
}

impl IntoResponse for ErrorPage<'_> {
    fn into_response(self) -> Response {
        page::respond(self.status, self.html())
    }
}

/// A refused or failed form post, with a link back to the page it came from.
pub fn service_error(e: ServiceError, back: &str) -> Response {
    let status = e.status();
    // A participant's form (`/take/…`): the login page refuses participants.
    if status == StatusCode::UNAUTHORIZED && back.starts_with("/take/") {
        let (title, message) = ("Your session has ended", crate::api_types::PARTICIPANT_SESSION_GONE);
        return ErrorPage { status, title, message, link: (back, "Back to the study"), who: None }.into_response();
    }
    let title = match status {
        StatusCode::UNAUTHORIZED => "Please log in",
        StatusCode::FORBIDDEN => "Not allowed",
        StatusCode::NOT_FOUND => "Not found",
        StatusCode::SERVICE_UNAVAILABLE => "Please try again in a moment",
        s if s.is_server_error() => "Something went wrong",
        _ => "That did not work",
    };
    let message = e.public_message();
    let link = if status == StatusCode::UNAUTHORIZED { ("/login", "Log in") } else { (back, "Go back") };
    let mut res = ErrorPage { status, title, message: &message, link, who: None }.into_response();
    if let ServiceError::Unavailable(_) = e {
        res.headers_mut().insert(axum::http::header::RETRY_AFTER, crate::api_types::RETRY_AFTER_SECS.into());
    }
    res
}

/// For `CatchPanicLayer`: a panic in a handler is a 500 page (the panic is logged).
pub fn panicked(panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)");
    tracing::error!(panic = what, "a request handler panicked");
    ErrorPage {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        title: "Something went wrong",
        message: "The server could not answer this request. It has been logged; please try again.",
        link: ("/", "Go to the start page"),
        who: None,
    }
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_escapes_what_it_shows_and_has_one_heading() {
        let page = ErrorPage {
            status: StatusCode::FORBIDDEN,
            title: "Not for <you>",
            message: "a \"quoted\" & <b>bold</b> claim",
            link: ("/x?a=1&b=2", "Back"),
            who: None,
        }
        .html();
        assert!(page.contains("<h1>Not for &lt;you&gt;</h1>"), "{page}");
        assert!(page.contains("a \"quoted\" &amp; &lt;b&gt;bold&lt;/b&gt; claim"), "{page}");
        assert!(page.contains(r#"href="/x?a=1&amp;b=2""#), "{page}");
        assert_eq!(page.matches("<h1>").count(), 1);
        assert!(page.contains("<title>Not for &lt;you&gt; — hardneg</title>"), "{page}");
        assert!(page.contains(r#"class="top""#), "the app's header");
    }

    #[tokio::test]
    async fn a_panic_is_a_500_page_that_does_not_show_the_panic() {
        let res = panicked(Box::new("secret detail at db.rs:12".to_string()));
        assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(res.into_body(), 1 << 20).await.unwrap();
        let html = String::from_utf8(body.to_vec()).unwrap();
        assert!(html.contains("<h1>Something went wrong</h1>"), "{html}");
        assert!(!html.contains("secret detail"), "the panic stays in the log: {html}");
    }
}
