//! One function per `hardneg` command whose work is more than a call:
//! `run` (mod.rs) only dispatches.
use super::args::{AgreementArgs, ServeArgs};
use super::{embedded_site, location, open, prepare_demo, print, refuse_postgres, serve};
use crate::accounts as auth;
use crate::datasets::import::{import_candidates, ImportRequest};
use crate::domain::normalize::NormalizeMode;
use crate::domain::role::Role;
use crate::error::ServiceError;
use crate::kinds::REGISTRY;
use crate::store::{db, images::ImageStore};
use crate::studies::create;
use anyhow::Context;
use serve::Paths;
use std::io::Read;
use std::path::{Path, PathBuf};

pub async fn serve(data_dir: &Path, a: ServeArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(data_dir).with_context(|| format!("creating the data dir {}", data_dir.display()))?;
    // Held until the server stops: the start-up sweep owns the data dir.
    // Servers sharing PostgreSQL share the data dir too: none owns it.
    let _lock = match location(data_dir) {
        db::Location::Sqlite(file) => Some(crate::store::leftovers::lock_for_sqlite(data_dir, &file)?),
        db::Location::Postgres(_) => None,
    };
    let site_dir = match a.site_dir {
        Some(dir) => dir,
        None => embedded_site::unpack(data_dir)?.unwrap_or_else(|| PathBuf::from("target/site")),
    };
    let paths = Paths { database: location(data_dir), data_dir: data_dir.to_path_buf(), site_dir };
    if a.demo {
        prepare_demo(&paths, a.demo_size).await?;
    }
    serve::serve(
        paths,
        a.bind,
        serve::Exposure {
            login_checks: a.login_checks.map(usize::from),
            login_wait: std::time::Duration::from_millis(a.login_wait_ms),
            secure_cookies: a.secure_cookies,
            public_origin: a.public_origin,
            trust_proxy: a.trust_proxy,
        },
    )
    .await
}

/// `hardneg user add NAME --role R --password-stdin`.
pub async fn add_user(data_dir: &Path, name: &str, role: &str) -> anyhow::Result<()> {
    let role = Role::parse(role).filter(|r| !r.is_participant()).ok_or_else(|| {
        crate::error::ServiceError::Invalid(format!("unknown role {role:?} (admin, researcher or annotator)"))
    })?;
    let mut password = String::new();
    std::io::stdin().read_to_string(&mut password).context("reading the password from standard input")?;
    let password = password.trim_end_matches(['\n', '\r']);
    let pool = open(data_dir).await?;
    auth::add_user(&pool, name, role, password).await?;
    println!("added {} {name}", role.as_str());
    Ok(())
}

/// `hardneg user password|role|sign-out|disable|enable`: the account's
/// standing, which a running server reads within seconds.
pub async fn change_user(data_dir: &Path, command: super::args::UserCommand) -> anyhow::Result<()> {
    use super::args::UserCommand as U;
    use crate::accounts::standing::Change;
    let (name, change, done) = match command {
        U::Add { .. } => unreachable!("`user add` has its own command"),
        U::Password { name, .. } => {
            let mut password = String::new();
            std::io::stdin().read_to_string(&mut password).context("reading the password from standard input")?;
            let password = password.trim_end_matches(['\n', '\r']).to_string();
            if password.chars().count() < 8 {
                return Err(ServiceError::from(auth::AuthError::WeakPassword).into());
            }
            let hash = tokio::task::spawn_blocking(move || auth::hash_password(&password)).await??;
            (name, Change::PasswordHash(hash), "has a new password; its sessions are ended")
        }
        U::Role { name, role } => {
            let role = Role::parse(&role).filter(|r| !r.is_participant()).ok_or_else(|| {
                crate::error::ServiceError::Invalid(format!("unknown role {role:?} (admin, researcher or annotator)"))
            })?;
            (name, Change::Role(role), "has its new role; its sessions are ended")
        }
        U::SignOut { name } => (name, Change::SignOut, "is signed out everywhere"),
        U::Disable { name } => (name, Change::Disable, "is disabled; its sessions are ended"),
        U::Enable { name } => (name, Change::Enable, "may log in again"),
    };
    crate::accounts::standing::change(&open(data_dir).await?, &name, change).await?;
    println!("{name} {done}");
    Ok(())
}

/// `hardneg import candidates`.
pub async fn import(
    data_dir: &Path,
    (file, positives, negatives): (&Path, &Path, &Path),
    dataset: Option<String>,
    normalize: NormalizeMode,
    link: bool,
) -> anyhow::Result<()> {
    let mut req = ImportRequest::new(file, positives, negatives);
    req.normalize = normalize;
    req.link = link;
    if let Some(dataset) = dataset {
        req.dataset = dataset;
    }
    let pool = open(data_dir).await?;
    let images = ImageStore::new(data_dir.join("images"));
    // A server may be running on the data dir, or start meanwhile (docs/import.md).
    let _lock = crate::store::leftovers::lock_for_import(images.root())?;
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

pub async fn agreement(data_dir: &Path, a: AgreementArgs) -> anyhow::Result<()> {
    let mapping = match a.mapping {
        None => None,
        Some(m) => Some(
            crate::studies::agreement::Mapping::parse(&m)
                .ok_or_else(|| ServiceError::Invalid(format!("unknown mapping {m:?} (full or binary)")))?,
        ),
    };
    let pool = super::open_existing(data_dir).await?;
    let detail = crate::studies::agreement::Detail::new(Some(a.resamples), a.seed)?;
    let r =
        crate::studies::agreement::agreement_report(&pool, crate::kinds::KINDS, a.study, mapping, Some(detail)).await?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        let show = |v: Option<f64>, why: &Option<String>| {
            v.map(|v| format!("{v:.3}")).unwrap_or_else(|| format!("undefined ({})", why.as_deref().unwrap_or("")))
        };
        if let Some(why) = &r.pooled_over_questions {
            println!("all questions pooled ({why}):");
        }
        for p in &r.figures.pairs {
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
        println!("mean kappa {}", show(r.figures.mean_kappa, &r.figures.mean_kappa_reason));
        println!("Fleiss' kappa {}", show(r.figures.fleiss_kappa, &r.figures.fleiss_reason));
        println!("Krippendorff's alpha {}", show(r.figures.krippendorff_alpha, &r.figures.alpha_reason));
        print::agreement_questions(&r);
        print::agreement_detail(&r);
    }
    Ok(())
}

pub async fn backup(data_dir: &Path, dest: &Path, link_dest: Option<&Path>) -> anyhow::Result<()> {
    refuse_postgres(data_dir, "backup")?;
    let start = std::time::Instant::now();
    let r = crate::store::backup::backup(data_dir, dest, link_dest).await?;
    println!(
        "backed up {} answers and {} images into {} in {:.2} s: {} files copied ({} bytes), {} linked from --link-dest",
        r.manifest.answers,
        r.manifest.images,
        dest.display(),
        start.elapsed().as_secs_f64(),
        r.copied,
        r.bytes_copied,
        r.linked
    );
    Ok(())
}

pub async fn restore(data_dir: &Path, src: &Path) -> anyhow::Result<()> {
    refuse_postgres(data_dir, "restore")?;
    let r = crate::store::backup::restore(src, data_dir).await?;
    println!(
        "restored {} answers and {} images ({} files) from {} into {}",
        r.manifest.answers,
        r.manifest.images,
        r.files,
        src.display(),
        data_dir.display()
    );
    Ok(())
}

/// `hardneg datasets [--json]`: every dataset's funnel.
pub async fn datasets(data_dir: &Path, json: bool) -> anyhow::Result<()> {
    let pool = super::open_existing(data_dir).await?;
    let all = crate::studies::pipeline::all_funnels(&pool, crate::kinds::KINDS).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&all)?);
    } else {
        println!(
            "{:<24} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            "dataset", "candidates", "s3 kept", "s3 drop", "s3 open", "s4 kept", "s4 amb", "s4 both", "s4 open"
        );
        for f in &all {
            let o = &f.overall;
            println!(
                "{:<24} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                f.dataset,
                o.candidates,
                o.step3_kept,
                o.step3_discarded,
                o.step3_open,
                o.step4_kept,
                o.step4_ambiguous,
                o.step4_both,
                o.step4_open
            );
        }
    }
    Ok(())
}

/// `hardneg study create SPEC`.
pub async fn create_study(data_dir: &Path, spec: &Path) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(spec)
        .map_err(|e| crate::error::ServiceError::Invalid(format!("cannot read {}: {e}", spec.display())))?;
    let study =
        create::parse_spec(&REGISTRY, &text, db::now_secs() as u64).with_context(|| spec.display().to_string())?;
    let pool = super::open_existing(data_dir).await?;
    let id = create::create_study(&pool, &REGISTRY, &study, &text).await.with_context(|| spec.display().to_string())?;
    println!("created study {id}: {} (seed {})", study.name, study.seed);
    for warning in study.warnings() {
        eprintln!("warning: {warning}");
    }
    Ok(())
}

/// `hardneg score`: what it was given is checked first (exit 2 when at
/// fault), so a bad flag or name does not wait for a model to load.
pub async fn score(
    data_dir: &Path,
    (model_dir, external): (Option<PathBuf>, Option<String>),
    name: String,
    dataset: String,
    (device, dtype): (&str, &str),
    batch: usize,
) -> anyhow::Result<()> {
    use crate::scoring::clip::{DeviceChoice, CHECKPOINT_FILES, NO_CUDA};
    use crate::scoring::command::{run_score, Model};
    use crate::scoring::precision::Precision;
    let invalid = |m: String| anyhow::Error::from(ServiceError::Invalid(m));
    let device =
        DeviceChoice::parse(device).ok_or_else(|| invalid(format!("unknown device {device:?} (auto, cpu or cuda)")))?;
    let precision =
        Precision::parse(dtype).ok_or_else(|| invalid(format!("unknown --dtype {dtype:?} (f32, bf16 or f16)")))?;
    if batch == 0 {
        return Err(invalid("--batch must be at least 1".into()));
    }
    crate::domain::names::check_run_name(&name).map_err(|e| invalid(format!("--name: {e}")))?;
    let model = match (model_dir, external) {
        (Some(_), _) if matches!(device, DeviceChoice::Cuda) && !cfg!(feature = "cuda") => {
            return Err(invalid(NO_CUDA.into()))
        }
        (Some(path), _) if !path.is_dir() => {
            return Err(invalid(format!("--model-dir {}: not a directory", path.display())))
        }
        (Some(path), _) if !CHECKPOINT_FILES.iter().all(|f| path.join(f).is_file()) => {
            let what = format!("a CLIP checkpoint directory holds {}", CHECKPOINT_FILES.join(", "));
            return Err(invalid(format!("--model-dir {}: {what}", path.display())));
        }
        (Some(path), _) => Model::Dir { path, device, precision },
        (None, Some(_)) if precision != Precision::F32 => {
            return Err(invalid(format!(
                "--dtype {dtype} applies to --model-dir; an external scorer picks its own precision"
            )))
        }
        (None, Some(cmd)) => Model::External(cmd),
        (None, None) => return Err(invalid("give --model-dir or --external".into())),
    };
    let pool = super::open_existing(data_dir).await?;
    let dataset_id = crate::studies::pipeline::dataset_id(&pool, &dataset).await?;
    let negatives = crate::studies::negatives::of_dataset(&pool, crate::kinds::KINDS, dataset_id).await?;
    let store = ImageStore::new(data_dir.join("images"));
    run_score(&pool, &store, model, crate::scoring::run::ScoreRequest { name, dataset, batch }, &negatives).await
}
