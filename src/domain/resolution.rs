//! When an item's answers are final, and what they decide. Agreement uses
//! every answer; the pipeline needs one value per item, so a study says how a
//! disagreement is settled (BiVLC kept a doubly-annotated item's fate open
//! until it was resolved).
use super::aggregate::Model;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolveRule {
    /// The earliest answer wins.
    First,
    /// The designated primary annotator's answer wins (in pairs: the first of the pair).
    Primary,
    /// A researcher decides every disagreement.
    #[default]
    Adjudication,
    /// The most probable label under Dawid–Skene over the whole study
    /// (`domain::aggregate`); every complete item is settled by the model.
    DawidSkene,
    /// The most probable label under MACE, likewise.
    Mace,
}

impl ResolveRule {
    pub const ALL: [ResolveRule; 5] = [
        ResolveRule::First,
        ResolveRule::Primary,
        ResolveRule::Adjudication,
        ResolveRule::DawidSkene,
        ResolveRule::Mace,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ResolveRule::First => "first",
            ResolveRule::Primary => "primary",
            ResolveRule::Adjudication => "adjudication",
            ResolveRule::DawidSkene => "dawid_skene",
            ResolveRule::Mace => "mace",
        }
    }

    /// The aggregation model behind a model rule.
    pub fn model(self) -> Option<Model> {
        match self {
            ResolveRule::DawidSkene => Some(Model::DawidSkene),
            ResolveRule::Mace => Some(Model::Mace),
            _ => None,
        }
    }

    /// Every rule name, for error messages.
    pub fn names() -> String {
        ResolveRule::ALL.map(ResolveRule::as_str).join(", ")
    }

    pub fn parse(s: &str) -> Option<ResolveRule> {
        ResolveRule::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// One stored answer to an item; `order` is its place in time (earlier is smaller).
#[derive(Debug, Clone, PartialEq)]
pub struct ItemAnswer<'a> {
    pub annotator: i64,
    pub value: &'a str,
    pub order: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolvedBy {
    Single,
    Unanimous,
    First,
    Primary,
    Adjudication,
    DawidSkene,
    Mace,
    /// Adaptive overlap's stop rule (`agree` or `posterior`) settled it.
    Adaptive,
}

impl From<Model> for ResolvedBy {
    fn from(m: Model) -> Self {
        match m {
            Model::DawidSkene => ResolvedBy::DawidSkene,
            Model::Mace => ResolvedBy::Mace,
        }
    }
}

/// Which model gave a settled value's posterior. Their posteriors are not
/// comparable, so every reported posterior names its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PosteriorModel {
    /// Adaptive overlap's stop rule: each person's earned reliability
    /// (`domain::adaptive::reliability`).
    EarnedReliability,
    DawidSkene,
    Mace,
}

impl PosteriorModel {
    pub fn as_str(self) -> &'static str {
        match self {
            PosteriorModel::EarnedReliability => "earned_reliability",
            PosteriorModel::DawidSkene => "dawid_skene",
            PosteriorModel::Mace => "mace",
        }
    }
}

impl From<Model> for PosteriorModel {
    fn from(m: Model) -> Self {
        match m {
            Model::DawidSkene => PosteriorModel::DawidSkene,
            Model::Mace => PosteriorModel::Mace,
        }
    }
}

/// A settled value's posterior and the model that gave it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Posterior {
    pub value: f64,
    pub model: PosteriorModel,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ItemState {
    /// Still waiting for answers.
    Pending {
        answered: usize,
        expected: usize,
    },
    Final {
        value: String,
        by: ResolvedBy,
    },
    /// Answers disagree and the rule leaves the decision to a researcher.
    Disputed {
        values: Vec<String>,
    },
}

/// Settles one item. `expected` is how many answers the plan asks for;
/// `primary` is the annotator whose answer wins under [`ResolveRule::Primary`];
/// an adjudicated value overrides everything. Under a model rule an item is
/// settled here as under adjudication: the caller replaces complete items'
/// states with the model's labels, and this is what stands when the model
/// cannot run (e.g. too few answers per person).
pub fn resolve(
    answers: &[ItemAnswer<'_>],
    expected: usize,
    rule: ResolveRule,
    primary: Option<i64>,
    adjudicated: Option<&str>,
) -> ItemState {
    if let Some(v) = adjudicated {
        return ItemState::Final { value: v.to_string(), by: ResolvedBy::Adjudication };
    }
    let expected = expected.max(1);
    if answers.len() < expected {
        return ItemState::Pending { answered: answers.len(), expected };
    }
    let first = answers.iter().min_by_key(|a| a.order).expect("at least one answer");
    if answers.iter().all(|a| a.value == first.value) {
        let by = if answers.len() == 1 { ResolvedBy::Single } else { ResolvedBy::Unanimous };
        return ItemState::Final { value: first.value.to_string(), by };
    }
    match rule {
        ResolveRule::First => ItemState::Final { value: first.value.to_string(), by: ResolvedBy::First },
        ResolveRule::Primary => match answers.iter().find(|a| Some(a.annotator) == primary) {
            Some(a) => ItemState::Final { value: a.value.to_string(), by: ResolvedBy::Primary },
            None => disputed(answers),
        },
        ResolveRule::Adjudication | ResolveRule::DawidSkene | ResolveRule::Mace => disputed(answers),
    }
}

fn disputed(answers: &[ItemAnswer<'_>]) -> ItemState {
    let mut values: Vec<String> = answers.iter().map(|a| a.value.to_string()).collect();
    values.sort();
    values.dedup();
    ItemState::Disputed { values }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(annotator: i64, value: &str, order: i64) -> ItemAnswer<'_> {
        ItemAnswer { annotator, value, order }
    }

    fn fin(value: &str, by: ResolvedBy) -> ItemState {
        ItemState::Final { value: value.into(), by }
    }

    #[test]
    fn waits_for_every_expected_answer() {
        assert_eq!(resolve(&[], 1, ResolveRule::First, None, None), ItemState::Pending { answered: 0, expected: 1 });
        assert_eq!(
            resolve(&[a(1, "2", 5)], 2, ResolveRule::First, None, None),
            ItemState::Pending { answered: 1, expected: 2 }
        );
        // A plan that asks for nobody still needs one answer before anything is final.
        assert_eq!(resolve(&[], 0, ResolveRule::First, None, None), ItemState::Pending { answered: 0, expected: 1 });
    }

    #[test]
    fn agreement_is_final_whatever_the_rule() {
        for rule in ResolveRule::ALL {
            assert_eq!(resolve(&[a(1, "none", 1)], 1, rule, None, None), fin("none", ResolvedBy::Single));
            assert_eq!(resolve(&[a(1, "3", 9), a(2, "3", 4)], 2, rule, None, None), fin("3", ResolvedBy::Unanimous));
        }
    }

    #[test]
    fn disagreement_follows_the_rule() {
        let answers = [a(7, "none", 20), a(3, "1", 10)];
        assert_eq!(resolve(&answers, 2, ResolveRule::First, None, None), fin("1", ResolvedBy::First));
        assert_eq!(resolve(&answers, 2, ResolveRule::Primary, Some(7), None), fin("none", ResolvedBy::Primary));
        assert_eq!(
            resolve(&answers, 2, ResolveRule::Primary, Some(99), None),
            ItemState::Disputed { values: vec!["1".into(), "none".into()] },
            "a primary who did not answer cannot settle it"
        );
        for rule in [ResolveRule::Adjudication, ResolveRule::DawidSkene, ResolveRule::Mace] {
            assert_eq!(
                resolve(&answers, 2, rule, None, None),
                ItemState::Disputed { values: vec!["1".into(), "none".into()] },
                "{rule:?} falls back to adjudication"
            );
        }
    }

    #[test]
    fn an_adjudicated_value_overrides() {
        let answers = [a(7, "none", 20), a(3, "1", 10)];
        assert_eq!(
            resolve(&answers, 2, ResolveRule::Adjudication, None, Some("none")),
            fin("none", ResolvedBy::Adjudication)
        );
    }

    #[test]
    fn rule_names_round_trip() {
        for r in ResolveRule::ALL {
            assert_eq!(ResolveRule::parse(r.as_str()), Some(r));
        }
        assert_eq!(ResolveRule::default(), ResolveRule::Adjudication);
        assert_eq!(ResolveRule::parse("vote"), None);
        assert_eq!(ResolveRule::names(), "first, primary, adjudication, dawid_skene, mace");
        assert_eq!(ResolveRule::parse("dawid_skene").and_then(ResolveRule::model), Some(Model::DawidSkene));
        assert_eq!(ResolveRule::Mace.model().map(ResolvedBy::from), Some(ResolvedBy::Mace));
        assert_eq!(ResolveRule::First.model(), None);
    }
}
