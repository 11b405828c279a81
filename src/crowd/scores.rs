//! What the approve list computes over all of a study's answers (kept per
//! participant by `kept.rs`): each person's flags and Dawid–Skene accuracy,
//! kept while the study's answers and whose of them count are unchanged.
use crate::domain::aggregate::Model;
use crate::domain::crowd::flags::{person_flags_among, Answer, Check, Others, PersonFlags};
use crate::domain::crowd::spec::QualitySettings;
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use sqlx::AnyPool;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Flags and Dawid–Skene accuracy by person (user id).
#[derive(Debug, Default)]
pub(crate) struct Scores {
    pub flags: HashMap<u64, PersonFlags>,
    /// None for people with fewer than 2 non-check answers, or all when the model cannot run.
    pub ds: HashMap<u64, f64>,
}

/// The last scores: the answers' version (`kept.rs`), seed, settings and whose answers count.
type Last = (u64, u64, QualitySettings, Others, Arc<Scores>);
static LAST: Mutex<Vec<Last>> = Mutex::new(Vec::new());
const LAST_KEPT: usize = 4;

/// The scores of the study's answers now, computed once per set of answers;
/// `orders`: the kind's answers are orders, not categories (no agreement).
pub(crate) async fn scores(
    db: &AnyPool,
    study: StudyId,
    quality: QualitySettings,
    seed: u64,
    orders: bool,
) -> Result<Arc<Scores>, ServiceError> {
    // As the `counted_answers` view: a copy that is not active or completed counts nowhere.
    let not_counted: Vec<i64> = sqlx::query_scalar(
        "SELECT user_id FROM leases WHERE study_id = $1 AND state NOT IN ('active', 'completed') ORDER BY user_id",
    )
    .bind(study)
    .fetch_all(db)
    .await?;
    let others = Others { not_counted: not_counted.into_iter().map(|u| u as u64).collect(), orders };
    let kept = super::kept::refreshed(db, study).await?;
    let version = kept.version;
    if let Some(hit) = last_scores(version, seed, quality, &others) {
        super::kept::put(kept);
        return Ok(hit);
    }
    let answers: Vec<Answer> = kept.answers().copied().collect();
    super::kept::put(kept);
    // Both walk every answer: off the async threads.
    let scoring = others.clone();
    let scores = tokio::task::spawn_blocking(move || compute(&answers, &quality, seed, &scoring))
        .await
        .map_err(|e| ServiceError::internal("scoring the answers", e))?;
    let scores = Arc::new(scores);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if last.len() >= LAST_KEPT {
        last.remove(0);
    }
    last.push((version, seed, quality, others, Arc::clone(&scores)));
    Ok(scores)
}

fn last_scores(version: u64, seed: u64, quality: QualitySettings, others: &Others) -> Option<Arc<Scores>> {
    let last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    last.iter().find(|l| l.0 == version && l.1 == seed && l.2 == quality && l.3 == *others).map(|l| Arc::clone(&l.4))
}

fn compute(answers: &[Answer], quality: &QualitySettings, seed: u64, others: &Others) -> Scores {
    // The interned values index the classes: only their identity matters to the model.
    let k = answers.iter().map(|a| a.value as usize + 1).max().unwrap_or(0).max(2);
    // Independent walks of the answers: one per core.
    std::thread::scope(|s| {
        let flags =
            s.spawn(|| person_flags_among(answers, quality, others).into_iter().map(|f| (f.person, f)).collect());
        // Orders are no categories: a whole order as one class would make every swap a disagreement.
        let ds = if others.orders { HashMap::new() } else { ds_accuracies(answers, k, seed) };
        Scores { ds, flags: flags.join().unwrap_or_else(|e| std::panic::resume_unwind(e)) }
    })
}

/// Dawid–Skene's accuracy per person over the non-check answers of everyone
/// with at least two (`fit` leaves the others out: one answer cannot
/// estimate a reliability).
fn ds_accuracies(answers: &[Answer], k: usize, seed: u64) -> HashMap<u64, f64> {
    let ratings: Vec<(u64, u64, usize)> =
        answers.iter().filter(|a| a.check == Check::None).map(|a| (a.item, a.person, a.value as usize)).collect();
    match crate::studies::aggregate::fit(Model::DawidSkene, &ratings, k, &[], seed) {
        Ok(fitted) => fitted.people.iter().map(|p| (p.person, p.accuracy)).collect(),
        Err(e) => {
            tracing::debug!("no Dawid–Skene estimate for the approve list: {e}");
            HashMap::new()
        }
    }
}
