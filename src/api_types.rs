//! The shapes that cross the wire: JSON API v1 bodies and server-function
//! results. Shared by server and browser, so they stay plain data. Ids are
//! typed (`domain::ids`, serde-transparent: the JSON holds the bare number).
use crate::domain::ids::{InstanceId, StudyId, TaskId, UserId};
use crate::domain::survey::SurveyKind;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudySummary {
    pub id: StudyId,
    pub name: String,
    pub kind: SurveyKind,
    pub dataset: String,
    pub instructions: String,
    pub progress: Option<Progress>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Progress {
    pub done: i64,
    pub total: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptionView {
    pub id: String,
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Keys that pick this option.
    pub keys: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskView {
    pub task_id: TaskId,
    pub study_id: StudyId,
    pub kind: SurveyKind,
    pub instructions: String,
    /// The instructions are this item's own (they change within the survey,
    /// as the human baseline's two parts do): shown above it, not folded away.
    #[serde(default)]
    pub item_instructions: bool,
    pub prompt: Prompt,
    pub options: Vec<OptionView>,
    pub progress: Progress,
    /// Image URLs of the task after this one, for the browser to fetch early.
    pub prefetch: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerRequest {
    pub option: String,
    #[serde(default)]
    pub elapsed_ms: Option<i64>,
    /// The free-text part, for a kind that declares one (the triplet check's corrected P2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The free-text parts by field name, for a kind that declares several
    /// (HNC's caption writing: `positive`, `negative`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub texts: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerAck {
    pub task_id: TaskId,
    /// The option stored for the task: the first answer wins on a repeat.
    pub option: String,
    pub duplicate: bool,
}

/// `POST …/answer?next=true`: the acknowledgement and, in the same response,
/// the task `next` would now give (`None`: nothing left to answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerAckNext {
    pub task_id: TaskId,
    pub option: String,
    pub duplicate: bool,
    pub next: Option<TaskView>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnnotatorProgress {
    pub username: String,
    pub done: i64,
    pub total: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptionCount {
    pub option: String,
    pub count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyProgress {
    pub study_id: StudyId,
    pub name: String,
    pub kind: SurveyKind,
    pub items: i64,
    pub annotators: Vec<AnnotatorProgress>,
    /// Annotators left out of `annotators` (the research page shows the
    /// first few hundred of a link study's participants); none in the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotators_not_shown: Option<usize>,
    pub answers: i64,
    /// Answers per shown option, in the kind's option order.
    pub distribution: Vec<OptionCount>,
    /// Share of "None" answers among all answers (0..1), when any exist.
    pub none_share: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserSummary {
    pub id: UserId,
    pub username: String,
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Me {
    pub username: String,
    pub role: String,
    pub home: String,
}

/// Models against humans and chance on one dataset (percentages, 2 decimals).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareReport {
    pub dataset: String,
    /// The curation stage the models were restricted to (`stage=`); none: every instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    pub models: Vec<ModelScores>,
    /// One row per human-baseline study, then "Human (all)" when two or
    /// more have complete answers; empty when the dataset has no baseline.
    pub humans: Vec<HumanRow>,
    pub random: crate::domain::metrics::Scores,
}

/// People on the same instances, scored like models: only (annotator,
/// instance) pairs with all four answers count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HumanRow {
    /// "Human: <study name>", or "Human (all)" for the pooled row.
    pub label: String,
    /// The baseline study; null for the pooled row.
    pub study_id: Option<StudyId>,
    /// Annotators with at least one complete instance.
    pub people: usize,
    /// Instances with at least one complete annotator.
    pub instances: usize,
    /// Null while no annotator has answered all four questions of an instance.
    pub report: Option<crate::domain::metrics::Report>,
}

impl HumanRow {
    /// The row label with who and how much: "Human: pilot (5 people, 24 instances)".
    pub fn title(&self) -> String {
        let people = if self.people == 1 { "1 person".to_string() } else { format!("{} people", self.people) };
        format!("{} ({people}, {} instances)", self.label, self.instances)
    }

    /// The row the chart's human level lines show: the pooled one, else the only one.
    pub fn headline(rows: &[HumanRow]) -> Option<&HumanRow> {
        rows.iter().rev().find(|r| r.report.is_some())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelScores {
    pub name: String,
    pub n: usize,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub device: Option<String>,
    /// Outcomes left out of the figures: computed on a negative image that
    /// curation has since replaced (score the model again).
    #[serde(default)]
    pub left_out: usize,
    #[serde(flatten)]
    pub report: crate::domain::metrics::Report,
}

impl ModelScores {
    /// Why the model's n is smaller than its run, if it is: the page's and the CLI's words.
    pub fn left_out_note(&self) -> Option<String> {
        (self.left_out > 0).then(|| {
            format!(
                "{}: {} outcome(s) left out: they were computed on a negative image that Step 3 has since \
                 replaced. Score the model again (its embeddings are cached).",
                self.name, self.left_out
            )
        })
    }
}

/// One line of agreement for the researcher page (full report: the API).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgreementSummary {
    pub mapping: String,
    /// One question of a kind that asks several per item; None: all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    pub pairs: usize,
    pub mean_kappa: Option<f64>,
    pub fleiss_kappa: Option<f64>,
    pub krippendorff_alpha: Option<f64>,
    /// Why the mean kappa is missing, when it is.
    pub reason: Option<String>,
    /// Why Fleiss' kappa is missing, when it is.
    #[serde(default)]
    pub fleiss_reason: Option<String>,
    /// Why Krippendorff's alpha is missing, when it is.
    #[serde(default)]
    pub alpha_reason: Option<String>,
}

/// One study on the research page: progress per annotator, agreement under
/// both mappings and where it stands in the pipeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyOverview {
    pub progress: StudyProgress,
    pub agreement: Vec<AgreementSummary>,
    pub status: StudyStatus,
}

/// Another item's label that an adjudication moved: under a crowd-model
/// `resolve`, the decision is evidence about the people, and the refit can
/// settle other items otherwise. `None`: waiting for a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MovedLabel {
    pub instance_id: i64,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// An item whose answers disagree and wait for a researcher's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dispute {
    pub study_id: StudyId,
    pub instance_id: InstanceId,
    /// The caption the annotators judged.
    pub prompt: String,
    /// Every value the kind allows, with its image and who chose it.
    pub choices: Vec<DisputeChoice>,
    /// For a kind whose answers carry text: each answer's text (the corrections to choose from).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub texts: Vec<DisputeText>,
    /// The label of the kind's text field, when its answers carry one: the decision may give the final text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_label: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisputeText {
    pub annotator: String,
    pub value: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisputeChoice {
    pub value: String,
    /// The option as the annotators saw it ("None", or "B to ana, D to bo"
    /// when their shuffles showed it under different letters).
    pub label: String,
    pub image_url: Option<String>,
    pub chosen_by: Vec<String>,
}

/// An item a researcher has settled: the decision that stands and its history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settled {
    pub study_id: StudyId,
    pub instance_id: InstanceId,
    pub prompt: String,
    pub value: String,
    /// The value as the unshuffled presentation labels it ("B", "None").
    pub label: String,
    /// Oldest first: every decision and reopening of this item.
    pub history: Vec<AdjudicationEvent>,
    /// The later study built from this study's decisions, which makes them
    /// final (no Reopen); None while they may still be reopened.
    pub built_into: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdjudicationEvent {
    /// "settled" or "reopened".
    pub action: String,
    /// Settled: the value decided; reopened: the value undone.
    pub value: String,
    pub label: String,
    pub by: String,
    /// Unix seconds.
    pub at: i64,
}

/// Where a study's items stand (researcher page).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyStatus {
    pub study_id: StudyId,
    pub kind: SurveyKind,
    pub final_items: usize,
    pub waiting: usize,
    pub disputed: usize,
    /// For Step 3 studies: the Step 4 study built from it, if any.
    pub step4: Option<String>,
}

/// The drill-down lists at most this many failures.
pub const FAILURE_LIMIT: usize = 200;

/// One instance a model got wrong (comparison drill-down).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub instance_id: InstanceId,
    pub category: String,
    pub caption: String,
    pub negative_caption: String,
    pub positive_image_url: Option<String>,
    pub negative_image_url: Option<String>,
    pub ipos2t: bool,
    pub ineg2t: bool,
    pub tpos2i: bool,
    pub tneg2i: bool,
}

/// A request without a session: `ServiceError::Unauthorized`'s message.
pub const NOT_LOGGED_IN: &str = "not logged in";

/// What a participant whose session has gone is told (the form's error page
/// and the survey's alert): it has no password, so the study's link is its
/// way back in.
pub const PARTICIPANT_SESSION_GONE: &str = "Your session has ended. Open this study again from its link on \
    Prolific (or the address the researcher gave you): it continues where you stopped.";

/// Said by the survey when the item just answered had been answered in
/// another tab or window first: the first answer is kept (docs/api.md).
pub const ANSWERED_ELSEWHERE: &str = "That item had already been answered in another tab or window, so the answer \
given there is kept, not this one. Here is the next item.";

/// The survey page's query after a form answer that another tab's answer
/// overtook: the page shows [`ANSWERED_ELSEWHERE`] without JavaScript too.
pub const ANSWERED_ELSEWHERE_QUERY: &str = "answered=elsewhere";

/// What a write refused for want of space says (503, `Retry-After`): nothing
/// was stored, nothing acknowledged was lost. A client that reads it keeps
/// what it sent and sends it again after [`RETRY_AFTER_SECS`].
pub const NOT_SAVED: &str = "not saved: the server cannot store anything right now (its disk is full); \
     nothing was lost, send it again in a little while";

/// What an answer says when the database connection was cut while its batch
/// was being stored (PostgreSQL restarting): 503 with `Retry-After`; the
/// batch was rolled back (or, cut after its commit, a resend is a repeat).
pub const ANSWER_CUT: &str = "not saved: the server lost its database connection while storing it; \
     send it again in a moment";

/// What a request says when its session cannot be read (503): the
/// session store (PostgreSQL) out of reach for a moment.
pub const SESSION_UNREADABLE: &str =
    "the server cannot read your session right now; nothing was lost, try again in a moment";

/// What a request says when the database is out of reach (PostgreSQL
/// restarting, no connection free in time): 503 with `Retry-After`; the
/// request may be sent again as it is.
pub const DB_UNREACHABLE: &str =
    "the server cannot reach its database just now; nothing was changed, try again in a few seconds";

/// What the survey page says when a call never reached the server (the
/// network is down): the answer is kept in the page and sent again after
/// [`RETRY_AFTER_SECS`], as after [`NOT_SAVED`].
pub const NOT_SENT: &str = "The server could not be reached: check your connection";

/// Seconds a client waits before sending a refused write again.
pub const RETRY_AFTER_SECS: u32 = 5;
