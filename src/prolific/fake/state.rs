//! The fake's whole state, in memory behind one lock: studies, submissions,
//! bonuses, participant groups, hooks, faults, pending asynchronous work and
//! the request log. Handlers run synchronously on it; nothing awaits while
//! holding the lock.
use serde_json::{json, Map, Value};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Studies a fake holds at most (a create beyond it gets 400): memory stays bounded.
pub const MAX_STUDIES: usize = 10_000;
/// Submissions (simulated participants) at most.
pub const MAX_SUBMISSIONS: usize = 1_000_000;
/// Request log entries kept (the oldest go first; `requests_dropped` counts them).
pub const MAX_LOG: usize = 200_000;
pub use super::ids::{new_id, now, MAX_RECORDS};

pub const UNPUBLISHED: &str = "UNPUBLISHED";
pub const SCHEDULED: &str = "SCHEDULED";
pub const ACTIVE: &str = "ACTIVE";
pub const PAUSED: &str = "PAUSED";
pub const AWAITING_REVIEW: &str = "AWAITING REVIEW";
pub const COMPLETED: &str = "COMPLETED";

pub const RESERVED: &str = "RESERVED";
pub const APPROVED: &str = "APPROVED";
pub const REJECTED: &str = "REJECTED";
pub const RETURNED: &str = "RETURNED";
pub const TIMED_OUT: &str = "TIMED-OUT";
pub const SCREENED_OUT: &str = "SCREENED OUT";
pub const PARTIALLY_APPROVED: &str = "PARTIALLY APPROVED";

/// Every submission status the reference's SubmissionsCountResponse counts.
pub const SUBMISSION_STATUSES: [&str; 9] =
    [ACTIVE, APPROVED, AWAITING_REVIEW, REJECTED, RESERVED, RETURNED, TIMED_OUT, PARTIALLY_APPROVED, SCREENED_OUT];

#[derive(Debug, Clone)]
pub struct Study {
    pub id: String,
    /// The fields as created and patched (validated against the reference).
    pub fields: Map<String, Value>,
    pub status: &'static str,
    /// STOP was called: the study stays COMPLETED until its places are increased.
    pub stopped: bool,
    pub date_created: String,
    pub published_at: Option<String>,
    /// Submission ids in arrival order.
    pub submissions: Vec<String>,
    /// (status, when) for every status the study took.
    pub history: Vec<(String, String)>,
}

impl Study {
    pub fn num(&self, key: &str) -> f64 {
        self.fields.get(key).and_then(Value::as_f64).unwrap_or(0.0)
    }
    pub fn text(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }
}

#[derive(Debug, Clone)]
pub struct Submission {
    pub id: String,
    pub study_id: String,
    pub participant_id: String,
    pub status: &'static str,
    pub started_at: String,
    pub completed_at: Option<String>,
    pub entered_code: Option<String>,
    pub return_requested: Option<String>,
    /// Bonuses paid on it, in cents, one entry per paid line (a second pay adds a second entry).
    pub bonus_payments: Vec<u64>,
    pub rejection: Option<(String, String)>,
    /// Every status change: (from, to, when, by whom: "participant", "researcher" or "prolific").
    pub history: Vec<(String, String, String, String)>,
}

#[derive(Debug, Clone)]
pub struct BonusLine {
    pub submission_id: String,
    pub participant_id: String,
    pub cents: u64,
}

#[derive(Debug, Clone)]
pub struct BulkBonus {
    pub id: String,
    pub study_id: String,
    pub lines: Vec<BonusLine>,
    pub created_at: String,
}

#[derive(Debug, Clone)]
pub struct Payment {
    pub bulk_bonus_id: String,
    pub called_at: String,
    pub paid_at: Option<String>,
    /// When the asynchronous payment is made (sooner on `/_fake/tick`).
    pub due: Instant,
}

#[derive(Debug, Clone)]
pub struct BulkApproval {
    pub id: String,
    pub submission_ids: Vec<String>,
    pub requested_at: String,
    pub applied_at: Option<String>,
    pub due: Instant,
    pub approved: Vec<String>,
    /// (submission id, why it was not approved).
    pub skipped: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub struct Group {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    pub workspace_id: Option<String>,
    pub organisation_id: Option<String>,
    pub project_id: Option<String>,
    pub is_deleted: bool,
    /// (participant id, when added), in order of addition.
    pub members: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub struct LogEntry {
    pub method: String,
    pub path: String,
    pub status: u16,
    pub fault: Option<String>,
    pub reason: Option<String>,
    pub at: String,
}

pub struct State {
    /// How long asynchronous work (bulk approvals, bonus payments) waits before it is done.
    pub async_delay: Duration,
    pub user_id: String,
    pub workspace_id: String,
    pub project_id: String,
    pub studies: HashMap<String, Study>,
    /// Study ids in creation order.
    pub study_order: Vec<String>,
    pub submissions: HashMap<String, Submission>,
    pub bonuses: HashMap<String, BulkBonus>,
    pub bonus_order: Vec<String>,
    pub payments: Vec<Payment>,
    pub approvals: Vec<BulkApproval>,
    pub groups: HashMap<String, Group>,
    pub group_order: Vec<String>,
    pub hooks: super::hooks::Hooks,
    pub faults: super::faults::Faults,
    pub log: VecDeque<LogEntry>,
    pub log_dropped: u64,
}

impl State {
    pub fn new(webhook_secret: Option<String>, async_delay: Duration) -> State {
        let workspace_id = new_id();
        State {
            async_delay,
            user_id: new_id(),
            project_id: new_id(),
            hooks: super::hooks::Hooks::new(&workspace_id, webhook_secret),
            workspace_id,
            studies: HashMap::new(),
            study_order: Vec::new(),
            submissions: HashMap::new(),
            bonuses: HashMap::new(),
            bonus_order: Vec::new(),
            payments: Vec::new(),
            approvals: Vec::new(),
            groups: HashMap::new(),
            group_order: Vec::new(),
            faults: Default::default(),
            log: VecDeque::new(),
            log_dropped: 0,
        }
    }

    pub fn log(&mut self, entry: LogEntry) {
        if self.log.len() >= MAX_LOG {
            self.log.pop_front();
            self.log_dropped += 1;
        }
        self.log.push_back(entry);
    }

    /// Moves a submission to `to`, records it, queues its webhook event and
    /// settles its study's status (places freed or filled).
    pub fn set_submission_status(&mut self, id: &str, to: &'static str, by: &str) {
        let Some(sub) = self.submissions.get_mut(id) else { return };
        if sub.status == to {
            return;
        }
        let from = sub.status;
        sub.status = to;
        sub.history.push((from.into(), to.into(), now(), by.into()));
        let event = json!({
            "resource_id": sub.id, "status": to, "participant_id": sub.participant_id, "study_id": sub.study_id,
        });
        let study_id = sub.study_id.clone();
        self.hooks.emit("submission.status.change", &event);
        self.settle_study(&study_id);
    }

    /// Moves a study to `to`, records it and queues its webhook event.
    pub fn set_study_status(&mut self, id: &str, to: &'static str) {
        let Some(study) = self.studies.get_mut(id) else { return };
        if study.status == to {
            return;
        }
        study.status = to;
        study.history.push((to.into(), now()));
        if to == ACTIVE && study.published_at.is_none() {
            study.published_at = Some(now());
        }
        let event = json!({"resource_id": id, "status": to, "study_id": id});
        self.hooks.emit("study.status.change", &event);
    }

    /// Places taken as the reference defines them: submissions started, less the timed-out and returned ones.
    pub fn places_taken(&self, study: &Study) -> usize {
        study
            .submissions
            .iter()
            .filter_map(|id| self.submissions.get(id))
            .filter(|s| s.status != TIMED_OUT && s.status != RETURNED)
            .count()
    }

    fn count_status(&self, study: &Study, statuses: &[&str]) -> usize {
        study
            .submissions
            .iter()
            .filter_map(|id| self.submissions.get(id))
            .filter(|s| statuses.contains(&s.status))
            .count()
    }

    /// Prolific's automatic study statuses: a full study whose participants
    /// have all submitted awaits review, then completes once reviewed; a
    /// place freed by a return or time-out makes it recruit again (unless STOP was called).
    pub fn settle_study(&mut self, id: &str) {
        let Some(study) = self.studies.get(id) else { return };
        let stopped = study.stopped;
        if !matches!(study.status, ACTIVE | AWAITING_REVIEW | COMPLETED) {
            return;
        }
        let full = self.places_taken(study) as f64 >= study.num("total_available_places");
        let running = self.count_status(study, &[RESERVED, ACTIVE]);
        let to_review = self.count_status(study, &[AWAITING_REVIEW]);
        let next = if !full && !stopped {
            ACTIVE
        } else if stopped {
            COMPLETED
        } else if running > 0 {
            ACTIVE
        } else if to_review > 0 {
            AWAITING_REVIEW
        } else {
            COMPLETED
        };
        self.set_study_status(id, next);
    }
}
