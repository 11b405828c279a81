//! Gathers what the dataset card shows (normalisation, study provenance,
//! kappa per pair with each study's own mapping) and writes README.md.
use super::{io_err, ExportRequest, ExportSummary};
use crate::domain::audit::AuditResult;
use crate::domain::category::Category;
use crate::domain::export::card::{dataset_card, Card, KappaRow, StudyCard};
use crate::domain::funnel::Funnel;
use crate::domain::ids::DatasetId;
use crate::error::ServiceError;
use crate::state::StudyMeta;
use crate::store::pages::AbortOnDrop;
use crate::studies::agreement::{study_agreement_report, summary_of_votes};
use crate::studies::votes::Votes;
use sqlx::AnyPool;
use std::path::Path;
use std::sync::Arc;

/// A study's section, its kappa from the answers its outcomes kept (`items`
/// the instance of each of their items), read again only for a kind of
/// several questions.
async fn study_card(db: &AnyPool, meta: &StudyMeta, items: &[i64], votes: &Votes) -> Result<StudyCard, ServiceError> {
    let spec_hash: String =
        sqlx::query_scalar("SELECT spec_hash FROM studies WHERE id = $1").bind(meta.id).fetch_one(db).await?;
    let report = match summary_of_votes(db, crate::kinds::KINDS, meta.id, items, votes).await? {
        Some(report) => report,
        None => study_agreement_report(db, crate::kinds::KINDS, meta.id, None).await?,
    };
    let step = meta.kind.label();
    Ok(StudyCard {
        step,
        id: meta.id,
        name: meta.name.clone(),
        kind: meta.kind.as_str().to_string(),
        seed: meta.seed,
        spec_hash,
        resolve: meta.resolve.as_str().to_string(),
        mapping: report.mapping.to_string(),
        pairs: report
            .figures
            .pairs
            .into_iter()
            .map(|p| KappaRow {
                a: p.a,
                b: p.b,
                n: p.n,
                observed: p.observed,
                expected: p.expected,
                kappa: p.kappa,
                reason: p.kappa_reason,
            })
            .collect(),
        mean_kappa: report.figures.mean_kappa,
    })
}

/// What the card tells beyond the export's own counts: the dataset's
/// normalisation and a section per study of the pipeline. Kappa per pair
/// goes over every answer of a study, so the export computes this beside
/// the rows.
pub struct Provenance {
    normalize: String,
    studies: Vec<StudyCard>,
}

/// A study of the pipeline with the instance of each item and the answers
/// its outcomes kept.
pub type StudyAnswers = (StudyMeta, Vec<i64>, Arc<Votes>);

pub async fn provenance(
    db: AnyPool,
    dataset_id: DatasetId,
    studies: Vec<StudyAnswers>,
) -> Result<Provenance, ServiceError> {
    let normalize: String =
        sqlx::query_scalar("SELECT normalize FROM datasets WHERE id = $1").bind(dataset_id).fetch_one(&db).await?;
    let mut cards = Vec::new();
    for (meta, items, votes) in studies {
        cards.push(study_card(&db, &meta, &items, &votes).await?);
    }
    Ok(Provenance { normalize, studies: cards })
}

pub fn write(
    req: &ExportRequest,
    command: &str,
    funnel: &Funnel,
    s: &ExportSummary,
    prov: &Provenance,
    path: &Path,
) -> Result<(), ServiceError> {
    let text = dataset_card(&Card {
        dataset: &req.dataset,
        stage: req.stage,
        format: req.format,
        normalize: &prov.normalize,
        command,
        version: env!("CARGO_PKG_VERSION"),
        files: &s.files,
        counts: &s.counts,
        images: s.images,
        funnel,
        studies: &prov.studies,
        split_seed: (req.splits.len() > 1).then_some(req.seed),
    });
    std::fs::write(path, text).map_err(|e| io_err("writing", path, e))
}

/// The blind text-only audit of the exported stage (docs/audit.md) over the
/// captions of `ids`, the exported instances: read and scored on its own
/// task, beside the rows. Reading the captions a second time costs less
/// than scoring them after the rows, on one core, would.
pub fn start_audit(db: &AnyPool, req: &ExportRequest, dataset_id: DatasetId, ids: Vec<(i64, Category)>) -> Audit {
    let (db, dataset, stage) = (db.clone(), req.dataset.clone(), req.stage);
    AbortOnDrop(tokio::spawn(async move {
        let pairs = crate::datasets::audit::pairs_for(&db, dataset_id, &ids).await?;
        crate::datasets::audit::audits_of(&db, &dataset, dataset_id, stage, pairs).await
    }))
}

pub type Audit = AbortOnDrop<Result<Vec<AuditResult>, ServiceError>>;

/// Appends the audit [`start_audit`] began to the card.
pub async fn append_audit(mut audit: Audit, path: &Path) -> Result<(), ServiceError> {
    use std::io::Write;
    let audits = (&mut audit).await.map_err(|e| ServiceError::internal("auditing the captions", e))??;
    if audits.iter().all(|a| a.rows.is_empty()) {
        return Ok(()); // no instance with a negative caption (prompts to rank)
    }
    let mut section = String::from(
        "\n## Blind text-only audit\n\nHow often a scorer that sees only the two captions scores the positive \
         higher (ties count half), with 95% Wilson intervals. Near 50% means the negatives cannot be told \
         from their wording alone; far above it, a benchmark built on them partly measures language priors.\n\n",
    );
    for a in &audits {
        section.push_str(&format!("- `{}`: {}\n", a.scorer, a.source));
    }
    section.push_str(&format!("\n```\n{}```\n", crate::domain::audit::render(&audits)));
    let mut f = std::fs::OpenOptions::new().append(true).open(path).map_err(|e| io_err("opening", path, e))?;
    f.write_all(section.as_bytes()).map_err(|e| io_err("writing", path, e))
}
