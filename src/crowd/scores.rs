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
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Flags and Dawid–Skene accuracy by person (user id).
#[derive(Debug, Default)]
pub(crate) struct Scores {
    pub flags: HashMap<u64, PersonFlags>,
    /// None for people with fewer than 2 non-check answers, or all when the model cannot run.
    pub ds: HashMap<u64, f64>,
}

/// A study's answers as last read, kept per participant: answers are only
/// ever inserted (one row per task, never updated or deleted) and check
/// kinds are fixed when tasks are made, so a participant whose answer
/// count is unchanged has the very same answers, and only the others are
/// read again. The database file tells apart studies of the same id in one
/// process (tests).
struct Kept {
    db: PathBuf,
    study: i64,
    /// Ascending user id → that participant's answers, in stored order.
    people: BTreeMap<i64, Vec<Answer>>,
    /// Interned option and value strings (shared by every kept answer).
    names: HashMap<String, u32>,
    /// The last result and what it was computed with.
    last: Option<(u64, QualitySettings, Arc<Scores>)>,
}

/// A few studies' worth (about 10 MB per 200k answers), newest last.
static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());
const KEPT_MAX: usize = 4;
/// Past this many changed participants one full read is cheaper than lists of ids.
const REREAD_ALL: usize = 500;

/// The scores of the study's answers now, computed once per set of answers.
pub(crate) async fn scores(
    db: &SqlitePool,
    study: i64,
    quality: QualitySettings,
    seed: u64,
) -> Result<Arc<Scores>, ServiceError> {
    // One walk of the (study_id, user_id) index: no table rows are read.
    let counts: Vec<(i64, i64)> =
        sqlx::query_as("SELECT user_id, count(*) FROM answers WHERE study_id = ? GROUP BY user_id ORDER BY user_id")
            .bind(study)
            .fetch_all(db)
            .await?;
    let file = db.connect_options().get_filename().to_path_buf();
    let mut kept = take_kept(&file, study);
    let changed: Vec<i64> = counts
        .iter()
        .filter(|(user, n)| kept.people.get(user).is_none_or(|a| a.len() as i64 != *n))
        .map(|(user, _)| *user)
        .collect();
    // Answers are never deleted; should a participant vanish all the same, read everything again.
    let gone = kept.people.keys().any(|u| counts.binary_search_by_key(u, |c| c.0).is_err());
    if let (true, false, Some((s, q, hit))) = (changed.is_empty(), gone, &kept.last) {
        if *s == seed && *q == quality {
            let hit = Arc::clone(hit);
            put_kept(kept);
            return Ok(hit);
        }
    }
    if gone || changed.len() > REREAD_ALL {
        kept.people.clear();
        read_answers(db, study, None, &mut kept).await?;
    } else {
        for ids in changed.chunks(REREAD_ALL) {
            read_answers(db, study, Some(ids), &mut kept).await?;
        }
    }
    let answers: Vec<Answer> = kept.people.values().flatten().copied().collect();
    // Both walk every answer: off the async threads.
    let scores = tokio::task::spawn_blocking(move || compute(&answers, &quality, seed))
        .await
        .map_err(|e| ServiceError::Internal(format!("scoring the answers: {e}")))?;
    let scores = Arc::new(scores);
    kept.last = Some((seed, quality, Arc::clone(&scores)));
    put_kept(kept);
    Ok(scores)
}

/// The study's kept answers, taken out of the cache (a fresh entry if none).
fn take_kept(db: &Path, study: i64) -> Kept {
    let mut all = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    match all.iter().position(|k| k.db == db && k.study == study) {
        Some(at) => all.remove(at),
        None => Kept { db: db.to_path_buf(), study, people: BTreeMap::new(), names: HashMap::new(), last: None },
    }
}

fn put_kept(kept: Kept) {
    let mut all = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|k| !(k.db == kept.db && k.study == kept.study));
    if all.len() >= KEPT_MAX {
        all.remove(0);
    }
    all.push(kept);
}

fn compute(answers: &[Answer], quality: &QualitySettings, seed: u64) -> Scores {
    // The interned values index the classes: only their identity matters to the model.
    let k = answers.iter().map(|a| a.value as usize + 1).max().unwrap_or(0).max(2);
    // Independent walks of the answers: one per core.
    std::thread::scope(|s| {
        let flags = s.spawn(|| person_flags(answers, quality).into_iter().map(|f| (f.person, f)).collect());
        let ds = ds_accuracies(answers, k, seed);
        Scores { ds, flags: flags.join().unwrap_or_else(|e| std::panic::resume_unwind(e)) }
    })
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

/// Reads the answers (check items included) of the given participants, or
/// of everyone, into `kept`, in the shape the flags take, with the on-screen
/// options and values interned. One row per person:
/// `instance,query,position,elapsed_ms,check,hex(shown),hex(value)` per
/// answer, `;` between answers (sqlx hands rows over one at a time, which
/// dominated at 200k answers; hex keeps free text from splitting); `check`
/// is 0 for none, 2/3 for gold wrong/right, 4/5 for attention.
async fn read_answers(db: &SqlitePool, study: i64, users: Option<&[i64]>, kept: &mut Kept) -> Result<(), ServiceError> {
    let only = users.map(|u| format!(" AND a.user_id IN ({})", vec!["?"; u.len()].join(","))).unwrap_or_default();
    let sql = format!(
        "SELECT a.user_id, group_concat(
                    a.instance_id || ',' || t.query || ',' || t.position || ',' || a.elapsed_ms || ',' ||
                    (CASE t.check_kind WHEN 'gold' THEN 2 WHEN 'attention' THEN 4 ELSE 0 END
                     + ((a.value = t.check_answer) IS 1)) || ',' || hex(a.option_id) || ',' || hex(a.value), ';')
         FROM answers a JOIN tasks t ON t.id = a.task_id WHERE a.study_id = ?{only} GROUP BY a.user_id"
    );
    let mut query = sqlx::query_as::<_, (i64, String)>(&sql).bind(study);
    for u in users.unwrap_or_default() {
        query = query.bind(u);
    }
    for (user, packed) in query.fetch_all(db).await? {
        let mut mine = Vec::new();
        for one in packed.split(';') {
            mine.push(parse(user as u64, one, &mut kept.names).ok_or_else(|| {
                ServiceError::Internal(format!("study {study}: unreadable packed answer {one:?} of user {user}"))
            })?);
        }
        kept.people.insert(user, mine);
    }
    Ok(())
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
