//! The adjudication queue: items whose answers disagree under
//! `resolve = "adjudication"`, and a researcher's decision on one.
use crate::accounts::SessionUser;
use crate::api_types::{Dispute, DisputeChoice};
use crate::domain::resolution::ItemState;
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::store::db::now_secs;
use crate::studies::outcomes::study_outcomes;
use crate::studies::tasks::image_url;
use sqlx::SqlitePool;
use std::collections::HashMap;

/// What a stored value shows: the image it names, for image answers.
async fn value_images(
    db: &SqlitePool,
    kind: SurveyKind,
    study_id: i64,
    instance_id: i64,
) -> Result<HashMap<String, String>, ServiceError> {
    let mut out = HashMap::new();
    match kind {
        SurveyKind::FourImage => {
            let rows: Vec<(i64, String)> = sqlx::query_as("SELECT slot, image FROM candidates WHERE instance_id = ?")
                .bind(instance_id)
                .fetch_all(db)
                .await?;
            out.extend(rows.into_iter().map(|(s, img)| (s.to_string(), img)));
        }
        SurveyKind::HumanBaseline => {} // forced choices measure people; nothing to adjudicate
        SurveyKind::Ambiguity => {
            let row: Option<(Option<String>, Option<String>)> = sqlx::query_as(
                "SELECT i.positive_image, si.chosen_image FROM study_items si JOIN instances i ON i.id = si.instance_id
                 WHERE si.study_id = ? AND si.instance_id = ?",
            )
            .bind(study_id)
            .bind(instance_id)
            .fetch_optional(db)
            .await?;
            if let Some((real, generated)) = row {
                out.extend(real.map(|r| ("real".to_string(), r)));
                out.extend(generated.map(|g| ("generated".to_string(), g)));
            }
        }
    }
    Ok(out)
}

/// Disputed items of a study, with who chose what.
pub async fn disputes(db: &SqlitePool, study_id: i64) -> Result<Vec<Dispute>, ServiceError> {
    let (meta, outcomes) = study_outcomes(db, study_id).await?;
    let mut out = Vec::new();
    for o in outcomes.iter().filter(|o| matches!(o.state, ItemState::Disputed { .. })) {
        let (caption, negative_caption): (String, String) =
            sqlx::query_as("SELECT caption, negative_caption FROM instances WHERE id = ?")
                .bind(o.instance_id)
                .fetch_one(db)
                .await?;
        let answers: Vec<(String, String)> = sqlx::query_as(
            "SELECT a.value, u.username FROM answers a JOIN users u ON u.id = a.user_id
             WHERE a.study_id = ? AND a.instance_id = ? ORDER BY a.answered_at, a.task_id",
        )
        .bind(study_id)
        .bind(o.instance_id)
        .fetch_all(db)
        .await?;
        let images = value_images(db, meta.kind, study_id, o.instance_id).await?;
        let choices = meta
            .kind
            .values()
            .iter()
            .map(|v| DisputeChoice {
                value: v.to_string(),
                image_url: images.get(*v).map(|h| image_url(h)),
                chosen_by: answers.iter().filter(|(a, _)| a == v).map(|(_, u)| u.clone()).collect(),
            })
            .collect();
        // Step 3 asks about the negative caption; Step 4 about the original one.
        let prompt = if meta.kind == SurveyKind::FourImage { negative_caption } else { caption };
        out.push(Dispute { study_id, instance_id: o.instance_id, prompt, choices });
    }
    Ok(out)
}

/// Records a researcher's decision; deciding again replaces it.
pub async fn adjudicate(
    db: &SqlitePool,
    user: &SessionUser,
    study_id: i64,
    instance_id: i64,
    value: &str,
) -> Result<(), ServiceError> {
    let meta = crate::studies::meta::load_study_meta(db, study_id).await?;
    if !meta.kind.values().contains(&value) {
        return Err(ServiceError::Invalid(format!(
            "unknown value {value:?}; expected one of {}",
            meta.kind.values().join(", ")
        )));
    }
    let in_study: Option<i64> = sqlx::query_scalar("SELECT 1 FROM study_items WHERE study_id = ? AND instance_id = ?")
        .bind(study_id)
        .bind(instance_id)
        .fetch_optional(db)
        .await?;
    if in_study.is_none() {
        return Err(ServiceError::NotFound(format!("instance {instance_id} is not an item of study {study_id}")));
    }
    sqlx::query(
        "INSERT INTO adjudications (study_id, instance_id, value, user_id, decided_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (study_id, instance_id) DO UPDATE SET value = excluded.value, user_id = excluded.user_id, decided_at = excluded.decided_at",
    )
    .bind(study_id)
    .bind(instance_id)
    .bind(value)
    .bind(user.id)
    .bind(now_secs())
    .execute(db)
    .await?;
    Ok(())
}
