//! Two syncs of one study at once (two servers, or the CLI beside the
//! server's loop) may get their answers from Prolific in either order: the
//! one that read Prolific last must be what stays stored.
use crate::prolific_fake::FakeProlific;
use crate::prolific_kit::Hardneg;
use serde_json::json;
use std::collections::HashMap;
use std::path::Path;

fn cli_sync(data: &Path, fake: &FakeProlific, study: i64) -> std::process::Child {
    crate::helpers::command_on(data)
        .args(["prolific", "sync", &study.to_string()])
        .env("HARDNEG_PROLIFIC_TOKEN", &fake.token)
        .env("HARDNEG_PROLIFIC_URL", &fake.base)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn finished(child: std::process::Child) -> String {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", crate::helpers::text(&out.stderr));
    crate::helpers::text(&out.stdout)
}

#[tokio::test]
async fn an_older_read_of_prolific_never_overwrites_a_newer_one() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start().await;
    let data = tmp.path().join("data");
    let env = vec![("HARDNEG_PROLIFIC_TOKEN", fake.token.clone()), ("HARDNEG_PROLIFIC_URL", fake.base.clone())];
    let app = Hardneg::start(&data, &env, &tmp.path().join("log"), HashMap::new());
    let r = app.login("researcher").await;
    let spec = "name = \"race\"\nkind = \"four_image\"\ndataset = \"demo\"\nseed = 3\naccess = \"link\"\n\
                [link]\nbundle_size = 7\nconsent = \"I agree to take part.\"\n[prolific]\nestimated_minutes = 10\n";
    let res = r.post(app.url("/api/v1/studies")).body(spec).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let study = res.json::<serde_json::Value>().await.unwrap()["id"].as_i64().unwrap();
    let pid = fake.published_study(5).await;
    let db = crate::helpers::db_at(&data).await;
    sqlx::query("INSERT INTO prolific_studies (study_id, prolific_id, internal_name, places, reward_cents, created_at) VALUES ($1, $2, 'race', 5, 150, 0)")
        .bind(study)
        .bind(&pid)
        .execute(&db)
        .await
        .unwrap();
    let arrival = fake.arrive(&pid, None).await;
    let status = || async {
        let s: String = sqlx::query_scalar("SELECT status FROM prolific_submissions WHERE submission_id = $1")
            .bind(&arrival.submission_id)
            .fetch_one(&db)
            .await
            .unwrap();
        s
    };
    finished(cli_sync(&data, &fake, study));
    assert_eq!(status().await, "ACTIVE");
    // The first sync's list is read now (ACTIVE) and answered 3 s later.
    let delay = json!({"method": "GET", "path": "/api/v1/submissions/", "fault": "timeout", "delay_ms": 3000});
    fake.fault_with(delay).await;
    let slow = cli_sync(&data, &fake, study);
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    fake.submit(&arrival.submission_id, None).await;
    finished(cli_sync(&data, &fake, study));
    assert_eq!(status().await, "AWAITING REVIEW");
    finished(slow);
    assert_eq!(status().await, "AWAITING REVIEW", "the older read came last and was not written");
}
