//! The shared test kit: the real `hardneg` binary on a temporary data dir
//! over real HTTP, logins, study specs, the answer loop and typed reads of
//! the JSON API. benches/roundtrip.rs and end2end/main.rs include this file
//! by path, so it uses nothing of the test binary around it.
#![allow(dead_code)]
use hardneg::api_types::{AnswerRequest, StudySummary, TaskView};
use hardneg::domain::ids::TaskId;
use reqwest::{Client, Response};
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
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

/// A file under tests/fixtures/, wherever the tests run from.
pub fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(path)
}

/// `hardneg ARGS --data-dir DIR`: the CLI on a data dir (a server may be running on it).
pub fn cli(data_dir: &Path, args: &[&str]) -> Output {
    command_on(data_dir).args(args).output().unwrap()
}

#[path = "backend.rs"]
mod backend;
#[path = "spec.rs"]
mod spec;
#[path = "template.rs"]
mod template;
#[allow(unused_imports)] // each includer uses its own share
pub use backend::{command_on, database_of, db_at, on_postgres, postgres_database};
#[allow(unused_imports)] // each includer uses its own share
pub use spec::{untar, Spec};

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

impl TestApp {
    /// A fresh data dir with the demo dataset, study and accounts.
    pub fn spawn() -> TestApp {
        let tmp = tempfile::tempdir().expect("temp dir");
        let mut app = TestApp::spawn_on(tmp.path(), &[]);
        app._tmp = Some(tmp);
        app
    }

    /// Starts the server on `data_dir` (kept by the caller, so it can restart),
    /// on the built site unless `extra` names another `--site-dir`.
    pub fn spawn_on(data_dir: &Path, extra: &[&str]) -> TestApp {
        TestApp::spawn_with_env(data_dir, extra, &[])
    }

    /// As `spawn_on`, with environment variables for the server (the test
    /// clock). A new data dir starts as a copy of a demo seeded once per
    /// process for the same arguments (template.rs), unless `env` is given.
    pub fn spawn_with_env(data_dir: &Path, extra: &[&str], env: &[(&str, &Path)]) -> TestApp {
        let seeded = if env.is_empty() { template::fill(data_dir, extra) } else { None };
        let mut app = TestApp::spawn_process(data_dir, extra, env);
        for (name, password) in seeded.into_iter().flatten() {
            app.accounts.entry(name).or_insert(password);
        }
        app
    }

    /// Starts a server that seeds the demo itself (for a template).
    fn spawn_seeding(data_dir: &Path, extra: &[&str]) -> TestApp {
        TestApp::spawn_process(data_dir, extra, &[])
    }

    fn spawn_process(data_dir: &Path, extra: &[&str], env: &[(&str, &Path)]) -> TestApp {
        // HARDNEG_BIN: another build of the server (the page-weight measurement runs a release one).
        let bin = std::env::var_os("HARDNEG_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_hardneg").into());
        let mut child = Command::new(bin)
            .envs(env.iter().copied())
            .envs(database_of(data_dir).map(|url| ("HARDNEG_DATABASE", url)))
            .args(["serve", "--bind", "127.0.0.1:0", "--demo"])
            .args(extra)
            .arg("--data-dir")
            .arg(data_dir)
            .args(if extra.contains(&"--site-dir") { vec![] } else { vec!["--site-dir".into(), site_dir()] })
            .env("RUST_LOG", std::env::var("HARDNEG_TEST_SERVER_LOG").unwrap_or_else(|_| "warn".into()))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting hardneg");
        let rx = watch_start(child.stdout.take().unwrap(), None);
        let (base, accounts) = rx.recv_timeout(Duration::from_secs(120)).expect("server did not start in time");
        TestApp { base, data_dir: data_dir.to_path_buf(), accounts, child, _tmp: None }
    }

    /// The server's process id (benches pin it and read its CPU time).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub fn password(&self, user: &str) -> String {
        self.accounts.get(user).cloned().unwrap_or_else(|| panic!("no demo account {user}"))
    }

    pub fn client() -> Client {
        Client::builder().cookie_store(true).build().unwrap()
    }

    /// A client logged in through the JSON API.
    pub async fn login(&self, user: &str) -> Client {
        let client = TestApp::client();
        self.log_in(&client, user).await;
        client
    }

    /// Logs in a client of the caller's own making (e.g. one that follows no redirects).
    pub async fn log_in(&self, client: &Client, user: &str) {
        let res = client
            .post(self.url("/api/v1/session"))
            .json(&serde_json::json!({"username": user, "password": self.password(user)}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 204, "login as {user}");
    }

    /// The app's database, as the server opens it.
    pub async fn db(&self) -> sqlx::AnyPool {
        db_at(&self.data_dir).await
    }

    /// The CLI on this app's data dir.
    pub fn cli(&self, args: &[&str]) -> Output {
        cli(&self.data_dir, args)
    }

    /// Adds an account with the CLI (the server may be running).
    pub fn add_user(&mut self, name: &str, role: &str, password: &str) {
        use std::io::Write;
        let mut cmd = command_on(&self.data_dir)
            .args(["user", "add", name, "--role", role, "--password-stdin"])
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

    /// SIGTERM: the server's graceful shutdown runs.
    pub fn terminate(&self) {
        // SAFETY: kill(2) on our own child's pid; it reads no memory.
        let sent = unsafe { libc::kill(self.pid() as libc::pid_t, libc::SIGTERM) };
        assert_eq!(sent, 0, "SIGTERM to the server: {}", std::io::Error::last_os_error());
    }

    /// Waits for the server to exit by itself; one still running after a
    /// minute is killed and fails the test (a hung run costs CI its limit).
    pub fn wait(&mut self) -> std::process::ExitStatus {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
        panic!("the server at {} did not exit within a minute", self.base);
    }

    /// GET `path` as `client`, expecting 200 and a body of type `T`.
    pub async fn get<T: DeserializeOwned>(&self, client: &Client, path: &str) -> T {
        let res = client.get(self.url(path)).send().await.unwrap();
        assert_eq!(res.status(), 200, "GET {path}");
        res.json().await.unwrap_or_else(|e| panic!("GET {path}: {e}"))
    }

    /// GET `path` as `client`, expecting 200: the body as text (CSV, HTML).
    pub async fn get_text(&self, client: &Client, path: &str) -> String {
        let res = client.get(self.url(path)).send().await.unwrap();
        assert_eq!(res.status(), 200, "GET {path}");
        res.text().await.unwrap()
    }

    /// The studies `client` may see.
    pub async fn studies(&self, client: &Client) -> Vec<StudySummary> {
        self.get(client, "/api/v1/studies").await
    }

    /// `POST /api/v1/studies/{study}/start`: creates the caller's tasks once.
    pub async fn start(&self, client: &Client, study: i64) -> Response {
        client.post(self.url(&format!("/api/v1/studies/{study}/start"))).send().await.unwrap()
    }

    /// The caller's next task in `study`, starting it first if the server
    /// says it is not (409); None once their queue is done (204).
    pub async fn next_task(&self, client: &Client, study: i64) -> Option<TaskView> {
        let next = || client.get(self.url(&format!("/api/v1/studies/{study}/next"))).send();
        let mut res = next().await.unwrap();
        if res.status() == 409 {
            let started = self.start(client, study).await;
            assert_eq!(started.status(), 200, "starting study {study}");
            res = next().await.unwrap();
        }
        match res.status().as_u16() {
            204 => None,
            200 => Some(res.json().await.unwrap()),
            status => panic!("next task of study {study}: {status} {}", res.text().await.unwrap()),
        }
    }

    pub async fn answer(&self, client: &Client, task: TaskId, option: &str) -> Response {
        let body =
            AnswerRequest { option: option.to_string(), elapsed_ms: Some(1500), text: None, texts: Default::default() };
        client.post(self.url(&format!("/api/v1/tasks/{task}/answer"))).json(&body).send().await.unwrap()
    }

    /// Logs in as `who` and answers their whole queue in `study` until 204;
    /// `choose` picks the option from the task. Returns the tasks in order.
    pub async fn work_through(
        &self,
        who: &str,
        study: i64,
        mut choose: impl FnMut(&TaskView) -> String,
    ) -> Vec<TaskView> {
        let client = self.login(who).await;
        let mut seen: Vec<TaskView> = Vec::new();
        while let Some(task) = self.next_task(&client, study).await {
            assert!(seen.iter().all(|t| t.task_id != task.task_id), "task {} came twice to {who}", task.task_id);
            let option = choose(&task);
            let res = self.answer(&client, task.task_id, &option).await;
            assert_eq!(res.status(), 200, "{who} answering {option}: {}", res.text().await.unwrap());
            seen.push(task);
        }
        seen
    }

    /// POST a spec to the API as `client`.
    pub async fn create_study(&self, client: &Client, spec: &Spec) -> Response {
        client.post(self.url("/api/v1/studies")).body(spec.toml()).send().await.unwrap()
    }

    /// POST a spec as a researcher, expecting 201; the new study's id.
    pub async fn create_study_ok(&self, researcher: &Client, spec: &Spec) -> i64 {
        let res = self.create_study(researcher, spec).await;
        assert_eq!(res.status(), 201, "{}", res.text().await.unwrap());
        res.json::<serde_json::Value>().await.unwrap()["id"].as_i64().expect("the new study's id")
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The demo study's id, as the annotator's study list gives it.
pub async fn demo_study(client: &Client, app: &TestApp) -> i64 {
    app.studies(client).await.first().expect("a study").id.get()
}

/// Reads a starting server's standard output: the demo accounts it prints,
/// then its address, sent once; every line also goes to `tee` when given
/// (the server logs there).
pub fn watch_start(
    stdout: std::process::ChildStdout,
    mut tee: Option<std::fs::File>,
) -> mpsc::Receiver<(String, HashMap<String, String>)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut accounts = HashMap::new();
        let mut sent = false;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(out) = tee.as_mut() {
                let _ = std::io::Write::write_all(out, format!("{line}\n").as_bytes());
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            if let Some(url) = line.strip_prefix("hardneg listening on ") {
                let _ = tx.send((url.to_string(), accounts.clone()));
                sent = true;
            } else if !sent && words.len() == 3 && ["admin", "researcher", "annotator"].contains(&words[1]) {
                accounts.insert(words[0].to_string(), words[2].to_string());
            }
        }
    });
    rx
}
