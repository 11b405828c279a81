//! The run store: a model run's per-instance Winoground outcomes, written by
//! the results import and by `hardneg score`.
use crate::domain::ids::DatasetId;
use crate::domain::metrics::Outcome;
use crate::store::db::now_secs;
use sqlx::{Any, Transaction};

/// An instance's outcome, with the negative image it was computed on where
/// an image was scored (not for results imported from a file).
pub type RunOutcome = (i64, Outcome, Option<String>);

/// Writes a model run with its per-instance outcomes, replacing an earlier
/// run of the same name on the dataset. Shared by the import and `score`.
/// Each outcome is (instance, outcome, the negative image it was computed
/// on, where an image was scored). Returns whether a run was replaced.
pub async fn replace_run(
    tx: &mut Transaction<'_, Any>,
    dataset_id: DatasetId,
    name: &str,
    source: &str,
    device: Option<&str>,
    outcomes: &[RunOutcome],
) -> sqlx::Result<bool> {
    let old: Option<i64> = sqlx::query_scalar("SELECT id FROM model_runs WHERE dataset_id = $1 AND name = $2")
        .bind(dataset_id)
        .bind(name)
        .fetch_optional(&mut **tx)
        .await?;
    if let Some(old) = old {
        sqlx::query("DELETE FROM model_outcomes WHERE run_id = $1").bind(old).execute(&mut **tx).await?;
        sqlx::query("DELETE FROM model_runs WHERE id = $1").bind(old).execute(&mut **tx).await?;
    }
    let run = sqlx::query_scalar::<_, i64>(
        "INSERT INTO model_runs (dataset_id, name, source, device, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(dataset_id)
    .bind(name)
    .bind(source)
    .bind(device)
    .bind(now_secs())
    .fetch_one(&mut **tx)
    .await?;
    for chunk in outcomes.chunks(500) {
        let mut q = sqlx::QueryBuilder::new(
            "INSERT INTO model_outcomes (run_id, instance_id, ipos2t, ineg2t, tpos2i, tneg2i, negative_image) ",
        );
        q.push_values(chunk, |mut b, (id, o, negative)| {
            b.push_bind(run)
                .push_bind(*id)
                .push_bind(i64::from(o.ipos2t))
                .push_bind(i64::from(o.ineg2t))
                .push_bind(i64::from(o.tpos2i))
                .push_bind(i64::from(o.tneg2i))
                .push_bind(negative.clone());
        });
        let (sql, args) = crate::store::db::numbered(&mut q)?;
        sqlx::query_with(&sql, args).execute(&mut **tx).await?;
    }
    Ok(old.is_some())
}
