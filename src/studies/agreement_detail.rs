//! The detailed agreement report (agreement API and CLI): seeded bootstrap
//! intervals, each annotator against the settled outcomes, and each
//! person's reliability as Dawid–Skene and MACE estimate it.
use crate::domain::aggregate::Model;
use crate::domain::agreement::{annotator_confusion, bootstrap_agreement, BootstrapCis, CategoryMap};
use crate::domain::resolution::{ItemState, ResolvedBy};
use crate::error::ServiceError;
use crate::state::StudyMeta;
use crate::studies::aggregate::fit;
use crate::studies::outcomes::{study_outcomes, ItemOutcome};
use serde::Serialize;
use sqlx::AnyPool;

/// At most this many resamples per request: each is a pass over the items,
/// and every pair keeps one value per resample.
pub const MAX_RESAMPLES: usize = 10_000;

#[derive(Debug, Clone, Copy)]
pub struct Detail {
    /// 0 leaves the intervals out.
    pub resamples: usize,
    /// Default: the study's seed.
    pub seed: Option<u64>,
}

impl Detail {
    pub fn new(resamples: Option<usize>, seed: Option<u64>) -> Result<Detail, ServiceError> {
        let resamples = resamples.unwrap_or(crate::domain::agreement::DEFAULT_RESAMPLES);
        if resamples > MAX_RESAMPLES {
            return Err(ServiceError::Invalid(format!("resamples: at most {MAX_RESAMPLES}, got {resamples}")));
        }
        Ok(Detail { resamples, seed })
    }
}

/// Bootstrap intervals with the annotators named.
pub type BootstrapOut = BootstrapCis<String>;

/// One person's reliability as a model estimates it.
#[derive(Debug, Clone, Serialize)]
pub struct Estimate {
    pub accuracy: f64,
    /// Dawid–Skene: `confusion[truth][answer]`, in the order of `categories`;
    /// a row is None where no item of the person's is fitted to that truth
    /// (P(answer | truth) is undefined there, not zero).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confusion: Option<Vec<Option<Vec<f64>>>>,
    /// MACE: probability of not spamming.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub competence: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AnnotatorOut {
    pub name: String,
    pub answers: usize,
    /// Answers on items whose outcome is settled, and how many equal it.
    pub settled: usize,
    pub agreed: usize,
    pub accuracy_vs_outcome: Option<f64>,
    /// `[outcome][answer]`, in the order of `categories`.
    pub confusion_vs_outcome: Vec<Vec<u64>>,
    pub dawid_skene: Option<Estimate>,
    pub mace: Option<Estimate>,
}

/// What the detailed report adds to the summary.
pub(super) struct DetailOut {
    pub bootstrap: Option<BootstrapOut>,
    pub annotators: Vec<AnnotatorOut>,
    pub dawid_skene_reason: Option<String>,
    pub mace_reason: Option<String>,
}

pub(super) async fn detail_of(
    db: &AnyPool,
    meta: &StudyMeta,
    map: &CategoryMap,
    ratings: &[(u64, u64, usize)],
    name: &(dyn Fn(u64) -> String + Sync),
    detail: Detail,
) -> Result<DetailOut, ServiceError> {
    let k = map.len();
    let mut out = DetailOut { bootstrap: None, annotators: Vec::new(), dawid_skene_reason: None, mace_reason: None };
    if detail.resamples > 0 {
        let seed = detail.seed.unwrap_or(meta.seed);
        out.bootstrap = Some(bootstrap_agreement(ratings, k, detail.resamples, seed).map_annotators(name));
    }
    // Outcomes settle instances; with several questions the ratings are
    // keyed by (instance, question), so there is no outcome to compare with.
    // Each (item, category): the settled outcomes, and those an adjudication settled.
    let (settled, gold): (Vec<_>, Vec<_>) = if meta.kind.question_count() > 1 {
        (Vec::new(), Vec::new())
    } else {
        // The study's row names only its own kind: that list resolves it.
        let (_, outcomes) = study_outcomes(db, &[meta.kind], meta.id).await?;
        let settled: Vec<(u64, usize)> =
            outcomes.iter().filter_map(|o| Some((o.instance_id as u64, map.map(o.final_value()?)?))).collect();
        // Adjudicated values are clamped as gold, as when the models settle the
        // study, so each person's figures come from the fit behind the outcomes.
        let adjudicated = |o: &&ItemOutcome| matches!(o.state, ItemState::Final { by: ResolvedBy::Adjudication, .. });
        let mut gold: Vec<(u64, usize)> = outcomes
            .iter()
            .filter(adjudicated)
            .filter_map(|o| Some((o.instance_id as u64, map.map(o.final_value()?)?)))
            .collect();
        gold.sort_unstable();
        (settled, gold)
    };
    let ds = fit(Model::DawidSkene, ratings, k, &gold, meta.seed);
    let mace = fit(Model::Mace, ratings, k, &gold, meta.seed).and_then(|fitted| {
        // One value everywhere among the fitted people's answers: c + (1 - c)
        // * theta = 1 for every competence c, so the fit's competences would
        // be whatever its start was.
        let mut given = ratings.iter().filter(|r| fitted.person(r.1).is_some()).map(|r| r.2);
        let first = given.next();
        match given.all(|c| Some(c) == first) {
            true => Err("every answer is the same value: MACE's competence is undefined (a spammer and a careful \
                         person answer alike)"
                .to_string()),
            false => Ok(fitted),
        }
    });
    let estimate = |fitted: &Result<_, String>, person: u64| {
        let a: &crate::domain::aggregate::Aggregation = fitted.as_ref().ok()?;
        let p = a.person(person)?;
        // A row with no mass is a truth none of the person's items was fitted to.
        let row = |r: &Vec<f64>| (r.iter().sum::<f64>() > 1e-9).then(|| r.clone());
        let confusion = p.confusion.as_ref().map(|rows| rows.iter().map(row).collect());
        Some(Estimate { accuracy: p.accuracy, confusion, competence: p.competence })
    };
    out.annotators = annotator_confusion(ratings, &settled, k)
        .into_iter()
        .map(|a| AnnotatorOut {
            name: name(a.annotator),
            answers: a.answers,
            settled: a.settled,
            agreed: a.agreed,
            accuracy_vs_outcome: a.accuracy,
            confusion_vs_outcome: a.confusion,
            dawid_skene: estimate(&ds, a.annotator),
            mace: estimate(&mace, a.annotator),
        })
        .collect();
    out.dawid_skene_reason = ds.err();
    out.mace_reason = mace.err();
    Ok(out)
}
