//! What the program knows about a survey kind: one [`KindSpec`] declared in
//! the kind's own folder (`src/kinds/`), reached through the [`SurveyKind`] handle. Studies,
//! assignment, the pipeline, adjudication, scoring and the UI ask the
//! descriptor; none of them names a kind.
use super::{ItemData, Presentation, SurveyError, Verdict};
use crate::domain::answer_text::{check_texts, TextError, TextField};
use crate::domain::metrics::Outcome;
use serde::{Serialize, Serializer};

/// Everything about one survey kind.
pub struct KindSpec {
    /// The name stored in the database, written in specs and sent over the wire.
    pub name: &'static str,
    /// The paper's instructions, used when a spec gives none.
    pub instructions: &'static str,
    /// The values an answer can take, in a fixed order (distributions, agreement, adjudication).
    pub values: &'static [&'static str],
    /// Turns an item into what the annotator sees, options in a seeded order.
    pub present: fn(&ItemData, u64) -> Result<Presentation, SurveyError>,
    /// Reads what an annotator sent into the option ids and value to store
    /// (`survey::one_option` for one option; a ranking reads an order).
    pub answer: AnswerFn,
    pub role: Role,
    /// The kinds whose survivors may become this kind's items, preferred first;
    /// empty: the items are the dataset's instances.
    pub sources: &'static [SurveyKind],
    /// The questions asked about each item, in parts asked one after the other
    /// (one question: `&[&[0]]`; the human baseline: I2T then T2I).
    pub questions: &'static [&'static [u8]],
    /// What `present` reads from an item beyond its captions.
    pub needs: Needs,
    /// Whether a researcher settles disagreements on its answers.
    pub adjudicated: bool,
    /// The people every item must have, when the kind's protocol fixes it
    /// (SugarCrepe++'s two experts): a spec that gives another number is
    /// refused ([`crate::domain::study::check_raters`]).
    pub raters: Option<usize>,
    /// How the kind makes an instructional attention check (docs/crowd.md).
    pub attention: Attention,
    /// The free-text parts an answer may carry, by name (docs/study-spec.md, "Free-text answers").
    pub texts: &'static [TextField],
}

/// An instructional attention check, as Prolific's policy describes them:
/// an ordinary item of the kind's first question whose prompt is replaced by
/// an instruction naming the option to pick. It tests reading, not judgement.
pub struct Attention {
    /// Stored values a check may ask for: each is an option of every item's first question.
    pub targets: &'static [&'static str],
    /// Shown instead of the prompt; `{option}` becomes the label of the option to pick.
    pub instruction: &'static str,
}

/// Reads an answer against the presentation it was given on: (option ids, stored value).
pub type AnswerFn = fn(&Presentation, &str) -> Result<(String, String), SurveyError>;

/// Winoground's outcome of one annotator on one item, from the answers to
/// each question (indexed by query); None until all are in.
pub type OutcomeFn = fn(&[Option<&str>]) -> Option<Outcome>;

/// A kind's place in the work: curating instances, measuring people against
/// Winoground's scores, or a protocol whose answers are reported as statistics.
pub enum Role {
    Curation(Curation),
    /// Answers score the annotators (BiVLC's human baseline); they keep or drop nothing.
    Measurement {
        outcome: OutcomeFn,
        /// Each query's name, in query order (Winoground's `Outcome` fields).
        queries: &'static [&'static str],
    },
    /// Answers are summed up per subset (type/subtype) as the protocol's paper
    /// reports them; they keep or drop nothing and feed no model comparison.
    Report(Report),
}

/// The statistics a [`Role::Report`] kind's answers give: shared ones,
/// which several kinds give, or the kind's own.
pub enum Report {
    /// Human accuracy per subset: an answer is right when it stores `correct`
    /// (SugarCrepe++: the annotator found the hard negative).
    Accuracy {
        correct: &'static str,
        /// The paper's name for the setting ("ITT", "TOT").
        setting: &'static str,
    },
    /// Which of two sources' negatives is better, per subset and criterion,
    /// with a sign test (SugarCrepe's Table 9). A stored value is
    /// `<criterion>_a`, `<criterion>_b` or `<criterion>_tie`; a and b are
    /// the item's negatives as imported, mapped to their sources.
    Preference { criteria: &'static [&'static str] },
    /// Statistics of the kind's own, computed by its folder's server part
    /// (the ranking's Kendall's W, the triplet check's valid share...).
    Own,
}

/// A curation step of the pipeline.
pub struct Curation {
    /// Order in the pipeline (BiVLC: 3, then 4).
    pub step: u8,
    /// What researchers call it ("Step 3").
    pub label: &'static str,
    /// What a final stored value means for the instance.
    pub verdict: fn(&str) -> Option<Verdict>,
    /// Agreement categories under the binary mapping: (keeps, drops).
    pub binary: (&'static str, &'static str),
    /// Report agreement with the binary mapping unless the spec says otherwise.
    pub binary_by_default: bool,
    /// The generated image a kept instance carries into the next stage.
    pub carried_image: fn(&ItemData, &str) -> Option<String>,
    /// The candidate slot a final value chose, where the step chooses among
    /// candidates (the export's negative image); None for values that choose none.
    pub chosen_slot: fn(&str) -> Option<usize>,
}

impl Curation {
    /// The value that says what a dataset's known matches say (a gold item
    /// written without `answer`): the value choosing the one matching
    /// candidate slot, or the one discarding the item when none matches.
    /// None where the kind's values cannot say it: several match, or its
    /// values choose no candidate.
    pub fn known_value(&self, values: &[&'static str], matching: &[usize]) -> Option<&'static str> {
        if !values.iter().any(|v| (self.chosen_slot)(v).is_some()) {
            return None;
        }
        match matching {
            [] => values.iter().find(|v| (self.verdict)(v) == Some(Verdict::Discarded)).copied(),
            [slot] => values.iter().find(|v| (self.chosen_slot)(v) == Some(*slot)).copied(),
            _ => None,
        }
    }
}

/// Item data a kind reads (the captions always come).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// Candidate images, between these many (inclusive).
    pub candidates: Option<(usize, usize)>,
    pub positive_image: bool,
    /// The generated image a source study chose (items taken from a source).
    pub chosen_image: bool,
    /// A second positive caption meaning the same as the first (SugarCrepe++'s P2).
    pub paraphrase: bool,
    /// A second hard negative, from another source (SugarCrepe's A/B/Tie).
    pub negative_b: bool,
    /// The caption and its hard negative, neither blank (a kind that shows
    /// either; the others may be blank in a dataset imported for another kind).
    pub captions: bool,
    /// An assigned caption type (HNC's writing).
    pub caption_type: bool,
}

/// A registered survey kind: a small handle on its descriptor. Two handles
/// are equal when they name the same kind.
#[derive(Clone, Copy)]
pub struct SurveyKind(&'static KindSpec);

impl SurveyKind {
    /// A handle on a descriptor; the registry and tests make these.
    pub const fn of(spec: &'static KindSpec) -> SurveyKind {
        SurveyKind(spec)
    }

    /// Looks a name up in a given list of kinds (tests add their own).
    pub fn parse_in(kinds: &[SurveyKind], s: &str) -> Option<SurveyKind> {
        kinds.iter().copied().find(|k| k.name() == s)
    }

    /// The kinds in a given list that measure people.
    pub fn measurements_in(kinds: &[SurveyKind]) -> impl Iterator<Item = SurveyKind> + '_ {
        kinds.iter().copied().filter(|k| k.outcome_fn().is_some())
    }

    /// The first curation step in a given list: the one whose items are the dataset's instances.
    pub fn first_step_in(kinds: &[SurveyKind]) -> Option<SurveyKind> {
        steps_in(kinds).find(|k| k.0.sources.is_empty())
    }

    /// The curation step in a given list that checks this step's survivors.
    pub fn next_step_in(self, kinds: &[SurveyKind]) -> Option<SurveyKind> {
        let step = self.curation()?.step;
        steps_in(kinds).filter(|k| k.0.sources.contains(&self)).find(|k| k.curation().is_some_and(|c| c.step > step))
    }

    pub fn spec(self) -> &'static KindSpec {
        self.0
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub fn as_str(self) -> &'static str {
        self.0.name
    }

    pub fn default_instructions(self) -> &'static str {
        self.0.instructions
    }

    pub fn values(self) -> &'static [&'static str] {
        self.0.values
    }

    pub fn present(self, item: &ItemData, seed: u64) -> Result<Presentation, SurveyError> {
        (self.0.present)(item, seed)
    }

    /// The value that discards an item (Step 3's None), where the kind has
    /// one: the research page's "None share", a gold item's answer when no
    /// candidate matches.
    pub fn discarding_value(self) -> Option<&'static str> {
        let c = self.curation()?;
        self.values().iter().copied().find(|v| (c.verdict)(v) == Some(Verdict::Discarded))
    }

    pub fn curation(self) -> Option<&'static Curation> {
        match &self.0.role {
            Role::Curation(c) => Some(c),
            Role::Measurement { .. } | Role::Report(_) => None,
        }
    }

    /// Winoground scoring of a kind that measures people.
    pub fn outcome_fn(self) -> Option<OutcomeFn> {
        match self.0.role {
            Role::Measurement { outcome, .. } => Some(outcome),
            Role::Curation(_) | Role::Report(_) => None,
        }
    }

    /// The statistics a reporting kind's answers give.
    pub fn report(self) -> Option<&'static Report> {
        match &self.0.role {
            Role::Report(r) => Some(r),
            Role::Curation(_) | Role::Measurement { .. } => None,
        }
    }

    /// The option ids and value to store for what an annotator sent: one
    /// option's id, or for a ranking kind an order of all of them.
    pub fn answer(self, p: &Presentation, option: &str) -> Result<(String, String), SurveyError> {
        (self.0.answer)(p, option)
    }

    /// The text to store with an answer storing `value`, for a kind with
    /// one text field (the triplet check); see [`SurveyKind::answer_texts`].
    pub fn answer_text(self, value: &str, text: Option<&str>) -> Result<Option<String>, TextError> {
        let name = self.text_field().map_or("text", |f| f.name);
        let given: Vec<(&str, &str)> = text.map(|t| (name, t)).into_iter().collect();
        Ok(self.answer_texts(value, &given)?.into_iter().next().map(|(_, t)| t))
    }

    /// The texts to store with an answer storing `value`, given by field
    /// name, checked against the kind's text fields; a kind without any takes no text.
    pub fn answer_texts(self, value: &str, given: &[(&str, &str)]) -> Result<Vec<(&'static str, String)>, TextError> {
        check_texts(self.0.texts, value, given).map_err(|e| match self.0.texts.is_empty() {
            true => TextError { field: "text", label: "", reason: format!("a {} answer carries no text", self.0.name) },
            false => e,
        })
    }

    /// The kind's text field when it has exactly one (what a dispute's text settles).
    pub fn text_field(self) -> Option<&'static TextField> {
        match self.0.texts {
            [one] => Some(one),
            _ => None,
        }
    }

    /// The verdict a final stored value gives the instance (curation kinds only).
    pub fn verdict(self, value: &str) -> Option<Verdict> {
        (self.curation()?.verdict)(value)
    }

    /// The category agreement uses under the binary mapping: does the answer
    /// keep the instance or not (BiVLC's Step 3 kappa: any image vs None).
    pub fn binary_category(self, value: &str) -> Option<&'static str> {
        let (keeps, drops) = self.curation()?.binary;
        Some(if self.verdict(value)?.keeps() { keeps } else { drops })
    }

    /// Whether agreement has a binary reading (keep vs drop): curation kinds only.
    pub fn has_binary_agreement(self) -> bool {
        self.curation().is_some()
    }

    pub fn default_binary_agreement(self) -> bool {
        self.curation().is_some_and(|c| c.binary_by_default)
    }

    /// "Step 3" for curation steps, the kind's name otherwise.
    pub fn label(self) -> &'static str {
        self.curation().map_or(self.0.name, |c| c.label)
    }

    /// The kind's item as an attention check asking for the option whose stored value is `target`.
    pub fn attention_check(self, item: &ItemData, seed: u64, target: &str) -> Result<Presentation, SurveyError> {
        let mut p = self.present(item, seed)?;
        let label = p.options.iter().find(|o| o.value == target).map(|o| o.label.clone()).ok_or_else(|| {
            SurveyError::BadItem(format!("no option stores {target:?}, so no attention check can ask for it"))
        })?;
        p.prompt_text = self.0.attention.instruction.replace("{option}", &label);
        Ok(p)
    }

    pub fn question_count(self) -> usize {
        self.0.questions.iter().map(|p| p.len()).sum()
    }

    /// Each question's name, in query order: the criteria of a preference
    /// report, the queries of a measurement, else "question N" (from 1).
    pub fn question_names(self) -> Vec<String> {
        let named: &[&str] = match &self.0.role {
            Role::Report(Report::Preference { criteria }) => criteria,
            Role::Measurement { queries, .. } => queries,
            Role::Report(_) | Role::Curation(_) => &[],
        };
        (0..self.question_count())
            .map(|q| named.get(q).map_or(format!("question {}", q + 1), |n| n.to_string()))
            .collect()
    }

    /// The stored values question `query` can take, in the kind's value
    /// order: the options of a sample item asking it (all values if no
    /// sample can be shown).
    pub fn question_values(self, query: u8) -> Vec<&'static str> {
        let text = |s: &str| Some(s.to_string());
        let sample = ItemData {
            caption: "caption".into(),
            negative_caption: "negative".into(),
            positive_image: text("positive"),
            candidate_images: (0..4).map(|i| format!("candidate{i}")).collect(),
            chosen_image: text("chosen"),
            paraphrase: text("paraphrase"),
            negative_b: text("negative b"),
            caption_type: text("caption type"),
            query,
        };
        match self.present(&sample, 0) {
            Ok(p) => self.0.values.iter().copied().filter(|v| p.options.iter().any(|o| o.value == *v)).collect(),
            Err(_) => self.0.values.to_vec(),
        }
    }
}

/// The curation kinds of a list, in step order.
fn steps_in(kinds: &[SurveyKind]) -> impl Iterator<Item = SurveyKind> {
    let mut steps: Vec<SurveyKind> = kinds.iter().copied().filter(|k| k.curation().is_some()).collect();
    steps.sort_by_key(|k| k.curation().map(|c| c.step));
    steps.into_iter()
}

impl PartialEq for SurveyKind {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for SurveyKind {}

impl std::hash::Hash for SurveyKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.name.hash(state)
    }
}

impl std::fmt::Debug for SurveyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

impl std::fmt::Display for SurveyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

impl Serialize for SurveyKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.name)
    }
}

#[cfg(test)]
#[path = "kind_tests.rs"]
mod tests;
