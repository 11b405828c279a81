//! Pages, grouped by role. Each page module keeps its server functions
//! beside the components that call them.
use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::components::{Route, Router, Routes, A};
use leptos_router::{path, SsrMode};

pub mod adaptive_panel;
pub mod admin;
pub mod annotate;
pub mod audit;
pub mod caption_writing;
pub mod card_head;
pub mod compare;
pub mod compare_detail;
#[cfg(feature = "ssr")]
pub mod csp;
pub mod curation;
pub mod dashboard;
pub mod import;
pub mod link_panel;
pub mod login;
pub mod ranking;
pub mod ranking_compare;
pub mod research;
pub mod session;
pub mod take;
pub mod triplet_check;

/// The icon inline (no request, nothing to cache or miss); assets/favicon.svg
/// is the same drawing for those who fetch `/favicon.svg`.
pub const FAVICON: &str = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E\
%3Crect width='32' height='32' rx='6' fill='%231d4ed8'/%3E%3Cpath d='M8 22 L14 10 L20 22 Z' fill='%23fff'/%3E\
%3Ccircle cx='23' cy='12' r='4' fill='%23facc15'/%3E%3C/svg%3E";

/// Answers by key before the wasm has loaded (choice cards only).
const EARLY_KEYS: &str = include_str!("early_keys.js");

/// What every page's head starts with, the app's and those served without
/// it (`http::page`): the client's stylesheet by its content-hashed name.
#[component]
pub fn HeadLinks(output_name: String) -> impl IntoView {
    view! {
        <meta charset="utf-8"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <link rel="stylesheet" href=format!("/pkg/{output_name}.css")/>
        <link rel="icon" href=FAVICON type="image/svg+xml"/>
    }
}

/// Whether the client has hydrated the page (false on the server and
/// without JavaScript): what only works with the wasm waits for it.
#[derive(Clone, Copy)]
pub struct Hydrated(pub ReadSignal<bool>);

/// False where no app provides it (a component rendered on its own).
pub fn hydrated() -> bool {
    use_context::<Hydrated>().is_some_and(|h| h.0.get())
}

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
            <a class="skip" href="#main">"Skip to content"</a>
            <session::Header/>
            <main id="main" data-hydrated=move || hydrated.get().to_string()>
                <Routes fallback=NotFound>
                    <Route path=path!("/") view=Home/>
                    <Route path=path!("/login") view=login::LoginPage/>
                    // Rendered whole before sending (no streamed parts that
                    // need a script to show): the survey works without JavaScript.
                    <Route path=path!("/annotate") view=annotate::StudyList ssr=SsrMode::Async/>
                    <Route path=path!("/annotate/:id") view=annotate::SurveyPage ssr=SsrMode::Async/>
                    <Route path=path!("/research") view=research::ResearchPage/>
                    <Route path=path!("/research/compare") view=compare::ComparePage/>
                    <Route path=path!("/research/import") view=import::ImportPage/>
                    <Route path=path!("/research/studies/:id/adjudicate") view=curation::AdjudicatePage/>
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

/// Renders a server error for people, not for developers.
pub fn error_text(e: &ServerFnError) -> String {
    match e {
        ServerFnError::ServerError(msg) => msg.clone(),
        other => other.to_string(),
    }
}

/// A research-page panel that only some studies have (a study link, adaptive
/// overlap): `fetch` answers None for the others, which show nothing.
pub fn study_panel<T, Fut, V>(
    study_id: i64,
    fetch: fn(crate::domain::ids::StudyId) -> Fut,
    card: fn(T) -> V,
) -> impl IntoView
where
    T: Clone + Send + Sync + serde::Serialize + serde::de::DeserializeOwned + 'static,
    Fut: std::future::Future<Output = Result<Option<T>, ServerFnError>> + Send + 'static,
    V: IntoView + 'static,
{
    let panel = Resource::new(move || crate::domain::ids::StudyId::new(study_id), fetch);
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                match panel.await {
                    Err(e) => Some(view! { <p class="error">{error_text(&e)}</p> }.into_any()),
                    Ok(None) => None,
                    Ok(Some(p)) => Some(card(p).into_any()),
                }
            })}
        </Suspense>
    }
}
