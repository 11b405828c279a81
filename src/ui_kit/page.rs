//! Pages served without the Leptos app, where no app page renders: the
//! join link's pages, error pages (the page guard, a form post, a panic)
//! and a survey kind's no-JavaScript form that needs a second page. They
//! share the app's head (`HeadLinks`: the content-hashed stylesheet) and
//! header, and are rendered by Leptos, which escapes what they show. No
//! script: they work the same with JavaScript off.
use super::HeadLinks;
use crate::accounts::SessionUser;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use leptos::prelude::*;
use std::sync::OnceLock;

/// The client's file stem (`hardneg.<hash>`), set once at start: a panic
/// page has no state to read it from.
static OUTPUT_NAME: OnceLock<String> = OnceLock::new();

pub fn set_output_name(name: &str) {
    let _ = OUTPUT_NAME.set(name.to_string());
}

fn output_name() -> String {
    OUTPUT_NAME.get().cloned().unwrap_or_else(|| "hardneg".to_string())
}

/// A whole page: `title` in the tab (after the app's name, as the app's
/// pages do), the app's header with `who` when logged in, `body` in `<main>`.
pub fn document(title: &str, who: Option<&SessionUser>, body: impl IntoView + 'static) -> String {
    let title = if title == "hardneg" { title.to_string() } else { format!("{title} — hardneg") };
    // One text: adjacent texts would get the hydration markers (`<!>`) between them.
    let who = who.map(|u| format!("{} ({})", u.username, u.role.as_str()));
    Owner::new().with(move || {
        view! {
            <!DOCTYPE html>
            <html lang="en">
                <head>
                    <HeadLinks output_name=output_name()/>
                    <title>{title}</title>
                </head>
                <body>
                    <a class="skip-link" href="#main">"Skip to content"</a>
                    <header class="top">
                        <a href="/" class="brand">"hardneg"</a>
                        {who.map(|who| view! { <nav aria-label="Account"><span class="who">{who}</span></nav> })}
                    </header>
                    <main id="main">{body}</main>
                </body>
            </html>
        }
        .to_html()
    })
}

/// `ui::csp::policy` for a page with no inline script: every page rendered
/// here (join pages, form error pages) has none.
pub const WITHOUT_INLINE_SCRIPTS: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
     img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

/// The page as an answer with `status`; revalidated on every use.
pub fn respond(status: StatusCode, html: String) -> Response {
    let mut res = (status, Html(html)).into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    res.headers_mut().insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(WITHOUT_INLINE_SCRIPTS));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_the_apps_head_and_header_and_escapes_what_it_shows() {
        let page = document("A <b> & \"c\"", None, view! { <p>{"x < y".to_string()}</p> });
        assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
        assert!(page.contains(r#"<link rel="stylesheet" href="/pkg/hardneg"#), "{page}");
        assert!(page.contains("<title>A &lt;b&gt; &amp; \"c\" — hardneg</title>"), "{page}");
        assert!(page.contains(r#"<header class="top">"#) && page.contains(r##"href="#main""##), "{page}");
        assert!(page.contains("<p>x &lt; y</p>"), "{page}");
        assert!(!page.contains("<script"), "no script: {page}");
    }
}
