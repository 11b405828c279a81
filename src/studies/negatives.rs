//! Which generated image is "the negative" of each instance; the one place
//! that decides (docs/scoring.md, "What is scored"). The latest study that
//! settled the instance names it: a Step 3 study's settled item (the
//! candidate in the slot of its final value, finished study or not; a
//! discard names none), or the image a later study's item carries (Step 4,
//! the human baseline: a copy of Step 3's choice). Where none chose, or the
//! latest discarded it, the stand-in of `store::negatives`.
//! Scoring, the comparison, its drill-down and the demo scorers read it
//! here, so they agree with Step 3's survivors and the export.
use crate::domain::ids::DatasetId;
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::store::negatives::stand_in_sql;
use crate::studies::outcomes::{settled_images, study_outcomes};
use sqlx::AnyPool;
use std::collections::HashMap;

/// Every instance of the dataset that has a negative image, with it.
pub async fn of_dataset(
    db: &AnyPool,
    kinds: &[SurveyKind],
    dataset: DatasetId,
) -> Result<HashMap<i64, String>, ServiceError> {
    // Per instance, the study that settled it and its image (None: it
    // discarded the instance): the latest wins.
    let mut chosen: HashMap<i64, (i64, Option<String>)> = HashMap::new();
    let mut choose = |instance: i64, study: i64, image: Option<String>| {
        if chosen.get(&instance).is_none_or(|(earlier, _)| *earlier <= study) {
            chosen.insert(instance, (study, image));
        }
    };
    let carried: Vec<(i64, i64, String)> = sqlx::query_as(
        "SELECT si.instance_id, si.study_id, si.chosen_image FROM study_items si
         JOIN instances i ON i.id = si.instance_id WHERE i.dataset_id = $1 AND si.chosen_image IS NOT NULL",
    )
    .bind(dataset)
    .fetch_all(db)
    .await?;
    for (instance, study, image) in carried {
        choose(instance, study, Some(image));
    }
    let studies: Vec<(i64, String)> = sqlx::query_as("SELECT id, kind FROM studies WHERE dataset_id = $1 ORDER BY id")
        .bind(dataset)
        .fetch_all(db)
        .await?;
    for (study, kind) in studies {
        // Only a study that picks among the candidates chooses a negative.
        let Some(kind) = SurveyKind::parse_in(kinds, &kind) else { continue };
        if kind.curation().is_none() || kind.spec().needs.candidates.is_none() {
            continue;
        }
        let (_, outcomes) = study_outcomes(db, kinds, study.into()).await?;
        for (instance, image) in settled_images(db, kind, study.into(), &outcomes).await? {
            choose(instance, study, image);
        }
    }
    let stand_ins: Vec<(i64, Option<String>)> =
        sqlx::query_as(&format!("SELECT i.id, {} FROM instances i WHERE i.dataset_id = $1", stand_in_sql("i.id")))
            .bind(dataset)
            .fetch_all(db)
            .await?;
    let mut out: HashMap<i64, String> = stand_ins.into_iter().filter_map(|(i, img)| Some((i, img?))).collect();
    out.extend(chosen.into_iter().filter_map(|(instance, (_, image))| Some((instance, image?))));
    Ok(out)
}
