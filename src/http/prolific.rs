//! Prolific from the JSON API (docs/api.md, "Prolific"): a researcher's
//! publish, sync, status, decisions, bonuses, transitions and places; and
//! the webhook Prolific calls, which only wakes the sync.
use crate::domain::ids::StudyId;
use crate::domain::prolific::draft;
use crate::error::ServiceError;
use crate::http::extract::{ApiJson, ApiPath, ApiQuery, Researcher};
use crate::prolific::{self as prolific, bonus, decide, publish, status, sync, webhook};
use crate::state::AppState;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/studies/{id}/prolific", get(get_status))
        .route("/api/v1/studies/{id}/prolific/publish", post(publish_study))
        .route("/api/v1/studies/{id}/prolific/sync", post(sync_now))
        .route("/api/v1/studies/{id}/prolific/decide", post(decide_now))
        .route(
            "/api/v1/studies/{id}/prolific/bonuses",
            post(bonuses).layer(DefaultBodyLimit::max(super::limits::LARGE_BODY)),
        )
        .route("/api/v1/studies/{id}/prolific/transition", post(transition))
        .route("/api/v1/studies/{id}/prolific/places", post(places))
        .route("/api/v1/prolific/webhook", post(hook).layer(DefaultBodyLimit::max(webhook::MAX_BODY)))
}

#[derive(Deserialize, Default)]
struct DryRun {
    #[serde(default)]
    dry_run: bool,
}

async fn get_status(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Json<status::ProlificStatus>, ServiceError> {
    Ok(Json(status::status(&state.db, id).await?))
}

#[derive(Deserialize, Default)]
struct PublishBody {
    /// The origin participants reach hardneg at; default `serve --public-origin`, else `http://` and this request's host.
    origin: Option<String>,
    workspace: Option<String>,
    project: Option<String>,
    #[serde(default)]
    block_groups: Vec<String>,
}

async fn publish_study(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
    ApiQuery(q): ApiQuery<DryRun>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<Value>, ServiceError> {
    let b: PublishBody = if body.iter().all(u8::is_ascii_whitespace) {
        PublishBody::default()
    } else {
        serde_json::from_slice(&body).map_err(|e| ServiceError::Invalid(format!("the publish request: {e}")))?
    };
    let origin = match b.origin {
        Some(o) => draft::check_origin(&o).map_err(|e| ServiceError::Invalid(format!("field `origin`: {e}")))?,
        None => state.study_origin(&headers),
    };
    let over =
        publish::Overrides { workspace: b.workspace, project: b.project, block_groups: b.block_groups, currency: None };
    if q.dry_run {
        let plan = publish::dry_run_plan(&state.db, id, &origin, &over).await?;
        return Ok(Json(json!({ "dry_run": true, "plan": plan })));
    }
    let client = prolific::connect(&state.db)?;
    Ok(Json(serde_json::to_value(publish::publish(&client, id, &origin, &over).await?)?))
}

async fn sync_now(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
) -> Result<Json<sync::SyncReport>, ServiceError> {
    let client = prolific::connect(&state.db)?;
    let mut report = sync::sync(&client, id).await?;
    (report.places_raised_to, report.stopped) = prolific::after_sync(&client, id).await?;
    prolific::wake();
    Ok(Json(report))
}

#[derive(Deserialize, Default)]
struct DecideQuery {
    #[serde(default)]
    dry_run: bool,
    /// The participant group finishers join (its name; default the spec's `group`).
    group: Option<String>,
}

async fn decide_now(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
    ApiQuery(q): ApiQuery<DecideQuery>,
) -> Result<Json<decide::Decisions>, ServiceError> {
    // Fresh statuses first; the outbox then sends in the background.
    let (client, stale) = prolific::sync_before_deciding(&state.db, id, q.dry_run).await?;
    let group = prolific::groups::finishers_group(&state.db, client.as_ref(), id, q.group, None).await?;
    let mut d = decide::decide_study(&state.db, id, group.as_deref(), q.dry_run).await?;
    d.stale = stale;
    if !q.dry_run {
        prolific::wake();
    }
    Ok(Json(d))
}

#[derive(Deserialize)]
struct BonusQuery {
    round: String,
    #[serde(default)]
    dry_run: bool,
    /// One amount for every approved submission instead of a CSV body.
    each: Option<String>,
}

async fn bonuses(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
    ApiQuery(q): ApiQuery<BonusQuery>,
    body: String,
) -> Result<Json<bonus::BonusPlan>, ServiceError> {
    if !q.dry_run {
        // Fresh statuses first: a bonus goes to submissions approved on Prolific.
        sync::sync(&prolific::connect(&state.db)?, id).await?;
    }
    let source = match &q.each {
        Some(each) => bonus::Source::EachApproved(
            crate::domain::prolific::money::parse_money(each).map_err(ServiceError::Invalid)?,
        ),
        None => bonus::Source::Csv(&body),
    };
    let lines = bonus::read(&state.db, id, source).await?;
    let plan = bonus::plan(&state.db, id, &q.round, lines, q.dry_run).await?;
    if !q.dry_run {
        prolific::wake();
    }
    Ok(Json(plan))
}

#[derive(Deserialize)]
struct TransitionBody {
    action: String,
}

async fn transition(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
    ApiJson(b): ApiJson<TransitionBody>,
) -> Result<Json<status::ProlificStatus>, ServiceError> {
    let client = prolific::connect(&state.db)?;
    publish::transition(&client, id, &b.action).await?;
    Ok(Json(status::status(&state.db, id).await?))
}

#[derive(Deserialize)]
struct PlacesBody {
    total: u64,
}

async fn places(
    State(state): State<AppState>,
    _: Researcher,
    ApiPath(id): ApiPath<StudyId>,
    ApiJson(b): ApiJson<PlacesBody>,
) -> Result<Json<status::ProlificStatus>, ServiceError> {
    let client = prolific::connect(&state.db)?;
    publish::increase_places(&client, id, b.total).await?;
    Ok(Json(status::status(&state.db, id).await?))
}

/// Prolific's delivery: 204 once checked (a duplicate too, doing nothing),
/// 401 for a bad signature or a stale timestamp, 404 when no secret is set.
async fn hook(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<axum::response::Response, ServiceError> {
    use axum::response::IntoResponse;
    let now = crate::store::db::now_secs();
    let secret = match prolific::config::webhook_secret() {
        Ok(Some(secret)) => secret,
        Ok(None) => return Err(ServiceError::NotFound("no webhook secret is configured".into())),
        // A secret file that cannot be read (the server said so at start).
        Err(error) => {
            if let Some(count) = refused_to_log(now) {
                tracing::error!(error, count, "webhook deliveries refused: the secret cannot be read");
            }
            let internal = serde_json::json!({"error": "internal error"});
            return Ok((StatusCode::INTERNAL_SERVER_ERROR, axum::Json(internal)).into_response());
        }
    };
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    if let Err(why) =
        webhook::verify(&secret, &header(webhook::TIMESTAMP_HEADER), &header(webhook::SIGNATURE_HEADER), &body, now)
    {
        if let Some(count) = refused_to_log(now) {
            tracing::warn!(why, count, "webhook deliveries refused (count: since the last such line)");
        }
        // Said as what it is (no session is involved); the reason stays in the log.
        let refused = serde_json::json!({"error": "webhook refused: a bad signature or a stale timestamp"});
        return Ok((StatusCode::UNAUTHORIZED, axum::Json(refused)).into_response());
    }
    if webhook::first_delivery(&state.db, &body).await? {
        prolific::wake();
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Refused deliveries are logged once a minute, with their count since the
/// last line: anyone may post to the hook, and a line each let a flood grow
/// the log without bound (audit AZ: 164 bytes a request). Some(count) when due.
fn refused_to_log(now: i64) -> Option<u64> {
    use crate::domain::log_tally::Tally;
    static SEEN: std::sync::Mutex<Tally> = std::sync::Mutex::new(Tally::new());
    SEEN.lock().unwrap_or_else(|e| e.into_inner()).count(now)
}
