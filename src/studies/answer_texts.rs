//! The free-text parts of a study's answers (`answer_texts`, docs/study-spec.md
//! "Free-text answers"): the disagreement rule on texts, and each item's
//! final text for disputes, exports and reports.
use crate::domain::answer_text::{collapsed, settled_despite_texts, texts_agree};
use crate::domain::ids::StudyId;
use crate::domain::resolution::{ItemState, ResolvedBy};
use crate::error::ServiceError;
use crate::state::StudyMeta;
use sqlx::AnyPool;
use std::collections::HashMap;

/// One counted answer of an item with its text.
#[derive(Debug, Clone)]
pub struct TextedAnswer {
    pub annotator: String,
    pub value: String,
    pub text: Option<String>,
}

/// Every counted answer of the study with its text, per instance, earliest
/// first; for kinds with one text field (a kind with two reads its own).
pub async fn answers(db: &AnyPool, study_id: StudyId) -> Result<HashMap<i64, Vec<TextedAnswer>>, ServiceError> {
    let rows: Vec<(i64, String, String, Option<String>)> = sqlx::query_as(
        "SELECT a.instance_id, u.username, a.value, t.text FROM counted_answers a JOIN users u ON u.id = a.user_id
         LEFT JOIN answer_texts t ON t.task_id = a.task_id
         WHERE a.study_id = $1 ORDER BY a.instance_id, a.answered_at, a.arrival, a.task_id",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?;
    let mut out: HashMap<i64, Vec<TextedAnswer>> = HashMap::new();
    for (instance, annotator, value, text) in rows {
        out.entry(instance).or_default().push(TextedAnswer { annotator, value, text });
    }
    Ok(out)
}

/// Answers that stored the same value still disagree when their texts
/// differ (two different corrections): `first` and `primary` settle the text
/// as they settle values; under any other rule the item waits for
/// adjudication, whoever settled its value (all agreeing, a model, the stop
/// rule: none of them chose between the texts). Runs after every other
/// settling step, so nothing settles the item again. Only adjudicated kinds
/// with one text field (two writers' different HNC pairs are two pairs).
pub async fn settle(
    db: &AnyPool,
    meta: &StudyMeta,
    items: impl Iterator<Item = (i64, &mut ItemState)>,
) -> Result<(), ServiceError> {
    if !meta.kind.spec().adjudicated || meta.kind.text_field().is_none() {
        return Ok(());
    }
    let answers = answers(db, meta.id).await?;
    for (instance, state) in items {
        let ItemState::Final { value, by } = &*state else { continue };
        let Some(given) = answers.get(&instance) else { continue };
        let texts: Vec<Option<&str>> = given.iter().filter(|a| a.value == *value).map(|a| a.text.as_deref()).collect();
        if texts_agree(&texts) {
            continue;
        }
        let primary_gave_it = primary_answer(meta, given, value).is_some();
        *state = match settled_despite_texts(meta.resolve, *by, primary_gave_it) {
            Some(by) => ItemState::Final { value: value.clone(), by },
            None => {
                let mut values: Vec<String> = given.iter().map(|a| a.value.clone()).collect();
                values.sort();
                values.dedup();
                ItemState::Disputed { values }
            }
        };
    }
    Ok(())
}

/// The primary annotator's answer to the item, if it stored `value`.
fn primary_answer<'a>(meta: &StudyMeta, given: &'a [TextedAnswer], value: &str) -> Option<&'a TextedAnswer> {
    let primary = meta.primary_among(given.iter().map(|a| a.annotator.as_str()))?;
    given.iter().find(|a| a.annotator == primary && a.value == value)
}

/// Each settled item's final text: the adjudicator's when adjudicated, the
/// primary annotator's when `primary` settled it, else that of the earliest
/// answer that stored the final value (the same for every such answer, up to
/// whitespace, unless `first` settled it); an answer's text is exported with
/// its whitespace collapsed, so the export does not depend on whose answer
/// came first. Items without text are absent.
pub async fn final_texts(
    db: &AnyPool,
    meta: &StudyMeta,
    items: impl Iterator<Item = (i64, &ItemState)>,
    answers: &HashMap<i64, Vec<TextedAnswer>>,
) -> Result<HashMap<i64, String>, ServiceError> {
    let adjudicated: HashMap<i64, Option<String>> =
        sqlx::query_as("SELECT instance_id, text FROM adjudications WHERE study_id = $1")
            .bind(meta.id)
            .fetch_all(db)
            .await?
            .into_iter()
            .collect();
    let mut out = HashMap::new();
    for (instance, state) in items {
        let ItemState::Final { by, value } = state else { continue };
        let given = answers.get(&instance).map(Vec::as_slice).unwrap_or_default();
        let text = match by {
            ResolvedBy::Adjudication => adjudicated.get(&instance).cloned().flatten(),
            _ => primary_answer(meta, given, value)
                .filter(|_| *by == ResolvedBy::Primary)
                .or_else(|| given.iter().find(|a| a.value == *value))
                .and_then(|a| a.text.as_deref())
                .map(collapsed),
        };
        if let Some(t) = text {
            out.insert(instance, t);
        }
    }
    Ok(out)
}
