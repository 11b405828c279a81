//! The shell side of the participant's page: `crowd::Stage` into what the
//! browser shows, with the first open task when the bundle is being answered.
use super::view::{practice_task, TakeStage, TakeView};
use crate::accounts::SessionUser;
use crate::crowd::Stage;
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use crate::state::AppState;
use crate::studies::meta::study_meta;

pub async fn view_of(
    state: &AppState,
    user: &SessionUser,
    study: StudyId,
    stage: Stage,
) -> Result<TakeView, ServiceError> {
    let meta = study_meta(state, study).await?;
    let stage = match stage {
        Stage::Consent { text } => TakeStage::Consent { text },
        Stage::Instructions { text, again } => {
            let kind = meta.kind.default_instructions().to_string();
            TakeStage::Instructions { study: (text.trim() != kind.trim()).then_some(text), kind, again }
        }
        Stage::Comprehension { attempt, questions } => TakeStage::Comprehension {
            attempt,
            questions: questions.into_iter().map(|q| (q.question, q.options)).collect(),
        },
        Stage::ScreenedOut { reason, code, url } => {
            TakeStage::ScreenedOut { comprehension: reason == "comprehension", code, url }
        }
        Stage::Full { code } => TakeStage::Full { code },
        Stage::Practice(p) => TakeStage::Practice {
            index: p.index,
            item: practice_task(
                study,
                meta.kind,
                (p.index, p.count),
                (p.instructions, p.item_instructions),
                p.prompt,
                p.options,
            ),
        },
        Stage::Working { late, .. } => TakeStage::Working { late },
        // The code itself is asked for separately, and given only once every answer is stored.
        Stage::Complete { .. } => TakeStage::Complete,
        Stage::Returned => TakeStage::Returned,
    };
    let task = match stage {
        TakeStage::Working { .. } => crate::studies::tasks::next_task(state, user, study).await?,
        _ => None,
    };
    Ok(TakeView { study_name: meta.name.clone(), stage, task })
}
