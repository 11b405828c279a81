//! The statistics of a study whose kind reports them (the kind's
//! `Role::Report`): the shared ones (accuracy, preference: several kinds
//! give them) computed here, a kind's own ones by its server part, found in
//! the registry handed in.
use super::hooks::{Head, Registry, Statistic, Stats};
use crate::domain::accuracy::{accuracy_by_subset, accuracy_per_person, AccuracyRow, Judged, PersonRow};
use crate::domain::category::Category;
use crate::domain::ids::StudyId;
use crate::domain::preference::{preference_table, split_value, Judgement, PreferenceRow, TEST};
use crate::domain::survey::Report;
use crate::error::ServiceError;
use crate::studies::meta::load_study_meta;
use serde::Serialize;
use sqlx::AnyPool;

pub struct StudyReport {
    pub head: Head,
    pub stats: Box<dyn Stats>,
}

impl StudyReport {
    /// The report as JSON (docs/api.md), pretty for files and the CLI.
    pub fn to_json(&self, pretty: bool) -> Result<Vec<u8>, ServiceError> {
        self.stats.json(&self.head, pretty).map_err(|e| ServiceError::internal("report to JSON", e))
    }

    /// The report as a plain-text table (CLI, export card).
    pub fn render(&self) -> String {
        let h = &self.head;
        format!("{} ({}, {} answers)\n{}", h.study, h.kind, h.answers, self.stats.render())
    }
}

/// Human accuracy per subset, then overall (SugarCrepe++): `rows` the
/// means over annotators, `people` each annotator's own figures.
#[derive(Debug, Clone, Serialize)]
pub struct Accuracy {
    setting: String,
    rows: Vec<AccuracyRow>,
    people: Vec<PersonAccuracy>,
}

/// Which source's negative is better per criterion and subset, type and
/// overall, with a sign test over items (SugarCrepe's Table 9); `test`
/// names it (`domain::preference::TEST`).
#[derive(Debug, Clone, Serialize)]
pub struct Preference {
    test: &'static str,
    rows: Vec<PreferenceRow>,
}

/// One annotator's accuracy per subset and overall (their rows).
#[derive(Debug, Clone, Serialize)]
pub struct PersonAccuracy {
    pub annotator: String,
    pub rows: Vec<PersonRow>,
}
/// One answer: the instance's subset, the annotator, the stored value and
/// the sources of negatives a and b.
struct Answer {
    instance: i64,
    category: Category,
    annotator: i64,
    value: String,
    sources: (Option<String>, Option<String>),
}

/// Every answer of the study with its instance's category (the subset).
async fn answers_by_subset(db: &AnyPool, study_id: StudyId) -> Result<Vec<Answer>, ServiceError> {
    type Row = (i64, String, String, i64, String, Option<String>, Option<String>);
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT i.id, i.neg_type, i.subtype, a.user_id, a.value, i.source_a, i.source_b
         FROM counted_answers a JOIN instances i ON i.id = a.instance_id WHERE a.study_id = $1 ORDER BY a.instance_id, a.task_id",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|(id, t, s, annotator, value, a, b)| {
            let category = Category::parse(&t, &s).map_err(|e| ServiceError::internal(format!("instance {id}"), e))?;
            Ok(Answer { instance: id, category, annotator, value, sources: (a, b) })
        })
        .collect()
}

/// An A/B/Tie answer as a judgement of the sources.
fn judgement(a: Answer, criteria: &[&str]) -> Result<Judgement, ServiceError> {
    let (criterion, choice) = split_value(&a.value, criteria)
        .ok_or_else(|| ServiceError::Internal(format!("not an A/B/Tie value: {:?}", a.value)))?;
    let sources: Vec<String> = [&a.sources.0, &a.sources.1].into_iter().flatten().cloned().collect();
    let better = match choice {
        "a" => a.sources.0,
        "b" => a.sources.1,
        _ => None,
    };
    if choice != "tie" && better.is_none() {
        return Err(ServiceError::Internal(format!("answer {:?} on an instance without sources", a.value)));
    }
    Ok(Judgement { item: a.instance, category: a.category, criterion: criterion.to_string(), better, sources })
}

pub async fn study_report(db: &AnyPool, kinds: &Registry, study_id: StudyId) -> Result<StudyReport, ServiceError> {
    let meta = load_study_meta(db, kinds.list, study_id).await?;
    let Some(report) = meta.kind.report() else {
        let kinds: Vec<&str> = kinds.reports().map(|k| k.name()).collect();
        return Err(ServiceError::Invalid(format!(
            "study {:?} is of kind {}, which reports no statistics (kinds that do: {})",
            meta.name,
            meta.kind,
            kinds.join(", ")
        )));
    };
    let (answers, stats): (usize, Box<dyn Stats>) = match report {
        Report::Accuracy { correct, setting } => {
            let (n, stats) = accuracy(db, study_id, correct, setting).await?;
            (n, Box::new(stats))
        }
        Report::Preference { criteria } => {
            let answers = answers_by_subset(db, study_id).await?;
            let judgements = answers.into_iter().map(|a| judgement(a, criteria)).collect::<Result<Vec<_>, _>>()?;
            (judgements.len(), Box::new(Preference { test: TEST, rows: preference_table(&judgements, criteria) }))
        }
        Report::Own => {
            let own = kinds.server(meta.kind).and_then(|s| s.report).ok_or_else(|| {
                ServiceError::Internal(format!(
                    "kind {} reports its own statistics but has no server report",
                    meta.kind
                ))
            })?;
            own(db, study_id).await?
        }
    };
    let head = Head { study_id, study: meta.name, kind: meta.kind.name().to_string(), answers };
    Ok(StudyReport { head, stats })
}

/// Each answer right when it stores `correct`, per subset and per annotator.
async fn accuracy(
    db: &AnyPool,
    study_id: StudyId,
    correct: &str,
    setting: &str,
) -> Result<(usize, Accuracy), ServiceError> {
    let answers = answers_by_subset(db, study_id).await?;
    let judged: Vec<Judged> = answers
        .into_iter()
        .map(|a| Judged { category: a.category, annotator: a.annotator, correct: a.value == correct })
        .collect();
    let names: std::collections::HashMap<i64, String> = sqlx::query_as(
        "SELECT id, username FROM users WHERE id IN (SELECT user_id FROM counted_answers WHERE study_id = $1)",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?
    .into_iter()
    .collect();
    let people = accuracy_per_person(&judged)
        .into_iter()
        .map(|(id, rows)| PersonAccuracy { annotator: names.get(&id).cloned().unwrap_or_default(), rows })
        .collect();
    let rows = accuracy_by_subset(&judged);
    Ok((judged.len(), Accuracy { setting: setting.to_string(), rows, people }))
}

impl Statistic for Accuracy {
    const NAME: &'static str = "accuracy";

    fn render(&self) -> String {
        let setting = &self.setting;
        let mut out = format!(
            "{:<14} {:>8} {:>8} {:>10} {:>8} {:>8}\n",
            "subset", "answers", "correct", "annotators", setting, "pooled"
        );
        for row in &self.rows {
            let subset = row.subset.map_or("all".to_string(), |c| c.to_string());
            out.push_str(&format!(
                "{subset:<14} {:>8} {:>8} {:>10} {:>7.1}% {:>7.1}%\n",
                row.answers,
                row.correct,
                row.annotators,
                100.0 * row.accuracy,
                100.0 * row.pooled
            ));
        }
        out.push_str(&format!("{setting} is the mean over annotators of each one's accuracy:\n"));
        for p in &self.people {
            let cells: Vec<String> = p
                .rows
                .iter()
                .map(|r| {
                    let subset = r.subset.map_or("all".to_string(), |c| c.to_string());
                    format!("{subset} {}/{} {:.1}%", r.correct, r.answers, 100.0 * r.accuracy)
                })
                .collect();
            out.push_str(&format!("  {}: {}\n", p.annotator, cells.join(", ")));
        }
        out
    }
}

impl Statistic for Preference {
    const NAME: &'static str = "preference";

    fn render(&self) -> String {
        let mut out = String::from(
            "sign test over items: each item's vote is its raters' majority; items whose majority is Tie \
             or shared are dropped (n = items counted)\n",
        );
        for row in &self.rows {
            let counts: Vec<String> =
                row.sources.iter().map(|c| format!("{} {} ({} items)", c.source, c.better, c.items)).collect();
            let p = row.sign_test_p.map_or("-".to_string(), |p| format!("{p:.4}"));
            out.push_str(&format!(
                "{:<12} {:<12} {}, tie {}; {} items, {} tied, sign test n = {}, p = {p}\n",
                row.criterion,
                row.label,
                counts.join(", "),
                row.ties,
                row.items,
                row.items_tied,
                row.n
            ));
        }
        out
    }
}
