//! The join link, as small server pages in the app's page shell
//! (`page.rs`; keep the logic in `crowd::`). Prolific sends participants by GET, and a GET must not change
//! state: `GET /join/{token}?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…` (or
//! `?pid=…`) only shows what arriving would do, with a form that POSTs the
//! same ids back; `POST /join/{token}` arrives, starts the participant's
//! session and redirects (303) to `/take/{study}`.
use crate::crowd::{self, Arrival, Preview};
use crate::domain::crowd::ids::PlatformIds;
use crate::error::ServiceError;
use crate::state::AppState;
use crate::ui_kit::page;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::{Form, Router};
use leptos::prelude::*;
use serde::Deserialize;
use tower_sessions::Session;

pub fn routes() -> Router<AppState> {
    Router::new().route("/join/{token}", get(show).post(join))
}

/// The ids as Prolific (or a panel's `pid`) names them; on the form too.
#[derive(Deserialize, Default)]
pub struct JoinIds {
    #[serde(rename = "PROLIFIC_PID")]
    prolific_pid: Option<String>,
    pid: Option<String>,
    #[serde(rename = "STUDY_ID")]
    study_id: Option<String>,
    #[serde(rename = "SESSION_ID")]
    session_id: Option<String>,
    /// On the form: the participant ticked the consent box.
    consent: Option<String>,
}

impl JoinIds {
    /// None when no participant id was given; an error names a malformed one.
    fn checked(&self) -> Result<Option<PlatformIds>, String> {
        let pid = self.prolific_pid.as_deref().or(self.pid.as_deref()).filter(|p| !p.is_empty());
        match pid {
            None => Ok(None),
            Some(pid) => PlatformIds::parse(Some(pid), self.study_id.as_deref(), self.session_id.as_deref()).map(Some),
        }
    }
}

/// A join page in the app's page shell (`page.rs`), its heading the title.
/// Never stored: Back from the survey asks the server again, which shows a
/// known participant "Welcome back" rather than the consent form they filled.
fn join_page(status: StatusCode, title: &str, body: impl IntoView + 'static) -> Response {
    let heading = title.to_string();
    let mut res = page::respond(
        status,
        page::document(title, None, view! { <section class="join"><h1>{heading}</h1>{body}</section> }),
    );
    res.headers_mut().insert(axum::http::header::CACHE_CONTROL, axum::http::HeaderValue::from_static("no-store"));
    res
}

fn error_page(e: ServiceError) -> Response {
    let status = e.status();
    let (title, text) = match &e {
        ServiceError::NotFound(_) => (
            "Link not found",
            "This study link is not valid. Check the address, or ask the researcher for the current link.".to_string(),
        ),
        ServiceError::Invalid(_) => ("Cannot join", e.public_message()),
        ServiceError::Unavailable(_) => ("Please try again in a moment", e.public_message()),
        _ => ("Something went wrong", e.public_message()),
    };
    let mut res = join_page(status, title, view! { <p>{text}</p> });
    if let ServiceError::Unavailable(_) = e {
        res.headers_mut().insert(axum::http::header::RETRY_AFTER, crate::api_types::RETRY_AFTER_SECS.into());
    }
    res
}

/// The ids again, for the form that arrives.
fn hidden_ids(ids: &Option<PlatformIds>) -> impl IntoView {
    let fields = ids.as_ref().map(|ids| {
        [("PROLIFIC_PID", Some(ids.pid.clone())), ("STUDY_ID", ids.study.clone()), ("SESSION_ID", ids.session.clone())]
    });
    fields
        .into_iter()
        .flatten()
        .filter_map(|(name, v)| Some(view! { <input type="hidden" name=name value=v?/> }))
        .collect_view()
}

/// A code to give Prolific, and a button there when there is a URL.
fn code_and_link(lead: &'static str, code: String, link: Option<(&'static str, String)>) -> impl IntoView {
    view! {
        <p>{format!("{lead} ")}<strong class="code">{code}</strong>"."</p>
        {link.map(|(label, url)| view! { <p><a class="button" href=url>{label}</a></p> })}
    }
}

fn finished_page(code: String, url: String) -> Response {
    let body = code_and_link("Your completion code is", code, Some(("Go back to Prolific with this code", url)));
    join_page(StatusCode::OK, "Thank you: you have finished", body)
}

/// Ended by the checks, in the take page's words: after the comprehension
/// check asked to return and told it is not rejected; after failed attention
/// checks given the code, never asked to return (decide may reject them,
/// docs/prolific.md).
fn screened_out_page(comprehension: bool, code: String, url: String) -> Response {
    let body = if comprehension {
        view! {
            <p>"You did not pass the comprehension check, so you cannot take part in this study."</p>
            <p>"Please return the study on Prolific. You will not be rejected for this."</p>
            {code_and_link("If Prolific asks for a code instead, use", code, Some(("Go to Prolific", url)))}
        }
        .into_any()
    } else {
        view! {
            <p>"Too many attention checks were answered wrongly, so your participation has ended."</p>
            {code_and_link("If Prolific asks for a code, use", code, Some(("Go to Prolific", url)))}
        }
        .into_any()
    };
    join_page(StatusCode::OK, "Your participation has ended", body)
}

fn full_page(code: Option<String>) -> Response {
    let body = view! {
        <p>"Every place in this study is taken. Please return the study on Prolific (you will not be penalised)."</p>
        {code.map(|c| code_and_link("If asked for a code, use", c, None))}
    };
    join_page(StatusCode::OK, "This study is full", body)
}

fn closed_page() -> Response {
    join_page(
        StatusCode::OK,
        "This study is closed",
        view! { <p>"The study no longer takes new participants. Please return it."</p> },
    )
}

/// HNC's validators are another group than its writers: a writer is turned away.
fn writer_page() -> Response {
    let body = view! {
        <p>
            "You wrote caption pairs that this study checks, and they are checked by other people. "
            "Nothing was recorded. Please return the study on Prolific."
        </p>
    };
    join_page(StatusCode::OK, "This study is for other people", body)
}

fn returned_page() -> Response {
    let body = view! { <p>"You gave this study back; there is nothing more to do here."</p> };
    join_page(StatusCode::OK, "You returned this study", body)
}

fn needs_id_page() -> Response {
    let body = view! {
        <p>"This link needs your participant id. Open the study from Prolific again, so that the address carries your PROLIFIC_PID."</p>
    };
    join_page(StatusCode::UNPROCESSABLE_ENTITY, "Participant id missing", body)
}

async fn show(State(state): State<AppState>, Path(token): Path<String>, Query(q): Query<JoinIds>) -> Response {
    let ids = match q.checked() {
        Ok(ids) => ids,
        Err(m) => return error_page(ServiceError::Invalid(m)),
    };
    let preview = match crowd::preview(&state, &token, ids.as_ref()).await {
        Ok(p) => p,
        Err(e) => return error_page(e),
    };
    let action = format!("/join/{token}");
    match preview {
        Preview::NeedsId => needs_id_page(),
        Preview::Welcome { study_name, consent } => {
            let paragraphs: Vec<String> = consent.split("\n\n").map(str::to_string).collect();
            let body = view! {
                <section class="consent">{paragraphs.into_iter().map(|p| view! { <p>{p}</p> }).collect_view()}</section>
                <form method="post" action=action>
                    {hidden_ids(&ids)}
                    <label>
                        <input type="checkbox" name="consent" value="yes" required/>
                        " I have read the above and agree to take part."
                    </label>
                    <button type="submit">"Start"</button>
                </form>
            };
            join_page(StatusCode::OK, &study_name, body)
        }
        Preview::Resume { place, late, .. } => {
            let said = if late {
                "Your time limit has passed and your place went to someone else. You can still finish: your answers are kept."
            } else if place {
                "You have a place in this study."
            } else {
                "You have started this study. A place is yours once you pass the questions on the instructions, if one is still free."
            };
            let body = view! {
                <p class="resume" data-place=place.to_string()>{said}</p>
                <form method="post" action=action>
                    {hidden_ids(&ids)}
                    <button type="submit">"Continue where you stopped"</button>
                </form>
            };
            join_page(StatusCode::OK, "Welcome back", body)
        }
        Preview::Finished { code, url } => finished_page(code, url),
        Preview::Returned => returned_page(),
        Preview::ScreenedOut { comprehension, code, url } => screened_out_page(comprehension, code, url),
        Preview::Full { code } => full_page(code),
        Preview::Closed => closed_page(),
    }
}

async fn join(
    State(state): State<AppState>,
    session: Session,
    client: Option<axum::Extension<crate::login_limits::ClientAddr>>,
    Path(token): Path<String>,
    Form(form): Form<JoinIds>,
) -> Response {
    let ids = match form.checked() {
        Ok(ids) => ids,
        Err(m) => return error_page(ServiceError::Invalid(m)),
    };
    let consented = form.consent.as_deref() == Some("yes");
    let arrival = match crowd::arrive_consenting(&state, &token, ids.as_ref(), consented, client.map(|c| c.0 .0)).await
    {
        Ok(a) => a,
        Err(ServiceError::Invalid(m)) if ids.is_none() => {
            tracing::debug!(m, "arrival without an id");
            return needs_id_page();
        }
        Err(e) => return error_page(e),
    };
    match arrival {
        Arrival::Admitted { user, study, resumed } => {
            if let Err(e) = crate::accounts::log_in(&session, &user).await {
                return error_page(e.into());
            }
            // A known participant again: their sessions are capped (saved
            // now, so the new one has its id).
            if resumed {
                let saved = session.save().await.map_err(|e| ServiceError::internal("saving a session", e));
                let kept = match (saved, session.id()) {
                    (Ok(()), Some(id)) => crowd::sessions::keep_newest(&state.db, user.id, &id.to_string()).await,
                    (Ok(()), None) => Ok(()),
                    (Err(e), _) => Err(e),
                };
                if let Err(e) = kept {
                    return error_page(e);
                }
            }
            Redirect::to(&format!("/take/{study}")).into_response()
        }
        Arrival::Finished { code, url } => finished_page(code, url),
        Arrival::Returned => returned_page(),
        Arrival::ScreenedOut { comprehension, code, url } => screened_out_page(comprehension, code, url),
        Arrival::Full { code } => full_page(code),
        Arrival::Closed => closed_page(),
        Arrival::Writer => writer_page(),
    }
}
