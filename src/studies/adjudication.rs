//! The adjudication queue: items whose answers disagree under
//! `resolve = "adjudication"`, a researcher's decision on one, and
//! reopening a decision (undo), with every decision kept in a log.
use crate::accounts::SessionUser;
use crate::api_types::{AdjudicationEvent, Dispute, DisputeChoice, DisputeText, MovedLabel, Settled};
use crate::domain::ids::UserId;
use crate::domain::ids::{InstanceId, StudyId};
use crate::domain::resolution::ItemState;
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::store::db::now_secs;
use crate::studies::meta::{built_into, load_item};
use crate::studies::outcomes::study_outcomes;
use crate::studies::tasks::image_url;
use sqlx::AnyPool;
use std::collections::HashMap;

/// What the annotators were shown (the kind's own presentation of the item)
/// and the image each stored value names, for image answers.
/// The item's caption, the image of each value, and each value's label as
/// each disputing annotator saw it (their seeds shuffle the letters).
async fn shown(
    db: &AnyPool,
    kind: SurveyKind,
    study_id: StudyId,
    instance_id: InstanceId,
    seeds: &[(String, i64)],
) -> Result<(String, HashMap<String, String>, HashMap<String, String>), ServiceError> {
    let item = load_item(db, kind, study_id, instance_id, 0).await?;
    let present = |seed: i64| {
        kind.present(&item, seed as u64).map_err(|e| ServiceError::internal(format!("instance {instance_id}"), e))
    };
    let p = present(0)?;
    let images = p.options.iter().filter_map(|o| Some((o.value.clone(), o.image.clone()?))).collect();
    // value -> [(label, who)], then one label when everyone saw the same (with no annotator: seed 0's).
    let mut seen: HashMap<String, Vec<(String, String)>> = HashMap::new();
    for (who, seed) in seeds {
        for o in present(*seed)?.options {
            seen.entry(o.value).or_default().push((o.label, who.clone()));
        }
    }
    let labels = p
        .options
        .into_iter()
        .map(|o| {
            let by = seen.remove(&o.value).unwrap_or_default();
            let label = match by.first() {
                None => o.label,
                Some((one, _)) if by.iter().all(|(l, _)| l == one) => one.clone(),
                Some(_) => by.iter().map(|(l, who)| format!("{l} to {who}")).collect::<Vec<_>>().join(", "),
            };
            (o.value, label)
        })
        .collect();
    Ok((p.prompt_text, images, labels))
}

pub async fn disputes(db: &AnyPool, kinds: &[SurveyKind], study_id: StudyId) -> Result<Vec<Dispute>, ServiceError> {
    let (meta, outcomes) = study_outcomes(db, kinds, study_id).await?;
    let open: Vec<i64> =
        outcomes.iter().filter(|o| matches!(o.state, ItemState::Disputed { .. })).map(|o| o.instance_id).collect();
    cards(db, &meta, &open).await
}

/// An adaptive study's stops that the final crowd model doubts
/// (`studies::adaptive_report`), as cards a researcher may decide by
/// choice: they are settled already, and stay so unless adjudicated.
pub async fn doubtful(db: &AnyPool, kinds: &[SurveyKind], study_id: StudyId) -> Result<Vec<Dispute>, ServiceError> {
    let report = match crate::studies::adaptive_report::report(db, kinds, study_id).await {
        Err(ServiceError::NotFound(_)) => return Ok(vec![]),
        other => other?,
    };
    let meta = crate::studies::meta::load_study_meta(db, kinds, study_id).await?;
    let ids: Vec<i64> = report.doubtful.iter().map(|d| d.instance_id).collect();
    cards(db, &meta, &ids).await
}

/// An item's counted answers, earliest first: `(value, username, task seed)`.
async fn item_answers(db: &AnyPool, study: StudyId, instance: i64) -> Result<Vec<(String, String, i64)>, ServiceError> {
    Ok(sqlx::query_as(
        "SELECT a.value, u.username, t.seed FROM counted_answers a JOIN users u ON u.id = a.user_id
         JOIN tasks t ON t.id = a.task_id
         WHERE a.study_id = $1 AND a.instance_id = $2 ORDER BY a.answered_at, a.arrival, a.task_id",
    )
    .bind(study)
    .bind(instance)
    .fetch_all(db)
    .await?)
}

/// The adjudication cards of `items`: what each annotator was shown and chose.
async fn cards(db: &AnyPool, meta: &crate::state::StudyMeta, items: &[i64]) -> Result<Vec<Dispute>, ServiceError> {
    let study_id = meta.id;
    let mut out = Vec::new();
    if !meta.kind.spec().adjudicated {
        return Ok(out);
    }
    let texted = match meta.kind.text_field() {
        Some(_) => crate::studies::answer_texts::answers(db, study_id).await?,
        None => HashMap::new(),
    };
    for &instance_id in items {
        let answers = item_answers(db, study_id, instance_id).await?;
        let seeds: Vec<(String, i64)> = answers.iter().map(|(_, u, seed)| (u.clone(), *seed)).collect();
        let (prompt, images, labels) = shown(db, meta.kind, study_id, InstanceId::new(instance_id), &seeds).await?;
        let choices = meta
            .kind
            .values()
            .iter()
            .map(|v| DisputeChoice {
                value: v.to_string(),
                label: labels.get(*v).cloned().unwrap_or_else(|| v.to_string()),
                image_url: images.get(*v).map(|h| image_url(h)),
                chosen_by: answers.iter().filter(|(a, _, _)| a == v).map(|(_, u, _)| u.clone()).collect(),
            })
            .collect();
        let texts = texted
            .get(&instance_id)
            .into_iter()
            .flatten()
            .filter_map(|a| {
                let text = a.text.clone()?;
                Some(DisputeText { annotator: a.annotator.clone(), value: a.value.clone(), text })
            })
            .collect();
        let text_label = meta.kind.text_field().map(|f| f.label.to_string());
        out.push(Dispute { study_id, instance_id: InstanceId::new(instance_id), prompt, choices, texts, text_label });
    }
    Ok(out)
}

/// Settles an item on `value`; returns the other items' labels the
/// decision moved (a crowd-model `resolve` refits with it as gold).
pub async fn adjudicate(
    db: &AnyPool,
    kinds: &[SurveyKind],
    user: &SessionUser,
    study_id: StudyId,
    instance_id: InstanceId,
    value: &str,
    text: Option<&str>,
) -> Result<Vec<MovedLabel>, ServiceError> {
    let meta = crate::studies::meta::load_study_meta(db, kinds, study_id).await?;
    if !meta.kind.spec().adjudicated {
        return Err(ServiceError::Invalid(format!("the answers of a study of kind {} are not adjudicated", meta.kind)));
    }
    if !meta.kind.values().contains(&value) {
        return Err(ServiceError::Invalid(format!(
            "unknown value {value:?}; expected one of {}",
            meta.kind.values().join(", ")
        )));
    }
    // The final text obeys the kind's rules for answers (the triplet check's final P2).
    let text = meta.kind.answer_text(value, text).map_err(|e| ServiceError::Invalid(e.to_string()))?;
    let in_study: Option<i64> =
        sqlx::query_scalar("SELECT 1 FROM study_items WHERE study_id = $1 AND instance_id = $2")
            .bind(study_id)
            .bind(instance_id)
            .fetch_optional(db)
            .await?;
    if in_study.is_none() {
        return Err(ServiceError::NotFound(format!("instance {instance_id} is not an item of study {study_id}")));
    }
    if let Some(n) = meta.kind.spec().raters {
        // The third person settles what the experts disagree on, not an item
        // whose second expert has yet to answer.
        let answers: i64 =
            sqlx::query_scalar("SELECT count(*) FROM counted_answers WHERE study_id = $1 AND instance_id = $2")
                .bind(study_id)
                .bind(instance_id)
                .fetch_one(db)
                .await?;
        if answers < n as i64 {
            return Err(ServiceError::Invalid(format!(
                "instance {instance_id} has {answers} of its {n} people's answers; it is decided once all have answered"
            )));
        }
    }
    // A crowd model's refit takes the decision as evidence about the people:
    // the labels it moves elsewhere are said, not left to be found (audit AF).
    let before = match meta.resolve.model() {
        Some(_) => Some(labels(db, kinds, study_id).await?),
        None => None,
    };
    let now = now_secs();
    let mut tx = crate::store::db::begin_write(db).await?;
    if let Some(name) = built_into(&mut *tx, study_id).await? {
        return Err(ServiceError::Invalid(format!(
            "study {name:?} was built from this study's outcomes; a decision now would change them under it"
        )));
    }
    sqlx::query(
        "INSERT INTO adjudications (study_id, instance_id, value, user_id, decided_at, text) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (study_id, instance_id) DO UPDATE SET value = excluded.value, user_id = excluded.user_id,
           decided_at = excluded.decided_at, text = excluded.text",
    )
    .bind(study_id)
    .bind(instance_id)
    .bind(value)
    .bind(user.id)
    .bind(now)
    .bind(text)
    .execute(&mut *tx)
    .await?;
    log(&mut tx, study_id, instance_id, "settled", value, user.id, now).await?;
    tx.commit().await?;
    moved_since(db, kinds, study_id, instance_id, before).await
}

/// The other items' labels that moved since `before` (read when the study
/// has a crowd-model `resolve`; None: nothing can move), logged.
async fn moved_since(
    db: &AnyPool,
    kinds: &[SurveyKind],
    study_id: StudyId,
    instance_id: InstanceId,
    before: Option<std::collections::BTreeMap<i64, Option<String>>>,
) -> Result<Vec<MovedLabel>, ServiceError> {
    let Some(before) = before else { return Ok(Vec::new()) };
    let after = labels(db, kinds, study_id).await?;
    let moved: Vec<MovedLabel> = after
        .into_iter()
        .filter(|(id, _)| *id != instance_id.get())
        .filter_map(|(id, now)| {
            let was = before.get(&id).cloned().flatten();
            (was != now).then_some(MovedLabel { instance_id: id, before: was, after: now })
        })
        .collect();
    if !moved.is_empty() {
        let ids: Vec<String> = moved.iter().map(|m| m.instance_id.to_string()).collect();
        tracing::info!(study = %study_id, instance = %instance_id, moved = %ids.join(","), "a decision moved other labels");
    }
    Ok(moved)
}

/// Each item's settled value (None while it waits), in instance order.
async fn labels(
    db: &AnyPool,
    kinds: &[SurveyKind],
    study_id: StudyId,
) -> Result<std::collections::BTreeMap<i64, Option<String>>, ServiceError> {
    let (_, outcomes) = study_outcomes(db, kinds, study_id).await?;
    Ok(outcomes
        .into_iter()
        .map(|o| {
            let value = match o.state {
                ItemState::Final { value, .. } => Some(value),
                _ => None,
            };
            (o.instance_id, value)
        })
        .collect())
}

async fn log(
    tx: &mut sqlx::AnyConnection,
    study_id: StudyId,
    instance_id: InstanceId,
    action: &str,
    value: &str,
    user_id: UserId,
    at: i64,
) -> Result<(), ServiceError> {
    sqlx::query(
        "INSERT INTO adjudication_log (study_id, instance_id, action, value, user_id, at) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(study_id)
    .bind(instance_id)
    .bind(action)
    .bind(value)
    .bind(user_id)
    .bind(at)
    .execute(tx)
    .await?;
    Ok(())
}

/// Undoes the decision on an item: it is disputed again (while its answers
/// still disagree) and the log keeps the decision beside the reopening.
/// Refused once a later study (Step 4) was built from the decisions.
pub async fn reopen(
    db: &AnyPool,
    kinds: &[SurveyKind],
    user: &SessionUser,
    study_id: StudyId,
    instance_id: InstanceId,
) -> Result<Vec<MovedLabel>, ServiceError> {
    let meta = crate::studies::meta::load_study_meta(db, kinds, study_id).await?;
    // Withdrawn gold moves a crowd model's refit as a decision does.
    let before = match meta.resolve.model() {
        Some(_) => Some(labels(db, kinds, study_id).await?),
        None => None,
    };
    let mut tx = crate::store::db::begin_write(db).await?;
    if let Some(name) = built_into(&mut *tx, study_id).await? {
        return Err(ServiceError::Invalid(format!(
            "study {name:?} was built from this study's outcomes; reopening a decision now would change them under it"
        )));
    }
    let undone: Option<String> =
        sqlx::query_scalar("DELETE FROM adjudications WHERE study_id = $1 AND instance_id = $2 RETURNING value")
            .bind(study_id)
            .bind(instance_id)
            .fetch_optional(&mut *tx)
            .await?;
    let Some(value) = undone else {
        return Err(ServiceError::NotFound(format!(
            "instance {instance_id} of study {study_id} has no decision to reopen"
        )));
    };
    log(&mut tx, study_id, instance_id, "reopened", &value, user.id, now_secs()).await?;
    tx.commit().await?;
    moved_since(db, kinds, study_id, instance_id, before).await
}

/// The items a researcher has settled, newest decision first, each with its
/// whole history (earlier decisions and reopenings included).
pub async fn settled(db: &AnyPool, kinds: &[SurveyKind], study_id: StudyId) -> Result<Vec<Settled>, ServiceError> {
    let meta = crate::studies::meta::load_study_meta(db, kinds, study_id).await?;
    let standing: Vec<(i64, String)> = sqlx::query_as(
        "SELECT instance_id, value FROM adjudications WHERE study_id = $1 ORDER BY decided_at DESC, instance_id",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?;
    let built = built_into(db, study_id).await?;
    let mut out = Vec::with_capacity(standing.len());
    for (instance_id, value) in standing {
        let history: Vec<(String, String, String, i64)> = sqlx::query_as(
            "SELECT l.action, l.value, u.username, l.at FROM adjudication_log l JOIN users u ON u.id = l.user_id
             WHERE l.study_id = $1 AND l.instance_id = $2 ORDER BY l.id",
        )
        .bind(study_id)
        .bind(instance_id)
        .fetch_all(db)
        .await?;
        // Each annotator's seed shuffled the letters: name them as each saw them, as disputes do.
        let seeds: Vec<(String, i64)> =
            item_answers(db, study_id, instance_id).await?.into_iter().map(|(_, who, seed)| (who, seed)).collect();
        let (prompt, _, labels) = shown(db, meta.kind, study_id, InstanceId::new(instance_id), &seeds).await?;
        let label = |v: &str| labels.get(v).cloned().unwrap_or_else(|| v.to_string());
        let history = history
            .into_iter()
            .map(|(action, value, by, at)| AdjudicationEvent { label: label(&value), action, value, by, at })
            .collect();
        out.push(Settled {
            study_id,
            instance_id: InstanceId::new(instance_id),
            prompt,
            label: label(&value),
            value,
            history,
            built_into: built.clone(),
        });
    }
    Ok(out)
}
