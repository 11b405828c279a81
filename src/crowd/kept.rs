//! A study's answers as last read, kept per participant for the approve
//! list's scores and the dashboard's answer figures. Answers are only ever
//! inserted (one row per task, never updated or deleted) and check kinds are
//! fixed when tasks are made, so an unchanged count of the study's answers
//! means the very same answers, and a participant whose count is unchanged
//! has the very same ones: only the others are read again. Every read first
//! counts the study's answers, so nothing computed from an older set of
//! answers is ever served, and answers other servers sharing the database
//! stored are read. The database's URL tells apart studies of the same id in
//! one process (tests).
use crate::domain::crowd::flags::{Answer, Check};
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use sqlx::AnyPool;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

pub(crate) struct Kept {
    db: String,
    study: StudyId,
    /// Ascending user id → that participant's answers, in stored order.
    people: BTreeMap<i64, Person>,
    /// Interned option and value strings (shared by every kept answer).
    names: HashMap<String, u32>,
    /// The study's answer count when `people` was last made whole; None before the first read.
    total: Option<i64>,
    /// Renewed whenever `people` changes, from one counter for every kept
    /// study: what was computed at another version is of other answers.
    pub version: u64,
    /// Every kept answer's `elapsed_ms` and `answered_at`, as counts (the dashboard's figures).
    elapsed: BTreeMap<i64, i64>,
    answered: BTreeMap<i64, i64>,
}

#[derive(Default)]
struct Person {
    answers: Vec<Answer>,
    answered_at: Vec<i64>,
}

/// A few studies' worth (about 12 MB per 200k answers), newest last.
static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());
const KEPT_MAX: usize = 4;
static VERSIONS: AtomicU64 = AtomicU64::new(1);

fn next_version() -> u64 {
    VERSIONS.fetch_add(1, Ordering::Relaxed)
}

/// Past this many changed participants one full read is cheaper than lists of ids.
const REREAD_ALL: usize = 500;

impl Kept {
    /// Every kept answer, by participant (ascending user id), in stored order.
    pub fn answers(&self) -> impl Iterator<Item = &Answer> {
        self.people.values().flat_map(|p| &p.answers)
    }

    /// `(elapsed_ms, answers)` ascending, over every answer.
    pub fn elapsed_counts(&self) -> Vec<(i64, i64)> {
        self.elapsed.iter().map(|(&ms, &n)| (ms, n)).collect()
    }

    /// The first answer's time, and how many answers came at or after `since`.
    pub fn first_and_since(&self, since: i64) -> (Option<i64>, i64) {
        (self.answered.keys().next().copied(), self.answered.range(since..).map(|(_, &n)| n).sum())
    }

    fn set_person(&mut self, user: i64, person: Person) {
        count(self, &person, 1);
        if let Some(old) = self.people.insert(user, person) {
            count(self, &old, -1);
        }
        self.version = next_version();
    }

    fn clear(&mut self) {
        self.people.clear();
        self.elapsed.clear();
        self.answered.clear();
        self.version = next_version();
    }
}

fn count(kept: &mut Kept, p: &Person, sign: i64) {
    bump(&mut kept.elapsed, p.answers.iter().map(|a| a.elapsed_ms), sign);
    bump(&mut kept.answered, p.answered_at.iter().copied(), sign);
}

fn bump(map: &mut BTreeMap<i64, i64>, keys: impl Iterator<Item = i64>, sign: i64) {
    for k in keys {
        let n = map.entry(k).or_default();
        *n += sign;
        if *n == 0 {
            map.remove(&k);
        }
    }
}

/// The study's answers as stored now, taken out of the cache (put it back
/// with [`put`]); read again only where they changed.
pub(crate) async fn refreshed(db: &AnyPool, study: StudyId) -> Result<Kept, ServiceError> {
    let url = db.connect_options().database_url.to_string();
    let mut kept = take(&url, study);
    // An index-only count: the same count as at the last read is the same answers.
    let total: i64 =
        sqlx::query_scalar("SELECT count(*) FROM answers WHERE study_id = $1").bind(study).fetch_one(db).await?;
    if kept.total == Some(total) {
        return Ok(kept);
    }
    // One walk of the (study_id, user_id) index: no table rows are read.
    let counts: Vec<(i64, i64)> =
        sqlx::query_as("SELECT user_id, count(*) FROM answers WHERE study_id = $1 GROUP BY user_id ORDER BY user_id")
            .bind(study)
            .fetch_all(db)
            .await?;
    let changed: Vec<i64> = counts
        .iter()
        .filter(|(user, n)| kept.people.get(user).is_none_or(|p| p.answers.len() as i64 != *n))
        .map(|(user, _)| *user)
        .collect();
    // Answers are never deleted; should a participant vanish all the same, read everything again.
    let gone = kept.people.keys().any(|u| counts.binary_search_by_key(u, |c| c.0).is_err());
    if gone || changed.len() > REREAD_ALL {
        kept.clear();
        read_answers(db, study, None, &mut kept).await?;
    } else {
        for ids in changed.chunks(REREAD_ALL) {
            read_answers(db, study, Some(ids), &mut kept).await?;
        }
    }
    // The walk's own count: answers that came after it make the next count differ.
    kept.total = Some(counts.iter().map(|c| c.1).sum());
    Ok(kept)
}

fn take(db: &str, study: StudyId) -> Kept {
    let mut all = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    match all.iter().position(|k| k.db == db && k.study == study) {
        Some(at) => all.remove(at),
        None => Kept {
            db: db.to_owned(),
            study,
            people: BTreeMap::new(),
            names: HashMap::new(),
            total: None,
            version: next_version(),
            elapsed: BTreeMap::new(),
            answered: BTreeMap::new(),
        },
    }
}

/// Puts a study's answers back for the next read.
pub(crate) fn put(kept: Kept) {
    let mut all = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|k| !(k.db == kept.db && k.study == kept.study));
    if all.len() >= KEPT_MAX {
        all.remove(0);
    }
    all.push(kept);
}

/// Reads the answers (check items included) of the given participants, or
/// of everyone, into `kept`, in the shape the flags take, with the on-screen
/// options and values interned. One row per person:
/// `instance,query,position,elapsed_ms,check,answered_at,hex(shown),hex(value)`
/// per answer, `;` between answers (`store::statements::kept_answers`).
async fn read_answers(
    db: &AnyPool,
    study: StudyId,
    users: Option<&[i64]>,
    kept: &mut Kept,
) -> Result<(), ServiceError> {
    let sql = crate::store::statements::kept_answers(db, users.map(<[i64]>::len));
    let mut query = sqlx::query_as::<_, (i64, String)>(&sql).bind(study);
    for u in users.unwrap_or_default() {
        query = query.bind(u);
    }
    for (user, packed) in query.fetch_all(db).await? {
        let mut person = Person::default();
        for one in packed.split(';') {
            let (answer, at) = parse(user as u64, one, &mut kept.names).ok_or_else(|| {
                ServiceError::Internal(format!("study {study}: unreadable packed answer {one:?} of user {user}"))
            })?;
            person.answers.push(answer);
            person.answered_at.push(at);
        }
        kept.set_person(user, person);
    }
    Ok(())
}

fn parse(person: u64, one: &str, names: &mut HashMap<String, u32>) -> Option<(Answer, i64)> {
    let mut f = one.split(',');
    let mut int = || f.next()?.parse::<i64>().ok();
    let (instance, query, order, elapsed_ms, check, answered_at) = (int()?, int()?, int()?, int()?, int()?, int()?);
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
    let answer = Answer {
        person,
        // Several questions of one instance are several items.
        item: (instance as u64) << 8 | query as u64,
        order,
        shown,
        value,
        elapsed_ms,
        check,
    };
    Some((answer, answered_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person(times: &[(i64, i64)]) -> Person {
        let mut names = HashMap::new();
        let mut p = Person::default();
        for (k, &(ms, at)) in times.iter().enumerate() {
            let (a, at) = parse(1, &format!("{k},0,{k},{ms},0,{at},41,30"), &mut names).unwrap();
            p.answers.push(a);
            p.answered_at.push(at);
        }
        p
    }

    #[test]
    fn a_participant_read_again_replaces_its_counts_and_renews_the_version() {
        let mut kept = take("sqlite:///nonexistent/kept-test.sqlite", StudyId::new(1));
        kept.set_person(7, person(&[(800, 100), (3000, 160)]));
        kept.set_person(9, person(&[(800, 120)]));
        assert_eq!(kept.elapsed_counts(), vec![(800, 2), (3000, 1)]);
        assert_eq!(kept.first_and_since(150), (Some(100), 1));
        let before = kept.version;
        // Participant 7 again, with one more answer: its old answers are not counted twice.
        kept.set_person(7, person(&[(800, 100), (3000, 160), (5000, 200)]));
        assert_ne!(kept.version, before);
        assert_eq!(kept.elapsed_counts(), vec![(800, 2), (3000, 1), (5000, 1)]);
        assert_eq!(kept.first_and_since(150), (Some(100), 2));
        assert_eq!(kept.answers().count(), 4);
        kept.clear();
        assert_eq!((kept.elapsed_counts(), kept.first_and_since(0)), (vec![], (None, 0)));
    }

    #[test]
    fn packed_answers_parse_and_malformed_ones_are_refused() {
        let mut names = HashMap::new();
        let (a, at) = parse(3, "12,1,4,900,5,1700000000,41,30", &mut names).unwrap();
        assert_eq!((a.person, a.item, a.order, a.elapsed_ms, at), (3, 12 << 8 | 1, 4, 900, 1_700_000_000));
        assert_eq!(a.check, Check::Attention { correct: true });
        assert_eq!(names.len(), 2);
        assert!(parse(3, "12,1,4,900,5,1700000000,41", &mut names).is_none());
        assert!(parse(3, "12,1,4,900,7,1700000000,41,30", &mut names).is_none());
        assert!(parse(3, "x,1,4,900,0,1700000000,41,30", &mut names).is_none());
    }
}
