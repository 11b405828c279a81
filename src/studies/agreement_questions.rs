//! Agreement per question for kinds that ask several about one item
//! (A/B/Tie: commonsense and grammar), each with its own categories: the
//! values its options store; and the parts the totals share with them.
use crate::domain::agreement::{
    bootstrap_agreement, of_question, study_agreement, CategoryMap, PairReport, QuestionRating, StudyAgreement,
};
use crate::domain::study::Mapping;
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::studies::agreement_detail::BootstrapOut;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct PairOut {
    pub a: String,
    pub b: String,
    pub n: usize,
    pub observed: f64,
    pub expected: f64,
    pub kappa: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kappa_reason: Option<String>,
    pub confusion: Vec<Vec<u64>>,
}

/// The figures a study's agreement and each question's share: categories,
/// pairs, mean Cohen's κ, Fleiss' κ, Krippendorff's α, each with why it is
/// undefined. Flattened into both, so the JSON names them at the top.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub categories: Vec<String>,
    pub pairs: Vec<PairOut>,
    pub mean_kappa: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_kappa_reason: Option<String>,
    pub fleiss_kappa: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleiss_reason: Option<String>,
    pub krippendorff_alpha: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha_reason: Option<String>,
}

impl Figures {
    pub(super) fn of(s: StudyAgreement, categories: &[String], name: &dyn Fn(u64) -> String) -> Figures {
        Figures {
            categories: categories.to_vec(),
            pairs: pairs_out(s.pairs, name),
            mean_kappa: s.mean_kappa,
            mean_kappa_reason: s.mean_kappa_reason,
            fleiss_kappa: s.fleiss_kappa,
            fleiss_reason: s.fleiss_reason,
            krippendorff_alpha: s.krippendorff_alpha,
            alpha_reason: s.alpha_reason,
        }
    }
}

/// One question's agreement, named as the kind names it.
#[derive(Debug, Clone, Serialize)]
pub struct QuestionOut {
    pub question: String,
    #[serde(flatten)]
    pub figures: Figures,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap: Option<BootstrapOut>,
}

/// `rows` are `(instance, query, user, value)` as stored; `bootstrap` is
/// `(resamples, seed)` for the detailed report (0 resamples: none).
pub(super) fn per_question(
    kind: SurveyKind,
    mapping: Mapping,
    rows: &[(i64, i64, i64, String)],
    name: &dyn Fn(u64) -> String,
    bootstrap: Option<(usize, u64)>,
) -> Result<Vec<QuestionOut>, ServiceError> {
    let mut out = Vec::new();
    for (q, question) in kind.question_names().into_iter().enumerate() {
        let map = category_map(kind, mapping, &kind.question_values(q as u8))?;
        let mut ratings: Vec<QuestionRating> = Vec::new();
        for (item, query, user, value) in rows.iter().filter(|r| r.1 == q as i64) {
            let category = map.map(value).ok_or_else(|| {
                ServiceError::Internal(format!("stored value {value:?} is not an answer to question {question}"))
            })?;
            ratings.push((*item as u64, *query as u8, *user as u64, category));
        }
        let ratings = of_question(&ratings, q as u8);
        let s = study_agreement(&ratings, map.len());
        let bootstrap = bootstrap
            .filter(|&(resamples, _)| resamples > 0)
            .map(|(resamples, seed)| bootstrap_agreement(&ratings, map.len(), resamples, seed).map_annotators(name));
        out.push(QuestionOut { question, figures: Figures::of(s, map.names(), name), bootstrap });
    }
    Ok(out)
}

/// The categories of `values` (the kind's, or one question's) under `mapping`.
pub(super) fn category_map(
    kind: SurveyKind,
    mapping: Mapping,
    values: &[&'static str],
) -> Result<CategoryMap, ServiceError> {
    // A kind without a fixed set of values (ranking) stores orders.
    if kind.values().is_empty() {
        return Err(ServiceError::Invalid(format!(
            "{kind} answers are orders, not categories: their agreement is Kendall's W in the study's report"
        )));
    }
    match mapping {
        Mapping::Full => Ok(CategoryMap::identity(values)),
        Mapping::Binary if !kind.has_binary_agreement() => Err(ServiceError::Invalid(format!(
            "{kind} has no binary reading (an answer that keeps or drops an item): ask for mapping=full"
        ))),
        Mapping::Binary => {
            let mut pairs = Vec::with_capacity(values.len());
            for v in values {
                let c = kind
                    .binary_category(v)
                    .ok_or_else(|| ServiceError::Internal(format!("value {v:?} has no verdict")))?;
                pairs.push((*v, c));
            }
            Ok(CategoryMap::grouped(&pairs))
        }
    }
}

/// The pairs of a study's agreement with the annotators named.
fn pairs_out(pairs: Vec<PairReport>, name: &dyn Fn(u64) -> String) -> Vec<PairOut> {
    pairs
        .into_iter()
        .map(|p| PairOut {
            a: name(p.a),
            b: name(p.b),
            n: p.agreement.n,
            observed: p.agreement.observed,
            expected: p.agreement.expected,
            kappa: p.agreement.kappa,
            kappa_reason: p.agreement.kappa_undefined_reason,
            confusion: p.agreement.confusion,
        })
        .collect()
}
