//! Writing a caption pair from a page (HNC): before storing, the texts'
//! words outside the study's vocabulary are named so the writer can fix
//! them or, when the vocabulary only warns, confirm them. The writing card
//! (`ui.rs`) and its no-JS form (`form.rs`) both come here; the JSON API
//! stores a non-strict answer at once (docs/api.md).
use crate::accounts::SessionUser;
use crate::api_types::AnswerAck;
use crate::domain::ids::{StudyId, TaskId};
use crate::error::ServiceError;
use crate::state::AppState;
use crate::studies::meta::study_meta;
use serde::{Deserialize, Serialize};

/// One writing answer as a page sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrittenAnswer {
    pub task_id: TaskId,
    /// `written` or `skip:<reason>`.
    pub option: String,
    pub positive: String,
    pub negative: String,
    /// The writer saw the unknown words and keeps them (a warning vocabulary).
    pub confirmed: bool,
}

/// Each text field with its words outside the vocabulary.
pub type UnknownWords = Vec<(String, Vec<String>)>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum WriteOutcome {
    Stored(AnswerAck),
    /// Nothing stored: these words are outside the vocabulary; `strict`: they
    /// must be replaced, else confirming them stores the answer.
    Unknown {
        words: UnknownWords,
        strict: bool,
    },
}

pub async fn write(
    state: &AppState,
    user: &SessionUser,
    a: &WrittenAnswer,
    elapsed_ms: Option<i64>,
) -> Result<WriteOutcome, ServiceError> {
    let study: Option<StudyId> = sqlx::query_scalar("SELECT study_id FROM tasks WHERE id = $1 AND user_id = $2")
        .bind(a.task_id)
        .bind(user.id)
        .fetch_optional(&state.db)
        .await?;
    let study = study.ok_or_else(|| ServiceError::NotFound(format!("no task {} of yours", a.task_id)))?;
    let meta = study_meta(state, study).await?;
    let texts = [("positive", a.positive.as_str()), ("negative", a.negative.as_str())];
    let texts: Vec<(&str, &str)> = texts.into_iter().filter(|(_, t)| !t.trim().is_empty()).collect();
    // The kind's own rules first: a bad text is refused whatever its words.
    let checked = meta.kind.answer_texts(&a.option, &texts).map_err(|e| ServiceError::Invalid(e.to_string()))?;
    if !checked.is_empty() {
        let named: Vec<(&str, &str)> = checked.iter().map(|(n, t)| (*n, t.as_str())).collect();
        let (words, strict) = crate::studies::vocabulary::unknown_words(&state.db, study, meta.kind, &named).await?;
        if !words.is_empty() && (strict || !a.confirmed) {
            return Ok(WriteOutcome::Unknown { words, strict });
        }
    }
    let (ack, _) =
        crate::studies::tasks::answer_with_texts(state, user, a.task_id, &a.option, &texts, elapsed_ms).await?;
    Ok(WriteOutcome::Stored(ack))
}
