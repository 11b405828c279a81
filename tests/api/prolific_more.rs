//! Prolific beyond the big study (prolific_flow.rs): webhook signatures,
//! participant groups and a block list, refusals shown with Prolific's
//! message, and the sync of a 5,000-submission study (measured, ignored by
//! default: `cargo test --test api prolific_more::sync_of_5000 -- --ignored --nocapture`).
use crate::prolific_fake::FakeProlific;
use crate::prolific_kit::{post, Hardneg};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;

pub(crate) fn spec(name: &str, prolific: &str) -> String {
    format!(
        "name = \"{name}\"\nkind = \"four_image\"\ndataset = \"demo\"\nseed = 11\naccess = \"link\"\n\
         [link]\nbundle_size = 7\nconsent = \"I agree to take part.\"\n[prolific]\n{prolific}\n"
    )
}

pub(crate) fn env(fake: &FakeProlific, extra: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    let mut e = vec![
        ("HARDNEG_PROLIFIC_TOKEN", fake.token.clone()),
        ("HARDNEG_PROLIFIC_URL", fake.base.clone()),
        ("HARDNEG_PROLIFIC_SYNC_SECS", "3600".into()),
        ("HARDNEG_PROLIFIC_BACKOFF_MS", "20".into()),
    ];
    e.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
    e
}

pub(crate) async fn create(app: &Hardneg, r: &reqwest::Client, spec: &str) -> i64 {
    let res = r.post(app.url("/api/v1/studies")).body(spec.to_string()).send().await.unwrap();
    assert_eq!(res.status(), 201, "{}", res.text().await.unwrap());
    res.json::<Value>().await.unwrap()["id"].as_i64().unwrap()
}

fn sign(secret: &str, ts: &str, body: &[u8]) -> String {
    hardneg::prolific::webhook::base64(&hardneg::prolific::webhook::hmac_sha256(
        secret.as_bytes(),
        &[ts.as_bytes(), body],
    ))
}

#[tokio::test]
async fn webhooks_need_a_fresh_signature_and_a_duplicate_does_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start().await;
    let app = Hardneg::start(
        &tmp.path().join("data"),
        &env(&fake, &[("HARDNEG_PROLIFIC_WEBHOOK_SECRET", "whsec-1")]),
        &tmp.path().join("log"),
        HashMap::new(),
    );
    let hook = app.url("/api/v1/prolific/webhook");
    let client = reqwest::Client::new();
    let body = br#"{"event_id":"ev-1","event_type":"submission.status.change","resource_id":"x"}"#.to_vec();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs().to_string();
    let send = |ts: String, sig: String, body: Vec<u8>| {
        client
            .post(&hook)
            .header("X-Prolific-Request-Timestamp", ts)
            .header("X-Prolific-Request-Signature", sig)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
    };
    let ok = send(now.clone(), sign("whsec-1", &now, &body), body.clone()).await.unwrap();
    assert_eq!(ok.status(), 204);
    assert_eq!(
        send(now.clone(), sign("whsec-1", &now, &body), body.clone()).await.unwrap().status(),
        204,
        "a duplicate"
    );
    let refused = send(now.clone(), sign("other", &now, &body), body.clone()).await.unwrap();
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.json::<Value>().await.unwrap()["error"],
        "webhook refused: a bad signature or a stale timestamp"
    );
    let mut changed = body.clone();
    changed[3] ^= 1;
    assert_eq!(send(now.clone(), sign("whsec-1", &now, &body), changed).await.unwrap().status(), 401, "another body");
    let old = (now.parse::<i64>().unwrap() - 3600).to_string();
    assert_eq!(send(old.clone(), sign("whsec-1", &old, &body), body.clone()).await.unwrap().status(), 401, "stale");
    let big = vec![b'x'; 70 * 1024];
    assert_eq!(send(now.clone(), sign("whsec-1", &now, &big), big).await.unwrap().status(), 413);
    let text = b"submission changed".to_vec();
    let not_json = send(now.clone(), sign("whsec-1", &now, &text), text).await.unwrap();
    assert_eq!(not_json.status(), 422, "signed, but not an object");
    let long = format!(r#"{{"event_id":"{}"}}"#, "e".repeat(50_000)).into_bytes();
    assert_eq!(send(now.clone(), sign("whsec-1", &now, &long), long).await.unwrap().status(), 204);
    let db = crate::helpers::db_at(&app.data_dir).await;
    let ids: Vec<String> = sqlx::query_scalar("SELECT event_id FROM prolific_webhook_events ORDER BY event_id")
        .fetch_all(&db)
        .await
        .unwrap();
    assert_eq!(ids.len(), 2, "the duplicate was recognised, the text not kept: {ids:?}");
    assert_eq!(ids[0], "ev-1");
    assert!(ids[1].starts_with("sha256:") && ids[1].len() == 71, "a long id is kept as its hash");
}

#[tokio::test]
async fn a_block_list_of_groups_minimum_pay_and_prolifics_refusals() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start().await;
    let app = Hardneg::start(&tmp.path().join("data"), &env(&fake, &[]), &tmp.path().join("log"), HashMap::new());
    let r = app.login("researcher").await;
    let workspace = fake.state().await["workspace_id"].as_str().unwrap().to_string();
    let (s, g) =
        fake.post("/api/v1/participant-groups/", json!({"workspace_id": workspace, "name": "step3-workers"})).await;
    assert_eq!(s, 201, "{g}");

    // Under Prolific's minimum: refused before anything is sent, naming both figures.
    let cheap = create(&app, &r, &spec("cheap", "estimated_minutes = 10\nhourly_rate = 5.5")).await;
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{cheap}/prolific/publish")), None).await;
    assert_eq!(s, 422, "{v}");
    let msg = v.to_string();
    assert!(msg.contains("5.50") && msg.contains("6.00"), "{msg}");
    // The fake's workspace is in GBP, whose minimum is £6.00 (US$8.00 in USD):
    // 6.50 an hour is published (audit AU: refused at 8.00 in every currency).
    let fair = create(&app, &r, &spec("fair", "estimated_minutes = 10\nhourly_rate = 6.5")).await;
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{fair}/prolific/publish")), None).await;
    assert_eq!((s, v["status"].as_str()), (200, Some("ACTIVE")), "{v}");

    let blocked =
        create(&app, &r, &spec("blocked", "estimated_minutes = 10\nblock_groups = [\"step3-workers\"]")).await;
    // The dry run's draft names the group where the sent one carries its id.
    let (_, dry) = post(&r, &app.url(&format!("/api/v1/studies/{blocked}/prolific/publish?dry_run=true")), None).await;
    let filter = &dry["plan"]["body"]["filters"][0];
    assert_eq!(filter["selected_values"], json!(["<id of participant group step3-workers>"]), "{dry}");
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{blocked}/prolific/publish")), None).await;
    assert_eq!(s, 200, "{v}");
    let st = fake.state().await;
    let sent = st["studies"].as_array().unwrap().iter().find(|s| s["name"] == "blocked").unwrap();
    assert_eq!(sent["filters"][0]["filter_id"], "participant_group_blocklist");
    assert_eq!(sent["filters"][0]["selected_values"], json!([g["id"]]));

    // Fewer places than it has is refused by hardneg; Prolific's own refusals come back with its message.
    let (s, v) =
        post(&r, &app.url(&format!("/api/v1/studies/{blocked}/prolific/places")), Some(json!({"total": 3}))).await;
    assert_eq!(s, 422, "{v}");
    let (s, v) = post(
        &r,
        &app.url(&format!("/api/v1/studies/{blocked}/prolific/transition")),
        Some(json!({"action": "PUBLISH"})),
    )
    .await;
    assert_eq!(s, 200, "publishing again is the same intent: {v}");
    let (s, v) =
        post(&r, &app.url(&format!("/api/v1/studies/{blocked}/prolific/transition")), Some(json!({"action": "START"})))
            .await;
    assert_eq!(
        (s, v["status"].as_str()),
        (200, Some("ACTIVE")),
        "START of an active study: already there, nothing sent: {v}"
    );
    let (s, _) =
        post(&r, &app.url(&format!("/api/v1/studies/{blocked}/prolific/transition")), Some(json!({"action": "PAUSE"})))
            .await;
    assert_eq!(s, 200);
    let st = fake.state().await;
    assert_eq!(st["studies"].as_array().unwrap().iter().find(|s| s["name"] == "blocked").unwrap()["status"], "PAUSED");
    let status: Value =
        r.get(app.url(&format!("/api/v1/studies/{blocked}/prolific"))).send().await.unwrap().json().await.unwrap();
    let failed: Vec<&Value> = status["outbox"].as_array().unwrap().iter().filter(|l| l["state"] == "failed").collect();
    assert!(failed.is_empty(), "nothing Prolific would refuse was sent: {status}");

    // An annotator may not publish.
    let a = app.login("annotator1").await;
    let (s, _) = post(&a, &app.url(&format!("/api/v1/studies/{cheap}/prolific/publish?dry_run=true")), None).await;
    assert_eq!(s, 403);
}

#[tokio::test]
#[ignore = "a measurement: run with --ignored --nocapture"]
async fn sync_of_5000_submissions() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start().await;
    let data = tmp.path().join("data");
    let app = Hardneg::start(&data, &env(&fake, &[]), &tmp.path().join("log"), HashMap::new());
    let r = app.login("researcher").await;
    let study = create(&app, &r, &spec("five thousand", "estimated_minutes = 10")).await;
    let pid = fake.published_study(5000).await;
    let db = crate::helpers::db_at(&data).await;
    sqlx::query("INSERT INTO prolific_studies (study_id, prolific_id, internal_name, places, reward_cents, created_at) VALUES ($1, $2, 'five', 5000, 150, 0)")
        .bind(study)
        .bind(&pid)
        .execute(&db)
        .await
        .unwrap();
    let made = std::time::Instant::now();
    for _ in 0..50 {
        futures_util::future::join_all((0..100).map(|_| fake.arrive(&pid, None))).await;
    }
    eprintln!("5000 arrivals at the fake in {:.1} s", made.elapsed().as_secs_f64());
    for _ in 0..3 {
        let out = cli_sync(&data, &fake, study);
        eprintln!("{out}");
        assert!(out.contains("synced 5000 submissions in 10 pages"), "{out}");
    }
}

fn cli_sync(data: &Path, fake: &FakeProlific, study: i64) -> String {
    let out = crate::helpers::command_on(data)
        .args(["prolific", "sync", &study.to_string()])
        .env("HARDNEG_PROLIFIC_TOKEN", &fake.token)
        .env("HARDNEG_PROLIFIC_URL", &fake.base)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", crate::helpers::text(&out.stderr));
    crate::helpers::text(&out.stdout)
}

/// A participant whose Prolific place timed out still finishes: the sync
/// freed the place (a new participant may take it), the late answers are a
/// marked extra copy, and the late submission is approved and bonused.
#[tokio::test]
async fn a_participant_who_timed_out_on_prolific_and_still_finishes_is_approved_and_paid() {
    use crate::prolific_kit::{answer_all, join, Way};
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start().await;
    let app = Hardneg::start(&tmp.path().join("data"), &env(&fake, &[]), &tmp.path().join("log"), HashMap::new());
    let r = app.login("researcher").await;
    let check = "comprehension = [{ question = \"When do you pick None?\", options = [\"Never\", \"When no image fits\"], answer = \"When no image fits\" }]\ncompletion_code = \"LATE0001\"\n";
    let spec =
        spec("late", "estimated_minutes = 5\nhourly_rate = 9.0").replace("[prolific]", &format!("{check}[prolific]"));
    let study = create(&app, &r, &spec).await;
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
    assert_eq!(s, 200, "{v}");
    let pid = v["prolific_id"].as_str().unwrap().to_string();

    let late = fake.arrive(&pid, None).await;
    let (client, hstudy, _) = join(&app.base, &late.study_url, Way::Careful).await;
    fake.timeout(&late.submission_id).await;
    let (s, report) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
    assert_eq!((s, report["freed"].as_u64()), (200, Some(1)), "{report}");
    // Still at it: every answer is taken, and the code shown.
    let code = answer_all(&app.base, &client, hstudy, Way::Careful).await;
    assert_eq!(code, "LATE0001");
    fake.submit(&late.submission_id, Some(&code)).await;

    // The dry run syncs first too (nothing sent): it sees the submission, not the time-out synced before.
    let (s, dry) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/decide?dry_run=true")), None).await;
    assert_eq!(s, 200, "{dry}");
    assert_eq!(dry["lines"][0]["prolific_status"], "AWAITING REVIEW", "{dry}");
    assert_eq!((dry["lines"][0]["action"].as_str(), dry["stale"].is_null()), (Some("approve"), true), "{dry}");
    assert!(dry["synced_at"].as_i64().is_some(), "{dry}");
    assert_eq!(dry["requests"].as_array().unwrap().len(), 2, "the approval and the group add: {dry}");
    assert_eq!(fake.state().await["submissions"][0]["status"], "AWAITING REVIEW", "a dry run sends nothing");

    let (s, d) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/decide")), None).await;
    assert_eq!(s, 200, "{d}");
    let line = &d["lines"][0];
    assert_eq!(
        (line["status"].as_str(), line["prolific_status"].as_str()),
        (Some("extra"), Some("AWAITING REVIEW")),
        "{d}"
    );
    assert_eq!(line["action"], "approve", "{d}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        fake.tick().await;
        let st = fake.state().await;
        let sub = st["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == late.submission_id.as_str())
            .unwrap()
            .clone();
        if sub["status"] == "APPROVED" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not approved: {sub}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    // Two decisions at once (two servers, or the server and the CLI) make one group of a new name.
    for trial in 0..3 {
        let name = format!("race-{trial}");
        let url = app.url(&format!("/api/v1/studies/{study}/prolific/decide?group={name}"));
        // Both look the name up slowly, so each finds no group before either makes one.
        let slow = json!({"method": "GET", "path": "/api/v1/participant-groups/", "fault": "timeout", "times": 2, "delay_ms": 400});
        fake.fault_with(slow).await;
        let ((s1, d1), (s2, d2)) = tokio::join!(post(&r, &url, None), post(&r, &url, None));
        assert_eq!((s1, s2), (200, 200), "{d1} {d2}");
        let st = fake.state().await;
        let made = st["groups"].as_array().unwrap().iter().filter(|g| g["name"] == name.as_str()).count();
        assert_eq!(made, 1, "{}", st["groups"]);
    }
    let (s, plan) =
        post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/bonuses?round=late&each=0.30")), None).await;
    assert_eq!(s, 200, "{plan}");
    assert_eq!(plan["bonuses"], json!([[late.submission_id, 30]]), "the late finisher is bonused like the others");
}

/// An approval queued while the participant was still active on Prolific,
/// who then returns the study: it can never apply, so it ends as failed,
/// with why, instead of being sent for ever, and the participant is not
/// added to the benchmark's block group.
#[tokio::test]
async fn an_approval_of_a_submission_returned_meanwhile_ends_instead_of_being_sent_for_ever() {
    use crate::prolific_kit::{answer_all, join, Way};
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start().await;
    let quick = [("HARDNEG_PROLIFIC_SYNC_SECS", "0.2"), ("HARDNEG_PROLIFIC_WAIT_MS", "100")];
    let app = Hardneg::start(&tmp.path().join("data"), &env(&fake, &quick), &tmp.path().join("log"), HashMap::new());
    let r = app.login("researcher").await;
    let check = "comprehension = [{ question = \"When do you pick None?\", options = [\"Never\", \"When no image fits\"], answer = \"When no image fits\" }]\n";
    let spec = spec("returned meanwhile", "estimated_minutes = 5\nhourly_rate = 9.0")
        .replace("[prolific]", &format!("{check}[prolific]"));
    let study = create(&app, &r, &spec).await;
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
    assert_eq!(s, 200, "{v}");
    let pid = v["prolific_id"].as_str().unwrap().to_string();
    let arrival = fake.arrive(&pid, None).await;
    let (client, hstudy, _) = join(&app.base, &arrival.study_url, Way::Careful).await;
    answer_all(&app.base, &client, hstudy, Way::Careful).await;
    // Finished in hardneg, not submitted on Prolific: the approval waits.
    let (s, d) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/decide")), None).await;
    assert_eq!((s, d["lines"][0]["action"].as_str()), (200, Some("approve")), "{d}");
    fake.return_(&arrival.submission_id).await;

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let line = loop {
        let status: Value =
            r.get(app.url(&format!("/api/v1/studies/{study}/prolific"))).send().await.unwrap().json().await.unwrap();
        let approve = status["outbox"].as_array().unwrap().iter().find(|l| l["action"] == "approve").cloned();
        if let Some(line) = approve.filter(|l| l["state"] == "failed") {
            break line;
        }
        assert!(std::time::Instant::now() < deadline, "the approval never ended: {status}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert!(line["last_error"].as_str().unwrap().contains("RETURNED"), "{line}");
    let state = fake.state().await;
    let approvals =
        state["requests"].as_array().unwrap().iter().filter(|q| q["path"] == "/api/v1/submissions/bulk-approve/");
    assert_eq!(approvals.count(), 0, "nothing to approve was sent");
    // Nor is the participant put in the block group: it was never approved.
    let adds = state["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["method"] == "POST" && q["path"].as_str().is_some_and(|p| p.ends_with("/participants/")));
    assert_eq!(adds.count(), 0, "{}", state["groups"]);
}
