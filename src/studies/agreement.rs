//! Agreement on a study's answers: the stored values (what was chosen, not
//! where it was shown) mapped to categories, then the pure statistics.
use crate::domain::agreement::{keyed_by_question, study_agreement, CategoryMap, QuestionRating};
use crate::domain::ids::StudyId;
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::state::StudyMeta;
use crate::store::pages::{page_starts, range_pages, JsonPages, PAGE_SHIFT};
use crate::studies::agreement_detail::detail_of;
pub use crate::studies::agreement_detail::{AnnotatorOut, BootstrapOut, Detail};
use crate::studies::agreement_questions::{category_map, per_question};
pub use crate::studies::agreement_questions::{Figures, PairOut, QuestionOut};
use crate::studies::meta::load_study_meta;
use crate::studies::votes::Votes;
use serde::Serialize;
use sqlx::AnyPool;
use std::collections::HashMap;

pub use crate::domain::study::Mapping;

#[derive(Debug, Clone, Serialize)]
pub struct AgreementOut {
    pub study_id: StudyId,
    pub mapping: &'static str,
    #[serde(flatten)]
    pub figures: Figures,
    /// Detailed report only (`agreement_detail`): bootstrap intervals,
    /// per-annotator confusion and model estimates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap: Option<BootstrapOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub annotators: Vec<AnnotatorOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dawid_skene_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mace_reason: Option<String>,
    /// Kinds with several questions per item: each question on its own. The
    /// figures above then count each (instance, question) as an item.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<QuestionOut>,
    /// Kinds with several questions: why the figures above are not the ones to report.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooled_over_questions: Option<String>,
}

/// Said with the pooled figures of a kind that asks several questions: each
/// question has its own categories, so raters always "agree" on which one
/// was asked, and chance from the pooled answers does not take that out.
const POOLED: &str = "these figures pool the {n} questions, each with its own categories: that two answers \
are about the same question counts as agreement, so they run above every question's own figures (two people \
answering at random score above 0); report each question's figures (questions)";
/// Agreement with the given mapping, or the one the study's spec chose.
pub async fn study_agreement_report(
    db: &AnyPool,
    kinds: &[SurveyKind],
    study_id: StudyId,
    mapping: Option<Mapping>,
) -> Result<AgreementOut, ServiceError> {
    agreement_report(db, kinds, study_id, mapping, None).await
}

/// The summary, plus with `detail` the intervals and per-annotator figures.
pub async fn agreement_report(
    db: &AnyPool,
    kinds: &[SurveyKind],
    study_id: StudyId,
    mapping: Option<Mapping>,
    detail: Option<Detail>,
) -> Result<AgreementOut, ServiceError> {
    let meta = load_study_meta(db, kinds, study_id).await?;
    let mapping = mapping.unwrap_or(meta.mapping);
    let map = category_map(meta.kind, mapping, meta.kind.values())?;
    // Pages of 1,024 instances as JSON arrays: a big study's answers would
    // otherwise cross from sqlx's worker thread one row at a time. A kind
    // with one question asks it as question 0 on every task, so its answers
    // are read from their own index without a task lookup each.
    let items = crate::studies::meta::study_item_ids(db, study_id).await?;
    let sql = if meta.kind.question_count() == 1 {
        "SELECT json_group_array(json_array(a.instance_id, 0, a.user_id, a.value))
         FROM counted_answers a WHERE a.study_id = $1 AND a.instance_id BETWEEN $2 AND $3"
    } else {
        "SELECT json_group_array(json_array(a.instance_id, (SELECT t.query FROM tasks t WHERE t.id = a.task_id),
                a.user_id, a.value))
         FROM counted_answers a WHERE a.study_id = $1 AND a.instance_id BETWEEN $2 AND $3"
    };
    let mut pages = JsonPages::<(i64, i64, i64, String)>::new(range_pages(
        db,
        sql,
        study_id.get(),
        page_starts(&items, PAGE_SHIFT),
    ));
    drop(items);
    let mut rows = Vec::new();
    while let Some(row) = pages.try_next().await? {
        rows.push(row);
    }
    let by_question =
        rated(&map, rows.iter().map(|(item, query, user, value)| (*item, *query, *user, value.as_str())))?;
    let names = user_names(db).await?;
    let mut out = summary(db, &meta, mapping, &map, &by_question, &names, detail).await?;
    if meta.kind.question_count() > 1 {
        let name = |id: u64| names.get(&(id as i64)).cloned().unwrap_or_else(|| format!("user {id}"));
        let seed = detail.map(|d| (d.resamples, d.seed.unwrap_or(meta.seed)));
        out.questions = per_question(meta.kind, mapping, &rows, &name, seed)?;
        out.pooled_over_questions = Some(POOLED.replace("{n}", &meta.kind.question_count().to_string()));
    }
    Ok(out)
}

/// The summary report of a one-question study, with the spec's mapping,
/// from answers already read: the export's outcomes keep them (`Votes`,
/// `items` being the instance of each of their items), so its card need not
/// read every answer again. `None` for a kind of several questions.
pub async fn summary_of_votes(
    db: &AnyPool,
    kinds: &[SurveyKind],
    study_id: StudyId,
    items: &[i64],
    votes: &Votes,
) -> Result<Option<AgreementOut>, ServiceError> {
    let meta = load_study_meta(db, kinds, study_id).await?;
    if meta.kind.question_count() != 1 {
        return Ok(None);
    }
    let map = category_map(meta.kind, meta.mapping, meta.kind.values())?;
    let by_question = rated(&map, votes.each().map(|(item, user, value)| (items[item], 0, user, value)))?;
    let names = user_names(db).await?;
    Ok(Some(summary(db, &meta, meta.mapping, &map, &by_question, &names, None).await?))
}

/// (instance, question, annotator, stored value) as ratings of the map's categories.
fn rated<'a>(
    map: &CategoryMap,
    answers: impl Iterator<Item = (i64, i64, i64, &'a str)>,
) -> Result<Vec<QuestionRating>, ServiceError> {
    answers
        .map(|(item, query, user, value)| {
            let category = map
                .map(value)
                .ok_or_else(|| ServiceError::Internal(format!("stored value {value:?} has no category")))?;
            Ok((item as u64, query as u8, user as u64, category))
        })
        .collect()
}

async fn user_names(db: &AnyPool) -> Result<HashMap<i64, String>, ServiceError> {
    Ok(sqlx::query_as::<_, (i64, String)>("SELECT id, username FROM users").fetch_all(db).await?.into_iter().collect())
}

/// The figures over every question's ratings (and with `detail` the
/// intervals and per-annotator figures).
async fn summary(
    db: &AnyPool,
    meta: &StudyMeta,
    mapping: Mapping,
    map: &CategoryMap,
    by_question: &[QuestionRating],
    names: &HashMap<i64, String>,
    detail: Option<Detail>,
) -> Result<AgreementOut, ServiceError> {
    // One question: the key is the instance, as it always was.
    let ratings = keyed_by_question(by_question, meta.kind.question_count());
    let name = |id: u64| names.get(&(id as i64)).cloned().unwrap_or_else(|| format!("user {id}"));
    let s = study_agreement(&ratings, map.len());
    let mut out = AgreementOut {
        study_id: meta.id,
        mapping: mapping.as_str(),
        figures: Figures::of(s, map.names(), &name),
        bootstrap: None,
        annotators: Vec::new(),
        dawid_skene_reason: None,
        mace_reason: None,
        questions: Vec::new(),
        pooled_over_questions: None,
    };
    if let Some(d) = detail {
        let more = detail_of(db, meta, map, &ratings, &name, d).await?;
        (out.bootstrap, out.annotators) = (more.bootstrap, more.annotators);
        (out.dawid_skene_reason, out.mace_reason) = (more.dawid_skene_reason, more.mace_reason);
    }
    Ok(out)
}
