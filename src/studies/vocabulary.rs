//! A study's vocabulary (docs/study-spec.md, "Vocabulary"): read once at
//! creation (a spec's list, or a file inside the data directory) and kept
//! with the study; answers' texts are checked against it. Strict studies
//! refuse a text with unknown words (422 naming the field and the words);
//! the others store it and count the words in the report.
use crate::domain::ids::StudyId;
use crate::domain::survey::SurveyKind;
use crate::domain::vocabulary::{Vocabulary, VocabularySource};
use crate::error::ServiceError;
use crate::state::{AppState, StudyMeta};
use sqlx::AnyPool;

/// The vocabulary a spec names, read: a file is resolved inside the
/// directory of the database (the data directory), never elsewhere.
pub fn read(db: &AnyPool, source: &VocabularySource) -> Result<Vocabulary, ServiceError> {
    match source {
        VocabularySource::Words(v) => Ok(v.clone()),
        VocabularySource::File(path) => {
            let dir = crate::store::db::data_dir(db);
            let text = std::fs::read_to_string(dir.join(path)).map_err(|e| {
                ServiceError::Invalid(format!("field `vocabulary`: {path:?} in the data directory: {e}"))
            })?;
            Vocabulary::parse_file(&text)
                .map_err(|e| ServiceError::Invalid(format!("field `vocabulary`: {path:?} {e}")))
        }
    }
}

/// Keeps a new study's vocabulary (inside its creating transaction).
pub async fn store(
    tx: &mut sqlx::AnyConnection,
    study_id: StudyId,
    vocabulary: &Vocabulary,
    strict: bool,
) -> Result<(), ServiceError> {
    sqlx::query("INSERT INTO study_vocabularies (study_id, strict, words) VALUES ($1, $2, $3)")
        .bind(study_id)
        .bind(i64::from(strict))
        .bind(vocabulary.to_lines())
        .execute(tx)
        .await?;
    Ok(())
}

/// A study's vocabulary and whether it is strict; None when it has none.
pub async fn of_study(db: &AnyPool, study_id: StudyId) -> Result<Option<(Vocabulary, bool)>, ServiceError> {
    let row: Option<(crate::store::ids::Flag, String)> =
        sqlx::query_as("SELECT strict, words FROM study_vocabularies WHERE study_id = $1")
            .bind(study_id)
            .fetch_optional(db)
            .await?;
    Ok(row.map(|(strict, words)| (Vocabulary::new(words.lines()), strict.0)))
}

/// The texts to store with an answer storing `value`: the kind's rules
/// (`answer_texts`; an empty name means the kind's only field), then a
/// strict vocabulary's. A refusal is `Invalid` (422) naming the field.
pub async fn checked_texts(
    state: &AppState,
    meta: &StudyMeta,
    value: &str,
    given: &[(&str, &str)],
) -> Result<Vec<(&'static str, String)>, ServiceError> {
    let only = meta.kind.text_field().map_or("text", |f| f.name);
    let named: Vec<(&str, &str)> = given.iter().map(|&(n, t)| (if n.is_empty() { only } else { n }, t)).collect();
    let texts = meta.kind.answer_texts(value, &named).map_err(|e| ServiceError::Invalid(e.to_string()))?;
    if texts.is_empty() {
        return Ok(texts);
    }
    if let Some((vocabulary, true)) = of_study(&state.db, meta.id).await? {
        for (field, text) in &texts {
            let unknown = vocabulary.unknown(text);
            if !unknown.is_empty() {
                return Err(ServiceError::Invalid(format!(
                    "field {field:?}: words outside the study's vocabulary: {}",
                    unknown.join(", ")
                )));
            }
        }
    }
    Ok(texts)
}

/// Each text field's unknown words for a study (what the writing card marks;
/// empty without a vocabulary), and whether they refuse the answer.
pub async fn unknown_words(
    db: &AnyPool,
    study_id: StudyId,
    kind: SurveyKind,
    texts: &[(&str, &str)],
) -> Result<(Vec<(String, Vec<String>)>, bool), ServiceError> {
    let Some((vocabulary, strict)) = of_study(db, study_id).await? else {
        return Ok((Vec::new(), false));
    };
    let out = kind
        .spec()
        .texts
        .iter()
        .filter_map(|f| {
            let text = texts.iter().find(|(n, _)| *n == f.name)?.1;
            let unknown = vocabulary.unknown(text);
            (!unknown.is_empty()).then(|| (f.name.to_string(), unknown))
        })
        .collect();
    Ok((out, strict))
}
