//! `/api/v1/studies` and `/api/v1/tasks`: listing and creating studies, the
//! annotator's next task and answer, progress, agreement and adjudication.
use crate::api_types::{
    AnswerAck, AnswerAckNext, AnswerRequest, Dispute, Settled, StudyOverview, StudyProgress, StudySummary,
};
use crate::domain::ids::{InstanceId, StudyId, TaskId};
use crate::error::ServiceError;
use crate::http::extract::{Annotates, ApiJson, ApiPath, ApiQuery, Caller, Researcher};
use crate::http::task_json::FastJson;
use crate::kinds::REGISTRY;
use crate::state::AppState;
use crate::studies::agreement::{self, AgreementOut, Mapping};
use crate::studies::create as studies;
use crate::studies::{adjudication, meta, overview, progress, tasks};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/v1/studies",
            get(list_studies).post(create_study).layer(DefaultBodyLimit::max(super::limits::LARGE_BODY)),
        )
        .route("/api/v1/studies/overview", get(research_overview))
        .route("/api/v1/studies/{id}/start", post(start))
        .route("/api/v1/studies/{id}/next", get(next))
        .route("/api/v1/studies/{id}/progress", get(study_progress))
        .route("/api/v1/studies/{id}/agreement", get(study_agreement))
        .route("/api/v1/studies/{id}/report", get(study_report))
        .route("/api/v1/studies/{id}/disputes", get(disputes))
        .route("/api/v1/studies/{id}/adjudicate", post(adjudicate))
        .route("/api/v1/studies/{id}/adjudications", get(settled))
        .route("/api/v1/studies/{id}/adjudications/{instance}/reopen", post(reopen))
        .route("/api/v1/studies/{id}/step4", post(start_step4))
        .route("/api/v1/tasks/{id}/answer", post(answer))
}

async fn list_studies(
    State(state): State<AppState>,
    Caller(user): Caller,
) -> Result<Json<Vec<StudySummary>>, ServiceError> {
    Ok(Json(meta::visible_studies(&state, &user).await?))
}

/// Every study with progress, agreement and pipeline status (the research page).
async fn research_overview(
    State(state): State<AppState>,
    Researcher(user): Researcher,
) -> Result<Json<Vec<StudyOverview>>, ServiceError> {
    Ok(Json(overview::research_overview(&state, &user).await?))
}

/// Idempotent: the caller's progress, their tasks created on the first call.
async fn start(
    State(state): State<AppState>,
    Annotates(user): Annotates,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Json<crate::api_types::Progress>, ServiceError> {
    Ok(Json(tasks::start(&state, &user, id).await?))
}

async fn next(
    State(state): State<AppState>,
    Annotates(user): Annotates,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Response, ServiceError> {
    Ok(match tasks::next_task(&state, &user, id).await? {
        Some(task) => FastJson(task).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}

/// `?next=true`: the answer and the next task in one round trip.
#[derive(Deserialize)]
struct AnswerQuery {
    #[serde(default)]
    next: bool,
}

async fn answer(
    State(state): State<AppState>,
    Annotates(user): Annotates,
    ApiPath(task_id): ApiPath<TaskId>,
    ApiQuery(q): ApiQuery<AnswerQuery>,
    ApiJson(req): ApiJson<AnswerRequest>,
) -> Result<Response, ServiceError> {
    // One way per request: with both, which text was meant is a guess.
    if req.text.is_some() && !req.texts.is_empty() {
        return Err(ServiceError::Invalid("send the answer's text as `text` or in `texts`, not both".into()));
    }
    let mut texts: Vec<(&str, &str)> = req.texts.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    texts.extend(req.text.as_deref().map(|t| ("", t)));
    let (ack, study) = tasks::answer_with_texts(&state, &user, task_id, &req.option, &texts, req.elapsed_ms).await?;
    if !q.next {
        return Ok(FastJson(ack).into_response());
    }
    let next = tasks::next_task(&state, &user, study).await?;
    let AnswerAck { task_id, option, duplicate } = ack;
    Ok(FastJson(AnswerAckNext { task_id, option, duplicate, next }).into_response())
}

async fn study_progress(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Json<StudyProgress>, ServiceError> {
    Ok(Json(progress::study_progress(&state, id).await?))
}

#[derive(Serialize)]
struct Created {
    id: StudyId,
    name: String,
    seed: u64,
    /// What the spec allows but its writer most likely did not mean (`Study::warnings`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
}

/// Body: the study spec as TOML text (docs/study-spec.md).
async fn create_study(
    State(state): State<AppState>,
    _: Researcher,
    spec: String,
) -> Result<(StatusCode, Json<Created>), ServiceError> {
    let study = studies::parse_spec(&REGISTRY, &spec, crate::store::db::now_secs() as u64)?;
    let id = studies::create_study(&state.db, &REGISTRY, &study, &spec).await?;
    let warnings = study.warnings();
    Ok((StatusCode::CREATED, Json(Created { id, name: study.name, seed: study.seed, warnings })))
}

/// Step 4 over the survivors of finished Step 3 study `id` (the research
/// page's "Start Step 4"); answers like `POST /api/v1/studies`.
async fn start_step4(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<(StatusCode, Json<Created>), ServiceError> {
    let (id, study) = studies::create_step4(&state.db, &REGISTRY, id).await?;
    Ok((StatusCode::CREATED, Json(Created { id, warnings: study.warnings(), name: study.name, seed: study.seed })))
}

async fn disputes(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Json<Vec<Dispute>>, ServiceError> {
    Ok(Json(adjudication::disputes(&state.db, state.kinds, id).await?))
}

#[derive(Deserialize)]
struct Decision {
    instance_id: InstanceId,
    value: String,
    /// The final text, for a kind whose answers carry one (the triplet check's P2).
    #[serde(default)]
    text: Option<String>,
}

async fn adjudicate(
    State(state): State<AppState>,
    Researcher(user): Researcher,
    ApiPath(id): ApiPath<StudyId>,
    ApiJson(d): ApiJson<Decision>,
) -> Result<StatusCode, ServiceError> {
    adjudication::adjudicate(&state.db, state.kinds, &user, id, d.instance_id, &d.value, d.text.as_deref()).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The settled items with their history of decisions and reopenings.
async fn settled(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Json<Vec<Settled>>, ServiceError> {
    Ok(Json(adjudication::settled(&state.db, state.kinds, id).await?))
}

/// Undo: the item's decision is withdrawn and it waits for a decision again.
async fn reopen(
    State(state): State<AppState>,
    Researcher(user): Researcher,
    ApiPath((id, instance)): ApiPath<(StudyId, InstanceId)>,
) -> Result<StatusCode, ServiceError> {
    adjudication::reopen(&state.db, state.kinds, &user, id, instance).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The statistics of a study whose kind reports them (odd-one-out accuracy).
async fn study_report(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Response, ServiceError> {
    let json = crate::studies::report::study_report(&state.db, &REGISTRY, id).await?.to_json(false)?;
    Ok(([(axum::http::header::CONTENT_TYPE, "application/json")], json).into_response())
}

#[derive(Deserialize)]
struct AgreementQuery {
    mapping: Option<String>,
    resamples: Option<usize>,
    seed: Option<u64>,
}

async fn study_agreement(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
    ApiQuery(q): ApiQuery<AgreementQuery>,
) -> Result<Json<AgreementOut>, ServiceError> {
    let mapping = match q.mapping.as_deref() {
        None => None,
        Some(m) => Some(
            Mapping::parse(m)
                .ok_or_else(|| ServiceError::Invalid(format!("unknown mapping {m:?} (full or binary)")))?,
        ),
    };
    let detail = agreement::Detail::new(q.resamples, q.seed)?;
    Ok(Json(agreement::agreement_report(&state.db, state.kinds, id, mapping, Some(detail)).await?))
}
