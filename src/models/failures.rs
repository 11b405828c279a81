//! The comparison drill-down: instances a model run fails, with what it
//! failed, the captions and (when the dataset has them) both images.
use crate::api_types::Failure;
use crate::domain::ids::InstanceId;
use crate::domain::metrics::Outcome;
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
    dataset: &str,
    model: &str,
    metric: &str,
    neg_type: Option<&str>,
) -> Result<Vec<Failure>, ServiceError> {
    let dataset_id = crate::studies::pipeline::dataset_id(db, dataset).await?;
    if fails(metric, &Outcome::default()).is_none() {
        return Err(ServiceError::Invalid(format!("unknown score {metric:?} (i2t, t2i or group)")));
    }
    // The negative image is the one the model was scored against; an
    // outcome on a negative that curation has since replaced is left out,
    // as the comparison leaves it out.
    let negative = crate::store::negatives::negative_sql("i.id");
    let rows: Vec<FailureRow> = sqlx::query_as(&format!(
        "SELECT i.id, i.neg_type, i.subtype, i.caption, i.negative_caption, i.positive_image,
                {negative} AS negative_image, o.ipos2t, o.ineg2t, o.tpos2i, o.tneg2i
         FROM model_outcomes o JOIN model_runs r ON r.id = o.run_id JOIN instances i ON i.id = o.instance_id
         WHERE r.dataset_id = $1 AND r.name = $2 AND ($3 IS NULL OR i.neg_type = $4)
           AND (o.negative_image IS NULL OR o.negative_image = {negative})
         ORDER BY i.id"
    ))
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
