//! The statistics of HNC's two kinds (`Report::Writing`,
//! `Report::PairValidation`): pairs written, skips by reason and words
//! outside the vocabulary per caption type; the validated share per type
//! and the validators' kappa, with the writing study's figures beside it.
use crate::error::ServiceError;
use crate::kinds::caption_writing::stats::{
    pair_validation_stats, writing_stats, PairValidationStats, ValidatedPair, WritingAnswer, WritingStats,
};
use crate::studies::outcomes::study_outcomes;
use crate::studies::triplet_report::kappa_lines;
use serde::Serialize;
use sqlx::SqlitePool;
use std::collections::HashMap;

/// A validation study's statistics and its writing study's.
#[derive(Debug, Clone, Serialize)]
pub struct PairValidationReport {
    #[serde(flatten)]
    pub validation: PairValidationStats,
    /// The writing study the pairs came from.
    pub writing: Option<WritingStats>,
}

/// A writing study's statistics and how many answers they rest on.
pub async fn writing(db: &SqlitePool, study_id: i64) -> Result<(usize, WritingStats), ServiceError> {
    type Row = (Option<String>, String, Option<String>, Option<String>);
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT i.caption_type, a.value, p.text, n.text FROM counted_answers a JOIN instances i ON i.id = a.instance_id
         LEFT JOIN answer_texts p ON p.task_id = a.task_id AND p.field = 'positive'
         LEFT JOIN answer_texts n ON n.task_id = a.task_id AND n.field = 'negative'
         WHERE a.study_id = ? ORDER BY a.task_id",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?;
    let answers: Vec<WritingAnswer<'_>> = rows
        .iter()
        .map(|(t, value, p, n)| WritingAnswer {
            caption_type: t.as_deref().unwrap_or_default(),
            value,
            positive: p.as_deref(),
            negative: n.as_deref(),
        })
        .collect();
    let vocabulary = crate::studies::vocabulary::of_study(db, study_id).await?;
    Ok((answers.len(), writing_stats(&answers, vocabulary.as_ref().map(|(v, s)| (v, *s)))))
}

/// A validation study's statistics and how many answers they rest on.
pub async fn pair_validation(db: &SqlitePool, study_id: i64) -> Result<(usize, PairValidationReport), ServiceError> {
    let (meta, outcomes) = study_outcomes(db, study_id).await?;
    let rows: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT a.instance_id, u.username, a.value FROM counted_answers a JOIN users u ON u.id = a.user_id
         WHERE a.study_id = ? ORDER BY a.instance_id, a.answered_at, a.task_id",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?;
    let types: HashMap<i64, String> = sqlx::query_as(
        "SELECT i.id, coalesce(i.caption_type, '') FROM study_items si JOIN instances i ON i.id = si.instance_id
         WHERE si.study_id = ?",
    )
    .bind(study_id)
    .fetch_all(db)
    .await?
    .into_iter()
    .collect();
    let mut answers: HashMap<i64, Vec<(&str, &str)>> = HashMap::new();
    for (instance, who, value) in &rows {
        answers.entry(*instance).or_default().push((who, value));
    }
    let pairs: Vec<ValidatedPair<'_>> = outcomes
        .iter()
        .map(|o| ValidatedPair {
            caption_type: types.get(&o.instance_id).map_or("", String::as_str),
            final_value: o.final_value(),
            answers: answers.remove(&o.instance_id).unwrap_or_default(),
        })
        .collect();
    let writing = match meta.source_study_id {
        Some(source) => Some(writing(db, source).await?.1),
        None => None,
    };
    Ok((rows.len(), PairValidationReport { validation: pair_validation_stats(&pairs), writing }))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{:.1}%", 100.0 * v))
}

/// One table line: a label and columns `width` wide, the first two narrower.
fn line(label: &str, first: [String; 2], rest: impl Iterator<Item = String>, width: usize) -> String {
    let mut out = format!("{label:<20} {:>8} {:>8}", first[0], first[1]);
    for c in rest {
        out.push_str(&format!(" {c:>width$}"));
    }
    out
}

/// A writing study's statistics as plain-text tables (CLI, export card).
pub fn render_writing(st: &WritingStats) -> String {
    let reasons: Vec<String> =
        st.rows.first().map(|r| r.skipped.keys().map(|k| format!("skip: {k}")).collect()).unwrap_or_default();
    let mut out = line("type", ["answers".into(), "written".into()], reasons.into_iter(), 20) + "\n";
    for row in &st.rows {
        let label = row.caption_type.as_deref().unwrap_or("all");
        let counts = [row.answers.to_string(), row.written.to_string()];
        out += &(line(label, counts, row.skipped.values().map(usize::to_string), 20) + "\n");
    }
    if let Some(o) = &st.vocabulary {
        let words: Vec<String> = o.top_unknown.iter().map(|(w, n)| format!("{w} ({n})")).collect();
        out.push_str(&format!(
            "vocabulary of {} words ({}): {} pairs with unknown words; unknown words in positives {}, in negatives {}{}\n",
            o.vocabulary_words,
            if o.strict { "strict" } else { "warns" },
            o.pairs_with_unknown,
            o.positive_unknown_words,
            o.negative_unknown_words,
            if words.is_empty() { String::new() } else { format!("; most used: {}", words.join(", ")) }
        ));
    }
    out
}

/// A validation study's statistics as plain-text tables (CLI, export card).
pub fn render_validation(r: &PairValidationReport) -> String {
    let st = &r.validation;
    let mut heads: Vec<String> = st.rows.first().map(|r| r.values.keys().cloned().collect()).unwrap_or_default();
    heads.push("valid %".into());
    let mut out = line("type", ["pairs".into(), "settled".into()], heads.into_iter(), 15) + "\n";
    for row in &st.rows {
        let label = row.caption_type.as_deref().unwrap_or("all");
        let cells = row.values.values().map(usize::to_string).chain([pct(row.valid_share)]);
        out += &(line(label, [row.pairs.to_string(), row.settled.to_string()], cells, 15) + "\n");
    }
    out.push_str(&kappa_lines(&st.kappa, st.mean_kappa, "", "pairs", "of the validators"));
    if let Some(w) = &r.writing {
        out.push_str("written in the source study:\n");
        out.push_str(&render_writing(w));
    }
    out
}
