//! What the research page, the API and the dashboard show of a study's adaptive overlap.
use super::{Adaptive, Reason, Stop};
use crate::domain::ids::StudyId;
use crate::domain::resolution::{PosteriorModel, ResolvedBy};
use serde::{Deserialize, Serialize};

/// Per item: what the research page and API show. `value`, `resolved_by`
/// and `posterior` are the item's settled outcome, the same wherever it is
/// read (rows files, funnel, research page); `None` while it is open.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveItem {
    pub instance_id: i64,
    /// Answers counted so far.
    pub answers: i64,
    /// Answers asked for so far (`min`, plus one per round that did not stop).
    pub wanted: i64,
    /// None while it is still collecting.
    pub reason: Option<Reason>,
    pub value: Option<String>,
    pub resolved_by: Option<ResolvedBy>,
    pub posterior: Option<f64>,
    /// Which model gave `posterior`: their posteriors are not comparable.
    pub posterior_model: Option<PosteriorModel>,
    /// What the stop rule stopped on (`agreed`, `confident`) and its
    /// posterior under the earned reliabilities; the export's `stop_value`.
    #[serde(skip)]
    pub stop: Option<(String, f64)>,
}

/// An item the stop rule settled that the final crowd model is nearly
/// certain is something else. The rule's value stands (a stopping rule's
/// decision is not silently overturned); the researcher may adjudicate it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Doubtful {
    pub instance_id: i64,
    pub rule_value: String,
    pub model: PosteriorModel,
    pub model_value: String,
    pub model_posterior: f64,
}

/// The model's posterior for another value at which a stop is doubtful.
pub const DOUBT_POSTERIOR: f64 = 0.95;

/// A study's adaptive overlap at a glance: answers spent against the same
/// items at a fixed overlap of `max` (the most any item may get here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdaptiveReport {
    pub study_id: StudyId,
    pub settings: Adaptive,
    pub items: Vec<AdaptiveItem>,
    pub answers_spent: i64,
    pub fixed_answers: i64,
    /// `1 - spent / fixed`, over stopped items only (in-flight ones would flatter it).
    pub saved_share: Option<f64>,
    pub stopped: StopCounts,
    /// Stops the final crowd model doubts ([`Doubtful`]); filled where the
    /// outcomes are settled (not for the dashboard's savings).
    #[serde(default)]
    pub doubtful: Vec<Doubtful>,
    /// Under `stop = "posterior"`, why the threshold may not hold here
    /// ([`calibration_warning`]); None when the study is like those it was
    /// calibrated on, or under `stop = "agree"`.
    #[serde(default)]
    pub calibration_warning: Option<String>,
    /// Places adaptive overlap ended as carrying no information, and their
    /// counted answers: counted everywhere answers are counted (the card,
    /// agreement, `answers_spent`), left out of the crowd model and the
    /// export's answers file.
    #[serde(default)]
    pub ended_uninformative: LeftOut,
}

/// See [`AdaptiveReport::ended_uninformative`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    pub places: i64,
    pub answers: i64,
}

/// Below these a posterior threshold is not yet the promise it reads as:
/// measured calibrated on 600-item crowds, in bundles of 20 and of 5, with
/// up to 60 % spammers, confusers and adversaries (docs/performance.md,
/// sessions 21 and 38); but a served study of 140 items in 5-item bundles,
/// with 38 % random answerers, still stopped items at 0.95 right on 82 %
/// on one of three seeds (77 % before session 38's fit).
pub const CALIBRATED_ITEMS: usize = 100;
pub const CALIBRATED_ANSWERS_PER_PERSON: usize = 15;

/// Why a study's posterior threshold may not hold: too few items, a median
/// person with too few counted answers (`answers_per_person`, once someone
/// has answered), or a link study (`gold` is its gold item count; None for
/// account studies, which cannot have any) without gold items. None under
/// `stop = "agree"`.
pub fn calibration_warning(
    settings: &Adaptive,
    items: usize,
    answers_per_person: &[i64],
    gold: Option<usize>,
) -> Option<String> {
    let Stop::Posterior { threshold } = settings.stop else { return None };
    let mut per: Vec<i64> = answers_per_person.to_vec();
    per.sort_unstable();
    let median = per.get(per.len() / 2).copied();
    let few_answers = median.filter(|&m| (m as usize) < CALIBRATED_ANSWERS_PER_PERSON);
    let mut why = Vec::new();
    if items < CALIBRATED_ITEMS {
        why.push(format!("{items} items (under {CALIBRATED_ITEMS})"));
    }
    if let Some(m) = few_answers {
        why.push(format!("a median of {m} answers per person (under {CALIBRATED_ANSWERS_PER_PERSON})"));
    }
    let mut out = Vec::new();
    if !why.is_empty() {
        out.push(format!(
            "{}: each person's reliability stays close to the crowd's, so items stopped at posterior ≥ {threshold} \
             may be right less often than that, most of all with spammers, confusers or adversaries in the crowd; \
             check a sample by hand, or use larger bundles or a fixed overlap (docs/study-spec.md)",
            why.join(" and ")
        ));
    }
    if gold == Some(0) {
        out.push(no_gold_warning(threshold));
    }
    (!out.is_empty()).then(|| out.join(". "))
}

/// Without gold, people who agree on a wrong value (confusers who swap two
/// values, adversaries who answer another one on purpose) cannot be told
/// from careful ones who agree: the one limit no fit removes, measured in
/// served audits (docs/study-spec.md, "when not to use").
pub fn no_gold_warning(threshold: f64) -> String {
    format!(
        "no gold items (link.gold): people who consistently swap two values or answer another value on purpose \
         look as reliable as careful people where they agree, so items stopped at posterior ≥ {threshold} may be \
         right less often than that (an audit of such a crowd: 86.7 % of stops at 0.95); add a few gold items, \
         or adjudicate a sample (docs/study-spec.md)"
    )
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopCounts {
    pub agreed: i64,
    pub confident: i64,
    pub max: i64,
    pub collecting: i64,
}

impl AdaptiveReport {
    pub fn new(study_id: StudyId, settings: Adaptive, items: Vec<AdaptiveItem>) -> AdaptiveReport {
        let mut stopped = StopCounts::default();
        let (mut spent_done, mut done) = (0i64, 0i64);
        for it in &items {
            match it.reason {
                Some(Reason::Agreed) => stopped.agreed += 1,
                Some(Reason::Confident) => stopped.confident += 1,
                Some(Reason::Max) => stopped.max += 1,
                None => stopped.collecting += 1,
            }
            if it.reason.is_some() {
                spent_done += it.answers;
                done += 1;
            }
        }
        let answers_spent = items.iter().map(|i| i.answers).sum();
        let fixed_answers = items.len() as i64 * settings.max as i64;
        let saved_share = (done > 0).then(|| 1.0 - spent_done as f64 / (done * settings.max as i64) as f64);
        AdaptiveReport {
            study_id,
            settings,
            items,
            answers_spent,
            fixed_answers,
            saved_share,
            stopped,
            doubtful: vec![],
            calibration_warning: None,
            ended_uninformative: LeftOut::default(),
        }
    }

    /// The report without its items, for the live dashboard.
    pub fn savings(&self) -> Savings {
        Savings {
            max: self.settings.max,
            answers_spent: self.answers_spent,
            fixed_answers: self.fixed_answers,
            saved_share: self.saved_share,
            stopped: self.stopped.clone(),
        }
    }
}

/// An adaptive study's spending: answers spent against items × `max`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Savings {
    pub max: usize,
    pub answers_spent: i64,
    pub fixed_answers: i64,
    pub saved_share: Option<f64>,
    pub stopped: StopCounts,
}
