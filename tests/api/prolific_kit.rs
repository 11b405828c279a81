//! Shared steps of the Prolific tests: a hardneg server whose log goes to a
//! file (so a test can look for the token in it) and that can be SIGKILLed
//! and restarted on the same data, pointed at a fake Prolific; and a
//! participant who goes from Prolific's study URL through the real join
//! link to a completion or screen-out code; and every text the database
//! holds, to look for the token in.
use crate::helpers::{database_of, site_dir, watch_start};
use reqwest::Client;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Hardneg {
    pub base: String,
    pub data_dir: PathBuf,
    log: PathBuf,
    pub accounts: HashMap<String, String>,
    child: Child,
}

impl Hardneg {
    /// `hardneg serve --demo` on `data_dir` with `env`; its output appended to `log`.
    pub fn start(data_dir: &Path, env: &[(&str, String)], log: &Path, accounts: HashMap<String, String>) -> Hardneg {
        let err = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_hardneg"))
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .envs(database_of(data_dir).map(|url| ("HARDNEG_DATABASE", url)))
            .args(["serve", "--bind", "127.0.0.1:0", "--demo", "--data-dir"])
            .arg(data_dir)
            .arg("--site-dir")
            .arg(site_dir())
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::from(err))
            .spawn()
            .expect("starting hardneg");
        // The server logs to stdout: every line goes to the log file too.
        let out = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
        let rx = watch_start(child.stdout.take().unwrap(), Some(out));
        let (base, mut seen) = rx.recv_timeout(Duration::from_secs(120)).expect("hardneg did not start in time");
        seen.extend(accounts);
        Hardneg { base, data_dir: data_dir.to_path_buf(), log: log.to_path_buf(), accounts: seen, child }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn login(&self, user: &str) -> Client {
        let client = Client::builder().cookie_store(true).build().unwrap();
        let res = client
            .post(self.url("/api/v1/session"))
            .json(&json!({"username": user, "password": self.accounts[user]}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 204, "login as {user}");
        client
    }

    /// SIGKILL.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits up to `secs` for the process to end by itself (a crash hook's abort); generous, as a loaded CI machine is slow to start a server.
    pub fn exited_within(&mut self, secs: u64) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(secs);
        while std::time::Instant::now() < deadline {
            if self.child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Hardneg {
    fn drop(&mut self) {
        self.kill();
        // A failing test shows the end of the server's log (its tempdir goes with it).
        if std::thread::panicking() {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            eprintln!("--- the server's log, last lines ---\n{}", lines[lines.len().saturating_sub(40)..].join("\n"));
        }
    }
}

/// A POST as `client` with an optional JSON body: (status, JSON or the text).
pub async fn post(client: &Client, url: &str, body: Option<Value>) -> (u16, Value) {
    let mut req = client.post(url);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let res = req.send().await.unwrap_or_else(|e| panic!("POST {url}: {e}"));
    let status = res.status().as_u16();
    let text = res.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// How a simulated participant behaves in hardneg.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Way {
    /// Answers everything as asked.
    Careful,
    /// Fails this many attention checks (and finishes, or is screened out at the study's maximum).
    FailChecks(usize),
    /// Fails the comprehension check twice.
    FailComprehension,
    /// Arrives, passes the comprehension check and stops (its place is held).
    Stop,
    /// Arrives, reads the instructions and stops at the comprehension check (no place held yet).
    AtTheCheck,
}

/// A participant's client after the join link (Prolific's study URL, placeholders filled), past
/// the instructions and the comprehension check; None when screened out by it (with the code).
pub async fn join(base: &str, study_url: &str, way: Way) -> (Client, i64, Option<String>) {
    let client = Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let url = reqwest::Url::parse(study_url).unwrap();
    let form: Vec<(String, String)> = url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    assert!(study_url.starts_with(base), "{study_url} is hardneg's join link");
    let mut form = form;
    form.push(("consent".into(), "yes".into()));
    let res = client.post(format!("{base}{}", url.path())).form(&form).send().await.unwrap();
    assert_eq!(res.status(), 303, "joining by {study_url}: {}", res.text().await.unwrap_or_default());
    let location = res.headers()["location"].to_str().unwrap().to_string();
    let study: i64 = location.strip_prefix("/take/").unwrap().parse().unwrap();
    let (s, stage) = post(&client, &format!("{base}/api/v1/take/{study}/instructions"), None).await;
    assert_eq!((s, stage["stage"].as_str()), (200, Some("comprehension")), "{stage}");
    if way == Way::AtTheCheck {
        return (client, study, None);
    }
    let answers = if way == Way::FailComprehension { [0] } else { [1] };
    let attempts = if way == Way::FailComprehension { 2 } else { 1 };
    let mut last = Value::Null;
    for attempt in 0..attempts {
        if attempt > 0 {
            // A failed first attempt sends the participant back to the instructions.
            assert_eq!(last["stage"], "instructions", "{last}");
            let (s, stage) = post(&client, &format!("{base}/api/v1/take/{study}/instructions"), None).await;
            assert_eq!((s, stage["stage"].as_str()), (200, Some("comprehension")), "{stage}");
        }
        let (s, next) =
            post(&client, &format!("{base}/api/v1/take/{study}/comprehension"), Some(json!({"answers": answers})))
                .await;
        assert_eq!(s, 200, "{next}");
        last = next;
    }
    if way == Way::FailComprehension {
        assert_eq!(last["stage"], "screened_out", "{last}");
        return (client, study, Some(last["code"].as_str().unwrap().to_string()));
    }
    assert_eq!(last["stage"], "working", "{last}");
    (client, study, None)
}

/// Answers the bundle as `way` says; the code shown at the end (completion or screen-out).
pub async fn answer_all(base: &str, client: &Client, study: i64, way: Way) -> String {
    let fail = match way {
        Way::FailChecks(n) => n,
        _ => 0,
    };
    let mut failed = 0;
    loop {
        let res = client.get(format!("{base}/api/v1/studies/{study}/next")).send().await.unwrap();
        if res.status() == 204 {
            break;
        }
        assert_eq!(res.status(), 200);
        let t: Value = res.json().await.unwrap();
        let text = t["prompt"]["text"].as_str().unwrap_or("");
        let options = t["options"].as_array().unwrap();
        let id = |o: &Value| o["id"].as_str().unwrap().to_string();
        let choice = match text.strip_prefix("Attention check") {
            Some(rest) => {
                let named =
                    options.iter().find(|o| rest.contains(&format!("select {} for", o["label"].as_str().unwrap())));
                let named = id(named.expect("the check names an option"));
                if failed < fail {
                    failed += 1;
                    options.iter().map(id).find(|o| *o != named).unwrap()
                } else {
                    named
                }
            }
            None => id(&options[0]),
        };
        let res = client
            .post(format!("{base}/api/v1/tasks/{}/answer", t["task_id"]))
            .json(&json!({"option": choice, "elapsed_ms": 1500}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    }
    let stage: Value = client.get(format!("{base}/api/v1/take/{study}")).send().await.unwrap().json().await.unwrap();
    match stage["stage"].as_str() {
        Some("complete") | Some("screened_out") => stage["code"].as_str().unwrap().to_string(),
        _ => panic!("after the bundle: {stage}"),
    }
}

/// Every text cell of every table (SQLite or PostgreSQL).
pub async fn database_text(data: &Path) -> String {
    let db = crate::helpers::db_at(data).await;
    let tables: Vec<String> = if crate::helpers::on_postgres() {
        sqlx::query_scalar("SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'")
            .fetch_all(&db)
            .await
            .unwrap()
    } else {
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'").fetch_all(&db).await.unwrap()
    };
    let mut all = String::new();
    for t in tables {
        let cols: Vec<String> = if crate::helpers::on_postgres() {
            sqlx::query_scalar(
                "SELECT column_name::text FROM information_schema.columns WHERE table_name = $1 AND data_type = 'text'",
            )
            .bind(&t)
            .fetch_all(&db)
            .await
            .unwrap()
        } else {
            let rows: Vec<(String, String)> =
                sqlx::query_as(&format!("SELECT name, type FROM pragma_table_info('{t}')"))
                    .fetch_all(&db)
                    .await
                    .unwrap();
            rows.into_iter().filter(|(_, ty)| ty.eq_ignore_ascii_case("TEXT")).map(|(n, _)| n).collect()
        };
        for c in cols {
            let vals: Vec<Option<String>> =
                sqlx::query_scalar(&format!("SELECT \"{c}\" FROM \"{t}\"")).fetch_all(&db).await.unwrap();
            for v in vals.into_iter().flatten() {
                all.push_str(&v);
                all.push('\n');
            }
        }
    }
    all
}

/// A server pointed at a fresh fake Prolific (syncing only when asked), with
/// `spec`'s study created and published: what most Prolific tests start from.
pub struct Published {
    pub tmp: tempfile::TempDir,
    pub fake: crate::prolific_fake::FakeProlific,
    pub app: Hardneg,
    pub researcher: Client,
    pub study: i64,
    pub pid: String,
}

impl Published {
    pub async fn start(spec: &str) -> Published {
        Published::start_with(spec, &[], &[]).await
    }

    /// As [`Published::start`], the fake started with `fake_args` and the
    /// server with `env` besides.
    pub async fn start_with(spec: &str, fake_args: &[&str], env: &[(&'static str, &str)]) -> Published {
        let tmp = tempfile::tempdir().unwrap();
        let fake = crate::prolific_fake::FakeProlific::start_with(fake_args).await;
        let mut env_all = vec![
            ("HARDNEG_PROLIFIC_TOKEN", fake.token.clone()),
            ("HARDNEG_PROLIFIC_URL", fake.base.clone()),
            ("HARDNEG_PROLIFIC_SYNC_SECS", "3600".into()),
            ("HARDNEG_PROLIFIC_BACKOFF_MS", "20".into()),
        ];
        env_all.extend(env.iter().map(|(k, v)| (*k, v.to_string())));
        let env = env_all;
        let app = Hardneg::start(&tmp.path().join("data"), &env, &tmp.path().join("log"), HashMap::new());
        let researcher = app.login("researcher").await;
        let res = researcher.post(app.url("/api/v1/studies")).body(spec.to_string()).send().await.unwrap();
        assert_eq!(res.status(), 201, "{}", res.text().await.unwrap());
        let study = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
        let (s, v) = post(&researcher, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
        assert_eq!(s, 200, "{v}");
        let pid = v["prolific_id"].as_str().unwrap().to_string();
        Published { tmp, fake, app, researcher, study, pid }
    }

    /// `n` people who take a place on Prolific and submit with a code,
    /// synced into hardneg.
    pub async fn submitted(&self, n: usize) -> Vec<crate::prolific_fake::Arrival> {
        let mut people = Vec::with_capacity(n);
        for _ in 0..n {
            let person = self.fake.arrive(&self.pid, None).await;
            self.fake.submit(&person.submission_id, Some("DONE")).await;
            people.push(person);
        }
        let (s, v) =
            post(&self.researcher, &self.app.url(&format!("/api/v1/studies/{}/prolific/sync", self.study)), None).await;
        assert_eq!(s, 200, "{v}");
        people
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.tmp.path().join("log")).unwrap_or_default()
    }
}
