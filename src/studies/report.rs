//! The statistics of a study whose kind reports them (the kind's
//! `Role::Report`): computed from its answers by the pure `domain` functions.
use crate::domain::accuracy::{accuracy_by_subset, accuracy_per_person, AccuracyRow, Judged, PersonRow};
use crate::domain::category::Category;
use crate::domain::preference::{preference_table, Judgement, PreferenceRow, TEST};
use crate::domain::survey::Report;
use crate::error::ServiceError;
use crate::kinds::ab_tie::split_value;
use crate::kinds::ranking::stats::{ranking_stats, Prompt, RankingStats};
use crate::studies::meta::load_study_meta;
use serde::Serialize;
use sqlx::SqlitePool;

#[derive(Debug, Clone, Serialize)]
pub struct StudyReport {
    pub study_id: i64,
    pub study: String,
    pub kind: String,
    pub answers: usize,
    #[serde(flatten)]
    pub body: ReportBody,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "statistic", rename_all = "snake_case")]
pub enum ReportBody {
    /// Human accuracy per subset, then overall (SugarCrepe++): `rows` the
    /// means over annotators, `people` each annotator's own figures.
    Accuracy { setting: String, rows: Vec<AccuracyRow>, people: Vec<PersonAccuracy> },
    /// Which source's negative is better per criterion and subset, type
    /// and overall, with a sign test over items (SugarCrepe's Table 9);
    /// `test` names it (`domain::preference::TEST`).
    Preference { test: &'static str, rows: Vec<PreferenceRow> },
    /// Annotators' agreement on each prompt's order (Kendall's W) and each
    /// imported model's correlation with it (ranking generated images).
    Ranking(RankingStats),
    /// Expert triplet validation: valid share per subset, error tags, and
    /// Cohen's kappa on the verdict (SugarCrepe++).
    Validation(crate::kinds::triplet_check::stats::ValidationStats),
    /// HNC's caption-pair writing: pairs written, skips by reason, unknown words, per caption type.
    Writing(crate::kinds::caption_writing::stats::WritingStats),
    /// HNC's validation of written pairs: validated share per type, the validators' kappa.
    PairValidation(crate::studies::hnc_report::PairValidationReport),
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
async fn answers_by_subset(db: &SqlitePool, study_id: i64) -> Result<Vec<Answer>, ServiceError> {
    type Row = (i64, String, String, i64, String, Option<String>, Option<String>);
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT i.id, i.neg_type, i.subtype, a.user_id, a.value, i.source_a, i.source_b
         FROM counted_answers a JOIN instances i ON i.id = a.instance_id WHERE a.study_id = ? ORDER BY a.instance_id, a.task_id",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?;
    rows.into_iter()
        .map(|(id, t, s, annotator, value, a, b)| {
            let category =
                Category::parse(&t, &s).map_err(|e| ServiceError::Internal(format!("instance {id}: {e}")))?;
            Ok(Answer { instance: id, category, annotator, value, sources: (a, b) })
        })
        .collect()
}

/// An A/B/Tie answer as a judgement of the sources.
fn judgement(a: Answer) -> Result<Judgement, ServiceError> {
    let (criterion, choice) =
        split_value(&a.value).ok_or_else(|| ServiceError::Internal(format!("not an A/B/Tie value: {:?}", a.value)))?;
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

pub async fn study_report(db: &SqlitePool, study_id: i64) -> Result<StudyReport, ServiceError> {
    let meta = load_study_meta(db, study_id).await?;
    let Some(report) = meta.kind.report() else {
        let kinds: Vec<&str> = crate::domain::survey::SurveyKind::reports().map(|k| k.name()).collect();
        return Err(ServiceError::Invalid(format!(
            "study {:?} is a {} study, which reports no statistics (kinds that do: {})",
            meta.name,
            meta.kind,
            kinds.join(", ")
        )));
    };
    let (n, body) = match report {
        Report::Accuracy { correct, setting } => {
            let answers = answers_by_subset(db, study_id).await?;
            let judged: Vec<Judged> = answers
                .into_iter()
                .map(|a| Judged { category: a.category, annotator: a.annotator, correct: a.value == *correct })
                .collect();
            let names: std::collections::HashMap<i64, String> = sqlx::query_as(
                "SELECT id, username FROM users WHERE id IN (SELECT user_id FROM counted_answers WHERE study_id = ?)",
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
            (judged.len(), ReportBody::Accuracy { setting: setting.to_string(), rows, people })
        }
        Report::Preference { criteria } => {
            let answers = answers_by_subset(db, study_id).await?;
            let judgements = answers.into_iter().map(judgement).collect::<Result<Vec<_>, _>>()?;
            (judgements.len(), ReportBody::Preference { test: TEST, rows: preference_table(&judgements, criteria) })
        }
        Report::Ranking => {
            let (n, stats) = rankings(db, study_id).await?;
            (n, ReportBody::Ranking(stats))
        }
        Report::Validation => {
            let (n, stats) = crate::studies::triplet_report::validation(db, study_id).await?;
            (n, ReportBody::Validation(stats))
        }
        Report::Writing => {
            let (n, stats) = crate::studies::hnc_report::writing(db, study_id).await?;
            (n, ReportBody::Writing(stats))
        }
        Report::PairValidation => {
            let (n, stats) = crate::studies::hnc_report::pair_validation(db, study_id).await?;
            (n, ReportBody::PairValidation(stats))
        }
    };
    Ok(StudyReport { study_id, study: meta.name, kind: meta.kind.name().to_string(), answers: n, body })
}

/// Every prompt of the study with its orders and the imported models' scores.
async fn rankings(db: &SqlitePool, study_id: i64) -> Result<(usize, RankingStats), ServiceError> {
    use crate::kinds::ranking::read_order;
    use std::collections::BTreeMap;
    let answers: Vec<(i64, String)> =
        sqlx::query_as("SELECT instance_id, value FROM answers WHERE study_id = ? ORDER BY instance_id, task_id")
            .bind(study_id)
            .fetch_all(db)
            .await?;
    let scores: Vec<(i64, String, f64)> = sqlx::query_as(
        "SELECT s.instance_id, s.model, s.score FROM image_scores s
         WHERE s.instance_id IN (SELECT instance_id FROM answers WHERE study_id = ?) ORDER BY s.instance_id, s.model, s.slot",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?;
    let mut prompts: BTreeMap<i64, Prompt> = BTreeMap::new();
    let n = answers.len();
    for (id, value) in answers {
        let order = read_order(&value)
            .ok_or_else(|| ServiceError::Internal(format!("instance {id}: not a ranking: {value:?}")))?;
        prompts.entry(id).or_default().orders.push(order);
    }
    for (id, model, score) in scores {
        prompts.entry(id).or_default().scores.entry(model).or_default().push(score);
    }
    Ok((n, ranking_stats(&prompts.into_values().collect::<Vec<_>>())))
}

/// The report as a plain-text table (CLI, export card).
pub fn render(r: &StudyReport) -> String {
    let mut out = format!("{} ({}, {} answers)\n", r.study, r.kind, r.answers);
    match &r.body {
        ReportBody::Accuracy { setting, rows, people } => {
            out.push_str(&format!(
                "{:<14} {:>8} {:>8} {:>10} {:>8} {:>8}\n",
                "subset", "answers", "correct", "annotators", setting, "pooled"
            ));
            for row in rows {
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
            for p in people {
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
        }
        ReportBody::Ranking(st) => {
            let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
            out.push_str(&format!(
                "{} prompts, {} rankings; Kendall's W {} (mean over {} prompts ranked twice or more)\n",
                st.prompts,
                st.rankings,
                show(st.kendalls_w),
                st.w_prompts
            ));
            for m in &st.models {
                out.push_str(&format!(
                    "{:<16} Spearman's rho {}  Kendall's tau {}  (mean over {} prompts)\n",
                    m.model,
                    show(m.spearman),
                    show(m.kendall_tau),
                    m.prompts
                ));
            }
        }
        ReportBody::Validation(st) => out.push_str(&crate::studies::triplet_report::render(st)),
        ReportBody::Writing(st) => out.push_str(&crate::studies::hnc_report::render_writing(st)),
        ReportBody::PairValidation(r) => out.push_str(&crate::studies::hnc_report::render_validation(r)),
        ReportBody::Preference { rows, .. } => {
            out.push_str(
                "sign test over items: each item's vote is its raters' majority; items whose majority is Tie \
                 or shared are dropped (n = items counted)\n",
            );
            for row in rows {
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
        }
    }
    out
}
