//! What crowd's functions answer and the researcher's lists hold: an
//! arrival, the join page's preview, the participant's stage, the rows of
//! participants and bundles, the link; and how a participant's status is
//! read from its rows (`STATUS_SQL`).
use super::LinkRow;
use crate::accounts::SessionUser;
use crate::api_types::{OptionView, Prompt};
use crate::domain::crowd::lease::LeaseState;
use crate::domain::ids::StudyId;
use crate::store::ids::Flag;
use crate::store::rows::from_row;
use serde::{Deserialize, Serialize};

/// The result of arriving by link (`POST /join/{token}`).
#[derive(Debug, Clone, PartialEq)]
pub enum Arrival {
    /// A participant with a bundle: new, or the same platform id again (`resumed`).
    Admitted { user: SessionUser, study: StudyId, resumed: bool },
    /// This platform id has finished the study: its code again.
    Finished { code: String, url: String },
    /// This platform id returned the study.
    Returned,
    /// This platform id was screened out: the screen-out code again, and
    /// whether by the comprehension check (else by attention checks).
    ScreenedOut { comprehension: bool, code: String, url: String },
    /// Every bundle has all its copies taken: return the study (with the `full` code, if the spec set one).
    Full { code: Option<String> },
    /// The researcher closed the link.
    Closed,
    /// This platform id wrote pairs this validation study checks; its
    /// validators are another group (HNC): return the study, nothing is kept.
    Writer,
}

/// What `GET /join/{token}` shows, without changing anything.
#[derive(Debug, Clone, PartialEq)]
pub enum Preview {
    /// A new participant: the consent text, then a form that arrives.
    Welcome {
        study_name: String,
        consent: String,
    },
    /// This platform id arrived before: a button that resumes. `place`: it
    /// holds a bundle; false before it passed the comprehension check (a
    /// place is taken then, if one is still free).
    /// `late`: its place timed out and went to someone else; it may still
    /// finish (kept as an extra copy, and paid).
    Resume {
        study: StudyId,
        place: bool,
        late: bool,
    },
    Finished {
        code: String,
        url: String,
    },
    Returned,
    ScreenedOut {
        comprehension: bool,
        code: String,
        url: String,
    },
    Full {
        code: Option<String>,
    },
    Closed,
    /// The link needs the participant's id and the spec allows no anonymous arrivals.
    NeedsId,
}

/// What the participant's page must show now, decided from stored rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum Stage {
    Consent {
        text: String,
    },
    /// `again`: after a failed first comprehension attempt.
    Instructions {
        text: String,
        #[serde(default)]
        again: bool,
    },
    /// Questions about the instructions (`POST …/comprehension` with one
    /// option index per question); `attempt` is 1 or 2. No bundle is leased yet.
    Comprehension {
        attempt: i64,
        questions: Vec<QuestionView>,
    },
    Practice(PracticeView),
    /// Answering the bundle (`GET /api/v1/studies/{id}/next`). `late`: the
    /// time limit has passed; the participant may still finish and get the
    /// code, but its answers are kept as an extra copy.
    Working {
        done: i64,
        total: i64,
        late: bool,
    },
    Complete {
        code: String,
        url: String,
    },
    Returned,
    /// Ended by the comprehension check or by failed attention checks:
    /// the screen-out code and where to go with it. Never a rejection for
    /// the comprehension check: the page asks the participant to return.
    ScreenedOut {
        reason: String,
        code: String,
        url: String,
    },
    /// Passed the comprehension check when every place was already taken.
    Full {
        code: Option<String>,
    },
}

/// A comprehension question as shown: the right answer stays on the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionView {
    pub question: String,
    pub options: Vec<String>,
}

/// A practice item as shown: never stored as an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PracticeView {
    /// 0-based; answer it with `practice_answer(index, option)`.
    pub index: usize,
    pub count: usize,
    pub instructions: String,
    /// As `TaskView::item_instructions`.
    #[serde(default)]
    pub item_instructions: bool,
    pub prompt: Prompt,
    pub options: Vec<OptionView>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Feedback {
    pub correct: bool,
    /// The option the participant chose and the right one, as shown.
    pub chosen: String,
    pub right: String,
    /// What to show next.
    pub next: Stage,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    pub code: String,
    /// The spec's completion URL with the code filled in.
    pub url: String,
}

/// A participant as the researcher sees it; platform ids only on request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParticipantRow {
    pub number: i64,
    pub username: String,
    /// None while it holds no bundle: before passing the comprehension
    /// check, after failing it, or when the study filled up meanwhile.
    pub bundle: Option<i64>,
    pub state: Option<LeaseState>,
    /// The lease state, or `screened_out` / `full_after_comprehension` /
    /// `arriving` without a lease (as in the approve list and the dashboard).
    pub status: String,
    pub done: i64,
    pub total: i64,
    pub arrived_at: i64,
    pub consented_at: Option<i64>,
    pub expires_at: Option<i64>,
    pub ended_at: Option<i64>,
    /// Gold items answered right, of those answered.
    pub gold_right: i64,
    pub gold_total: i64,
    /// Attention checks answered wrong.
    pub checks_failed: i64,
    pub comprehension_attempts: i64,
    /// `attention_checks` or `comprehension` once screened out.
    pub screened_out_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform_pid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform_study: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform_session: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BundleRow {
    pub bundle: i64,
    /// Tasks per participant (instances times the kind's questions).
    pub tasks: i64,
    pub copies_wanted: i64,
    pub paired: bool,
    pub active: i64,
    pub completed: i64,
    pub timed_out: i64,
    pub returned: i64,
    pub extra: i64,
}
from_row!(BundleRow { bundle, tasks, copies_wanted, paired as Flag, active, completed, timed_out, returned, extra });

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkInfo {
    pub study_id: StudyId,
    pub token: String,
    /// `/join/{token}`; prefix the public origin.
    pub path: String,
    /// Append to the URL for Prolific: it fills in each participant's ids.
    pub prolific_query: String,
    pub open: bool,
    pub completion_code: String,
    pub completion_url: String,
    pub full_code: Option<String>,
    pub time_limit_minutes: u32,
    pub places: i64,
}

impl LinkRow {
    pub fn completion(&self) -> Completion {
        Completion {
            code: self.completion_code.clone(),
            url: crate::domain::crowd::ids::completion_url(&self.settings.completion_url, &self.completion_code),
        }
    }

    /// The screen-out code (made at creation whenever the study can screen out) and its URL.
    pub fn screen_out(&self) -> Completion {
        let checks = &self.settings.checks;
        let code = checks.screen_out_code.clone().unwrap_or_default();
        Completion { url: crate::domain::crowd::ids::completion_url(&checks.screen_out_url, &code), code }
    }
}

/// A participant's status, the same word in the participants list, the
/// approve list and the dashboard's counts: its lease state, else
/// `screened_out` (failed the comprehension check, so never leased),
/// [`FULL_AFTER_COMPREHENSION`] or `arriving` (not through the
/// comprehension check yet). Over `participants p LEFT JOIN leases l`.
pub(crate) const STATUS_SQL: &str = "coalesce(l.state, CASE WHEN p.screened_out_at IS NOT NULL THEN 'screened_out'
    WHEN p.comprehension_passed_at IS NOT NULL THEN 'full_after_comprehension' ELSE 'arriving' END)";

/// Passed the comprehension check when every place was taken: told the
/// study is full and asked to return it, so never leased.
pub const FULL_AFTER_COMPREHENSION: &str = "full_after_comprehension";
