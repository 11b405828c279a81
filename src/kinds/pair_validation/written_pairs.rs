//! HNC's second step: a validation study's items are the pairs a writing
//! study's annotators wrote. Creating it (`source = "<writing study>"`)
//! makes each written pair an instance of a new dataset, the spec's
//! `dataset`: image and caption type from the writing item, the positive as
//! caption, the negative as negative caption, keyed `w<task>` so every pair
//! traces back to its writer's answer. Each writer's pair is its own item.
//! Its validators are another group than the writers (HNC): named ones who
//! wrote are refused, "all" leaves the writers out, and a link participant
//! who wrote (same platform id) is screened out on arrival. The registry
//! reaches these through the kind's `SERVER` (`from_source`, `keep_out`).
use crate::domain::assignment::Annotators;
use crate::domain::ids::StudyId;
use crate::domain::pairs::PLACEHOLDER;
use crate::domain::study::Study;
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::studies::hooks::{Fut, SourceItems};
use crate::state::StudyMeta;
use crate::store::dataset_rows::{insert_dataset, insert_instance, NewInstance};
use sqlx::{Any, AnyConnection, AnyPool, Transaction};
use crate::store::rows::from_row;

/// One written pair with its writing item's image and type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenPair {
    pub task_id: i64,
    pub image: String,
    pub caption_type: String,
    pub positive: String,
    pub negative: String,
    /// The writer's username.
    pub writer: String,
}
from_row!(WrittenPair { task_id, image, caption_type, positive, negative, writer });

/// Whether the kind's items come from a source whose answers are texts
/// rather than survivors of a curation step (HNC's writing).
fn takes_written_pairs(kind: SurveyKind) -> bool {
    kind.spec().sources.iter().any(|k| k.curation().is_none() && !k.spec().texts.is_empty())
}

/// Every pair written so far in a writing study, in the order written.
async fn written(db: &AnyPool, study_id: StudyId) -> Result<Vec<WrittenPair>, ServiceError> {
    Ok(sqlx::query_as(
        "SELECT a.task_id, i.positive_image AS image, i.caption_type, p.text AS positive, n.text AS negative,
                u.username AS writer
         FROM counted_answers a JOIN instances i ON i.id = a.instance_id JOIN users u ON u.id = a.user_id
         JOIN answer_texts p ON p.task_id = a.task_id AND p.field = 'positive'
         JOIN answer_texts n ON n.task_id = a.task_id AND n.field = 'negative'
         WHERE a.study_id = $1 AND a.value = 'written' ORDER BY a.task_id",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?)
}

/// The pairs a new validation study takes from its source.
pub fn from_source<'a>(db: &'a AnyPool, study: &'a Study) -> Fut<'a, Option<Box<dyn SourceItems>>> {
    Box::pin(async move { Ok(collect(db, study).await?.map(|pairs| Box::new(Pairs(pairs)) as Box<dyn SourceItems>)) })
}

struct Pairs(Vec<WrittenPair>);

impl SourceItems for Pairs {
    fn annotators(&self, spec: &Annotators, source: Option<&str>) -> Result<Annotators, ServiceError> {
        validators(spec, source, &self.0)
    }

    fn insert<'a>(&'a self, tx: &'a mut Transaction<'static, Any>, name: &'a str) -> Fut<'a, ()> {
        Box::pin(insert(tx, name, &self.0))
    }
}

/// A link participant who wrote one of the pairs never validates them; ids
/// compared in any case (Prolific's are normalised, another panel's are
/// kept as given, and "Worker-ABC" and "worker-abc" are one person).
pub fn keep_out<'a>(conn: &'a mut AnyConnection, meta: &'a StudyMeta, pid: &'a str) -> Fut<'a, bool> {
    Box::pin(wrote_pairs_of(conn, meta, pid))
}

/// The pairs a new study of a kind that validates written pairs takes from
/// its source (read before the creating transaction); None for other kinds.
async fn collect(db: &AnyPool, study: &Study) -> Result<Option<Vec<WrittenPair>>, ServiceError> {
    let Some(source) = study.source.as_deref().filter(|_| takes_written_pairs(study.kind)) else {
        return Ok(None);
    };
    let invalid = |m: String| ServiceError::Invalid(format!("field `source`: {m}"));
    let (id, kind): (StudyId, String) = sqlx::query_as("SELECT id, kind FROM studies WHERE name = $1")
        .bind(source)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| invalid(format!("no study named {source:?}")))?;
    let kind = SurveyKind::parse(&kind).ok_or_else(|| ServiceError::Internal(format!("study {id}: bad kind")))?;
    if !study.kind.spec().sources.contains(&kind) {
        let want: Vec<&str> = study.kind.spec().sources.iter().map(|k| k.name()).collect();
        return Err(invalid(format!("study {source:?} is of kind {kind}; expected {}", want.join(" or "))));
    }
    let pairs = written(db, id).await?;
    if pairs.is_empty() {
        return Err(invalid(format!("study {source:?} has no written pairs yet")));
    }
    Ok(Some(pairs))
}

/// Who validates the pairs: named validators must have written none of
/// them (refused naming them); "all" becomes every annotator but the writers.
fn validators(
    annotators: &Annotators,
    source: Option<&str>,
    pairs: &[WrittenPair],
) -> Result<Annotators, ServiceError> {
    let mut writers: Vec<String> = pairs.iter().map(|p| p.writer.clone()).collect();
    writers.sort();
    writers.dedup();
    match annotators {
        Annotators::Named(names) => {
            let wrote: Vec<String> = names.iter().filter(|n| writers.contains(n)).map(|n| format!("{n:?}")).collect();
            match wrote.is_empty() {
                true => Ok(annotators.clone()),
                false => Err(ServiceError::Invalid(format!(
                    "field `annotators`: {} wrote pairs of {:?}; its validators must be another group than \
                     its writers (HNC), so list only people who wrote none",
                    wrote.join(", "),
                    source.unwrap_or_default()
                ))),
            }
        }
        Annotators::All | Annotators::AllBut(_) => Ok(Annotators::AllBut(writers)),
    }
}

/// Whether the link participant with platform id `pid` wrote one of the
/// pairs the study validates (as a participant of its source); false for
/// studies of other kinds.
async fn wrote_pairs_of(conn: &mut AnyConnection, meta: &StudyMeta, pid: &str) -> Result<bool, ServiceError> {
    let Some(source) = meta.source_study_id.filter(|_| takes_written_pairs(meta.kind)) else {
        return Ok(false);
    };
    Ok(sqlx::query_scalar::<_, crate::store::ids::Flag>(
        "SELECT EXISTS (SELECT 1 FROM participants p JOIN answers a ON a.user_id = p.user_id AND a.study_id = p.study_id
                        JOIN instances i ON i.key = 'w' || a.task_id
                          AND i.dataset_id = (SELECT dataset_id FROM studies WHERE id = $1)
                        WHERE p.study_id = $2 AND lower(p.platform_pid) = lower($3))",
    )
    .bind(meta.id)
    .bind(source)
    .bind(pid)
    .fetch_one(conn)
    .await?
    .0)
}

/// Makes the pairs the instances of the new dataset `name` (inside the
/// study's creating transaction, so a failed creation leaves no dataset).
async fn insert(tx: &mut Transaction<'_, Any>, name: &str, pairs: &[WrittenPair]) -> Result<(), ServiceError> {
    crate::domain::names::check_dataset_name(name)
        .map_err(|e| ServiceError::Invalid(format!("field `dataset`: {e}")))?;
    let taken: Option<i64> =
        sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1").bind(name).fetch_optional(&mut **tx).await?;
    if taken.is_some() {
        return Err(ServiceError::Invalid(format!(
            "field `dataset`: {name:?} already exists; the written pairs go into a new dataset, name one"
        )));
    }
    let dataset_id = insert_dataset(tx, name, "none").await?;
    for p in pairs {
        let key = format!("w{}", p.task_id);
        let new = NewInstance {
            key: &key,
            caption: &p.positive,
            negative_caption: &p.negative,
            caption_orig: &p.positive,
            negative_caption_orig: &p.negative,
            category: PLACEHOLDER,
            positive_image: Some(&p.image),
        };
        let id = insert_instance(tx, dataset_id, &new).await?;
        sqlx::query("UPDATE instances SET caption_type = $1 WHERE id = $2")
            .bind(&p.caption_type)
            .bind(id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}
