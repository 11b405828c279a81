//! The one test-app spawner every integration and end-to-end test uses: the
//! real `hardneg` binary on a temporary data dir, over real HTTP.
#![allow(dead_code)]
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct TestApp {
    pub base: String,
    pub data_dir: PathBuf,
    /// Demo accounts as printed once by the server: name → password.
    pub accounts: HashMap<String, String>,
    child: Child,
    _tmp: Option<tempfile::TempDir>,
}

pub fn site_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/site")
}

impl TestApp {
    /// A fresh data dir with the demo dataset, study and accounts.
    pub fn spawn() -> TestApp {
        let tmp = tempfile::tempdir().expect("temp dir");
        let mut app = TestApp::spawn_on(tmp.path(), &[]);
        app._tmp = Some(tmp);
        app
    }

    /// Starts the server on `data_dir` (kept by the caller, so it can restart).
    pub fn spawn_on(data_dir: &Path, extra: &[&str]) -> TestApp {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hardneg"))
            .args(["serve", "--bind", "127.0.0.1:0", "--demo"])
            .args(extra)
            .arg("--data-dir")
            .arg(data_dir)
            .arg("--site-dir")
            .arg(site_dir())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting hardneg");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut accounts = HashMap::new();
            let mut lines = BufReader::new(stdout).lines();
            let mut sent = false;
            while let Some(Ok(line)) = lines.next() {
                let words: Vec<&str> = line.split_whitespace().collect();
                if let Some(url) = line.strip_prefix("hardneg listening on ") {
                    let _ = tx.send((url.to_string(), accounts.clone()));
                    sent = true;
                } else if !sent && words.len() == 3 && ["admin", "researcher", "annotator"].contains(&words[1]) {
                    accounts.insert(words[0].to_string(), words[2].to_string());
                }
            }
        });
        let (base, accounts) = rx.recv_timeout(Duration::from_secs(120)).expect("server did not start in time");
        TestApp { base, data_dir: data_dir.to_path_buf(), accounts, child, _tmp: None }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub fn password(&self, user: &str) -> String {
        self.accounts.get(user).cloned().unwrap_or_else(|| panic!("no demo account {user}"))
    }

    pub fn client() -> reqwest::Client {
        reqwest::Client::builder().cookie_store(true).build().unwrap()
    }

    /// A client logged in through the JSON API.
    pub async fn login(&self, user: &str) -> reqwest::Client {
        let client = TestApp::client();
        let res = client
            .post(self.url("/api/v1/session"))
            .json(&serde_json::json!({"username": user, "password": self.password(user)}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 204, "login as {user}");
        client
    }

    /// Adds an account with the CLI (the server may be running).
    pub fn add_user(&mut self, name: &str, role: &str, password: &str) {
        use std::io::Write;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hardneg"))
            .args(["user", "add", name, "--role", role, "--password-stdin", "--data-dir"])
            .arg(&self.data_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        cmd.stdin.take().unwrap().write_all(password.as_bytes()).unwrap();
        assert!(cmd.wait().unwrap().success(), "user add {name}");
        self.accounts.insert(name.to_string(), password.to_string());
    }

    /// SIGKILL: no shutdown code runs.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The demo study's id, as the annotator's study list gives it.
pub async fn demo_study(client: &reqwest::Client, app: &TestApp) -> i64 {
    let studies: serde_json::Value = client.get(app.url("/api/v1/studies")).send().await.unwrap().json().await.unwrap();
    studies[0]["id"].as_i64().expect("a study id")
}

/// Reads a tar into (path, bytes) entries.
pub fn untar(bytes: &[u8]) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut at = 0;
    while at + 512 <= bytes.len() && bytes[at] != 0 {
        let h = &bytes[at..at + 512];
        let field = |r: std::ops::Range<usize>| String::from_utf8_lossy(&h[r]).trim_end_matches('\0').to_string();
        let (name, prefix) = (field(0..100), field(345..500));
        let size = u64::from_str_radix(field(124..135).trim(), 8).unwrap() as usize;
        let path = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        out.insert(path, bytes[at + 512..at + 512 + size].to_vec());
        at += 512 + size.div_ceil(512) * 512;
    }
    out
}
