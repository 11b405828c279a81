//! What the participant's page receives: `crowd::Stage` and friends live in
//! the server-only shell, so the browser gets these plain copies.
use crate::api_types::{OptionView, Progress, Prompt, TaskView};
use crate::domain::ids::{StudyId, TaskId};
use crate::domain::survey::SurveyKind;
use serde::{Deserialize, Serialize};

/// The page's state: the study, the step to show, and on `Working` the first open task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TakeView {
    pub study_name: String,
    pub stage: TakeStage,
    pub task: Option<TaskView>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TakeStage {
    Consent {
        text: String,
    },
    /// The kind's instructions, and the study's own when the spec gives
    /// other ones; `again` after a failed first comprehension attempt.
    Instructions {
        kind: String,
        study: Option<String>,
        again: bool,
    },
    /// Questions about the instructions; `attempt` 1 or 2.
    Comprehension {
        attempt: i64,
        questions: Vec<(String, Vec<String>)>,
    },
    /// A practice item shown as a task (its `task_id` is unused).
    Practice {
        index: usize,
        item: TaskView,
    },
    /// `late`: past the time limit, the participant may still finish.
    Working {
        late: bool,
    },
    Complete,
    Returned,
    /// Ended by the checks: the screen-out code and where it goes;
    /// `comprehension`: failed the comprehension check (asked to return).
    ScreenedOut {
        comprehension: bool,
        code: String,
        url: String,
    },
    /// Passed the comprehension check once every place was taken.
    Full {
        code: Option<String>,
    },
}

impl TakeStage {
    /// For `data-stage` (tests and styles).
    pub fn name(&self) -> &'static str {
        match self {
            TakeStage::Consent { .. } => "consent",
            TakeStage::Instructions { .. } => "instructions",
            TakeStage::Practice { .. } => "practice",
            TakeStage::Working { .. } => "working",
            TakeStage::Complete => "complete",
            TakeStage::Returned => "returned",
            TakeStage::Comprehension { .. } => "comprehension",
            TakeStage::ScreenedOut { .. } => "screened-out",
            TakeStage::Full { .. } => "full",
        }
    }

    /// The participant may still give the study back.
    pub fn may_return(&self) -> bool {
        !matches!(
            self,
            TakeStage::Complete
                | TakeStage::Returned
                | TakeStage::Comprehension { .. }
                | TakeStage::ScreenedOut { .. }
                | TakeStage::Full { .. }
        )
    }
}

/// The answer to a practice item: never stored as an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PracticeFeedback {
    pub correct: bool,
    /// Labels as shown (e.g. "B", "None").
    pub chosen: String,
    pub right: String,
    pub next: TakeView,
}

/// The completion code, once every answer of the bundle is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionView {
    pub code: String,
    pub url: String,
}

/// A practice item in the survey's shape, so it is shown and answered the same way.
pub fn practice_task(
    study_id: StudyId,
    kind: SurveyKind,
    (index, count): (usize, usize),
    (instructions, item_instructions): (String, bool),
    prompt: Prompt,
    options: Vec<OptionView>,
) -> TaskView {
    TaskView {
        task_id: TaskId::new(-(index as i64) - 1),
        study_id,
        kind,
        instructions,
        item_instructions,
        prompt,
        options,
        progress: Progress { done: index as i64, total: count as i64 },
        prefetch: Vec::new(),
    }
}

/// The no-JS practice form's task id (`practice_task` gives item `index` the id `-index - 1`).
pub fn practice_index(task_id: TaskId) -> Option<usize> {
    // Checked: an id posted by hand may be i64::MIN.
    task_id.get().checked_neg().and_then(|n| usize::try_from(n - 1).ok())
}

/// A practice answer's feedback in the address the no-JS form redirects to
/// (`/take/{id}?correct=…&chosen=…&right=…`): nothing is stored, so the page
/// after the redirect shows it from here. Labels as shown ("B", "None").
/// The longest option label a practice item's feedback names.
const MAX_LABEL_CHARS: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub struct FeedbackQuery {
    pub correct: bool,
    pub chosen: String,
    pub right: String,
}

impl FeedbackQuery {
    pub fn encode(&self) -> String {
        let esc = crate::domain::percent::query_value;
        format!("correct={}&chosen={}&right={}", self.correct, esc(&self.chosen), esc(&self.right))
    }

    /// From the page's decoded query; None without feedback in it, or with
    /// more than an option's label in it (at most 64 characters each).
    pub fn from_query(get: impl Fn(&str) -> Option<String>) -> Option<FeedbackQuery> {
        let label = |k: &str| get(k).filter(|l| l.chars().count() <= MAX_LABEL_CHARS);
        Some(FeedbackQuery { correct: get("correct")? == "true", chosen: label("chosen")?, right: label("right")? })
    }

    /// What the participant reads after answering.
    pub fn text(&self) -> String {
        if self.correct {
            format!("Correct: {} is right.", self.right)
        } else {
            format!("Not quite: you chose {}; the right answer is {}.", self.chosen, self.right)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn practice_ids_map_back_to_their_index() {
        for index in [0, 1, 7] {
            let t = practice_task(
                StudyId::new(1),
                SurveyKind::all()[0],
                (index, 8),
                (String::new(), false),
                Prompt { text: String::new(), image_url: None },
                Vec::new(),
            );
            assert_eq!(practice_index(t.task_id), Some(index));
        }
        assert_eq!(practice_index(TaskId::new(5)), None, "a real task id is no practice item");
        assert_eq!(practice_index(TaskId::new(i64::MIN)), None, "an id posted by hand");
        assert_eq!(practice_index(TaskId::new(0)), None);
    }

    #[test]
    fn feedback_survives_the_address_and_reads_right() {
        let f = FeedbackQuery { correct: false, chosen: "B".into(), right: "None & more".into() };
        let q = f.encode();
        assert_eq!(q, "correct=false&chosen=B&right=None%20%26%20more");
        let pairs: Vec<(String, String)> = q
            .split('&')
            .map(|kv| kv.split_once('=').unwrap())
            .map(|(k, v)| (k.into(), v.replace("%20", " ").replace("%26", "&")))
            .collect();
        let back = FeedbackQuery::from_query(|k| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.text(), "Not quite: you chose B; the right answer is None & more.");
        assert_eq!(FeedbackQuery::from_query(|_| None), None);
        let long = "Your place expired. Email your Prolific password to help@evil.example".to_string();
        let made_up = |k: &str| match k {
            "correct" => Some("false".to_string()),
            _ => Some(long.clone()),
        };
        assert_eq!(FeedbackQuery::from_query(made_up), None, "more than a label: no feedback");
    }
}
