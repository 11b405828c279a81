//! A study's `[prolific]` settings, read from the spec stored with it (the
//! publish, the decisions and the participant groups all start here).
use crate::domain::ids::StudyId;
use crate::domain::prolific::spec::ProlificSettings;
use crate::error::ServiceError;
use sqlx::AnyPool;

/// The study's name, its spec's hash and the spec as parsed.
pub(super) async fn stored_spec(
    db: &AnyPool,
    study: StudyId,
) -> Result<(String, String, crate::domain::study::Study), ServiceError> {
    let row: Option<(String, String, String)> =
        sqlx::query_as("SELECT name, spec, spec_hash FROM studies WHERE id = $1")
            .bind(study)
            .fetch_optional(db)
            .await?;
    let (name, spec, hash) = row.ok_or_else(|| ServiceError::NotFound(format!("no study {study}")))?;
    Ok((name, hash, crate::studies::create::parse_spec(&crate::kinds::REGISTRY, &spec, 0)?))
}

/// The study's `[prolific]` table, read from the spec stored with it.
pub async fn settings(db: &AnyPool, study: StudyId) -> Result<(String, String, ProlificSettings), ServiceError> {
    let (name, hash, parsed) = stored_spec(db, study).await?;
    let mut p = parsed.prolific.ok_or_else(|| {
        ServiceError::Invalid(format!(
            "study {study}'s spec has no [prolific] table (estimated_minutes at least): docs/study-spec.md#prolific"
        ))
    })?;
    // One group per benchmark: the studies of one dataset share it.
    p.group.get_or_insert_with(|| format!("hardneg-{}", parsed.dataset));
    Ok((name, hash, p))
}
