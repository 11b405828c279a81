//! Check items in the shell (docs/crowd.md): made ready when the study is
//! created (gold answers, the screen-out code), added to each participant's
//! tasks when it takes a place, and judged as attention checks are answered:
//! `max_failed_checks` failures end the participant (`screened_out`) and its
//! bundle goes back to the pool.
use super::LinkRow;
use crate::domain::assignment::PlannedTask;
use crate::domain::crowd::bundles::Bundle;
use crate::domain::crowd::checks::{choose_checks, CheckItem};
use crate::domain::crowd::lease::{LeaseEvent, LeaseState};
use crate::domain::crowd::spec::LinkSettings;
use crate::domain::ids::{StudyId, UserId};
use crate::domain::study::Study;
use crate::error::ServiceError;
use crate::state::{AppState, StudyMeta};
use sqlx::AnyConnection;

fn invalid(field: &str, m: String) -> ServiceError {
    ServiceError::Invalid(format!("field `{field}`: {m}"))
}

/// The study item with this key, or an error naming the gold entry.
async fn gold_instance(tx: &mut AnyConnection, study: StudyId, key: &str) -> Result<i64, ServiceError> {
    let found: Option<i64> = sqlx::query_scalar(
        "SELECT i.id FROM study_items s JOIN instances i ON i.id = s.instance_id WHERE s.study_id = $1 AND i.key = $2",
    )
    .bind(study)
    .bind(key)
    .fetch_optional(&mut *tx)
    .await?;
    found.ok_or_else(|| invalid("link.gold", format!("{key:?} is not an item of this study")))
}

/// The right answer the dataset knows for an instance (demo data: which
/// candidates match the negative caption), in the kind's values
/// ([`Curation::known_value`](crate::domain::survey::Curation::known_value)).
async fn known_truth(
    tx: &mut AnyConnection,
    kind: crate::domain::survey::SurveyKind,
    instance: i64,
    key: &str,
) -> Result<String, ServiceError> {
    let flags: Vec<(i64, Option<crate::store::ids::Flag>)> =
        sqlx::query_as("SELECT slot, known_match FROM candidates WHERE instance_id = $1 ORDER BY slot")
            .bind(instance)
            .fetch_all(&mut *tx)
            .await?;
    let unknown = || invalid("link.gold", format!("{key:?}: the dataset knows no right answer; give `answer`"));
    if flags.is_empty() || flags.iter().any(|(_, m)| m.is_none()) {
        return Err(unknown());
    }
    let matching: Vec<usize> =
        flags.iter().filter(|(_, m)| *m == Some(crate::store::ids::Flag(true))).map(|(s, _)| *s as usize).collect();
    let Some(curation) = kind.curation() else { return Err(unknown()) };
    match curation.known_value(kind.values(), &matching) {
        Some(value) => Ok(value.to_string()),
        None if matching.len() > 1 => {
            Err(invalid("link.gold", format!("{key:?}: several candidates match; give `answer`")))
        }
        None => Err(unknown()),
    }
}

/// The settings as stored: gold answers filled in from the known truth, and
/// the refusal of attention checks that some bundle has too few other items for.
pub async fn prepare(
    tx: &mut AnyConnection,
    id: StudyId,
    study: &Study,
    link: &LinkSettings,
    bundles: &[Bundle],
) -> Result<LinkSettings, ServiceError> {
    let mut link = link.clone();
    let checks = &mut link.checks;
    if checks.attention_checks > 0 && study.kind.spec().attention.targets.is_empty() {
        return Err(invalid(
            "link.attention_checks",
            format!("{} has no single option an attention check could ask for", study.kind),
        ));
    }
    let mut gold_ids = Vec::with_capacity(checks.gold.len());
    for g in &mut checks.gold {
        let instance = gold_instance(tx, id, &g.key).await?;
        if g.answer.is_none() {
            let truth = known_truth(tx, study.kind, instance, &g.key).await?;
            if !study.kind.question_values(0).contains(&truth.as_str()) {
                return Err(invalid(
                    "link.gold",
                    format!(
                        "{:?}: the known truth is no answer to {}'s first question, which gold items ask",
                        g.key, study.kind
                    ),
                ));
            }
            g.answer = Some(truth);
        }
        gold_ids.push(instance);
    }
    let items = bundles.iter().map(|b| b.instances.len()).sum::<usize>();
    for b in bundles {
        let others = items - b.instances.len() - gold_ids.iter().filter(|g| !b.instances.contains(g)).count();
        if others < checks.attention_checks {
            return Err(invalid(
                "link.attention_checks",
                format!(
                    "{} per bundle, but bundle {} has only {others} other study items to make them from \
                     (attention checks never repeat an item of the bundle)",
                    checks.attention_checks, b.number
                ),
            ));
        }
    }
    Ok(link)
}

/// The check items of a participant who takes `bundle` (its `instances`).
pub(crate) async fn of_bundle(
    tx: &mut AnyConnection,
    meta: &StudyMeta,
    link: &LinkRow,
    instances: &[i64],
    participant: UserId,
) -> Result<Vec<CheckItem>, ServiceError> {
    let checks = &link.settings.checks;
    if checks.gold.is_empty() && checks.attention_checks == 0 {
        return Ok(Vec::new());
    }
    let mut gold = Vec::with_capacity(checks.gold.len());
    for g in &checks.gold {
        let answer = g.answer.clone().ok_or_else(|| ServiceError::Internal(format!("gold {:?} unresolved", g.key)))?;
        gold.push((gold_instance(tx, meta.id, &g.key).await?, answer));
    }
    let items: Vec<i64> = if checks.attention_checks > 0 {
        sqlx::query_scalar("SELECT instance_id FROM study_items WHERE study_id = $1")
            .bind(meta.id)
            .fetch_all(&mut *tx)
            .await?
    } else {
        Vec::new()
    };
    let targets = meta.kind.spec().attention.targets;
    Ok(choose_checks(meta.seed, participant.get(), &gold, checks.attention_checks, targets, &items, instances))
}

/// Writes the check tasks of a placed queue, marked with their kind and passing value.
pub(crate) async fn insert_check_tasks(
    tx: &mut AnyConnection,
    study: StudyId,
    user: UserId,
    checks: &[(PlannedTask, CheckItem)],
) -> Result<(), ServiceError> {
    for (t, c) in checks {
        sqlx::query(
            "INSERT INTO tasks (study_id, user_id, instance_id, position, seed, query, check_kind, check_answer)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(study)
        .bind(user)
        .bind(t.item)
        .bind(t.position)
        .bind(t.seed as i64)
        .bind(t.query as i64)
        .bind(c.kind.as_str())
        .bind(&c.answer)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// After an attention check's answer is stored (and again on its repeat,
/// or from [`sweep_failed`]: a fault after the answer's commit may have cut
/// this short): ends the participant once it has failed
/// `max_failed_checks` of them. Its place goes back to the pool at once;
/// its answers stay, marked by the lease state. True when ended now.
pub async fn attention_answered(state: &AppState, user: UserId, study: StudyId) -> Result<bool, ServiceError> {
    let link = super::link_of_study(&state.db, study).await?;
    let failed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM check_answers WHERE study_id = $1 AND user_id = $2 AND check_kind = 'attention' AND correct = 0",
    )
    .bind(study)
    .bind(user)
    .fetch_one(&state.db)
    .await?;
    if failed < i64::from(link.settings.checks.max_failed_checks) {
        return Ok(false);
    }
    let _one_at_a_time = state.writer.exclusive().await;
    let mut tx = crate::store::db::begin_write(&state.db).await?;
    let lease: Option<String> = sqlx::query_scalar("SELECT state FROM leases WHERE user_id = $1 AND study_id = $2")
        .bind(user)
        .bind(study)
        .fetch_optional(&mut *tx)
        .await?;
    // The writer ends the lease in the commit of the bundle's last answer, so
    // a failing check that was the last item finds it finished by that very
    // answer (no other answer can be new on a finished lease): it still ends
    // the participant, as from the state before.
    let before = |s: LeaseState| match s {
        LeaseState::Completed => LeaseState::Active,
        LeaseState::Extra => LeaseState::TimedOut,
        other => other,
    };
    let next = lease.map(|s| super::lease_state(&s)).transpose()?.map(before);
    let Some(next) = next.and_then(|s| s.after(LeaseEvent::FailedChecks)) else {
        return Ok(false);
    };
    let now = state.crowd.clock.now();
    sqlx::query("UPDATE leases SET state = $1, ended_at = $2 WHERE user_id = $3 AND study_id = $4")
        .bind(next.as_str())
        .bind(now)
        .bind(user)
        .bind(study)
        .execute(&mut *tx)
        .await?;
    screen_out(&mut tx, user, "attention_checks", now).await?;
    crate::studies::reopen::reopen_lost(&mut tx, study).await?;
    tx.commit().await?;
    Ok(true)
}

/// Participants of a link study who failed `max_failed_checks` attention
/// checks but still hold a place that has not ended (the check's
/// consequence was cut short after their answer's commit): ended now, as
/// [`attention_answered`] would have. How many.
pub async fn sweep_failed(state: &AppState, study: StudyId) -> Result<usize, ServiceError> {
    let link = match super::link_of_study(&state.db, study).await {
        Ok(link) => link,
        Err(ServiceError::NotFound(_)) => return Ok(0),
        Err(e) => return Err(e),
    };
    let users: Vec<UserId> = sqlx::query_scalar(
        "SELECT c.user_id FROM check_answers c JOIN leases l ON l.user_id = c.user_id AND l.study_id = c.study_id
         WHERE c.study_id = $1 AND c.check_kind = 'attention' AND c.correct = 0
           AND l.state IN ('active', 'completed', 'extra', 'timed_out')
         GROUP BY c.user_id HAVING count(*) >= $2",
    )
    .bind(study)
    .bind(i64::from(link.settings.checks.max_failed_checks))
    .fetch_all(&state.db)
    .await?;
    let mut ended = 0;
    for user in users {
        ended += usize::from(attention_answered(state, user, study).await?);
    }
    Ok(ended)
}

/// Marks the participant screened out (the first reason stays).
pub(crate) async fn screen_out(
    tx: &mut AnyConnection,
    user: UserId,
    reason: &str,
    now: i64,
) -> Result<(), ServiceError> {
    sqlx::query(
        "UPDATE participants SET screened_out_at = coalesce(screened_out_at, $1),
                                 screened_out_reason = coalesce(screened_out_reason, $2) WHERE user_id = $3",
    )
    .bind(now)
    .bind(reason)
    .bind(user)
    .execute(&mut *tx)
    .await?;
    Ok(())
}
