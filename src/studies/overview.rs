//! The research page's list of studies (and `GET /api/v1/studies/overview`):
//! every study the caller sees with progress, agreement and pipeline status.
use crate::accounts::SessionUser;
use crate::api_types::{AgreementSummary, StudyOverview};
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use crate::state::AppState;
use crate::studies::agreement::{study_agreement_report, Mapping};
use crate::studies::{meta, outcomes, progress};

pub async fn research_overview(state: &AppState, user: &SessionUser) -> Result<Vec<StudyOverview>, ServiceError> {
    let studies = meta::visible_studies(state, user).await?;
    let mut out = Vec::with_capacity(studies.len());
    for s in studies {
        let progress = progress::study_progress(state, StudyId::new(s.id)).await?;
        let mut agreement = Vec::new();
        for mapping in [Mapping::Full, Mapping::Binary] {
            // A mapping the kind has no categories for is left out.
            if let Ok(r) = study_agreement_report(&state.db, StudyId::new(s.id), Some(mapping)).await {
                agreement.push(AgreementSummary {
                    mapping: r.mapping.to_string(),
                    question: None,
                    pairs: r.pairs.len(),
                    mean_kappa: r.mean_kappa,
                    fleiss_kappa: r.fleiss_kappa,
                    krippendorff_alpha: r.krippendorff_alpha,
                    reason: r.mean_kappa_reason,
                });
                agreement.extend(r.questions.into_iter().map(|q| AgreementSummary {
                    mapping: r.mapping.to_string(),
                    question: Some(q.question),
                    pairs: q.pairs.len(),
                    mean_kappa: q.mean_kappa,
                    fleiss_kappa: q.fleiss_kappa,
                    krippendorff_alpha: q.krippendorff_alpha,
                    reason: q.mean_kappa_reason,
                }));
            }
        }
        let status = outcomes::study_status(&state.db, StudyId::new(s.id)).await?;
        out.push(StudyOverview { progress, agreement, status });
    }
    Ok(out)
}
