//! The research page's list of studies (and `GET /api/v1/studies/overview`):
//! every study the caller sees with progress, agreement and pipeline status.
use crate::accounts::SessionUser;
use crate::api_types::{AgreementSummary, StudyOverview};
use crate::error::ServiceError;
use crate::state::AppState;
use crate::studies::agreement::{study_agreement_report, Figures, Mapping};
use crate::studies::{meta, outcomes, progress};

pub async fn research_overview(state: &AppState, user: &SessionUser) -> Result<Vec<StudyOverview>, ServiceError> {
    let studies = meta::visible_studies(state, user).await?;
    let mut out = Vec::with_capacity(studies.len());
    for s in studies {
        let progress = progress::study_progress(state, s.id).await?;
        let mut agreement = Vec::new();
        for mapping in [Mapping::Full, Mapping::Binary] {
            // A mapping the kind has no categories for (Invalid) is left out.
            let r = match study_agreement_report(&state.db, state.kinds, s.id, Some(mapping)).await {
                Ok(r) => r,
                Err(ServiceError::Invalid(_)) => continue,
                Err(e) => return Err(e),
            };
            // Several questions: the pooled figures are not a chance-corrected
            // agreement (`pooled_over_questions`); each question has its row.
            if r.questions.is_empty() {
                agreement.push(summary(r.mapping, None, &r.figures));
            }
            agreement.extend(r.questions.iter().map(|q| summary(r.mapping, Some(&q.question), &q.figures)));
        }
        let status = outcomes::study_status(&state.db, state.kinds, s.id).await?;
        out.push(StudyOverview { progress, agreement, status });
    }
    Ok(out)
}

/// One line of the overview's agreement table.
fn summary(mapping: &str, question: Option<&str>, f: &Figures) -> AgreementSummary {
    AgreementSummary {
        mapping: mapping.to_string(),
        question: question.map(str::to_string),
        pairs: f.pairs.len(),
        mean_kappa: f.mean_kappa,
        fleiss_kappa: f.fleiss_kappa,
        krippendorff_alpha: f.krippendorff_alpha,
        reason: f.mean_kappa_reason.clone(),
        fleiss_reason: f.fleiss_reason.clone(),
        alpha_reason: f.alpha_reason.clone(),
    }
}
