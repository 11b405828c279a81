//! Admin page: accounts and the state of every study.
use super::error_text;
use super::research_page::StudiesOverview;
#[cfg(feature = "ssr")]
use super::session;
use crate::api_types::UserSummary;
use leptos::prelude::*;

#[server(prefix = "/sfn")]
pub async fn list_users() -> Result<Vec<UserSummary>, ServerFnError> {
    let (state, _) = session::admin().await?;
    crate::accounts::list_users(&state.db).await.map_err(|e| session::sfn_error(e.into()))
}

#[component]
pub fn AdminPage() -> impl IntoView {
    let users = Resource::new(|| (), |_| list_users());
    view! {
        <leptos_meta::Title text="Administration"/>
        <h1>"Administration"</h1>
        <super::NeedsScript/>
        <h2>"Accounts"</h2>
        <p class="hint">"Add accounts with " <code>"hardneg user add NAME --role ROLE --password-stdin"</code> "."</p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match users.await {
                    Err(e) => view! { <p class="error">{error_text(&e)}</p> }.into_any(),
                    Ok(list) => view! {
                        <table class="data users" tabindex="0">
                            <thead><tr><th scope="col">"Username"</th><th scope="col">"Role"</th></tr></thead>
                            <tbody>
                                {list.into_iter().map(|u| view! { <tr><td>{u.username}</td><td>{u.role}</td></tr> }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any(),
                }
            })}
        </Suspense>
        // Each study is a heading of its own (h2), beside "Accounts".
        <p class="hint">"Every study, as on the " <a href="/research">"research page"</a> ":"</p>
        <StudiesOverview/>
    }
}
