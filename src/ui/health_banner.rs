//! On the research page: a warning while the server cannot write (its disk
//! is full), refreshed with the page's live figures. Answers are refused
//! with 503 meanwhile; participants' pages keep theirs and send them again.
#[cfg(feature = "ssr")]
use super::session;
use leptos::prelude::*;

/// Since when writes are refused (unix seconds); None while they succeed.
#[server(prefix = "/sfn")]
pub async fn writes_failing() -> Result<Option<i64>, ServerFnError> {
    session::researcher().await?;
    Ok(crate::store::health::failing_since())
}

/// Polled every few seconds once hydrated; rendered on the server too.
#[component]
pub fn WritesFailing() -> impl IntoView {
    let tick = RwSignal::new(0u32);
    let failing = Resource::new(move || tick.get(), |_| writes_failing());
    #[cfg(feature = "hydrate")]
    {
        let handle = set_interval_with_handle(move || tick.update(|t| *t += 1), std::time::Duration::from_secs(5));
        on_cleanup(move || {
            if let Ok(h) = handle {
                h.clear();
            }
        });
    }
    view! {
        <Transition fallback=|| ()>
            {move || failing.get().and_then(Result::ok).flatten().map(|since| view! {
                <p class="error writes-failing" role="alert" data-since=since>
                    "The server cannot store anything: its disk is full. Answers are refused (503) and nothing acknowledged is lost; "
                    "participants' pages keep their answers and send them again. Free space on the data dir's disk; "
                    "this warning goes once a write succeeds."
                </p>
            })}
        </Transition>
    }
}
