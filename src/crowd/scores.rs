//! What the approve list computes over all of a study's answers: each
//! person's flags and Dawid–Skene accuracy. The answers come one row per
//! participant (sqlx hands rows from its SQLite thread over one at a time,
//! which dominated at 200k answers), and the result is kept while the
//! study's answers are unchanged.
use crate::domain::aggregate::Model;
use crate::domain::crowd::flags::{person_flags, Answer, Check, PersonFlags};
use crate::domain::crowd::spec::QualitySettings;
use crate::error::ServiceError;
use sqlx::SqlitePool;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Flags and Dawid–Skene accuracy by person (user id).
#[derive(Debug, Default)]
pub(crate) struct Scores {
    pub flags: HashMap<u64, PersonFlags>,
    /// None for people with fewer than 2 non-check answers, or all when the model cannot run.
    pub ds: HashMap<u64, f64>,
}

/// What a computation read: answers are only ever inserted (one row per
/// task, never updated or deleted), so their count and highest task id
/// change with every new answer; check kinds and positions are fixed when
/// the tasks are made. The database file tells apart studies of the same
/// id in one process (tests).
#[derive(Debug, Clone, PartialEq)]
struct Key {
    db: PathBuf,
    study: i64,
    count: i64,
    last_task: i64,
    seed: u64,
    quality: QualitySettings,
}

/// Kept results, newest last; a few studies' worth is plenty.
static KEPT: Mutex<Vec<(Key, Arc<Scores>)>> = Mutex::new(Vec::new());
const KEPT_MAX: usize = 4;

/// The scores of the study's answers now, computed once per set of answers.
pub(crate) async fn scores(
    db: &SqlitePool,
    study: i64,
    quality: QualitySettings,
    seed: u64,
) -> Result<Arc<Scores>, ServiceError> {
    let (count, last_task): (i64, i64) =
        sqlx::query_as("SELECT count(*), coalesce(max(task_id), 0) FROM answers WHERE study_id = ?")
            .bind(study)
            .fetch_one(db)
            .await?;
    let key = Key { db: db.connect_options().get_filename().to_path_buf(), study, count, last_task, seed, quality };
    let hit = KEPT.lock().ok().and_then(|k| k.iter().find(|(k, _)| *k == key).map(|(_, s)| Arc::clone(s)));
    if let Some(hit) = hit {
        return Ok(hit);
    }
    let answers = study_answers(db, study).await?;
    // Both walk every answer: off the async threads.
    let scores = tokio::task::spawn_blocking(move || compute(&answers, &quality, seed))
        .await
        .map_err(|e| ServiceError::Internal(format!("scoring the answers: {e}")))?;
    let scores = Arc::new(scores);
    if let Ok(mut kept) = KEPT.lock() {
        kept.retain(|(k, _)| !(k.db == key.db && k.study == study));
        if kept.len() >= KEPT_MAX {
            kept.remove(0);
        }
        kept.push((key, Arc::clone(&scores)));
    }
    Ok(scores)
}

fn compute(answers: &[Answer], quality: &QualitySettings, seed: u64) -> Scores {
    // The interned values index the classes: only their identity matters to the model.
    let k = answers.iter().map(|a| a.value as usize + 1).max().unwrap_or(0).max(2);
    Scores {
        ds: ds_accuracies(answers, k, seed),
        flags: person_flags(answers, quality).into_iter().map(|f| (f.person, f)).collect(),
    }
}

/// Dawid–Skene's accuracy per person over the non-check answers of everyone
/// with at least two (one answer cannot estimate a reliability).
fn ds_accuracies(answers: &[Answer], k: usize, seed: u64) -> HashMap<u64, f64> {
    let mut per: HashMap<u64, usize> = HashMap::new();
    for a in answers.iter().filter(|a| a.check == Check::None) {
        *per.entry(a.person).or_default() += 1;
    }
    let ratings: Vec<(u64, u64, usize)> = answers
        .iter()
        .filter(|a| a.check == Check::None && per[&a.person] >= 2)
        .map(|a| (a.item, a.person, a.value as usize))
        .collect();
    match crate::studies::aggregate::fit(Model::DawidSkene, &ratings, k, &[], seed) {
        Ok(fitted) => fitted.people.iter().map(|p| (p.person, p.accuracy)).collect(),
        Err(e) => {
            tracing::debug!("no Dawid–Skene estimate for the approve list: {e}");
            HashMap::new()
        }
    }
}

/// Every answer of the study (check items included) in the shape the flags
/// take, with the on-screen options and values interned. One row per
/// person: `instance,query,position,elapsed_ms,check,hex(shown),hex(value)`
/// per answer, `;` between answers (hex keeps free text from splitting);
/// `check` is 0 for none, 2/3 for gold wrong/right, 4/5 for attention.
pub(crate) async fn study_answers(db: &SqlitePool, study: i64) -> Result<Vec<Answer>, ServiceError> {
    let rows: Vec<(i64, i64, String)> = sqlx::query_as(
        "SELECT a.user_id, count(*), group_concat(
                    a.instance_id || ',' || t.query || ',' || t.position || ',' || a.elapsed_ms || ',' ||
                    (CASE t.check_kind WHEN 'gold' THEN 2 WHEN 'attention' THEN 4 ELSE 0 END
                     + ((a.value = t.check_answer) IS 1)) || ',' || hex(a.option_id) || ',' || hex(a.value), ';')
         FROM answers a JOIN tasks t ON t.id = a.task_id WHERE a.study_id = ? GROUP BY a.user_id",
    )
    .bind(study)
    .fetch_all(db)
    .await?;
    let mut names: HashMap<String, u32> = HashMap::new();
    let mut out = Vec::with_capacity(rows.iter().map(|r| r.1 as usize).sum());
    for (user, _, packed) in &rows {
        for one in packed.split(';') {
            out.push(parse(*user as u64, one, &mut names).ok_or_else(|| {
                ServiceError::Internal(format!("study {study}: unreadable packed answer {one:?} of user {user}"))
            })?);
        }
    }
    Ok(out)
}

fn parse(person: u64, one: &str, names: &mut HashMap<String, u32>) -> Option<Answer> {
    let mut f = one.split(',');
    let mut int = || f.next()?.parse::<i64>().ok();
    let (instance, query, order, elapsed_ms, check) = (int()?, int()?, int()?, int()?, int()?);
    let mut intern = |s: &str| match names.get(s) {
        Some(&i) => i,
        None => {
            let i = names.len() as u32;
            names.insert(s.to_string(), i);
            i
        }
    };
    let shown = intern(f.next()?);
    let value = intern(f.next()?);
    let check = match check {
        0 => Check::None,
        2 | 3 => Check::Gold { correct: check == 3 },
        4 | 5 => Check::Attention { correct: check == 5 },
        _ => return None,
    };
    Some(Answer {
        person,
        // Several questions of one instance are several items.
        item: (instance as u64) << 8 | query as u64,
        order,
        shown,
        value,
        elapsed_ms,
        check,
    })
}
