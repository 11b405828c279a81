//! A full disk is said plainly (issue 52): with the data dir on a small
//! tmpfs that is then filled, an answer gets `503` with `Retry-After` and a
//! message that it was not saved, the research page warns, and once space
//! is freed the same answer is stored and nothing acknowledged was lost.
//! SQLite only (PostgreSQL keeps its data elsewhere); mounting needs root,
//! as the test command runs in CI.
use crate::helpers::{demo_study, on_postgres, TestApp};
use std::io::Write;
use std::path::Path;
use std::process::Command;

/// A tmpfs of `mb` MiB at `dir`, unmounted on drop.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, mb: u32) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={mb}m"), "tmpfs"]).arg(dir).output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs(dir.to_path_buf())),
            Ok(o) => {
                // Only a sandbox without mount rights may skip; as root it must work.
                assert_ne!(
                    unsafe { libc::geteuid() },
                    0,
                    "mount failed as root: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                None
            }
            Err(e) => panic!("running mount: {e}"),
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Writes zeros into `path` until the file system refuses (ENOSPC).
fn fill(path: &Path) {
    let mut f = std::fs::File::create(path).unwrap();
    let block = vec![0u8; 64 * 1024];
    loop {
        match f.write_all(&block) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            Err(e) => panic!("filling the disk: {e}"),
        }
    }
    let _ = f.sync_all();
}

#[tokio::test]
async fn a_full_disk_refuses_answers_with_503_and_they_go_in_once_space_is_freed() {
    if on_postgres() {
        return; // the data is in PostgreSQL, not on the data dir's disk
    }
    let tmp = tempfile::tempdir().unwrap();
    let Some(mount) = Tmpfs::mount(&tmp.path().join("disk"), 48) else {
        eprintln!("disk_full: not root, cannot mount a tmpfs; skipped");
        return;
    };
    let data = mount.0.join("data");
    let app = TestApp::spawn_on(&data, &["--demo-size", "30"]);
    let researcher = app.login("researcher").await;
    let annotator = app.login("annotator1").await;
    let study = demo_study(&annotator, &app).await;
    let mine = || async {
        let q = "SELECT count(*) FROM answers a JOIN users u ON u.id = a.user_id WHERE a.study_id = $1 AND u.username = 'annotator1'";
        sqlx::query_scalar::<_, i64>(q).bind(study).fetch_one(&app.db().await).await.unwrap()
    };
    let before = mine().await;
    let mut acked = 0;
    for _ in 0..3 {
        let task = app.next_task(&annotator, study).await.unwrap();
        assert_eq!(app.answer(&annotator, task.task_id, "none").await.status(), 200);
        acked += 1;
    }

    fill(&mount.0.join("filler"));
    // Writes that need new space now fail: within a few answers, one is refused.
    let mut refused = None;
    for _ in 0..50 {
        let task = app.next_task(&annotator, study).await.unwrap();
        let res = app.answer(&annotator, task.task_id, "none").await;
        match res.status().as_u16() {
            200 => acked += 1,
            503 => {
                assert_eq!(res.headers()["retry-after"], "5");
                let body: serde_json::Value = res.json().await.unwrap();
                let text = body["error"].as_str().unwrap();
                assert!(text.contains("not saved") && text.contains("disk is full"), "{text}");
                refused = Some(task.task_id);
                break;
            }
            other => panic!("answer on a full disk: {other} {}", res.text().await.unwrap()),
        }
    }
    let task = refused.expect("an answer refused on the full disk");
    // A login cannot store its session: said in words, not a bare 500.
    let login = TestApp::client()
        .post(app.url("/api/v1/session"))
        .json(&serde_json::json!({"username": "annotator2", "password": app.password("annotator2")}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 503);
    assert_eq!(login.headers()["retry-after"], "5");
    let body: serde_json::Value = login.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("cannot store your session"), "{body}");
    // Other writes fail too; what they leave behind must not outlast the full disk.
    for i in 0..4 {
        let spec = crate::helpers::Spec::new(&format!("while full {i}")).annotators(&["annotator1"]);
        let status = app.create_study(&researcher, &spec).await.status();
        assert!(status == 503 || status == 201, "a study made on a full disk: {status}");
    }
    // Sent again while full: refused the same way, never a 500.
    assert_eq!(app.answer(&annotator, task, "none").await.status(), 503);
    let page = app.get_text(&researcher, "/research").await;
    assert!(page.contains("writes-failing"), "the research page warns");

    std::fs::remove_file(mount.0.join("filler")).unwrap();
    let res = app.answer(&annotator, task, "none").await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    acked += 1;
    let page = app.get_text(&researcher, "/research").await;
    assert!(!page.contains("writes-failing"), "the warning goes once a write succeeds");
    assert_eq!(mine().await, before + acked, "every acknowledged answer is stored, and only those");
    // Every pooled connection writes again (a failed COMMIT once left one
    // that refused every BEGIN until a restart).
    for i in 0..12 {
        let spec = crate::helpers::Spec::new(&format!("after {i}")).annotators(&["annotator1"]);
        let res = app.create_study(&researcher, &spec).await;
        assert_eq!(res.status(), 201, "study {i} once space is freed: {}", res.text().await.unwrap());
    }
}
