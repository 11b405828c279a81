//! A dataset's pipeline (its latest Step 4 study and the Step 3 study it
//! was built from, else its latest Step 3) and the funnel counts per stage.
use crate::domain::category::Category;
use crate::domain::funnel::{Funnel, FunnelBuilder};
use crate::domain::ids::{DatasetId, StudyId};
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::state::StudyMeta;
use crate::studies::outcomes::{study_outcomes_and_votes, ItemOutcome, StudyOutcomes};
use crate::studies::votes::Votes;
use sqlx::AnyPool;
use std::sync::Arc;

/// The studies a dataset's curation went through, with their outcomes.
pub struct Pipeline {
    pub dataset_id: DatasetId,
    pub step3: Option<(StudyMeta, Vec<ItemOutcome>)>,
    pub step4: Option<(StudyMeta, Vec<ItemOutcome>)>,
    /// The answers behind Step 3's and Step 4's outcomes (empty without the
    /// step), shared with the export's card.
    pub votes: [Arc<Votes>; 2],
}

pub async fn dataset_id(db: &AnyPool, dataset: &str) -> Result<DatasetId, ServiceError> {
    sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1")
        .bind(dataset)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| ServiceError::NotFound(format!("no dataset named {dataset:?}")))
}

/// A dataset's curation studies, by id: the latest Step 4 study and the
/// Step 3 study it was made from; without a Step 4, the latest Step 3. A
/// newer Step 3 (a pilot, a second round) takes over once a Step 4 is made
/// from it, so starting one never hides a finished curation and its export
/// (nor does a newer Step 4 with items still open: [`pipeline_of`]).
#[derive(Debug, Clone, Copy)]
pub struct PipelineIds {
    pub dataset_id: DatasetId,
    pub step3: Option<StudyId>,
    pub step4: Option<StudyId>,
}

pub async fn pipeline_ids(db: &AnyPool, kinds: &[SurveyKind], dataset: &str) -> Result<PipelineIds, ServiceError> {
    let dataset_id = dataset_id(db, dataset).await?;
    let built = step4_chains(db, kinds, dataset_id, None).await?.into_iter().next();
    if let Some((step3, step4)) = built {
        return Ok(PipelineIds { dataset_id, step3: Some(step3), step4: Some(step4) });
    }
    let step3: Option<StudyId> = sqlx::query_scalar("SELECT max(id) FROM studies WHERE dataset_id = $1 AND kind = $2")
        .bind(dataset_id)
        .bind(SurveyKind::first_step_in(kinds).map(SurveyKind::name))
        .fetch_one(db)
        .await?;
    Ok(PipelineIds { dataset_id, step3, step4: None })
}

/// The dataset's curation studies ([`pipeline_ids`]) with their outcomes.
pub async fn pipeline(db: &AnyPool, kinds: &[SurveyKind], dataset: &str) -> Result<Pipeline, ServiceError> {
    pipeline_of(db, kinds, pipeline_ids(db, kinds, dataset).await?).await
}

/// The outcomes of the studies `ids` names; where its Step 4 has items
/// still open and an earlier Step 4 of the dataset has none (a re-run or a
/// pilot made after the finished one), that finished one and its source:
/// starting a study never hides a finished curation and its export.
pub async fn pipeline_of(db: &AnyPool, kinds: &[SurveyKind], ids: PipelineIds) -> Result<Pipeline, ServiceError> {
    let latest = outcomes_of(db, kinds, ids).await?;
    let open = |p: &Pipeline| p.step4.as_ref().is_some_and(|(_, o)| o.iter().any(|o| o.final_value().is_none()));
    let Some(step4) = ids.step4.filter(|_| open(&latest)) else {
        return Ok(latest);
    };
    for (step3, earlier) in step4_chains(db, kinds, ids.dataset_id, Some(step4)).await? {
        let p = outcomes_of(db, kinds, PipelineIds { step3: Some(step3), step4: Some(earlier), ..ids }).await?;
        if !open(&p) {
            return Ok(p);
        }
    }
    Ok(latest)
}

/// The dataset's Step 4 studies with the Step 3 studies they were made
/// from, newest first; with `before`, only those older than it that have
/// an answer (one without any is not finished).
async fn step4_chains(
    db: &AnyPool,
    kinds: &[SurveyKind],
    dataset_id: DatasetId,
    before: Option<StudyId>,
) -> Result<Vec<(StudyId, StudyId)>, ServiceError> {
    let first = SurveyKind::first_step_in(kinds);
    let second = first.and_then(|k| k.next_step_in(kinds));
    Ok(sqlx::query_as(
        "SELECT s3.id, s4.id FROM studies s4 JOIN studies s3 ON s3.id = s4.source_study_id
         WHERE s3.dataset_id = $1 AND s3.kind = $2 AND s4.kind = $3
           AND ($4 < 0 OR (s4.id < $4 AND EXISTS (SELECT 1 FROM answers a WHERE a.study_id = s4.id)))
         ORDER BY s4.id DESC",
    )
    .bind(dataset_id)
    .bind(first.map(SurveyKind::name))
    .bind(second.map(SurveyKind::name))
    .bind(before.map_or(-1, StudyId::get))
    .fetch_all(db)
    .await?)
}

async fn outcomes_of(db: &AnyPool, kinds: &[SurveyKind], ids: PipelineIds) -> Result<Pipeline, ServiceError> {
    // Step 4 on its own task: the two studies' reads and resolution run side
    // by side (a big dataset's export and funnel wait for both).
    let step4 = ids.step4.map(|id| {
        let (db, kinds) = (db.clone(), kinds.to_vec()); // the spawned task owns its copies
        tokio::spawn(async move { study_outcomes_and_votes(&db, &kinds, id).await })
    });
    let step3 = match ids.step3 {
        Some(id) => Some(study_outcomes_and_votes(db, kinds, id).await?),
        None => None,
    };
    let step4 = match step4 {
        Some(task) => Some(task.await.map_err(|e| ServiceError::internal("resolving Step 4", e))??),
        None => None,
    };
    let split = |s: Option<StudyOutcomes>| match s {
        Some((meta, outcomes, votes)) => (Some((meta, outcomes)), Arc::new(votes)),
        None => (None, Arc::default()),
    };
    let ((step3, votes3), (step4, votes4)) = (split(step3), split(step4));
    Ok(Pipeline { dataset_id: ids.dataset_id, step3, step4, votes: [votes3, votes4] })
}

/// The funnel's first column: every instance of the dataset by category
/// (counted from `instances_by_category`, not read row by row).
pub async fn candidates_funnel(db: &AnyPool, dataset_id: DatasetId) -> Result<FunnelBuilder, ServiceError> {
    let counts: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT neg_type, subtype, count(*) FROM instances WHERE dataset_id = $1 GROUP BY neg_type, subtype",
    )
    .bind(dataset_id)
    .fetch_all(db)
    .await?;
    let mut funnel = FunnelBuilder::default();
    for (t, s, n) in counts {
        let c = Category::parse(&t, &s).map_err(|e| ServiceError::internal(format!("dataset {dataset_id}"), e))?;
        funnel.candidates(c, n.try_into().unwrap_or(0));
    }
    Ok(funnel)
}

impl Pipeline {
    /// The funnel of `candidates` (see `candidates_funnel`) through these studies' verdicts.
    pub fn funnel(&self, mut candidates: FunnelBuilder, dataset: &str) -> Funnel {
        if let Some((meta, outcomes)) = &self.step3 {
            outcomes.iter().for_each(|o| candidates.step3(o.category, o.verdict(meta.kind)));
        }
        if let Some((meta, outcomes)) = &self.step4 {
            outcomes.iter().for_each(|o| candidates.step4(o.category, o.verdict(meta.kind)));
        }
        let name = |s: &Option<(StudyMeta, Vec<ItemOutcome>)>| s.as_ref().map(|(m, _)| m.name.clone());
        candidates.build(dataset, name(&self.step3), name(&self.step4))
    }
}

pub async fn dataset_funnel(db: &AnyPool, kinds: &[SurveyKind], dataset: &str) -> Result<Funnel, ServiceError> {
    let p = pipeline(db, kinds, dataset).await?;
    Ok(p.funnel(candidates_funnel(db, p.dataset_id).await?, dataset))
}

/// Every dataset with its funnel (`hardneg datasets --json`, `GET /api/v1/datasets`).
pub async fn all_funnels(db: &AnyPool, kinds: &[SurveyKind]) -> Result<Vec<Funnel>, ServiceError> {
    let names: Vec<String> = sqlx::query_scalar("SELECT name FROM datasets ORDER BY id").fetch_all(db).await?;
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        out.push(dataset_funnel(db, kinds, &n).await?);
    }
    Ok(out)
}
