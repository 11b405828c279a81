//! Rows that no longer need sending when their turn comes: a raise of places
//! a larger one overtook (Prolific refuses a smaller total), and a PAUSE,
//! START or STOP the study is already through, or that Prolific would now
//! refuse (a throttled PAUSE sent after the study was stopped); and the
//! study's status as Prolific holds it, which decides the latter.
use super::client::Client;
use super::outbox::Row;
use super::remote::Remote;
use crate::domain::prolific::transitions::{fate, Fate};
use crate::error::ServiceError;

/// Why `r` is done without being sent, if it is.
pub(super) async fn moot(client: &Client, r: &Row, pid: Option<&str>) -> Result<Option<String>, ServiceError> {
    match &r.remote {
        Remote::SetPlaces { total } => {
            let places: Option<i64> = sqlx::query_scalar("SELECT places FROM prolific_studies WHERE study_id = $1")
                .bind(r.study)
                .fetch_optional(client.db())
                .await?;
            Ok(places.filter(|&p| p >= *total as i64).map(|p| format!("the study already has {p} places")))
        }
        // PUBLISH has its own checks (a draft first, its refusal retried).
        Remote::Transition { action } if action != "PUBLISH" => {
            let Some(pid) = pid else { return Ok(None) };
            let status = study_status(client, pid).await?;
            Ok(match fate(&status, action) {
                Fate::Send => None,
                Fate::Already => Some(format!("not sent: the study is {status} already")),
                Fate::Refused => {
                    Some(format!("not sent: the study is {status} on Prolific, where {action} cannot apply"))
                }
            })
        }
        _ => Ok(None),
    }
}

pub(super) async fn study_status(client: &Client, pid: &str) -> Result<String, ServiceError> {
    Ok(study_view(client, pid).await?.0)
}

/// The study's status and the URL it sends participants to, as Prolific holds them.
pub(super) async fn study_view(client: &Client, pid: &str) -> Result<(String, String), ServiceError> {
    let s = client.expect("GET", &format!("/api/v1/studies/{pid}/"), None).await?;
    let text = |k: &str, or: &str| s[k].as_str().unwrap_or(or).to_string();
    Ok((text("status", "UNKNOWN"), text("external_study_url", "")))
}
