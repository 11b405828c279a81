//! HNC's caption writing on the server: its report (pairs written, skips by
//! reason and words outside the vocabulary, per caption type). The pair
//! validation's report shows it beside its own (`kinds::pair_validation`).
use crate::domain::ids::StudyId;
use super::stats::{writing_stats, WritingAnswer, WritingStats};
use crate::error::ServiceError;
use crate::studies::hooks::{Fut, Server, Statistic, Stats};
use crate::studies::report_text::line;
use sqlx::AnyPool;
use std::path::Path;

pub const SERVER: Server = Server { report: Some(report), export: Some(export), ..Server::NONE };

/// The written pairs and skips, with their caption types.
fn export<'a>(db: &'a AnyPool, study_id: StudyId, out: &'a Path) -> Fut<'a, Vec<String>> {
    Box::pin(super::export::write(db, study_id, out))
}

fn report(db: &AnyPool, study_id: StudyId) -> Fut<'_, (usize, Box<dyn Stats>)> {
    Box::pin(async move {
        let (n, stats) = writing(db, study_id).await?;
        Ok((n, Box::new(stats) as Box<dyn Stats>))
    })
}

/// A writing study's statistics and how many answers they rest on.
pub async fn writing(db: &AnyPool, study_id: StudyId) -> Result<(usize, WritingStats), ServiceError> {
    type Row = (Option<String>, String, Option<String>, Option<String>);
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT i.caption_type, a.value, p.text, n.text FROM counted_answers a JOIN instances i ON i.id = a.instance_id
         LEFT JOIN answer_texts p ON p.task_id = a.task_id AND p.field = 'positive'
         LEFT JOIN answer_texts n ON n.task_id = a.task_id AND n.field = 'negative'
         WHERE a.study_id = $1 ORDER BY a.task_id",
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

impl Statistic for WritingStats {
    const NAME: &'static str = "writing";

    fn render(&self) -> String {
        render_writing(self)
    }
}

/// A writing study's statistics as plain-text tables (CLI, export card).
pub(crate) fn render_writing(st: &WritingStats) -> String {
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

