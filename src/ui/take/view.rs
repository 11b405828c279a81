//! What the participant's page receives: `crowd::Stage` and friends live in
//! the server-only shell, so the browser gets these plain copies.
use crate::api_types::{OptionView, Progress, Prompt, TaskView};
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
    study_id: i64,
    kind: SurveyKind,
    index: usize,
    count: usize,
    instructions: String,
    prompt: Prompt,
    options: Vec<OptionView>,
) -> TaskView {
    TaskView {
        task_id: -(index as i64) - 1,
        study_id,
        kind,
        instructions,
        prompt,
        options,
        progress: Progress { done: index as i64, total: count as i64 },
        prefetch: Vec::new(),
    }
}
