//! A ranking without JavaScript (or before the wasm has loaded): the card
//! gives each image a place (`rank_A=2`, …) in one form posted here; the
//! places must be a full order (`order_from_ranks`),
//! which is then answered like the hydrated card's "C,A,B", through the same
//! service, with a 303 back to the survey page (`ui_kit::survey_post`, as
//! for the shared answer form).
use super::order_from_ranks;
use crate::domain::ids::TaskId;
use crate::error::ServiceError;
use crate::state::AppState;
use crate::studies::tasks;
use crate::ui_kit::survey_post::{on_survey_pages, Answered, SurveyPost};
use axum::Router;

pub fn routes() -> Router<AppState> {
    on_survey_pages("rank", rank)
}

async fn rank(p: SurveyPost<Vec<(String, String)>>) -> Result<Answered, ServiceError> {
    let fields = &p.form;
    let task_id = fields
        .iter()
        .find(|(k, _)| k == "task_id")
        .and_then(|(_, v)| v.parse::<TaskId>().ok())
        .ok_or_else(|| ServiceError::Invalid("the form has no task_id".into()))?;
    p.in_study(task_id).await?;
    let places: Vec<(String, String)> =
        fields.iter().filter_map(|(k, v)| Some((k.strip_prefix("rank_")?.to_string(), v.clone()))).collect();
    let order = order_from_ranks(&places).map_err(ServiceError::Invalid)?;
    tasks::answer(&p.state, &p.user, task_id, &order, None).await?;
    Ok(Answered::Back)
}
