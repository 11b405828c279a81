//! The other benchmarks' protocols on the command line: `import triplets`
//! (SugarCrepe++), `import ab-pairs` (SugarCrepe), `import rankings` (ranking generated images), `report` (a reporting kind's statistics)
//! and `audit` (the blind text-only audit).
use super::open;
use crate::datasets::import::triplets::{import_triplets as import, TripletRequest};
use crate::domain::ids::StudyId;
use crate::store::images::ImageStore;
use std::path::{Path, PathBuf};

pub async fn import_triplets(
    data_dir: &Path,
    file: PathBuf,
    images: PathBuf,
    dataset: Option<String>,
) -> anyhow::Result<()> {
    let dataset =
        dataset.unwrap_or_else(|| file.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default());
    let req = TripletRequest { file_label: file.display().to_string(), file, images, dataset };
    let pool = open(data_dir).await?;
    let store = ImageStore::new(data_dir.join("images"));
    let n = import(&pool, &store, &req).await?;
    println!("imported {n} triplets into dataset {:?}", req.dataset);
    pool.close().await;
    Ok(())
}

/// The data directory's image store.
fn image_store(data_dir: &Path) -> ImageStore {
    ImageStore::new(data_dir.join("images"))
}

/// The `--dataset` given, else the file name without its extension.
fn dataset_name(file: &Path, given: Option<String>) -> String {
    given.unwrap_or_else(|| file.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default())
}

pub async fn import_rankings(
    data_dir: &Path,
    file: PathBuf,
    images: PathBuf,
    dataset: Option<String>,
) -> anyhow::Result<()> {
    let dataset = dataset_name(&file, dataset);
    let pool = open(data_dir).await?;
    let store = image_store(data_dir);
    let label = file.display().to_string();
    let n = crate::datasets::import::rankings::import_rankings(&pool, &store, &file, &label, &images, &dataset).await?;
    println!("imported {n} prompts to rank into dataset {dataset:?}");
    pool.close().await;
    Ok(())
}

pub async fn import_pairs(
    data_dir: &Path,
    file: PathBuf,
    images: PathBuf,
    dataset: Option<String>,
) -> anyhow::Result<()> {
    use crate::datasets::import::pairs::{import_pairs, PairsRequest};
    let req =
        PairsRequest { file_label: file.display().to_string(), dataset: dataset_name(&file, dataset), file, images };
    let pool = open(data_dir).await?;
    let (n, pairs) = import_pairs(&pool, &image_store(data_dir), &req).await?;
    pool.close().await;
    let what = if pairs { "caption pairs" } else { "images to write caption pairs for" };
    println!("imported {n} {what} into dataset {:?}", req.dataset);
    Ok(())
}

pub async fn import_ab_pairs(data_dir: &Path, file: PathBuf, dataset: Option<String>) -> anyhow::Result<()> {
    let dataset = dataset_name(&file, dataset);
    let pool = open(data_dir).await?;
    let n =
        crate::datasets::import::ab_pairs::import_ab_pairs(&pool, &file, &file.display().to_string(), &dataset).await?;
    println!("imported {n} A/B pairs into dataset {dataset:?}");
    pool.close().await;
    Ok(())
}

pub async fn report(data_dir: &Path, study: StudyId, json: bool) -> anyhow::Result<()> {
    let pool = super::open_existing(data_dir).await?;
    let r = crate::studies::report::study_report(&pool, &crate::kinds::REGISTRY, study).await?;
    if json {
        println!("{}", String::from_utf8(r.to_json(true)?)?);
    } else {
        print!("{}", r.render());
    }
    pool.close().await;
    Ok(())
}

/// `hardneg audit`: the baselines, or one external scorer (command, name) whose result is stored.
pub async fn audit(
    data_dir: &Path,
    dataset: &str,
    stage: Option<&str>,
    external: Option<(String, String)>,
    json: bool,
) -> anyhow::Result<()> {
    use crate::datasets::audit::{external_audit, furthest_stage, stage_audits};
    let stage = stage
        .map(|s| {
            crate::domain::export::Stage::parse(s)
                .map_err(|e| crate::error::ServiceError::Invalid(format!("--stage: {e}")))
        })
        .transpose()?;
    let pool = super::open_existing(data_dir).await?;
    let audits = match external {
        Some((command, name)) => {
            let stage = match stage {
                Some(s) => s,
                None => furthest_stage(&pool, dataset).await?,
            };
            vec![external_audit(&pool, dataset, stage, &name, &command).await?]
        }
        None => stage_audits(&pool, dataset, stage).await?.into_iter().filter(|a| a.created_at.is_none()).collect(),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&audits)?);
    } else {
        let n = audits.first().and_then(|a| a.overall()).map_or(0, |r| r.instances);
        let stage = audits.first().map_or("", |a| a.stage.as_str());
        println!("blind text-only audit of {dataset:?}, stage {stage} ({n} instances): near 50% means no blind bias");
        print!("{}", crate::domain::audit::render(&audits));
    }
    pool.close().await;
    Ok(())
}
