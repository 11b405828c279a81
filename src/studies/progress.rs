//! What researchers watch: progress per annotator and the answer distribution.
use crate::api_types::{AnnotatorProgress, OptionCount, StudyProgress};
use crate::domain::assignment::Annotators;
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use crate::state::AppState;
use crate::studies::meta::{study_item_count, study_meta};
use std::collections::BTreeMap;

/// Rows of the progress table the research page shows: a link study may
/// have thousands of participants (an audit: 3,000 made the page ~1 MB).
pub const SHOWN_ANNOTATORS: usize = 200;

/// The progress as the research page shows it: the first
/// [`SHOWN_ANNOTATORS`] rows, and how many more there are.
pub fn for_page(p: &mut StudyProgress) {
    let more = p.annotators.len().saturating_sub(SHOWN_ANNOTATORS);
    if more > 0 {
        p.annotators.truncate(SHOWN_ANNOTATORS);
        p.annotators_not_shown = Some(more);
    }
}

pub async fn study_progress(state: &AppState, study_id: StudyId) -> Result<StudyProgress, ServiceError> {
    let meta = study_meta(state, study_id).await?;
    let items = study_item_count(&state.db, study_id).await?;
    let item_ids = crate::studies::meta::study_items(&state.db, study_id).await?;
    let eligible: Vec<String> = match &meta.annotators {
        Annotators::All | Annotators::AllBut(_) => {
            let all: Vec<String> =
                sqlx::query_scalar("SELECT username FROM users WHERE role = 'annotator' ORDER BY username")
                    .fetch_all(&state.db)
                    .await?;
            all.into_iter().filter(|u| meta.annotators.admits(u)).collect()
        }
        Annotators::Named(names) => names.clone(),
    };
    let started: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT u.username, p.done, p.total FROM participations p JOIN users u ON u.id = p.user_id WHERE p.study_id = $1",
    )
    .bind(study_id)
    .fetch_all(&state.db)
    .await?;
    // What a newcomer would be asked where the fixed plan does not say it
    // (audit AW: "0 of 21" beside a finished study): under adaptive overlap
    // at most the items still collecting; nothing once a later study was
    // built from this one's outcomes (`tasks::start` refuses them).
    let newcomer_cap: Option<i64> = if meta.adaptive.is_some() {
        let sql = "SELECT count(*) FROM adaptive_items WHERE study_id = $1 AND reason IS NULL";
        Some(sqlx::query_scalar(sql).bind(study_id).fetch_one(&state.db).await?)
    } else if meta.kind.curation().is_some() && crate::studies::meta::built_into(&state.db, study_id).await?.is_some() {
        Some(0)
    } else {
        None
    };
    let mut by_name: BTreeMap<String, AnnotatorProgress> = eligible
        .into_iter()
        .map(|username| {
            // What the rule will give them on arrival, questions included.
            let planned = meta.rule.planned_len(meta.kind.spec().questions, meta.seed, &username, &item_ids) as i64;
            let total = newcomer_cap.map_or(planned, |cap| cap.min(planned));
            (username.clone(), AnnotatorProgress { username, done: 0, total })
        })
        .collect();
    for (username, done, total) in started {
        by_name.insert(username.clone(), AnnotatorProgress { username, done, total });
    }
    // p7-2 before p7-10: names in the order people read them.
    let mut annotators: Vec<AnnotatorProgress> = by_name.into_values().collect();
    annotators.sort_by(|a, b| crate::domain::natural_order::natural_cmp(&a.username, &b.username));
    let counts: Vec<(String, i64)> =
        sqlx::query_as("SELECT option_id, count(*) FROM counted_answers WHERE study_id = $1 GROUP BY option_id")
            .bind(study_id)
            .fetch_all(&state.db)
            .await?;
    // An order (a ranking's "C,A,B") counts toward the option ranked first.
    let mut by_first: BTreeMap<String, i64> = BTreeMap::new();
    for (id, n) in counts {
        *by_first.entry(id.split(',').next().unwrap_or_default().to_string()).or_default() += n;
    }
    let counts = by_first;
    let option_ids = shown_option_ids(meta.kind);
    let distribution: Vec<OptionCount> = option_ids
        .iter()
        .map(|id| OptionCount { count: counts.get(id).copied().unwrap_or(0), option: id.clone() })
        .collect();
    let answers: i64 = counts.values().sum();
    let none = meta.kind.discarding_value().and_then(|v| counts.get(v)).copied().unwrap_or(0);
    Ok(StudyProgress {
        study_id,
        name: meta.name.clone(),
        kind: meta.kind,
        items,
        annotators,
        annotators_not_shown: None,
        answers,
        distribution,
        none_share: (answers > 0).then(|| none as f64 / answers as f64),
    })
}

/// The option ids a kind shows, in screen order (from a dummy presentation,
/// so the list can never drift from what annotators see).
fn shown_option_ids(kind: crate::domain::survey::SurveyKind) -> Vec<String> {
    use crate::domain::survey::ItemData;
    // As many candidates as the kind shows at most; both captions non-blank.
    let candidates = kind.spec().needs.candidates.map_or(4, |(_, most)| most);
    let item = ItemData {
        caption: "caption".into(),
        negative_caption: "negative".into(),
        candidate_images: vec![String::new(); candidates],
        positive_image: Some(String::new()),
        chosen_image: Some(String::new()),
        paraphrase: Some(String::new()),
        negative_b: Some(String::new()),
        caption_type: Some("type".into()),
        ..Default::default()
    };
    kind.present(&item, 0).map(|p| p.options.into_iter().map(|o| o.id).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api_types::AnnotatorProgress;

    #[test]
    fn the_page_shows_the_first_rows_and_counts_the_rest() {
        let row = |i: usize| AnnotatorProgress { username: format!("p-{i}"), done: 1, total: 2 };
        let progress = |n: usize| StudyProgress {
            study_id: StudyId::new(1),
            name: "s".into(),
            kind: crate::kinds::KINDS[0],
            items: 1,
            annotators: (0..n).map(row).collect(),
            annotators_not_shown: None,
            answers: 0,
            distribution: Vec::new(),
            none_share: None,
        };
        let mut many = progress(SHOWN_ANNOTATORS + 50);
        for_page(&mut many);
        assert_eq!((many.annotators.len(), many.annotators_not_shown), (SHOWN_ANNOTATORS, Some(50)));
        assert_eq!(many.annotators[0].username, "p-0", "the first rows, in order");
        let mut few = progress(SHOWN_ANNOTATORS);
        for_page(&mut few);
        assert_eq!((few.annotators.len(), few.annotators_not_shown), (SHOWN_ANNOTATORS, None));
    }
}
