//! Pages, grouped by role. Each page module keeps its server functions
//! beside the components that call them: `*_page.rs` a page of its own,
//! `*_panel.rs` a section of one. A kind's own task card is in its folder
//! (`kinds::ui`), what cards and pages share in `ui_kit`.
use crate::ui_kit::HeadLinks;
pub use crate::ui_kit::{count_of, error_text};
use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::components::{Route, Router, Routes, A};
use leptos_router::{path, SsrMode};

pub mod adaptive_panel;
pub mod adjudication_notice;
pub mod admin;
pub mod annotate;
pub mod answer_input;
pub mod audit_panel;
pub mod compare_detail;
pub mod compare_page;
#[cfg(feature = "ssr")]
pub mod csp;
pub mod curation;
pub mod dashboard_panel;
pub mod health_banner;
pub mod import_page;
pub mod link_panel;
pub mod live_panel;
pub mod login;
pub mod prolific_panel;
pub mod research_page;
pub mod session;
mod shared;
pub mod take;
pub use shared::{hydrated, Hydrated, NeedsScript};

/// Answers by key before the wasm has loaded (choice cards only).
const EARLY_KEYS: &str = include_str!("early_keys.js");

pub fn shell(options: LeptosOptions) -> impl IntoView {
    #[cfg(feature = "ssr")]
    csp::set_on_page();
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <HeadLinks output_name=options.output_name.to_string()/>
                <HydrationScripts options/>
                // Inline: it must work before any file has loaded.
                <script nonce=leptos::nonce::use_nonce() inner_html=EARLY_KEYS></script>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    // Flipped only in the browser: tests wait for it to know hydration ran.
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    provide_context(Hydrated(hydrated.read_only()));
    view! {
        // Each page sets its own title text; this names the app after it.
        <Title text="hardneg" formatter=|text: String| if text == "hardneg" { text } else { format!("{text} — hardneg") }/>
        <Router>
            <a class="skip-link" href="#main">"Skip to content"</a>
            <session::Header/>
            <main id="main" data-hydrated=move || hydrated.get().to_string()>
                <Routes fallback=NotFound>
                    <Route path=path!("/") view=Home/>
                    <Route path=path!("/login") view=login::LoginPage/>
                    // Rendered whole before sending (no streamed parts that
                    // need a script to show): the survey works without JavaScript.
                    <Route path=path!("/annotate") view=annotate::StudyList ssr=SsrMode::Async/>
                    <Route path=path!("/annotate/:id") view=annotate::SurveyPage ssr=SsrMode::Async/>
                    <Route path=path!("/research") view=research_page::ResearchPage/>
                    <Route path=path!("/research/compare") view=compare_page::ComparePage/>
                    <Route path=path!("/research/import") view=import_page::ImportPage/>
                    // Whole before sending, so a study that is not there answers 404.
                    <Route path=path!("/research/studies/:id/adjudicate") view=curation::AdjudicatePage ssr=SsrMode::Async/>
                    <Route path=path!("/admin") view=admin::AdminPage/>
                    <Route path=path!("/take/:id") view=take::TakePage ssr=SsrMode::Async/>
                </Routes>
            </main>
        </Router>
    }
}

#[component]
fn Home() -> impl IntoView {
    let me = Resource::new(|| (), |_| session::current_me());
    view! {
        <Title text="hardneg"/>
        <h1>"hardneg"</h1>
        <p>"Human curation of vision-language compositionality benchmarks."</p>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match me.await.ok().flatten() {
                    Some(me) => view! { <p><A href=me.home>"Continue to your page"</A></p> }.into_any(),
                    None => view! { <p><A href="/login">"Log in"</A></p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// Any path no page answers: a 404 with the app around it.
#[component]
fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(res) = use_context::<leptos_axum::ResponseOptions>() {
        res.set_status(axum::http::StatusCode::NOT_FOUND);
    }
    view! {
        <Title text="Page not found"/>
        <section class="error-page" data-status="404">
            <h1>"Page not found"</h1>
            <p>"There is no page at this address."</p>
            <p><A href="/">"Go to the start page"</A></p>
        </section>
    }
}
