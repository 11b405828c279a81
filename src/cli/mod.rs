//! The command line: `hardneg serve`, `hardneg user add`, `hardneg study create`,
//! `hardneg import candidates`, `hardneg results import`, `hardneg score`, `hardneg export` and reports.
mod args;
pub mod bulk_seed;
mod commands;
mod crowd;
pub mod demo_crowd;
pub mod demo_hnc;
pub mod demo_models;
pub mod demo_seed;
mod embedded_site;
mod import_command;
mod print;
pub mod prolific;
mod prolific_print;
mod prolific_wait;
mod protocols;
mod quality;
pub use args::{Cli, Command, ResultsCommand, StudyCommand, UserCommand};
pub use import_command::ImportCommand;
mod listen;
pub mod serve;
pub mod site;
mod slow_body;

use crate::domain::export::Stage;
use crate::store::{db, images::ImageStore};
use anyhow::Context;
use serve::Paths;

/// `--database`, when given: every subcommand opens it instead of the data
/// dir's SQLite file.
static DATABASE: std::sync::OnceLock<db::Location> = std::sync::OnceLock::new();

/// Where this command's data lives.
pub(crate) fn location(data_dir: &std::path::Path) -> db::Location {
    DATABASE.get().cloned().unwrap_or_else(|| db::Location::Sqlite(data_dir.join("hardneg.sqlite")))
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let data_dir = cli.data_dir;
    db::set_data_dir(&data_dir);
    if let Some(url) = &cli.database {
        let _ = DATABASE.set(db::Location::parse(url)?);
    }
    match cli.command {
        Command::Serve(a) => commands::serve(&data_dir, a).await,
        Command::User { command: UserCommand::Add { name, role, .. } } => {
            commands::add_user(&data_dir, &name, &role).await
        }
        Command::User { command } => commands::change_user(&data_dir, command).await,
        Command::Results { command: ResultsCommand::Import { model, dataset, file } } => {
            let pool = open(&data_dir).await?;
            let s = crate::models::results::import_results(&pool, &model, &dataset, &file).await?;
            let created = if s.dataset_created { " (created text-only)" } else { "" };
            let replaced = if s.replaced_run { ", replacing the earlier run" } else { "" };
            println!("imported {} results of {model} on dataset {}{created}{replaced}", s.rows, s.dataset);
            Ok(())
        }
        Command::Score { model_dir, external, name, dataset, device, batch, dtype } => {
            commands::score(&data_dir, (model_dir, external), name, dataset, (&device, &dtype), batch).await
        }
        Command::Import {
            command: ImportCommand::Candidates { file, positives, negatives, dataset, normalize, link },
        } => commands::import(&data_dir, (&file, &positives, &negatives), dataset, normalize, link).await,
        Command::Import { command: ImportCommand::Triplets { file, images, dataset } } => {
            protocols::import_triplets(&data_dir, file, images, dataset).await
        }
        Command::Import { command: ImportCommand::Rankings { file, images, dataset } } => {
            protocols::import_rankings(&data_dir, file, images, dataset).await
        }
        Command::Import { command: ImportCommand::Pairs { file, images, dataset } } => {
            protocols::import_pairs(&data_dir, file, images, dataset).await
        }
        Command::Import { command: ImportCommand::AbPairs { file, dataset } } => {
            protocols::import_ab_pairs(&data_dir, file, dataset).await
        }
        Command::Report { study, json } => protocols::report(&data_dir, study, json).await,
        Command::Audit { dataset, stage, external, name, json } => {
            protocols::audit(&data_dir, &dataset, stage.as_deref(), external.zip(name), json).await
        }
        Command::Agreement(a) => commands::agreement(&data_dir, a).await,
        Command::Export { dataset, out, format, stage, split, seed, spreadsheet_safe } => {
            let req = crate::datasets::export::ExportRequest::parse(
                &dataset,
                &format,
                Some(&stage),
                split.as_deref(),
                Some(seed),
            )
            .map(|r| r.with_spreadsheet_safe(spreadsheet_safe))?;
            let pool = open_existing(&data_dir).await?;
            print::export(&pool, &ImageStore::new(data_dir.join("images")), &req, &out).await
        }
        Command::Compare { dataset, baselines, stage, json } => {
            let stage = stage.map(|s| Stage::parse(&s)).transpose().map_err(crate::error::ServiceError::Invalid)?;
            let pool = open_existing(&data_dir).await?;
            let only = crate::datasets::audit::stage_instances(&pool, &dataset, stage).await?;
            let report =
                crate::models::compare::compare(&pool, crate::kinds::KINDS, &dataset, &baselines, only).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print::compare_table(&report);
            }
            Ok(())
        }
        Command::Backup { dest, link_dest } => commands::backup(&data_dir, &dest, link_dest.as_deref()).await,
        Command::Restore { src } => commands::restore(&data_dir, &src).await,
        Command::Datasets { json } => commands::datasets(&data_dir, json).await,
        Command::Study { command: StudyCommand::Link { study, rotate, base_url } } => {
            crowd::link(&open_existing(&data_dir).await?, study, rotate, &base_url).await
        }
        Command::Study { command: StudyCommand::Close { study } } => {
            crowd::close(&open_existing(&data_dir).await?, study).await
        }
        Command::Participants { study, approve_list: true, .. } => {
            quality::approve_list(&open_existing(&data_dir).await?, study).await
        }
        Command::Participants { study, discard: Some(number), .. } => {
            quality::discard(&open_existing(&data_dir).await?, study, number).await
        }
        Command::Participants { study, csv, with_platform_ids, .. } => {
            crowd::participants(&open_existing(&data_dir).await?, study, csv, with_platform_ids).await
        }
        Command::Study { command: StudyCommand::Status { study, json } } => {
            quality::status(&open_existing(&data_dir).await?, study, json).await
        }
        Command::Prolific { command } => prolific::run(&data_dir, command).await,
        Command::Study { command: StudyCommand::Create { spec } } => commands::create_study(&data_dir, &spec).await,
    }
}

/// Backups copy a SQLite file; PostgreSQL has its own tools.
fn refuse_postgres(data_dir: &std::path::Path, what: &str) -> anyhow::Result<()> {
    if location(data_dir).is_postgres() {
        // The caller's input at fault (exit 2), nothing failed.
        return Err(crate::error::ServiceError::Invalid(format!(
            "hardneg {what} works on a SQLite data dir; with --database postgres://… use pg_dump/pg_restore \
             for the database and copy <data dir>/images (docs/deploy.md, \"PostgreSQL\")"
        ))
        .into());
    }
    Ok(())
}

pub(crate) async fn open(data_dir: &std::path::Path) -> anyhow::Result<sqlx::AnyPool> {
    std::fs::create_dir_all(data_dir).with_context(|| format!("creating {}", data_dir.display()))?;
    db::open(&location(data_dir)).await
}

/// The database of a data dir that has one. Only `serve`, `user add` and
/// the imports make a new one: any other command pointed at a mistyped or
/// forgotten `--data-dir` would leave an empty database there and report on it.
pub(crate) async fn open_existing(data_dir: &std::path::Path) -> anyhow::Result<sqlx::AnyPool> {
    let at = location(data_dir);
    if let db::Location::Sqlite(path) = &at {
        if !path.exists() {
            return Err(crate::error::ServiceError::NotFound(format!(
                "no database at {}: give the server's --data-dir (or HARDNEG_DATA_DIR, or --database)",
                path.display()
            ))
            .into());
        }
    }
    db::open(&at).await
}

async fn prepare_demo(paths: &Paths, size: usize) -> anyhow::Result<()> {
    let pool = open(&paths.data_dir).await?;
    let seeding = crate::store::db::hold_setup_lock(&pool).await?;
    let n = demo_seed::seed_demo_dataset(&pool, &ImageStore::new(paths.image_dir()), size).await?;
    if n > 0 {
        println!("loaded {n} demo instances");
    }
    demo_seed::seed_demo_triplets(&pool, &ImageStore::new(paths.image_dir())).await?;
    demo_seed::seed_demo_ab_pairs(&pool).await?;
    demo_seed::seed_demo_rankings(&pool, &ImageStore::new(paths.image_dir())).await?;
    demo_seed::seed_demo_study(&pool).await?;
    let started = std::time::Instant::now();
    let scored =
        demo_models::score_demo_models(&pool, &ImageStore::new(paths.image_dir()), demo_seed::DEMO_DATASET).await?;
    println!("scored {scored} demo instances with the demo models in {} ms", started.elapsed().as_millis());
    let accounts = demo_seed::seed_demo_accounts(&pool).await?;
    demo_hnc::seed_demo_hnc(&pool, &ImageStore::new(paths.image_dir())).await?; // HNC: answered by annotator2
    if !accounts.is_empty() {
        println!("demo accounts (passwords are shown only this once):");
        for (name, role, password) in accounts {
            println!("  {:<12} {:<11} {password}", name, role.as_str());
        }
    }
    seeding.release().await?;
    pool.close().await;
    Ok(())
}
