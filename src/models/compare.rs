//! The model comparison: every model run on a dataset scored with the same
//! Winoground definitions, next to chance.
use crate::api_types::{CompareReport, ModelScores};
use crate::domain::category::Category;
use crate::domain::export::Stage;
use crate::domain::ids::DatasetId;
use crate::domain::metrics::{Aggregator, Outcome, Report, Scores};
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::store::ids::Flag;
use sqlx::AnyPool;

fn rounded(r: Report) -> Report {
    Report {
        overall: r.overall.rounded(),
        by_type: r.by_type.into_iter().map(|(k, v)| (k, v.rounded())).collect(),
        by_subtype: r.by_subtype.into_iter().map(|(k, v)| (k, v.rounded())).collect(),
    }
}

/// Datasets with something to compare: a model run or a human baseline.
pub async fn datasets_with_results(db: &AnyPool) -> Result<Vec<String>, ServiceError> {
    Ok(sqlx::query_scalar(crate::store::statements::DATASETS_WITH_RESULTS.on(db))
        .bind(crate::models::human::measurement_kinds_json())
        .fetch_all(db)
        .await?)
}

/// (instance, type, subtype, the four flags, the negative image scored on).
type OutcomeRow = (i64, String, String, Flag, Flag, Flag, Flag, Option<String>);

/// Which instances the models are measured on: every one, or a curation
/// stage's (the stage and its instance ids, in id order).
pub type Only = Option<(Stage, Vec<i64>)>;

/// Every model run on the dataset (on `only`'s instances), the human rows
/// (of the baseline studies in `baselines`, or of all of them when empty)
/// and chance.
pub async fn compare(
    db: &AnyPool,
    kinds: &[SurveyKind],
    dataset: &str,
    baselines: &[i64],
    only: Only,
) -> Result<CompareReport, ServiceError> {
    let dataset_id: DatasetId = sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1")
        .bind(dataset)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| ServiceError::NotFound(format!("no dataset named {dataset:?}")))?;
    let runs: Vec<(i64, String, Option<String>)> =
        sqlx::query_as("SELECT id, name, device FROM model_runs WHERE dataset_id = $1 ORDER BY id")
            .bind(dataset_id)
            .fetch_all(db)
            .await?;
    let negatives = crate::studies::negatives::of_dataset(db, kinds, dataset_id).await?;
    let mut models = Vec::with_capacity(runs.len());
    for (run, name, device) in runs {
        let rows: Vec<OutcomeRow> = sqlx::query_as(
            "SELECT o.instance_id, i.neg_type, i.subtype, o.ipos2t, o.ineg2t, o.tpos2i, o.tneg2i, o.negative_image
             FROM model_outcomes o JOIN instances i ON i.id = o.instance_id WHERE o.run_id = $1",
        )
        .bind(run)
        .fetch_all(db)
        .await?;
        let mut agg = Aggregator::new();
        let mut left_out = 0;
        for (id, t, s, a, b, c, d, scored_on) in rows {
            if only.as_ref().is_some_and(|(_, ids)| ids.binary_search(&id).is_err()) {
                continue;
            }
            // Computed on a negative image that curation has since replaced
            // (Step 3 settled on another candidate); imported results scored none.
            if scored_on.is_some_and(|image| negatives.get(&id) != Some(&image)) {
                left_out += 1;
                continue;
            }
            let category = Category::parse(&t, &s).map_err(|e| ServiceError::internal("a stored category", e))?;
            agg.add(category, Outcome::from_flags(a.0, b.0, c.0, d.0));
        }
        let report = rounded(agg.report());
        models.push(ModelScores { name, n: report.overall.n, device, left_out, report });
    }
    let humans = crate::models::human::human_rows(db, dataset_id, baselines, rounded).await?;
    Ok(CompareReport {
        dataset: dataset.to_string(),
        stage: only.map(|(stage, _)| stage.as_str().to_string()),
        models,
        humans,
        random: Scores::random().rounded(),
    })
}
