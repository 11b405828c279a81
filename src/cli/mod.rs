//! The command line: `hardneg serve`, `hardneg user add`, `hardneg study create`,
//! `hardneg import candidates`, `hardneg results import`, `hardneg score`, `hardneg export` and reports.
pub mod demo_models;
pub mod demo_seed;
mod print;
pub mod serve;
pub mod site;

use crate::accounts as auth;
use crate::datasets::import::{import_candidates, ImportRequest};
use crate::domain::normalize::NormalizeMode;
use crate::domain::role::Role;
use crate::store::{db, images::ImageStore};
use crate::studies::create as studies;
use anyhow::Context;
use clap::{Parser, Subcommand};
use serve::Paths;
use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "hardneg", version, about = "Human curation of vision-language compositionality benchmarks")]
pub struct Cli {
    /// Holds the SQLite file and the image store.
    #[arg(long, global = true, env = "HARDNEG_DATA_DIR", default_value = "./hardneg-data")]
    pub data_dir: PathBuf,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run the web application.
    Serve {
        #[arg(long, default_value = "127.0.0.1:3000")]
        bind: SocketAddr,
        /// Load the embedded demo dataset and study (and, on an empty database, demo accounts).
        #[arg(long)]
        demo: bool,
        /// Number of demo instances (a multiple of 7 covers all categories evenly).
        #[arg(long, default_value_t = crate::demo::DEFAULT_COUNT)]
        demo_size: usize,
        /// The built client (pkg/hardneg.js, pkg/hardneg.wasm, pkg/hardneg.css).
        #[arg(long, env = "HARDNEG_SITE_DIR", default_value = "target/site")]
        site_dir: PathBuf,
        /// Mark the session cookie `Secure` (only sent over HTTPS): set it behind TLS.
        #[arg(long)]
        secure_cookies: bool,
        /// The origin browsers reach the app at through a proxy (e.g.
        /// https://hardneg.example.org); state-changing requests from any
        /// other origin than this or the request's Host are refused.
        #[arg(long, env = "HARDNEG_PUBLIC_ORIGIN")]
        public_origin: Option<String>,
    },
    /// Manage accounts.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Every dataset with its curation funnel (candidates → Step 3 → Step 4).
    Datasets {
        /// Print the JSON of GET /api/v1/datasets instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Manage studies.
    Study {
        #[command(subcommand)]
        command: StudyCommand,
    },
    /// Import datasets.
    Import {
        #[command(subcommand)]
        command: ImportCommand,
    },
    /// Model results.
    Results {
        #[command(subcommand)]
        command: ResultsCommand,
    },
    /// Inter-annotator agreement on a study: Cohen's kappa per pair, mean, Fleiss, Krippendorff's alpha.
    Agreement {
        study: i64,
        /// `full` (every answer its own category) or `binary` (keeps vs drops: BiVLC Step 3's any image vs None).
        /// Default: the mapping the study's spec chose.
        #[arg(long)]
        mapping: Option<String>,
        /// Print the JSON of GET /api/v1/studies/{id}/agreement instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Score a dataset with a model: a Hugging Face CLIP directory run in-process, or an external scorer.
    Score {
        /// Directory with config.json, model.safetensors and tokenizer.json.
        #[arg(long, required_unless_present = "external", conflicts_with = "external")]
        model_dir: Option<PathBuf>,
        /// A command speaking the scorer protocol (docs/scorer-protocol.md), run with `sh -c`.
        #[arg(long)]
        external: Option<String>,
        /// The run's name in comparisons (re-scoring the same name replaces the run).
        #[arg(long)]
        name: String,
        #[arg(long)]
        dataset: String,
        /// auto (CUDA when built with it and present, else CPU), cpu or cuda.
        #[arg(long, default_value = "auto")]
        device: String,
        /// Images or captions per forward pass.
        #[arg(long, default_value_t = 32)]
        batch: usize,
    },
    /// Export curated instances: rows (BiVLC columns + provenance), images/ and a README.md card (docs/export.md).
    Export {
        dataset: String,
        /// A new or empty directory.
        #[arg(long)]
        out: PathBuf,
        /// csv, jsonl or parquet.
        #[arg(long)]
        format: String,
        /// candidates, step3 or final.
        #[arg(long, default_value = "final")]
        stage: String,
        /// `test` (one named file) or `train=0.8,val=0.2` (seeded, stratified by type/subtype).
        #[arg(long)]
        split: Option<String>,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// CSV only: prefix cells starting with = + - @ tab or CR with ' so spreadsheets show them as text.
        #[arg(long)]
        spreadsheet_safe: bool,
    },
    /// Compare models (and chance) on a dataset: I2T, T2I, Group and finer scores.
    Compare {
        #[arg(long)]
        dataset: String,
        /// Only these human-baseline studies (repeatable); default: every one of the dataset.
        #[arg(long = "baseline", value_name = "STUDY_ID")]
        baselines: Vec<i64>,
        /// Print the JSON of GET /api/v1/compare instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum ResultsCommand {
    /// Import per-instance results (BiVLC results CSV, or raw similarities c0_i0, c1_i0, c0_i1, c1_i1).
    Import {
        #[arg(long)]
        model: String,
        /// Dataset to match rows to; created text-only from the rows when it does not exist.
        #[arg(long, default_value = "bivlc")]
        dataset: String,
        file: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum ImportCommand {
    /// BiVLC Step 2 candidates, CSV or JSON Lines (.jsonl/.json), with their images (docs/import.md).
    Candidates {
        file: PathBuf,
        /// Where `filename` (the positive image) resolves.
        #[arg(long)]
        positives: PathBuf,
        /// Where `hn_img_0..hn_img_3` (the negative images) resolve.
        #[arg(long)]
        negatives: PathBuf,
        /// Dataset name; default: the file name without its extension.
        #[arg(long)]
        dataset: Option<String>,
        /// Caption normalisation: bivlc (as released), preserve-entities or none.
        #[arg(long, default_value = "bivlc")]
        normalize: NormalizeMode,
        /// Hard-link new images into the store instead of copying them: faster,
        /// but the store then shares the files, so never change them in place.
        #[arg(long)]
        link: bool,
    },
}

#[derive(Subcommand)]
pub enum UserCommand {
    /// Add an account; the password is read from standard input.
    Add {
        name: String,
        #[arg(long)]
        role: String,
        #[arg(long, required = true)]
        password_stdin: bool,
    },
}

#[derive(Subcommand)]
pub enum StudyCommand {
    /// Create a study from a TOML spec (see docs/study-spec.md).
    Create { spec: PathBuf },
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let data_dir = cli.data_dir;
    match cli.command {
        Command::Serve { bind, demo, demo_size, site_dir, secure_cookies, public_origin } => {
            let paths = Paths { data_dir, site_dir };
            std::fs::create_dir_all(&paths.data_dir)?;
            // Held until the server stops: the start-up sweep owns the data dir.
            let _lock = crate::store::leftovers::lock_data_dir(&paths.data_dir)?;
            if demo {
                prepare_demo(&paths, demo_size).await?;
            }
            serve::serve(paths, bind, serve::Exposure { secure_cookies, public_origin }).await
        }
        Command::User { command: UserCommand::Add { name, role, .. } } => {
            let role = Role::parse(&role)
                .with_context(|| format!("unknown role {role:?} (admin, researcher or annotator)"))?;
            let mut password = String::new();
            std::io::stdin().read_to_string(&mut password).context("reading the password from standard input")?;
            let password = password.trim_end_matches(['\n', '\r']);
            let pool = open(&data_dir).await?;
            auth::add_user(&pool, &name, role, password).await?;
            println!("added {} {name}", role.as_str());
            Ok(())
        }
        Command::Results { command: ResultsCommand::Import { model, dataset, file } } => {
            let pool = open(&data_dir).await?;
            let s = crate::models::results::import_results(&pool, &model, &dataset, &file).await?;
            let created = if s.dataset_created { " (created text-only)" } else { "" };
            let replaced = if s.replaced_run { ", replacing the earlier run" } else { "" };
            println!("imported {} results of {model} on dataset {}{created}{replaced}", s.rows, s.dataset);
            Ok(())
        }
        Command::Score { model_dir, external, name, dataset, device, batch } => {
            use crate::scoring::command::{run_score, Model};
            let device = crate::scoring::clip::DeviceChoice::parse(&device)
                .with_context(|| format!("unknown device {device:?} (auto, cpu or cuda)"))?;
            let model = match (model_dir, external) {
                (Some(path), _) => Model::Dir { path, device },
                (None, Some(cmd)) => Model::External(cmd),
                (None, None) => anyhow::bail!("give --model-dir or --external"),
            };
            let pool = open(&data_dir).await?;
            let store = ImageStore::new(Paths { data_dir: data_dir.clone(), site_dir: PathBuf::new() }.image_dir());
            run_score(&pool, &store, model, crate::scoring::run::ScoreRequest { name, dataset, batch }).await
        }
        Command::Import {
            command: ImportCommand::Candidates { file, positives, negatives, dataset, normalize, link },
        } => {
            let mut req = ImportRequest::new(&file, &positives, &negatives);
            req.normalize = normalize;
            req.link = link;
            if let Some(dataset) = dataset {
                req.dataset = dataset;
            }
            let pool = open(&data_dir).await?;
            let images = ImageStore::new(Paths { data_dir: data_dir.clone(), site_dir: PathBuf::new() }.image_dir());
            let start = std::time::Instant::now();
            let s = import_candidates(&pool, &images, &req).await?;
            if s.already_imported {
                println!(
                    "already imported: dataset {:?} holds this file ({} instances, {} images); nothing changed",
                    s.dataset, s.instances, s.images
                );
            } else {
                println!(
                    "imported {} instances into dataset {:?} (normalize {normalize}): {} images, {} new, in {:.2} s",
                    s.instances,
                    s.dataset,
                    s.images,
                    s.new_images,
                    start.elapsed().as_secs_f64()
                );
            }
            pool.close().await;
            Ok(())
        }
        Command::Agreement { study, mapping, json } => {
            let mapping = match mapping {
                None => None,
                Some(m) => Some(
                    crate::studies::agreement::Mapping::parse(&m)
                        .with_context(|| format!("unknown mapping {m:?} (full or binary)"))?,
                ),
            };
            let pool = open(&data_dir).await?;
            let r = crate::studies::agreement::study_agreement_report(&pool, study, mapping)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                let show = |v: Option<f64>, why: &Option<String>| {
                    v.map(|v| format!("{v:.3}"))
                        .unwrap_or_else(|| format!("undefined ({})", why.as_deref().unwrap_or("")))
                };
                for p in &r.pairs {
                    println!(
                        "{:<14} {:<14} n={:<6} observed={:.3} expected={:.3} kappa={}",
                        p.a,
                        p.b,
                        p.n,
                        p.observed,
                        p.expected,
                        show(p.kappa, &p.kappa_reason)
                    );
                }
                println!("mean kappa {}", show(r.mean_kappa, &r.mean_kappa_reason));
                println!("Fleiss' kappa {}", show(r.fleiss_kappa, &r.fleiss_reason));
                println!("Krippendorff's alpha {}", show(r.krippendorff_alpha, &r.alpha_reason));
            }
            Ok(())
        }
        Command::Export { dataset, out, format, stage, split, seed, spreadsheet_safe } => {
            let req = crate::datasets::export::ExportRequest::parse(
                &dataset,
                &format,
                Some(&stage),
                split.as_deref(),
                Some(seed),
            )
            .and_then(|r| r.with_spreadsheet_safe(spreadsheet_safe))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
            let pool = open(&data_dir).await?;
            print::export(&pool, &ImageStore::new(data_dir.join("images")), &req, &out).await
        }
        Command::Compare { dataset, baselines, json } => {
            let pool = open(&data_dir).await?;
            let report = crate::models::compare::compare(&pool, &dataset, &baselines)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print::compare_table(&report);
            }
            Ok(())
        }
        Command::Datasets { json } => {
            let pool = open(&data_dir).await?;
            let all = crate::studies::pipeline::all_funnels(&pool).await.map_err(|e| anyhow::anyhow!("{e}"))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&all)?);
            } else {
                println!(
                    "{:<24} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                    "dataset", "candidates", "s3 kept", "s3 drop", "s3 open", "s4 kept", "s4 amb", "s4 both"
                );
                for f in &all {
                    let o = &f.overall;
                    println!(
                        "{:<24} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                        f.dataset,
                        o.candidates,
                        o.step3_kept,
                        o.step3_discarded,
                        o.step3_open,
                        o.step4_kept,
                        o.step4_ambiguous,
                        o.step4_both
                    );
                }
            }
            Ok(())
        }
        Command::Study { command: StudyCommand::Create { spec } } => {
            let text = std::fs::read_to_string(&spec).with_context(|| format!("reading {}", spec.display()))?;
            let study =
                studies::parse_spec(&text, db::now_secs() as u64).with_context(|| spec.display().to_string())?;
            let pool = open(&data_dir).await?;
            let id = studies::create_study(&pool, &study, &text).await.with_context(|| spec.display().to_string())?;
            println!("created study {id}: {} (seed {})", study.name, study.seed);
            Ok(())
        }
    }
}

async fn open(data_dir: &std::path::Path) -> anyhow::Result<sqlx::SqlitePool> {
    std::fs::create_dir_all(data_dir).with_context(|| format!("creating {}", data_dir.display()))?;
    db::open_pool(&data_dir.join("hardneg.sqlite")).await
}

async fn prepare_demo(paths: &Paths, size: usize) -> anyhow::Result<()> {
    let pool = open(&paths.data_dir).await?;
    let n = demo_seed::seed_demo_dataset(&pool, &ImageStore::new(paths.image_dir()), size).await?;
    if n > 0 {
        println!("loaded {n} demo instances");
    }
    demo_seed::seed_demo_study(&pool).await?;
    let started = std::time::Instant::now();
    let scored =
        demo_models::score_demo_models(&pool, &ImageStore::new(paths.image_dir()), demo_seed::DEMO_DATASET).await?;
    println!("scored {scored} demo instances with the demo models in {} ms", started.elapsed().as_millis());
    let accounts = demo_seed::seed_demo_accounts(&pool).await?;
    if !accounts.is_empty() {
        println!("demo accounts (passwords are shown only this once):");
        for (name, role, password) in accounts {
            println!("  {:<12} {:<11} {password}", name, role.as_str());
        }
    }
    pool.close().await;
    Ok(())
}
