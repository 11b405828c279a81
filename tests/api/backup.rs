//! `hardneg backup` while answers stream in, and `hardneg restore` into a new
//! data dir: every answer acknowledged before the backup began is there, the
//! restored database passes its integrity check and serves its images; bad
//! destinations and sources are refused with nothing written.
use crate::helpers::{cli, demo_study, text, TestApp};
use hardneg::api_types::{AnswerAck, TaskView};
use hardneg::domain::ids::TaskId;
use hardneg::store::images::sha256_hex;
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

type Acked = Arc<Mutex<Vec<(String, TaskId, String)>>>;

/// Two annotators answering in a loop until `stop`; each 200 is recorded.
fn stream_answers(
    app: &TestApp,
    clients: Vec<(String, reqwest::Client)>,
    study: i64,
    acked: Acked,
    stop: Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let base = app.base.clone();
    clients
        .into_iter()
        .map(|(name, client)| {
            let (acked, stop, base) = (acked.clone(), stop.clone(), base.clone());
            tokio::spawn(async move {
                client.post(format!("{base}/api/v1/studies/{study}/start")).send().await.unwrap();
                for i in 0.. {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let res = client.get(format!("{base}/api/v1/studies/{study}/next")).send().await.unwrap();
                    if res.status() == 204 {
                        return;
                    }
                    let task: TaskView = res.json().await.unwrap();
                    let option = ["A", "B", "C", "D", "none"][i % 5];
                    let res = client
                        .post(format!("{base}/api/v1/tasks/{}/answer", task.task_id))
                        .json(&json!({"option": option}))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(res.status(), 200);
                    acked.lock().unwrap().push((name.clone(), task.task_id, option.to_string()));
                }
            })
        })
        .collect()
}

async fn hashes(db: &Path) -> Vec<String> {
    use sqlx::{ConnectOptions, Connection};
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new().filename(db).read_only(true).connect().await.unwrap();
    let all: Vec<String> = sqlx::query_scalar("SELECT hash FROM images").fetch_all(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    assert!(!all.is_empty());
    all
}

async fn integrity(db: &Path) -> String {
    use sqlx::{ConnectOptions, Connection};
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new().filename(db).read_only(true).connect().await.unwrap();
    let check: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    check
}

#[tokio::test]
async fn a_backup_taken_under_load_restores_every_answer_acknowledged_before_it() {
    // Backups copy a SQLite data dir (PostgreSQL's are pg_dump's: docs/deploy.md).
    if crate::helpers::on_postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(&tmp.path().join("live"), &[]);
    let clients = vec![
        ("annotator1".to_string(), app.login("annotator1").await),
        ("annotator2".to_string(), app.login("annotator2").await),
    ];
    let study = demo_study(&clients[0].1, &app).await;
    let acked: Acked = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let workers = stream_answers(&app, clients, study, acked.clone(), stop.clone());
    while acked.lock().unwrap().len() < 30 {
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    let before = acked.lock().unwrap().clone();
    let dest = tmp.path().join("backup-1");
    let (data_dir, d) = (app.data_dir.clone(), dest.clone());
    let out = tokio::task::spawn_blocking(move || cli(&data_dir, &["backup", d.to_str().unwrap()])).await.unwrap();
    assert!(out.status.success(), "backup: {}", text(&out.stderr));
    let during = acked.lock().unwrap().len() - before.len();
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.await.unwrap();
    }
    assert!(during > 0, "answers kept being acknowledged while the backup ran");
    assert!(dest.join("hardneg-backup.json").is_file());
    assert!(!tmp.path().read_dir().unwrap().any(|e| e.unwrap().file_name().to_string_lossy().contains("partial")));

    // A second backup linked to the first copies no image again.
    let second = tmp.path().join("backup-2");
    let out = app.cli(&["backup", second.to_str().unwrap(), "--link-dest", dest.to_str().unwrap()]);
    assert!(out.status.success(), "second backup: {}", text(&out.stderr));
    assert!(text(&out.stdout).contains(" 0 files copied"), "{}", text(&out.stdout));

    let restored_dir = tmp.path().join("restored");
    let out = cli(&restored_dir, &["restore", dest.to_str().unwrap()]);
    assert!(out.status.success(), "restore: {}", text(&out.stderr));
    assert_eq!(integrity(&restored_dir.join("hardneg.sqlite")).await, "ok");

    let passwords = app.accounts.clone();
    drop(app);
    let mut restored = TestApp::spawn_on(&restored_dir, &[]);
    restored.accounts = passwords;
    for name in ["annotator1", "annotator2"] {
        let client = restored.login(name).await;
        for (_, id, option) in before.iter().filter(|(n, _, _)| n == name) {
            let res: AnswerAck = restored.answer(&client, *id, "A").await.json().await.unwrap();
            assert!(res.duplicate, "task {id} of {name} lost in the backup: {res:?}");
            assert_eq!(res.option, *option, "task {id} of {name}");
        }
    }
    // The restored store serves every image whole.
    let client = restored.login("annotator1").await;
    for hash in hashes(&restored_dir.join("hardneg.sqlite")).await {
        let res = client.get(restored.url(&format!("/img/{hash}/original"))).send().await.unwrap();
        assert_eq!(res.status(), 200, "image {hash}");
        assert_eq!(sha256_hex(&res.bytes().await.unwrap()), hash);
    }
}

#[tokio::test]
async fn bad_destinations_and_sources_are_refused_with_nothing_written() {
    // Backups copy a SQLite data dir (PostgreSQL's are pg_dump's: docs/deploy.md).
    if crate::helpers::on_postgres() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(&tmp.path().join("live"), &[]);
    let exists = tmp.path().join("exists");
    std::fs::create_dir(&exists).unwrap();
    let out = app.cli(&["backup", exists.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "what it was given is at fault");
    assert!(text(&out.stderr).contains("already exists"), "{}", text(&out.stderr));
    assert_eq!(exists.read_dir().unwrap().count(), 0);

    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let out = app.cli(&["backup", file.join("inside").to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("cannot write the backup"), "{}", text(&out.stderr));

    let out = cli(&tmp.path().join("nowhere"), &["backup", tmp.path().join("b").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no database at"), "{}", text(&out.stderr));
    assert!(!tmp.path().join("b").exists());

    // Not a backup: refused, and the data dir gets no database.
    let target = tmp.path().join("target");
    let out = cli(&target, &["restore", exists.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not a hardneg backup"), "{}", text(&out.stderr));
    assert!(!target.exists(), "nothing written, not even the data dir");

    // A data dir that already holds a database is never overwritten.
    let good = tmp.path().join("good");
    assert!(app.cli(&["backup", good.to_str().unwrap()]).status.success());
    let out = cli(&app.data_dir, &["restore", good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("already here"), "{}", text(&out.stderr));

    // A backup whose database was damaged is refused before anything is copied.
    let damaged = tmp.path().join("damaged");
    assert!(app.cli(&["backup", damaged.to_str().unwrap()]).status.success());
    let db = damaged.join("hardneg.sqlite");
    let mut bytes = std::fs::read(&db).unwrap();
    let n = bytes.len();
    bytes.truncate(n / 2);
    std::fs::write(&db, bytes).unwrap();
    let out = cli(&target, &["restore", damaged.to_str().unwrap()]);
    assert!(!out.status.success(), "{}", text(&out.stdout));
    assert!(!target.join("hardneg.sqlite").exists());

    // A damaged image is found while copying: what was written is taken back,
    // the data dir it made, or the files it added to one that was there.
    let originals = good.join("images").join("originals");
    let image = walk(&originals).into_iter().next().expect("an original in the backup");
    std::fs::write(&image, b"not the image it was").unwrap();
    let out = cli(&target, &["restore", good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("damaged file"), "{}", text(&out.stderr));
    assert!(!target.exists(), "the data dir it made is gone");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("notes.txt"), "mine").unwrap();
    let out = cli(&target, &["restore", good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let left: Vec<_> = walk(&target).into_iter().map(|p| p.strip_prefix(&target).unwrap().to_path_buf()).collect();
    assert_eq!(left, [std::path::PathBuf::from("notes.txt")], "only what was there");

    // A missing image is a damaged source too (2), named, and nothing stays.
    std::fs::remove_file(&image).unwrap();
    std::fs::remove_dir_all(&target).unwrap();
    let out = cli(&target, &["restore", good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&format!("{} is missing", image.display())), "{}", text(&out.stderr));
    assert!(!target.exists());
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files.sort();
    files
}
