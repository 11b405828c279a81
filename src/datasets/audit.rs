//! The blind text-only audit of a dataset stage (docs/audit.md): every
//! instance's two captions scored by a scorer that never sees the image.
//! The baselines run on the spot (the dataset page, the export card); an
//! external scorer's result is stored, the latest per stage and name.
use super::stage::{check_stage, included};
use crate::domain::audit::{audit_table, AuditResult, Baseline, Pairs, Scored};
use crate::domain::category::Category;
use crate::domain::export::Stage;
use crate::domain::ids::DatasetId;
use crate::error::ServiceError;
use crate::scoring::external::ExternalScorer;
use crate::store::pages::{key_pages, JsonPages, PAGE_SHIFT};
use crate::studies::pipeline::{pipeline, Pipeline};
use anyhow::Context;
use sqlx::AnyPool;

/// Captions per request to an external scorer.
const BATCH: usize = 64;

/// The instances a stage of the dataset holds (the export's rows) that have
/// a negative caption, in id order.
pub async fn stage_pairs(db: &AnyPool, dataset: &str, stage: Stage) -> Result<(DatasetId, Pairs), ServiceError> {
    pairs_of(db, &pipeline(db, crate::kinds::KINDS, dataset).await?, dataset, stage).await
}

/// The comparison's `stage`: the stage with the ids of the instances it
/// holds, in id order (the stage must have been reached); none for none.
pub async fn stage_instances(
    db: &AnyPool,
    dataset: &str,
    stage: Option<Stage>,
) -> Result<Option<(Stage, Vec<i64>)>, ServiceError> {
    let Some(stage) = stage else { return Ok(None) };
    let p = pipeline(db, crate::kinds::KINDS, dataset).await?;
    check_stage(&p, dataset, stage)?;
    Ok(Some((stage, included(db, &p, stage).await?.into_iter().map(|(id, _)| id).collect())))
}

async fn pairs_of(db: &AnyPool, p: &Pipeline, dataset: &str, stage: Stage) -> Result<(DatasetId, Pairs), ServiceError> {
    check_stage(p, dataset, stage)?;
    let ids = included(db, p, stage).await?;
    Ok((p.dataset_id, pairs_for(db, p.dataset_id, &ids).await?))
}

/// The captions of the instances `ids` (in id order, with their
/// categories) of the dataset, read in pages (crate::store::pages).
pub(crate) async fn pairs_for(
    db: &AnyPool,
    dataset_id: DatasetId,
    ids: &[(i64, Category)],
) -> Result<Pairs, ServiceError> {
    // Only the stage's instances, a page of ids at a time.
    let keys: Vec<i64> = ids.iter().map(|i| i.0).collect();
    let mut rows = JsonPages::<(i64, String, String)>::new(key_pages(
        db,
        "SELECT json_group_array(json_array(i.id, i.caption, i.negative_caption))
         FROM json_each($2) j JOIN instances i ON i.id = j.value WHERE +i.dataset_id = $1",
        dataset_id.get(),
        &keys,
        PAGE_SHIFT,
    ))
    .ordered_by(|a, b| a.0.cmp(&b.0));
    let (mut next, mut pairs) = (0, Pairs::default());
    while let Some((id, caption, negative)) = rows.try_next().await? {
        let Some(&(_, category)) = ids.get(next).filter(|i| i.0 == id) else {
            continue;
        };
        next += 1;
        pairs.push(category, &caption, &negative);
    }
    Ok(pairs)
}

fn result(
    dataset: &str,
    stage: Stage,
    scorer: &str,
    source: String,
    pairs: &Pairs,
    scores: &[(f64, f64)],
) -> AuditResult {
    let scored: Vec<Scored> = pairs
        .iter()
        .zip(scores)
        .map(|((category, _, _), &(positive, negative))| Scored { category, positive, negative })
        .collect();
    AuditResult {
        dataset: dataset.to_string(),
        stage: stage.as_str().to_string(),
        scorer: scorer.to_string(),
        source,
        rows: audit_table(&scored),
        created_at: None,
    }
}

pub fn baseline_audit(dataset: &str, stage: Stage, baseline: Baseline, pairs: &Pairs) -> AuditResult {
    let texts: Vec<(&str, &str)> = pairs.iter().map(|(_, caption, negative)| (caption, negative)).collect();
    result(dataset, stage, baseline.name(), baseline.source().to_string(), pairs, &baseline.score(&texts))
}

/// Runs an external text scorer over the stage, stores the result under `name`
/// (replacing that name's earlier result on the stage) and returns it.
pub async fn external_audit(
    db: &AnyPool,
    dataset: &str,
    stage: Stage,
    name: &str,
    command: &str,
) -> anyhow::Result<AuditResult> {
    anyhow::ensure!(
        Baseline::parse(name).is_none(),
        "{name:?} names a built-in baseline; give the scorer another --name"
    );
    let (dataset_id, pairs) = stage_pairs(db, dataset, stage).await?;
    let texts: Vec<String> =
        pairs.iter().flat_map(|(_, caption, negative)| [caption.into(), negative.into()]).collect();
    let cmd = command.to_string();
    let (model, scores) = tokio::task::spawn_blocking(move || -> anyhow::Result<(String, Vec<f64>)> {
        let mut scorer = ExternalScorer::spawn(&cmd)?;
        let mut scores = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            scores.extend(scorer.score_texts(batch)?);
        }
        Ok((scorer.hello().model.clone(), scores))
    })
    .await??;
    let scores: Vec<(f64, f64)> = scores.chunks(2).map(|c| (c[0], c[1])).collect();
    let source = format!("external: {command} ({model})");
    let mut audit = result(dataset, stage, name, source, &pairs, &scores);
    let now = crate::store::db::now_secs();
    let rows = serde_json::to_string(&audit.rows)?;
    sqlx::query(
        "INSERT INTO audits (dataset_id, stage, scorer, source, rows, created_at) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (dataset_id, stage, scorer) DO UPDATE SET source = excluded.source, rows = excluded.rows,
         created_at = excluded.created_at",
    )
    .bind(dataset_id)
    .bind(stage.as_str())
    .bind(name)
    .bind(&audit.source)
    .bind(rows)
    .bind(now)
    .execute(db)
    .await
    .context("storing the audit")?;
    audit.created_at = Some(now);
    Ok(audit)
}

/// The furthest stage a dataset's curation reached: what the API and the
/// CLI audit when no stage is named.
fn furthest(p: &Pipeline) -> Stage {
    match (&p.step3, &p.step4) {
        (Some(_), Some(_)) => Stage::Final,
        (Some(_), None) => Stage::Step3,
        _ => Stage::Candidates,
    }
}

pub async fn furthest_stage(db: &AnyPool, dataset: &str) -> Result<Stage, ServiceError> {
    Ok(furthest(&pipeline(db, crate::kinds::KINDS, dataset).await?))
}

/// The baselines on the stage, then every stored external result for it.
/// Without a stage: the furthest the dataset's curation reached (the dataset page).
pub async fn stage_audits(db: &AnyPool, dataset: &str, stage: Option<Stage>) -> Result<Vec<AuditResult>, ServiceError> {
    let p = pipeline(db, crate::kinds::KINDS, dataset).await?;
    let stage = stage.unwrap_or_else(|| furthest(&p));
    let (dataset_id, pairs) = pairs_of(db, &p, dataset, stage).await?;
    audits_of(db, dataset, dataset_id, stage, pairs).await
}

/// The baselines over `pairs` (the stage's instances), then every stored
/// external result for the stage.
pub async fn audits_of(
    db: &AnyPool,
    dataset: &str,
    dataset_id: DatasetId,
    stage: Stage,
    pairs: Pairs,
) -> Result<Vec<AuditResult>, ServiceError> {
    // Scoring every caption takes a while on a big stage: off the async threads.
    let name = dataset.to_string();
    let mut out = tokio::task::spawn_blocking(move || {
        Baseline::ALL.iter().map(|&b| baseline_audit(&name, stage, b, &pairs)).collect::<Vec<_>>()
    })
    .await
    .map_err(|e| ServiceError::internal("scoring the audit's baselines", e))?;
    let stored: Vec<(String, String, String, i64)> = sqlx::query_as(
        "SELECT scorer, source, rows, created_at FROM audits WHERE dataset_id = $1 AND stage = $2 ORDER BY scorer",
    )
    .bind(dataset_id)
    .bind(stage.as_str())
    .fetch_all(db)
    .await?;
    for (scorer, source, rows, created_at) in stored {
        let rows = serde_json::from_str(&rows).map_err(|e| ServiceError::internal(format!("audit {scorer}"), e))?;
        out.push(AuditResult {
            dataset: dataset.to_string(),
            stage: stage.as_str().to_string(),
            scorer,
            source,
            rows,
            created_at: Some(created_at),
        });
    }
    Ok(out)
}
