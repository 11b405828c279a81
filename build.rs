//! `sqlx::migrate!` embeds migrations/ at compile time; without the first
//! line a new migration file would not rebuild the crate (sqlx's recommended
//! script). The server also embeds the built client (scripts/build-site.sh
//! writes it to target/site), so one binary runs without a checkout.
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded_site.rs");
    let mut files = Vec::new();
    if std::env::var_os("CARGO_FEATURE_SSR").is_some() {
        println!("cargo:rerun-if-env-changed=HARDNEG_EMBED_SITE");
        let site = match std::env::var_os("HARDNEG_EMBED_SITE") {
            Some(dir) => PathBuf::from(dir),
            None => Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("target/site"),
        };
        // Watched as a directory, so it must exist: a missing path would rerun this script on every build.
        let _ = std::fs::create_dir_all(&site);
        println!("cargo:rerun-if-changed={}", site.display());
        if site.join("output-name").is_file() {
            walk(&site, &site, &mut files);
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

fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(root, &path, files);
        } else if let (Ok(rel), Some(abs)) = (path.strip_prefix(root), path.to_str()) {
            files.push((rel.to_string_lossy().replace('\\', "/"), abs.to_string()));
        }
    }
}
