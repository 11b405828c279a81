//! Error pages for people (403, 404 from the form posts, 500), styled like
//! the app and with its header, built without the Leptos app: they answer
//! where no page renders (the page guard, a form post, a panic). Messages
//! are escaped; internal details stay in the log (`ServiceError::public_message`).
use crate::accounts::SessionUser;
use crate::error::ServiceError;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use std::sync::OnceLock;

/// The client's file stem (`hardneg.<hash>`), set once at start so every
/// error page links the current stylesheet.
static OUTPUT_NAME: OnceLock<String> = OnceLock::new();

pub fn set_output_name(name: &str) {
    let _ = OUTPUT_NAME.set(name.to_string());
}

/// The current stylesheet's URL, for pages built outside the Leptos app.
pub fn stylesheet_href() -> String {
    format!("/pkg/{}.css", OUTPUT_NAME.get().map(String::as_str).unwrap_or("hardneg"))
}

pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

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
        let css = OUTPUT_NAME.get().map(String::as_str).unwrap_or("hardneg");
        let who = self
            .who
            .map(|u| {
                format!(
                    r#"<nav aria-label="Account"><span class="who">{} ({})</span></nav>"#,
                    escape(&u.username),
                    u.role.as_str()
                )
            })
            .unwrap_or_default();
        format!(
            r##"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"/><meta name="viewport" content="width=device-width, initial-scale=1"/><title>{title} — hardneg</title><link rel="stylesheet" href="/pkg/{css}.css"/><link rel="icon" href="{icon}"/></head><body><a class="skip" href="#main">Skip to content</a><header class="top"><a href="/" class="brand">hardneg</a>{who}</header><main id="main"><section class="error-page" data-status="{code}"><h1>{title}</h1><p>{message}</p><p><a href="{href}">{label}</a></p></section></main></body></html>"##,
            title = escape(self.title),
            icon = crate::ui::FAVICON,
            code = self.status.as_u16(),
            message = escape(self.message),
            href = escape(self.link.0),
            label = escape(self.link.1),
        )
    }
}

impl IntoResponse for ErrorPage<'_> {
    fn into_response(self) -> Response {
        let mut res = (self.status, Html(self.html())).into_response();
        res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        res
    }
}

/// A refused or failed form post, with a link back to the page it came from.
pub fn service_error(e: ServiceError, back: &str) -> Response {
    let status = e.status();
    let title = match status {
        StatusCode::UNAUTHORIZED => "Please log in",
        StatusCode::FORBIDDEN => "Not allowed",
        StatusCode::NOT_FOUND => "Not found",
        s if s.is_server_error() => "Something went wrong",
        _ => "That did not work",
    };
    let message = e.public_message();
    let link = if status == StatusCode::UNAUTHORIZED { ("/login", "Log in") } else { (back, "Go back") };
    ErrorPage { status, title, message: &message, link, who: None }.into_response()
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
        assert!(page.contains("a &quot;quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt; claim"), "{page}");
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
