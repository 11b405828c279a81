//! The binary carries its site: copied alone into an empty directory and
//! started there without `--site-dir`, it serves pages whose client files
//! (the ones target/site holds at build time) all answer 200.
use crate::helpers::{site_dir, text};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[tokio::test]
async fn a_copied_binary_serves_its_embedded_site() {
    let name = std::fs::read_to_string(site_dir().join("output-name")).expect("a built site (scripts/build-site.sh)");
    let name = name.trim();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("hardneg");
    std::fs::copy(env!("CARGO_BIN_EXE_hardneg"), &bin).unwrap();
    let mut child = Command::new(&bin)
        .current_dir(dir.path())
        .args(["serve", "--bind", "127.0.0.1:0", "--demo", "--demo-size", "14", "--data-dir", "data"])
        .env_remove("HARDNEG_SITE_DIR")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = lines
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("hardneg listening on ").map(str::to_string))
        .expect("the server's address");
    let client = reqwest::Client::new();
    let html = client.get(format!("{base}/login")).send().await.unwrap().text().await.unwrap();
    let files =
        [format!("/pkg/{name}.css"), format!("/pkg/{name}.js"), format!("/pkg/{name}_bg.wasm"), "/favicon.svg".into()];
    for (file, kind) in files.iter().zip(["text/css", "text/javascript", "application/wasm", "image/svg+xml"]) {
        if !file.starts_with("/favicon") {
            assert!(html.contains(file.as_str()), "{file} not named by the page: {html}");
        }
        let res = client.get(format!("{base}{file}")).send().await.unwrap();
        assert_eq!(res.status(), 200, "{file}");
        assert!(res.headers()["content-type"].to_str().unwrap().starts_with(kind), "{file}: {:?}", res.headers());
        let served = res.bytes().await.unwrap();
        let built = std::fs::read(site_dir().join(file.trim_start_matches('/'))).unwrap();
        assert!(served == built, "{file}: the served bytes are the built ones");
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(dir.path().join("data/site").join(name).join("output-name").is_file());
    let out = Command::new(&bin).current_dir(dir.path()).args(["--help"]).output().unwrap();
    assert!(text(&out.stdout).contains("backup"));
}
