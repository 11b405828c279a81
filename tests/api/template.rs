//! Demo data dirs seeded once per test process and copied for each new
//! server (part of `helpers.rs`). Seeding the demo (rendered images, model
//! scores, password hashes) costs seconds of CPU per server in the dev
//! profile; a copy costs milliseconds, and the server then starts on a data
//! dir exactly as a seeding server leaves it.
use super::backend::{clone_database, on_postgres};
use super::TestApp;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// A seeded data dir and the demo accounts its server printed.
struct Template {
    dir: PathBuf,
    accounts: HashMap<String, String>,
}

type Templates = Mutex<HashMap<Vec<String>, Arc<OnceLock<Template>>>>;

/// Fills the new, empty `data_dir` from the template for the server
/// arguments `extra` and returns the demo accounts, or None where a
/// template does not apply: a data dir in use, arguments other than
/// `--demo-size`, or HARDNEG_TEST_TEMPLATES=0.
pub fn fill(data_dir: &Path, extra: &[&str]) -> Option<HashMap<String, String>> {
    let fresh = std::fs::read_dir(data_dir).map_or(true, |mut entries| entries.next().is_none());
    let plain = extra.is_empty() || (extra.len() == 2 && extra[0] == "--demo-size");
    if !fresh || !plain || std::env::var("HARDNEG_TEST_TEMPLATES").is_ok_and(|v| v == "0") {
        return None;
    }
    static TEMPLATES: OnceLock<Templates> = OnceLock::new();
    let key: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    let slot = Arc::clone(TEMPLATES.get_or_init(Templates::default).lock().unwrap().entry(key).or_default());
    // Each template is seeded once; tests wanting another one do not wait for it.
    let template = slot.get_or_init(|| seed(extra));
    copy_dir(&template.dir, data_dir);
    if on_postgres() {
        clone_database(&template.dir, data_dir);
    }
    Some(template.accounts.clone())
}

/// Seeds a template with a real server, stopped with SIGTERM so that its
/// shutdown runs (SQLite's WAL is checkpointed into the database file).
fn seed(extra: &[&str]) -> Template {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("demo-templates");
    remove_stale(&root);
    let dir = root.join(format!("{}-{}", std::process::id(), extra.join("_")));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut app = TestApp::spawn_seeding(&dir, extra);
    app.terminate();
    assert!(app.wait().success(), "the template's server stops gracefully on SIGTERM");
    let _ = std::fs::remove_file(dir.join("serve.lock"));
    Template { dir, accounts: app.accounts.clone() }
}

/// Removes the templates of test processes that have ended.
fn remove_stale(root: &Path) {
    for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let pid = name.split('-').next().unwrap_or_default();
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else if !entry.file_name().to_string_lossy().ends_with("-shm") {
            // SQLite rebuilds the shared-memory index of a WAL it finds without one.
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
