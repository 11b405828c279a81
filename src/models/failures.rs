//! The comparison drill-down: instances a model run fails, with what it
//! failed, the captions and (when the dataset has them) both images.
use crate::api_types::Failure;
use crate::domain::category::NegType;
use crate::domain::ids::InstanceId;
use crate::domain::metrics::Outcome;
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::store::ids::Flag;
use crate::store::rows::from_row;
use crate::studies::tasks::image_url;
use sqlx::AnyPool;

/// Which score the drill-down lists failures of.
pub fn fails(metric: &str, o: &Outcome) -> Option<bool> {
    Some(match metric {
        "i2t" => !o.i2t(),
        "t2i" => !o.t2i(),
        "group" => !o.group(),
        _ => return None,
    })
}

pub use crate::api_types::FAILURE_LIMIT as LIMIT;

/// One failed (or not) instance of a model run, as read.
struct FailureRow {
    id: i64,
    neg_type: String,
    subtype: String,
    caption: String,
    negative_caption: String,
    positive_image: Option<String>,
    negative_image: Option<String>,
    ipos2t: bool,
    ineg2t: bool,
    tpos2i: bool,
    tneg2i: bool,
}
from_row!(FailureRow {
    id, neg_type, subtype, caption, negative_caption, positive_image, negative_image, ipos2t as Flag, ineg2t as Flag,
    tpos2i as Flag, tneg2i as Flag
});

/// Up to [`LIMIT`] failures of `model` on `dataset`, optionally of one type.
pub async fn failures(
    db: &AnyPool,
    kinds: &[SurveyKind],
    dataset: &str,
    model: &str,
    metric: &str,
    neg_type: Option<&str>,
) -> Result<Vec<Failure>, ServiceError> {
    let dataset_id = crate::studies::pipeline::dataset_id(db, dataset).await?;
    if fails(metric, &Outcome::default()).is_none() {
        return Err(ServiceError::Invalid(format!("unknown score {metric:?} (i2t, t2i or group)")));
    }
    // What would otherwise list nothing is refused, as the comparison
    // refuses it: an unknown type (`SWAP` reads as `swap`) and a model with
    // no run on the dataset.
    let neg_type = neg_type
        .map(|t| NegType::parse(t).map(NegType::as_str))
        .transpose()
        .map_err(|e| ServiceError::Invalid(format!("query parameter `type`: {e}")))?;
    let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM model_runs WHERE dataset_id = $1 AND name = $2")
        .bind(dataset_id)
        .bind(model)
        .fetch_one(db)
        .await?;
    if runs == 0 {
        return Err(ServiceError::NotFound(format!("no model run named {model:?} on dataset {dataset:?}")));
    }
    // The negative image is the one the model was scored against; an
    // outcome on a negative that curation has since replaced is left out,
    // as the comparison leaves it out.
    let negatives = crate::studies::negatives::of_dataset(db, kinds, dataset_id).await?;
    let rows: Vec<FailureRow> = sqlx::query_as(
        "SELECT i.id, i.neg_type, i.subtype, i.caption, i.negative_caption, i.positive_image,
                o.negative_image, o.ipos2t, o.ineg2t, o.tpos2i, o.tneg2i
         FROM model_outcomes o JOIN model_runs r ON r.id = o.run_id JOIN instances i ON i.id = o.instance_id
         WHERE r.dataset_id = $1 AND r.name = $2 AND (CAST($3 AS TEXT) IS NULL OR i.neg_type = $4)
         ORDER BY i.id",
    )
    .bind(dataset_id)
    .bind(model)
    .bind(neg_type)
    .bind(neg_type)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            let FailureRow {
                id,
                neg_type: t,
                subtype: s,
                caption,
                negative_caption,
                positive_image: pos,
                negative_image: neg,
                ipos2t: a,
                ineg2t: b,
                tpos2i: c,
                tneg2i: d,
            } = r;
            let current = negatives.get(&id);
            if neg.as_ref().is_some_and(|scored_on| current != Some(scored_on)) {
                return None;
            }
            // Imported results scored no image: the one curation has now.
            let neg = neg.or_else(|| current.cloned());
            let o = Outcome { ipos2t: a, ineg2t: b, tpos2i: c, tneg2i: d };
            fails(metric, &o)?.then(|| Failure {
                instance_id: InstanceId::new(id),
                category: format!("{t}/{s}"),
                caption,
                negative_caption,
                positive_image_url: pos.as_deref().map(image_url),
                negative_image_url: neg.as_deref().map(image_url),
                ipos2t: a,
                ineg2t: b,
                tpos2i: c,
                tneg2i: d,
            })
        })
        .take(LIMIT)
        .collect())
}
