//! Publishing a link study on Prolific: the draft (found again by its
//! internal name after a crash, never made twice), Prolific's cost shown
//! before publishing, then PUBLISH; pause, resume, stop and places.
use super::actions::{prolific_id, Remote};
use super::client::Client;
use super::outbox::enqueue;
use super::settings::settings;
use super::transition::{not_on_prolific, outcome_words, settle, study_view};
pub use super::transition::{transition, transition_as, COMMAND_WAIT};
use crate::domain::ids::StudyId;
use crate::domain::prolific::draft::{draft, internal_name, DraftInput};
use crate::domain::prolific::money::{self, cents, ProlificCost};
use crate::error::ServiceError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::AnyPool;

/// Overrides from the command line.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub workspace: Option<String>,
    pub project: Option<String>,
    /// Names of participant groups to block, beside the spec's.
    pub block_groups: Vec<String>,
    /// The workspace's currency, once read from Prolific (its minimum pay
    /// is per currency); None before: the lowest minimum is checked.
    pub currency: Option<String>,
}

/// What publishing sends and what it costs, shown before anything is sent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    pub internal_name: String,
    pub body: Value,
    pub reward_cents: u64,
    pub places: u64,
    /// places × reward with the fee (hardneg's figure, before Prolific's).
    pub estimated_cents: u64,
    /// The fee in that figure: `link.platform_fee` (0 unless the spec sets it).
    pub fee: f64,
    pub budget_cap_cents: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Published {
    pub plan: Plan,
    pub prolific_id: String,
    /// Prolific's cost for the study (its `/cost/` answer).
    pub cost: Value,
    pub status: String,
    /// The study URL Prolific sends participants to (the draft's, as Prolific holds it).
    pub study_url: String,
}

/// The draft and its figures; nothing is sent.
pub async fn plan(
    db: &AnyPool,
    study: StudyId,
    origin: &str,
    over: &Overrides,
    group_ids: &[String],
) -> Result<Plan, ServiceError> {
    let link = crate::studies::link::link_of_study(db, study).await?;
    let info = crate::crowd::link(db, study).await?;
    let (name, hash, mut p) = settings(db, study).await?;
    if over.workspace.is_some() {
        p.workspace.clone_from(&over.workspace);
    }
    if over.project.is_some() {
        p.project.clone_from(&over.project);
    }
    let hourly = p.hourly_rate.unwrap_or(link.settings.quality.hourly_wage);
    // Which currency's minimum a refusal names, once the workspace's is known.
    let unit = over.currency.as_deref().map(|c| format!(" (the workspace pays in {c})")).unwrap_or_default();
    let reward_cents =
        money::reward_cents(hourly, p.estimated_minutes, money::min_hourly_cents(over.currency.as_deref()))
            .map_err(|e| ServiceError::Invalid(format!("study {study}: {e}{unit}")))?;
    let places = money::places(info.places.max(0) as u64, p.extra_places);
    let fee = link.settings.quality.platform_fee;
    if places > money::MAX_PLACES {
        return Err(ServiceError::Invalid(format!(
            "study {study}: {places} places is more than the {} hardneg asks Prolific for in one study",
            money::MAX_PLACES
        )));
    }
    let estimated_cents = money::with_fee(reward_cents.saturating_mul(places), fee);
    if let Some(cap) = p.budget_cap.filter(|&cap| estimated_cents > cap) {
        return Err(ServiceError::Invalid(format!(
            "{places} places at {} (with the fee) cost {}, over the budget cap of {}: raise budget_cap or lower the places",
            cents(money::with_fee(reward_cents, fee)),
            cents(estimated_cents),
            cents(cap)
        )));
    }
    let iname = internal_name(study.get(), &hash);
    let screen_out = link.screen_out();
    let input = DraftInput {
        study_id: study,
        name: &name,
        internal_name: &iname,
        consent: &link.settings.consent,
        origin,
        join_path: &info.path,
        completion_code: &link.completion_code,
        screen_out_code: (!screen_out.code.is_empty()).then_some(screen_out.code.as_str()),
        attention_checks: link.settings.checks.attention_checks > 0,
        full_code: link.full_code.as_deref(),
        reward_cents,
        places,
        settings: &p,
        block_group_ids: group_ids,
    };
    Ok(Plan {
        body: draft(&input),
        internal_name: iname,
        reward_cents,
        places,
        estimated_cents,
        fee,
        budget_cap_cents: p.budget_cap,
    })
}

/// The spec's reward (None when it has none: a rate or time that is not a
/// number above 0), places and cap, unchecked: what the research page shows
/// beside why a study cannot be published.
pub async fn spec_figures(db: &AnyPool, study: StudyId) -> Result<(Option<u64>, u64, Option<u64>), ServiceError> {
    let link = crate::studies::link::link_of_study(db, study).await?;
    let info = crate::crowd::link(db, study).await?;
    let p = settings(db, study).await?.2;
    let hourly = p.hourly_rate.unwrap_or(link.settings.quality.hourly_wage);
    let reward = money::reward_cents(hourly, p.estimated_minutes, 0).ok();
    Ok((reward, money::places(info.places.max(0) as u64, p.extra_places), p.budget_cap))
}

/// A dry run's draft: [`plan`] with each blocked group named where the
/// draft will carry its id (looked up, or made, when the draft is made), so
/// the filters it shows are the ones sent.
pub async fn dry_run_plan(db: &AnyPool, study: StudyId, origin: &str, over: &Overrides) -> Result<Plan, ServiceError> {
    let spec = settings(db, study).await?.2;
    let named: Vec<String> =
        spec.block_groups.iter().chain(&over.block_groups).map(|g| format!("<id of participant group {g}>")).collect();
    plan(db, study, origin, over, &named).await
}

/// Makes (or finds) the draft and reads Prolific's cost; `publish` then
/// sends PUBLISH. The cost is the caller's to show first.
pub async fn prepare(
    client: &Client,
    study: StudyId,
    origin: &str,
    over: &Overrides,
) -> Result<(Plan, String, Value), ServiceError> {
    let db = client.db();
    let spec = settings(db, study).await?.2;
    let mut block = spec.block_groups;
    block.extend(over.block_groups.iter().cloned());
    let workspace = over.workspace.clone().or(spec.workspace);
    let group_ids = super::groups::ids_of(client, &block, workspace.as_deref()).await?;
    let currency = super::groups::currency_of(client, workspace.as_deref()).await;
    let over = &Overrides { currency, ..over.clone() };
    let plan = plan(db, study, origin, over, &group_ids).await?;
    sqlx::query(
        "INSERT INTO prolific_studies (study_id, internal_name, places, reward_cents, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (study_id) DO NOTHING",
    )
    .bind(study)
    .bind(&plan.internal_name)
    .bind(plan.places as i64)
    .bind(plan.reward_cents as i64)
    .bind(crate::store::db::now_secs())
    .execute(db)
    .await?;
    let create = Remote::CreateStudy { body: plan.body.clone(), internal_name: plan.internal_name.clone() };
    let key = format!("create_study:{}", plan.internal_name);
    forget_deleted_draft(client, study, &key).await?;
    // A draft Prolific refused (a bad field) may be tried again with the spec as it is now.
    sqlx::query("UPDATE prolific_outbox SET state = 'pending', payload = $1, not_before = 0 WHERE idem_key = $2 AND state = 'failed'")
        .bind(serde_json::to_string(&create)?)
        .bind(&key)
        .execute(db)
        .await?;
    enqueue(db, study, &key, &create).await?;
    settle(client, study, &key).await?;
    let pid = prolific_id(db, study).await?.ok_or_else(|| {
        ServiceError::Invalid(format!("the draft of study {study} is not confirmed yet: {}", last_problem_hint()))
    })?;
    // Projected: by the reference, the plain answer is the cost at the time
    // of the request, nothing yet for a draft with no place taken.
    let cost = client.expect("GET", &format!("/api/v1/studies/{pid}/cost/?is_projected=true"), None).await?;
    let read = ProlificCost::read(&cost);
    // From now on the budget counts Prolific's own fee and tax, not link.platform_fee's guess.
    if let Some(ratio) = read.and_then(|c| c.fee_ratio()) {
        sqlx::query("UPDATE prolific_studies SET fee = $1 WHERE study_id = $2")
            .bind(ratio)
            .bind(study)
            .execute(db)
            .await?;
    }
    // Prolific's own figure, fees and tax included, is the one the cap is held to:
    // a cost answer without it (the reference requires none of its fields) publishes nothing.
    if let (Some(cap), None) = (plan.budget_cap_cents, read) {
        return Err(ServiceError::Invalid(format!(
            "Prolific's cost of study {study} could not be read ({}), so it cannot be held to the budget cap of {}: \
             the draft {pid} is not published; try again later",
            cost.to_string().chars().take(200).collect::<String>(),
            cents(cap)
        )));
    }
    if let (Some(cap), Some(c)) = (plan.budget_cap_cents, read) {
        if c.total() > cap {
            return Err(ServiceError::Invalid(format!(
                "Prolific's cost of study {study} is {} (rewards {}, fees {}, tax {}), over the budget cap of {}: \
                 the draft {pid} is not published; raise budget_cap or lower the places",
                cents(c.total()),
                cents(c.rewards),
                cents(c.fees),
                cents(c.tax),
                cents(cap)
            )));
        }
    }
    Ok((plan, pid, cost))
}

/// A draft deleted on Prolific (docs/prolific.md says to delete abandoned
/// ones by hand) is forgotten, so that the next publish makes a new one
/// instead of asking Prolific for the cost of a study it no longer has.
async fn forget_deleted_draft(client: &Client, study: StudyId, create_key: &str) -> Result<(), ServiceError> {
    let db = client.db();
    let row: Option<(Option<String>, Option<String>)> =
        sqlx::query_as("SELECT prolific_id, status FROM prolific_studies WHERE study_id = $1")
            .bind(study)
            .fetch_optional(db)
            .await?;
    let Some((Some(pid), status)) = row else { return Ok(()) };
    let draft = status.as_deref().is_none_or(|s| s == "UNPUBLISHED");
    if !draft || client.expect_found("GET", &format!("/api/v1/studies/{pid}/"), None).await?.is_some() {
        return Ok(());
    }
    tracing::info!(study = study.get(), prolific_id = pid, "the draft is gone from Prolific: making a new one");
    let mut tx = crate::store::db::begin_write(db).await?;
    sqlx::query("UPDATE prolific_studies SET prolific_id = NULL, status = NULL WHERE study_id = $1")
        .bind(study)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE prolific_outbox SET state = 'pending', not_before = 0, attempts = 0, remote_id = NULL WHERE idem_key = $1")
        .bind(create_key)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

fn last_problem_hint() -> &'static str {
    "see `hardneg prolific status` for the outbox and Prolific's last answer"
}

/// The draft, its cost, then PUBLISH.
pub async fn publish(
    client: &Client,
    study: StudyId,
    origin: &str,
    over: &Overrides,
) -> Result<Published, ServiceError> {
    let (plan, pid, cost) = prepare(client, study, origin, over).await?;
    transition(client, study, "PUBLISH").await?;
    let (status, study_url) = study_view(client, &pid).await?;
    Ok(Published { plan, prolific_id: pid, cost, status, study_url })
}

/// Raises the study's places to `total` (Prolific takes the new total),
/// refused past the budget cap or below the places it has. Returns the
/// places the study has now: more than `total` where another sender's
/// larger raise came first.
pub async fn increase_places(client: &Client, study: StudyId, total: u64) -> Result<i64, ServiceError> {
    let db = client.db();
    let places: i64 = sqlx::query_scalar("SELECT places FROM prolific_studies WHERE study_id = $1")
        .bind(study)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| not_on_prolific(study))?;
    if total > money::MAX_PLACES {
        return Err(ServiceError::Invalid(format!(
            "{total} places is more than the {} hardneg asks Prolific for in one study",
            money::MAX_PLACES
        )));
    }
    if total as i64 <= places {
        return Err(ServiceError::Invalid(format!(
            "the study has {places} places on Prolific; give a larger total (places can only grow)"
        )));
    }
    // Checked and queued in one write transaction: a queued raise is
    // committed money, so a raise or bonus round beside it sees it.
    let key = format!("set_places:{study}:{total}");
    let terms = super::budget::Terms::read(db, study).await?;
    let mut tx = crate::store::db::begin_write(db).await?;
    if let Some(why) = super::status::over_cap_on(&mut tx, &terms, study, total).await? {
        return Err(ServiceError::Invalid(why));
    }
    enqueue(&mut *tx, study, &key, &Remote::SetPlaces { total }).await?;
    tx.commit().await?;
    let (state, last) = settle(client, study, &key).await?;
    if state != "done" {
        return Err(ServiceError::Invalid(format!(
            "increasing the places of study {study} {}: {}",
            outcome_words(&state),
            last.unwrap_or_else(|| last_problem_hint().into())
        )));
    }
    let places: i64 =
        sqlx::query_scalar("SELECT places FROM prolific_studies WHERE study_id = $1").bind(study).fetch_one(db).await?;
    Ok(places.max(total as i64))
}
