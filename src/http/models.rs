//! `/api/v1/compare`: models against people on a dataset, and the
//! instances a model run fails.
use crate::api_types::{CompareReport, Failure};
use crate::domain::export::Stage;
use crate::error::ServiceError;
use crate::http::extract::{ApiQuery, Researcher};
use crate::models::{compare, failures};
use crate::state::AppState;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/compare", get(compare_models))
        .route("/api/v1/compare/datasets", get(datasets_with_results))
        .route("/api/v1/compare/failures", get(model_failures))
}

/// The datasets the comparison page lists.
async fn datasets_with_results(
    State(state): State<AppState>,
    _: Researcher,
) -> Result<Json<Vec<String>>, ServiceError> {
    Ok(Json(compare::datasets_with_results(&state.db).await?))
}

/// `?dataset=NAME[&baseline=STUDY]...`: pairs, because `baseline` repeats.
async fn compare_models(
    State(state): State<AppState>,
    _: Researcher,
    ApiQuery(pairs): ApiQuery<Vec<(String, String)>>,
) -> Result<Json<CompareReport>, ServiceError> {
    let (dataset, baselines, stage) = compare_params(&pairs)?;
    let only = crate::datasets::audit::stage_instances(&state.db, &dataset, stage).await?;
    Ok(Json(compare::compare(&state.db, state.kinds, &dataset, &baselines, only).await?))
}

type CompareParams = (String, Vec<i64>, Option<Stage>);

fn compare_params(pairs: &[(String, String)]) -> Result<CompareParams, ServiceError> {
    let mut dataset = None;
    let mut baselines = Vec::new();
    let mut stage = None;
    for (key, value) in pairs {
        // Only `baseline` repeats: a second dataset or stage would silently win.
        let given_twice = match key.as_str() {
            "dataset" => dataset.is_some(),
            "stage" => stage.is_some(),
            _ => false,
        };
        if given_twice {
            return Err(ServiceError::Invalid(format!("query parameter `{key}` given twice")));
        }
        match key.as_str() {
            "dataset" => dataset = Some(value.clone()),
            "stage" => {
                stage = Some(
                    Stage::parse(value).map_err(|e| ServiceError::Invalid(format!("query parameter `stage`: {e}")))?,
                )
            }
            "baseline" => baselines.push(value.parse().map_err(|_| {
                ServiceError::Invalid(format!("query parameter `baseline`: {value:?} is not a study id"))
            })?),
            other => return Err(ServiceError::Invalid(format!("unknown query parameter `{other}`"))),
        }
    }
    let dataset = dataset.ok_or_else(|| ServiceError::Invalid("query parameter `dataset` is required".into()))?;
    Ok((dataset, baselines, stage))
}

#[derive(Deserialize)]
struct FailureQuery {
    dataset: String,
    model: String,
    #[serde(default = "group")]
    score: String,
    #[serde(rename = "type")]
    neg_type: Option<String>,
}

fn group() -> String {
    "group".into()
}

async fn model_failures(
    State(state): State<AppState>,
    _: Researcher,
    ApiQuery(q): ApiQuery<FailureQuery>,
) -> Result<Json<Vec<Failure>>, ServiceError> {
    Ok(Json(failures::failures(&state.db, state.kinds, &q.dataset, &q.model, &q.score, q.neg_type.as_deref()).await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(q: &[(&str, &str)]) -> Result<CompareParams, String> {
        let pairs: Vec<(String, String)> = q.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        compare_params(&pairs).map_err(|e| e.to_string())
    }

    #[test]
    fn baselines_repeat_and_nothing_else_does() {
        let (dataset, baselines, stage) =
            params(&[("dataset", "demo"), ("baseline", "3"), ("baseline", "5"), ("stage", "final")]).unwrap();
        assert_eq!((dataset.as_str(), baselines, stage), ("demo", vec![3, 5], Some(Stage::Final)));
        for twice in [[("dataset", "nope"), ("dataset", "demo")], [("stage", "final"), ("stage", "step3")]] {
            let e = params(&twice).unwrap_err();
            assert!(e.contains("given twice"), "{e}");
        }
        assert!(params(&[("stage", "final")]).unwrap_err().contains("`dataset` is required"));
    }
}
