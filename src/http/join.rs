//! The join link, as small server pages (restyle freely; keep the logic in
//! `crowd::`). Prolific sends participants by GET, and a GET must not change
//! state: `GET /join/{token}?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…` (or
//! `?pid=…`) only shows what arriving would do, with a form that POSTs the
//! same ids back; `POST /join/{token}` arrives, starts the participant's
//! session and redirects (303) to `/take/{study}`.
use crate::crowd::{self, Arrival, Preview};
use crate::domain::crowd::ids::PlatformIds;
use crate::error::ServiceError;
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::{Form, Router};
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

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{t}</title>\
         <link rel=\"stylesheet\" href=\"/pkg/hardneg.css\"></head>\
         <body><main class=\"join\"><h1>{t}</h1>{body}</main></body></html>",
        t = esc(title)
    );
    (status, Html(html)).into_response()
}

fn error_page(e: ServiceError) -> Response {
    let status = e.status();
    let (title, text) = match &e {
        ServiceError::NotFound(_) => (
            "Link not found",
            "This study link is not valid. Check the address, or ask the researcher for the current link.".to_string(),
        ),
        ServiceError::Invalid(_) => ("Cannot join", e.public_message()),
        _ => ("Something went wrong", e.public_message()),
    };
    page(status, title, &format!("<p>{}</p>", esc(&text)))
}

fn hidden_ids(ids: &Option<PlatformIds>) -> String {
    let Some(ids) = ids else { return String::new() };
    let field = |name: &str, v: &Option<String>| {
        v.as_ref().map(|v| format!("<input type=\"hidden\" name=\"{name}\" value=\"{}\">", esc(v))).unwrap_or_default()
    };
    format!(
        "{}{}{}",
        field("PROLIFIC_PID", &Some(ids.pid.clone())),
        field("STUDY_ID", &ids.study),
        field("SESSION_ID", &ids.session)
    )
}

fn finished_page(code: &str, url: &str) -> Response {
    page(
        StatusCode::OK,
        "Thank you: you have finished",
        &format!(
            "<p>Your completion code is <strong class=\"code\">{c}</strong>.</p>\
             <p><a class=\"button\" href=\"{u}\">Return to Prolific with your code</a></p>",
            c = esc(code),
            u = esc(url)
        ),
    )
}

/// Ended by the checks: asked to return, never told it is rejected; the screen-out code and its URL.
fn screened_out_page(code: &str, url: &str) -> Response {
    page(
        StatusCode::OK,
        "Your participation has ended",
        &format!(
            "<p>You did not pass this study's checks, so there is nothing more to do here. \
             Please return the study on Prolific.</p>\
             <p>If asked for a code, use <strong class=\"code\">{c}</strong>.</p>\
             <p><a class=\"button\" href=\"{u}\">Return to Prolific</a></p>",
            c = esc(code),
            u = esc(url)
        ),
    )
}

fn full_page(code: Option<&str>) -> Response {
    let code = code.map(|c| format!("<p>If asked for a code, use <strong class=\"code\">{}</strong>.</p>", esc(c)));
    page(
        StatusCode::OK,
        "This study is full",
        &format!(
            "<p>Every place in this study is taken. Please return the study on Prolific (you will not be penalised).</p>{}",
            code.unwrap_or_default()
        ),
    )
}

fn closed_page() -> Response {
    page(StatusCode::OK, "This study is closed", "<p>The study no longer takes new participants. Please return it.</p>")
}

fn returned_page() -> Response {
    page(
        StatusCode::OK,
        "You returned this study",
        "<p>You gave this study back; there is nothing more to do here.</p>",
    )
}

fn needs_id_page() -> Response {
    page(
        StatusCode::UNPROCESSABLE_ENTITY,
        "Participant id missing",
        "<p>This link needs your participant id. Open the study from Prolific again, \
         so that the address carries your PROLIFIC_PID.</p>",
    )
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
    let action = format!("/join/{}", esc(&token));
    match preview {
        Preview::NeedsId => needs_id_page(),
        Preview::Welcome { study_name, consent } => page(
            StatusCode::OK,
            &study_name,
            &format!(
                "<section class=\"consent\">{}</section>\
                 <form method=\"post\" action=\"{action}\">{}\
                 <label><input type=\"checkbox\" name=\"consent\" value=\"yes\" required> I have read the above and agree to take part.</label>\
                 <button type=\"submit\">Start</button></form>",
                consent.split("\n\n").map(|p| format!("<p>{}</p>", esc(p))).collect::<String>(),
                hidden_ids(&ids)
            ),
        ),
        Preview::Resume { .. } => page(
            StatusCode::OK,
            "Welcome back",
            &format!(
                "<p>You have a place in this study.</p><form method=\"post\" action=\"{action}\">{}\
                 <button type=\"submit\">Continue where you stopped</button></form>",
                hidden_ids(&ids)
            ),
        ),
        Preview::Finished { code, url } => finished_page(&code, &url),
        Preview::Returned => returned_page(),
        Preview::ScreenedOut { code, url } => screened_out_page(&code, &url),
        Preview::Full { code } => full_page(code.as_deref()),
        Preview::Closed => closed_page(),
    }
}

async fn join(
    State(state): State<AppState>,
    session: Session,
    Path(token): Path<String>,
    Form(form): Form<JoinIds>,
) -> Response {
    let ids = match form.checked() {
        Ok(ids) => ids,
        Err(m) => return error_page(ServiceError::Invalid(m)),
    };
    let consented = form.consent.as_deref() == Some("yes");
    let arrival = match crowd::arrive_consenting(&state, &token, ids.as_ref(), consented).await {
        Ok(a) => a,
        Err(ServiceError::Invalid(m)) if ids.is_none() => {
            tracing::debug!(m, "arrival without an id");
            return needs_id_page();
        }
        Err(e) => return error_page(e),
    };
    match arrival {
        Arrival::Admitted { user, study, .. } => {
            if let Err(e) = crate::accounts::log_in(&session, &user).await {
                return error_page(e.into());
            }
            Redirect::to(&format!("/take/{study}")).into_response()
        }
        Arrival::Finished { code, url } => finished_page(&code, &url),
        Arrival::Returned => returned_page(),
        Arrival::ScreenedOut { code, url } => screened_out_page(&code, &url),
        Arrival::Full { code } => full_page(code.as_deref()),
        Arrival::Closed => closed_page(),
        Arrival::Writer => page(
            StatusCode::OK,
            "This study is for other people",
            "<p>You wrote caption pairs that this study checks, and they are checked by other people. \
             Nothing was recorded. Please return the study on Prolific.</p>",
        ),
    }
}
