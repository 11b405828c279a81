//! The other benchmarks' protocols on the command line: `import triplets`
//! (SugarCrepe++) and `report` (a reporting kind's statistics).
use super::open;
use super::serve::Paths;
use crate::datasets::import::triplets::{import_triplets as import, TripletRequest};
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
    let store = ImageStore::new(Paths { data_dir: data_dir.to_path_buf(), site_dir: PathBuf::new() }.image_dir());
    let n = import(&pool, &store, &req).await?;
    println!("imported {n} triplets into dataset {:?}", req.dataset);
    pool.close().await;
    Ok(())
}

pub async fn report(data_dir: &Path, study: i64, json: bool) -> anyhow::Result<()> {
    let pool = open(data_dir).await?;
    let r = crate::studies::report::study_report(&pool, study).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{}", crate::studies::report::render(&r));
    }
    pool.close().await;
    Ok(())
}
