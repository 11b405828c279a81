//! Pages, grouped by role. Each page module keeps its server functions
//! beside the components that call them.
use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::components::{Route, Router, Routes, A};
use leptos_router::path;

pub mod admin;
pub mod annotate;
pub mod audit;
pub mod compare;
pub mod compare_detail;
pub mod curation;
pub mod import;
pub mod link_panel;
pub mod login;
pub mod ranking;
pub mod ranking_compare;
pub mod research;
pub mod session;
pub mod take;

pub fn shell(options: LeptosOptions) -> impl IntoView {
    #[cfg(feature = "ssr")]
    crate::http::csp::set_on_page();
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="stylesheet" href=format!("/pkg/{}.css", options.output_name)/>
                <link rel="icon" href="/favicon.svg" type="image/svg+xml"/>
                <HydrationScripts options/>
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
    view! {
        <Title text="hardneg"/>
        <Router>
            <a class="skip" href="#main">"Skip to content"</a>
            <session::Header/>
            <main id="main" data-hydrated=move || hydrated.get().to_string()>
                <Routes fallback=|| view! { <p>"Page not found."</p> }>
                    <Route path=path!("/") view=Home/>
                    <Route path=path!("/login") view=login::LoginPage/>
                    <Route path=path!("/annotate") view=annotate::StudyList/>
                    <Route path=path!("/annotate/:id") view=annotate::SurveyPage/>
                    <Route path=path!("/research") view=research::ResearchPage/>
                    <Route path=path!("/research/compare") view=compare::ComparePage/>
                    <Route path=path!("/research/import") view=import::ImportPage/>
                    <Route path=path!("/research/studies/:id/adjudicate") view=curation::AdjudicatePage/>
                    <Route path=path!("/admin") view=admin::AdminPage/>
                    <Route path=path!("/take/:id") view=take::TakePage/>
                </Routes>
            </main>
        </Router>
    }
}

#[component]
fn Home() -> impl IntoView {
    let me = Resource::new(|| (), |_| session::current_me());
    view! {
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

/// Renders a server error for people, not for developers.
pub fn error_text(e: &ServerFnError) -> String {
    match e {
        ServerFnError::ServerError(msg) => msg.clone(),
        other => other.to_string(),
    }
}
