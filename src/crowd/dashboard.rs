//! A link study's live dashboard (docs/crowd.md, "Dashboard"), read from
//! the stored rows; the arithmetic is `domain::crowd::figures`.
use super::approve::finished_bundle_secs;
use super::link_of_study;
use crate::domain::crowd::figures::{
    cost, cumulative, eta_secs, histogram, median_of_counts, rate_window, Dashboard, ParticipantCounts,
    RATE_WINDOW_SECS,
};
use crate::domain::crowd::flags::median;
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use sqlx::AnyPool;

/// The figures at `now` (unix seconds, the crowd clock).
pub async fn dashboard(db: &AnyPool, study: StudyId, now: i64) -> Result<Dashboard, ServiceError> {
    let link = link_of_study(db, study).await?;
    let bundles = super::bundles(db, study).await?;
    let places: i64 = bundles.iter().map(|b| b.copies_wanted).sum();
    let leased: i64 = bundles.iter().map(|b| b.active).sum();
    let completed: i64 = bundles.iter().map(|b| b.completed).sum();
    let active_done: i64 = sqlx::query_scalar(
        "SELECT CAST(coalesce(sum(pa.done), 0) AS BIGINT) FROM leases l JOIN participations pa ON pa.user_id = l.user_id
         WHERE l.study_id = $1 AND l.state = 'active'",
    )
    .bind(study)
    .fetch_one(db)
    .await?;
    // All in tasks, check items included, as the rate counts every answer: a
    // copy of a bundle takes the tasks its participants were given, or, before
    // anyone took one, its items plus the most check items it could get.
    let per_copy: std::collections::HashMap<i64, i64> = sqlx::query_as(
        "SELECT l.bundle, max(pa.total) FROM leases l
         JOIN participations pa ON pa.study_id = l.study_id AND pa.user_id = l.user_id
         WHERE l.study_id = $1 GROUP BY l.bundle",
    )
    .bind(study)
    .fetch_all(db)
    .await?
    .into_iter()
    .collect();
    let checks = &link.settings.checks;
    let most_checks = (checks.attention_checks + checks.gold.len()) as i64;
    let wanted: i64 = bundles
        .iter()
        .map(|b| {
            (b.copies_wanted - b.completed).max(0) * per_copy.get(&b.bundle).copied().unwrap_or(b.tasks + most_checks)
        })
        .sum();
    let remaining_answers = (wanted - active_done).max(0);
    let participants = participant_counts(db, study).await?;

    // The answer figures from the answers kept per participant (`kept.rs`):
    // only those that came since the last read are read. The rate window
    // starts at the later of the first answer and `now - RATE_WINDOW_SECS`,
    // and every answer is at or after the first, so the answers since
    // `now - RATE_WINDOW_SECS` are those in the window.
    let kept = super::kept::refreshed(db, study).await?;
    let times = kept.elapsed_counts();
    let (first, in_window) = kept.first_and_since(now - RATE_WINDOW_SECS);
    super::kept::put(kept);
    let answers: i64 = times.iter().map(|t| t.1).sum();
    let answers_per_minute = rate_window(first, now).map(|(_, minutes)| in_window as f64 / minutes);

    let median_bundle_secs = median(&mut finished_bundle_secs(db, study).await?);
    let finished = participants.completed + participants.extra + participants.discarded;
    let (arrivals, completions) = arrivals_and_completions(db, study).await?;
    let adaptive = match crate::studies::adaptive::report(db, crate::kinds::KINDS, study).await {
        Ok(report) => Some(report.savings()),
        Err(ServiceError::NotFound(_)) => None,
        Err(e) => return Err(e),
    };
    let q = link.settings.quality;
    Ok(Dashboard {
        study_id: study,
        now,
        bundles: bundles.len() as i64,
        places,
        free: (places - leased - completed).max(0),
        leased,
        completed,
        participants,
        answers,
        answers_per_minute,
        remaining_answers,
        eta_secs: answers_per_minute.and_then(|r| eta_secs(remaining_answers, r)),
        median_secs_per_item: median_of_counts(&times).map(|ms| ms / 1000.0),
        median_bundle_secs,
        hourly_wage: q.hourly_wage,
        platform_fee: q.platform_fee,
        cost: cost(&q, median_bundle_secs, places - completed, finished),
        arrivals: cumulative(&arrivals),
        completions: cumulative(&completions),
        time_per_item: histogram(&times),
        adaptive,
    })
}

/// Participants by status, and how many a stop rule ended as uninformative.
async fn participant_counts(db: &AnyPool, study: StudyId) -> Result<ParticipantCounts, ServiceError> {
    let mut participants = ParticipantCounts::default();
    let states: Vec<(String, i64)> = sqlx::query_as(&format!(
        "SELECT {}, count(*) FROM participants p LEFT JOIN leases l ON l.user_id = p.user_id
         WHERE p.study_id = $1 GROUP BY 1",
        super::STATUS_SQL
    ))
    .bind(study)
    .fetch_all(db)
    .await?;
    for (state, n) in states {
        participants.add(&state, n);
    }
    participants.ended_uninformative = sqlx::query_scalar(
        "SELECT count(*) FROM leases WHERE study_id = $1 AND state = 'completed' AND ended_why = 'uninformative'",
    )
    .bind(study)
    .fetch_one(db)
    .await?;
    Ok(participants)
}

/// When participants arrived and when places finished, each in order.
async fn arrivals_and_completions(db: &AnyPool, study: StudyId) -> Result<(Vec<i64>, Vec<i64>), ServiceError> {
    let arrivals: Vec<i64> =
        sqlx::query_scalar("SELECT arrived_at FROM participants WHERE study_id = $1 ORDER BY arrived_at")
            .bind(study)
            .fetch_all(db)
            .await?;
    let completions: Vec<i64> = sqlx::query_scalar(
        "SELECT ended_at FROM leases WHERE study_id = $1 AND state IN ('completed', 'extra', 'discarded')
           AND ended_at IS NOT NULL ORDER BY ended_at",
    )
    .bind(study)
    .fetch_all(db)
    .await?;
    Ok((arrivals, completions))
}
