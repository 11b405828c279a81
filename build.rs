//! Embeds migrations/ and migrations/postgres/ (`store::migrations` makes
//! them sqlx's `Migration`s), rebuilt when a file there changes. The server
//! also embeds the built client (scripts/build-site.sh writes it to
//! target/site), so one binary runs without a checkout.
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let code = format!(
        "{}{}",
        migrations("SQLITE", &root.join("migrations")),
        migrations("POSTGRES", &root.join("migrations/postgres"))
    );
    std::fs::write(out_dir.join("migrations.rs"), code).expect("writing migrations.rs");
    let out = out_dir.join("embedded_site.rs");
    let mut files = Vec::new();
    if std::env::var_os("CARGO_FEATURE_SSR").is_some() {
        println!("cargo:rerun-if-env-changed=HARDNEG_EMBED_SITE");
        let site = match std::env::var_os("HARDNEG_EMBED_SITE") {
            Some(dir) => PathBuf::from(dir),
            None => Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("target/site"),
        };
        let _ = std::fs::create_dir_all(&site);
        wait_for_client(&site);
        let name = site.join("output-name");
        if name.is_file() {
            // build-site.sh rewrites output-name last, and only when the site changed (a run that
            // changed nothing touches no file here), so it alone says the site changed.
            println!("cargo:rerun-if-changed={}", name.display());
            walk(&site, &site, &mut files);
        } else {
            // Watched as a directory, so it must exist: a missing path would rerun this script on every build.
            println!("cargo:rerun-if-changed={}", site.display());
        }
    }
    files.sort();
    let mut code = String::from("/// The client files as (path under the site, bytes), `output-name` among them.\npub static SITE: &[(&str, &[u8])] = &[\n");
    for (rel, abs) in &files {
        code.push_str(&format!("    ({rel:?}, include_bytes!({abs:?})),\n"));
    }
    code.push_str("];\n");
    std::fs::write(out, code).expect("writing embedded_site.rs");
}

/// A static list of a directory's migrations, as sqlx reads them: files
/// named `<version>_<description>.sql`, others ignored, in version order.
fn migrations(name: &str, dir: &Path) -> String {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let Some((version, rest)) = file.split_once('_') else { continue };
        let Some(description) = rest.strip_suffix(".sql").filter(|_| path.is_file()) else { continue };
        let version: i64 =
            version.parse().unwrap_or_else(|_| panic!("{}: no integer version before `_`", path.display()));
        assert!(
            !description.ends_with(".up") && !description.ends_with(".down"),
            "{}: reversible migrations are not embedded (build.rs)",
            path.display()
        );
        found.push((version, description.replace('_', " "), path.display().to_string()));
    }
    found.sort();
    let mut code = format!("static {name}: &[(i64, &str, &str)] = &[\n");
    for (version, description, path) in found {
        code.push_str(&format!("    ({version}, {description:?}, include_str!({path:?})),\n"));
    }
    code + "];\n"
}

/// scripts/test.sh builds the client beside the server, holding
/// `<site>/.building` (the id of the process building it) until it is done:
/// the dependencies compile meanwhile, and only the crate itself waits here
/// for the site it embeds.
fn wait_for_client(site: &Path) {
    let marker = site.join(".building");
    let building = || {
        let pid = std::fs::read_to_string(&marker).ok()?;
        let pid = pid.trim();
        // A marker left by a killed build (its process gone) is not waited for.
        (!pid.is_empty() && Path::new("/proc").join(pid).exists()).then_some(())
    };
    let started = SystemTime::now();
    let mut waited = false;
    while building().is_some() && started.elapsed().unwrap_or_default() < Duration::from_secs(1800) {
        waited = true;
        std::thread::sleep(Duration::from_millis(500));
    }
    if building().is_some() {
        println!("cargo:warning=gave up waiting for the client build ({} is still there)", marker.display());
    }
    // Written during this run, output-name would look newer than it to cargo,
    // which would run this script and rebuild the crate again next time.
    if waited {
        let before = started - Duration::from_secs(60);
        let _ =
            std::fs::File::options().write(true).open(site.join("output-name")).and_then(|f| f.set_modified(before));
    }
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(root, &path, files);
        } else if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        } else if let (Ok(rel), Some(abs)) = (path.strip_prefix(root), path.to_str()) {
            files.push((rel.to_string_lossy().replace('\\', "/"), abs.to_string()));
        }
    }
}
