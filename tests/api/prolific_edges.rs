//! Edges the second research-page audit found in the Prolific flow: a draft
//! deleted on Prolific is made again, a given origin must be an origin, a
//! bonus for each is held to the per-bonus limit, and the places proposed
//! after a late submission bring somebody.
use crate::prolific_fake::FakeProlific;
use crate::prolific_kit::{answer_all, join, post, Hardneg, Way};
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::HashMap;

const SPEC: &str = "name = \"edges\"\nkind = \"four_image\"\ndataset = \"demo\"\nseed = 5\naccess = \"link\"\n\
    [link]\nbundle_size = 21\nconsent = \"I agree to take part.\"\ncompletion_code = \"EDGE0001\"\n\
    comprehension = [{ question = \"When do you pick None?\", options = [\"Never\", \"When no image fits\"], answer = \"When no image fits\" }]\n\
    [prolific]\nestimated_minutes = 5\nhourly_rate = 9.0\nextra_places = 0\n";

fn env(fake: &FakeProlific) -> Vec<(&'static str, String)> {
    vec![
        ("HARDNEG_PROLIFIC_TOKEN", fake.token.clone()),
        ("HARDNEG_PROLIFIC_URL", fake.base.clone()),
        ("HARDNEG_PROLIFIC_SYNC_SECS", "3600".into()),
        ("HARDNEG_PROLIFIC_BACKOFF_MS", "20".into()),
    ]
}

/// The fake, hardneg on it with the researcher logged in, and the study made from [`SPEC`].
async fn start(dir: &std::path::Path) -> (FakeProlific, Hardneg, reqwest::Client, i64) {
    let fake = FakeProlific::start().await;
    let app = Hardneg::start(&dir.join("data"), &env(&fake), &dir.join("log"), HashMap::new());
    let r = app.login("researcher").await;
    let res = r.post(app.url("/api/v1/studies")).body(SPEC).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let study = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    (fake, app, r, study)
}

#[tokio::test]
async fn a_deleted_draft_is_made_again_and_a_given_origin_must_be_an_origin() {
    let tmp = tempfile::tempdir().unwrap();
    let (fake, app, r, study) = start(tmp.path()).await;
    let publish = app.url(&format!("/api/v1/studies/{study}/prolific/publish"));

    for bad in ["javascript:alert(1)", "https://h.example.org/app", "h.example.org"] {
        let (s, v) = post(&r, &format!("{publish}?dry_run=true"), Some(json!({ "origin": bad }))).await;
        assert_eq!(s, 422, "{bad}: {v}");
        assert!(v["error"].as_str().unwrap().starts_with("field `origin`: the origin"), "{v}");
    }

    // A draft, deleted by hand on Prolific (as docs/prolific.md advises for abandoned ones).
    let (s, v) =
        post(&r, &format!("{publish}?dry_run=true"), Some(json!({ "origin": "https://h.example.org/" }))).await;
    assert_eq!(s, 200, "{v}");
    assert!(v["plan"]["body"]["external_study_url"].as_str().unwrap().starts_with("https://h.example.org/join/"));
    let out = hardneg_cli(
        &app,
        &fake,
        &["publish", &study.to_string(), "--draft-only", "--base-url", "https://h.example.org"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let first = fake.state().await["studies"][0]["id"].as_str().unwrap().to_string();
    let (s, _) = fake.call(Method::DELETE, &format!("/api/v1/studies/{first}/"), None).await;
    assert_eq!(s, 200, "the reference's answer to deleting a draft");
    let (s, v) = post(&r, &publish, Some(json!({ "origin": "https://h.example.org" }))).await;
    assert_eq!(s, 200, "publishing after the draft was deleted: {v}");
    assert_eq!(v["status"], "ACTIVE", "{v}");
    assert_ne!(v["prolific_id"].as_str(), Some(first.as_str()), "a new draft");
    assert_eq!(fake.state().await["studies"].as_array().unwrap().len(), 1, "only the new study is on Prolific");
}

#[tokio::test]
async fn after_a_late_submission_the_proposed_total_adds_places_past_those_taken_and_bonuses_keep_their_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let (fake, app, r, study) = start(tmp.path()).await;
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
    assert_eq!(s, 200, "{v}");
    let pid = v["prolific_id"].as_str().unwrap().to_string();
    let places = v["plan"]["places"].as_u64().unwrap();
    assert_eq!(places, 3, "3 bundles of 21, no extra places");

    // One times out on Prolific and still finishes (a marked extra copy); the other places fill.
    let late = fake.arrive(&pid, None).await;
    let (client, hstudy, _) = join(&app.base, &late.study_url, Way::Careful).await;
    fake.timeout(&late.submission_id).await;
    let (s, _) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
    assert_eq!(s, 200);
    for _ in 0..3 {
        let a = fake.arrive(&pid, None).await;
        let (c, h, _) = join(&app.base, &a.study_url, Way::Careful).await;
        assert_eq!(answer_all(&app.base, &c, h, Way::Careful).await, "EDGE0001");
        fake.submit(&a.submission_id, Some("EDGE0001")).await;
    }
    assert_eq!(answer_all(&app.base, &client, hstudy, Way::Careful).await, "EDGE0001");
    fake.submit(&late.submission_id, Some("EDGE0001")).await;
    // Discarding one frees a copy: Prolific's 3 places are all taken, by 4 submissions.
    let who: Vec<Value> =
        r.get(app.url(&format!("/api/v1/studies/{study}/participants"))).send().await.unwrap().json().await.unwrap();
    let done = who.iter().find(|p| p["status"] == "completed").unwrap()["number"].as_i64().unwrap();
    let res = r.post(app.url(&format!("/api/v1/studies/{study}/participants/{done}/discard"))).send().await.unwrap();
    assert!(res.status().is_success(), "{}", res.text().await.unwrap());
    let (s, _) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
    assert_eq!(s, 200);
    let st: Value =
        r.get(app.url(&format!("/api/v1/studies/{study}/prolific"))).send().await.unwrap().json().await.unwrap();
    assert_eq!((st["propose_more_places"].as_u64(), st["propose_total"].as_u64()), (Some(1), Some(5)), "{st}");
    let (s, v) =
        post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/places")), Some(json!({ "total": 5 }))).await;
    assert_eq!(s, 200, "{v}");
    let a = fake.arrive(&pid, None).await;
    assert!(!a.submission_id.is_empty(), "the added place takes somebody");

    // Bonuses: one amount for each is held to the same limit as a CSV line.
    let url = app.url(&format!("/api/v1/studies/{study}/prolific/bonuses?round=r1&each=150&dry_run=true"));
    let (s, v) = post(&r, &url, None).await;
    assert_eq!(s, 422, "{v}");
    assert!(v["error"].as_str().unwrap().contains("over the most one bonus may be (100.00)"), "{v}");
}

fn hardneg_cli(app: &Hardneg, fake: &FakeProlific, args: &[&str]) -> std::process::Output {
    crate::helpers::command_on(&app.data_dir).envs(env(fake)).arg("prolific").args(args).output().unwrap()
}

/// One who finished in hardneg and timed out on Prolific before submitting:
/// decide's approval waits for the late submission, then applies (it was
/// "already TIMED-OUT": nothing sent, and never approved).
#[tokio::test]
async fn a_finisher_timed_out_on_prolific_before_submitting_is_approved_once_the_late_submission_comes() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start().await;
    let app = Hardneg::start(&tmp.path().join("data"), &env(&fake), &tmp.path().join("log"), HashMap::new());
    let r = app.login("researcher").await;
    // Always the first option: not flagged as straight-lining in a bundle of 21.
    let spec = SPEC.replace("[prolific]", "straight_line_run = 30\n[prolific]");
    let res = r.post(app.url("/api/v1/studies")).body(spec).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let study = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
    assert_eq!(s, 200, "{v}");
    let pid = v["prolific_id"].as_str().unwrap().to_string();
    let late = fake.arrive(&pid, None).await;
    let (client, hstudy, _) = join(&app.base, &late.study_url, Way::Careful).await;
    assert_eq!(answer_all(&app.base, &client, hstudy, Way::Careful).await, "EDGE0001");
    fake.timeout(&late.submission_id).await;
    let decide = app.url(&format!("/api/v1/studies/{study}/prolific/decide"));
    let (s, d) = post(&r, &decide, None).await;
    assert_eq!(s, 200, "{d}");
    let line = &d["lines"][0];
    assert_eq!(
        (line["prolific_status"].as_str(), line["action"].as_str()),
        (Some("TIMED-OUT"), Some("approve")),
        "{d}"
    );

    fake.submit(&late.submission_id, Some("EDGE0001")).await;
    // A sync runs the outbox's due rows too.
    let sync = app.url(&format!("/api/v1/studies/{study}/prolific/sync"));
    fake.until_first_approved(|| async { assert_eq!(post(&r, &sync, None).await.0, 200) }).await;
    let (s, again) = post(&r, &decide, None).await;
    assert_eq!((s, again["lines"][0]["action"].as_str()), (200, Some("nothing")), "{again}");
}

/// The server's loop, with an approval waiting for its submission (and a
/// sync only every hour), still syncs at once when a webhook comes: it used
/// to stay in the outbox's waits until the hour was over.
#[tokio::test]
async fn a_webhook_wakes_the_sync_while_an_approval_waits_for_its_submission() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start().await;
    let mut e = env(&fake);
    e.extend([("HARDNEG_PROLIFIC_WEBHOOK_SECRET", "whsec-2".to_string()), ("HARDNEG_PROLIFIC_WAIT_MS", "300".into())]);
    let app = Hardneg::start(&tmp.path().join("data"), &e, &tmp.path().join("log"), HashMap::new());
    let r = app.login("researcher").await;
    let spec = SPEC.replace("[prolific]", "straight_line_run = 30\n[prolific]");
    let res = r.post(app.url("/api/v1/studies")).body(spec).send().await.unwrap();
    let study = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
    assert_eq!(s, 200, "{v}");
    let a = fake.arrive(v["prolific_id"].as_str().unwrap(), None).await;
    let (client, hstudy, _) = join(&app.base, &a.study_url, Way::Careful).await;
    assert_eq!(answer_all(&app.base, &client, hstudy, Way::Careful).await, "EDGE0001");
    let (s, d) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/decide")), None).await;
    assert_eq!((s, d["lines"][0]["prolific_status"].as_str()), (200, Some("ACTIVE")), "{d}");
    assert_eq!(d["lines"][0]["action"], "approve", "waits for the submission: {d}");

    // The loop's round after the decision is under way, its approval waiting.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    fake.submit(&a.submission_id, Some("EDGE0001")).await;
    let body = json!({"event_id": "ev-2", "event_type": "submission.status.change", "resource_id": a.submission_id});
    let body = serde_json::to_vec(&body).unwrap();
    let ts = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs().to_string();
    let sig = hardneg::prolific::webhook::base64(&hardneg::prolific::webhook::hmac_sha256(
        b"whsec-2",
        &[ts.as_bytes(), &body],
    ));
    let hook = reqwest::Client::new()
        .post(app.url("/api/v1/prolific/webhook"))
        .header("X-Prolific-Request-Timestamp", ts)
        .header("X-Prolific-Request-Signature", sig)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(hook.status(), 204);
    fake.until_first_approved(|| async {}).await;
}

/// Places only grow: a raise overtaken by a larger one (it was throttled
/// meanwhile, an audit's race) is done without being sent, where Prolific
/// would refuse the smaller total. The row is written by hand as the race
/// leaves it: pending, its total below the study's places.
#[tokio::test]
async fn a_raise_overtaken_by_a_larger_one_is_never_sent() {
    let tmp = tempfile::tempdir().unwrap();
    let (fake, app, r, study) = start(tmp.path()).await;
    let places = publish_and_raise(&fake, &app, &r, study, 2).await;
    let db = crate::helpers::db_at(&app.data_dir).await;
    sqlx::query(
        "INSERT INTO prolific_outbox (study_id, action, idem_key, payload, state, created_at, updated_at)
         VALUES ($1, 'set_places', $2, $3, 'pending', 0, 0)",
    )
    .bind(study)
    .bind(format!("set_places:{study}:{}", places + 1))
    .bind(json!({"kind": "set_places", "total": places + 1}).to_string())
    .execute(&db)
    .await
    .unwrap();
    let out = hardneg_cli(&app, &fake, &["flush", &study.to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let st = fake.state().await;
    assert_eq!(st["studies"][0]["total_available_places"], places + 2);
    let patches = st["requests"].as_array().unwrap().iter().filter(|q| q["method"] == "PATCH").count();
    assert_eq!(patches, 1, "only the larger raise was sent: {}", st["requests"]);
}

/// Publishes `study` and raises its places by `more` through the API: the
/// places it was published with.
async fn publish_and_raise(fake: &FakeProlific, app: &Hardneg, r: &reqwest::Client, study: i64, more: i64) -> i64 {
    let (s, v) = post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
    assert_eq!(s, 200, "{v}");
    let places = fake.state().await["studies"][0]["total_available_places"].as_i64().unwrap();
    let body = json!({"total": places + more});
    let (s, v) = post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/places")), Some(body)).await;
    assert_eq!(s, 200, "{v}");
    places
}

/// A raise checked before another sender's larger one was applied (this
/// server had not seen it yet) is refused by Prolific ("can only be
/// increased"): it is overtaken, done, and the call that asked for it
/// succeeds; not a failed row that `--retry-failed` would send to be
/// refused again (an audit: two servers and the CLI raising at once).
#[tokio::test]
async fn a_raise_refused_because_a_larger_one_came_first_is_done() {
    let tmp = tempfile::tempdir().unwrap();
    let (fake, app, r, study) = start(tmp.path()).await;
    let places = publish_and_raise(&fake, &app, &r, study, 3).await;
    // As the other sender's raise looks to one that has not seen it yet.
    let db = crate::helpers::db_at(&app.data_dir).await;
    sqlx::query("UPDATE prolific_studies SET places = $1 WHERE study_id = $2")
        .bind(places)
        .bind(study)
        .execute(&db)
        .await
        .unwrap();
    let (s, v) =
        post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/places")), Some(json!({"total": places + 1})))
            .await;
    assert_eq!(s, 200, "the study has the places it asked for: {v}");
    let st = fake.state().await;
    assert_eq!(st["studies"][0]["total_available_places"], places + 3, "places never shrink");
    let refused = st["requests"].as_array().unwrap().iter().filter(|q| q["method"] == "PATCH" && q["status"] == 400);
    assert_eq!(refused.count(), 1, "the smaller raise was sent and refused: {}", st["requests"]);
    let rows: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT state, last_error FROM prolific_outbox WHERE idem_key = $1")
            .bind(format!("set_places:{study}:{}", places + 1))
            .fetch_all(&db)
            .await
            .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, "done", "{rows:?}");
    assert!(rows[0].1.as_deref().is_some_and(|e| e.contains("a larger raise was applied first")), "{rows:?}");
    let out = hardneg_cli(&app, &fake, &["flush", &study.to_string()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("everything confirmed"), "nothing failed is left");
    let known: i64 = sqlx::query_scalar("SELECT places FROM prolific_studies WHERE study_id = $1")
        .bind(study)
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!(known, places + 3, "the places Prolific has, read back");

    // The command line says what the study has, not what it asked for.
    sqlx::query("UPDATE prolific_studies SET places = $1 WHERE study_id = $2")
        .bind(places)
        .bind(study)
        .execute(&db)
        .await
        .unwrap();
    let out = hardneg_cli(&app, &fake, &["places", &study.to_string(), &(places + 2).to_string()]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains(&format!("now has {} places", places + 3)), "{said}");
}

/// Prolific refusing a PUBLISH (a workspace balance too low, say) is no
/// reason to refuse it for good: pressed again, it is sent again (audit AS:
/// every later press repeated the old refusal and sent nothing).
#[tokio::test]
async fn a_refused_publish_is_sent_again_when_asked_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (fake, app, r, study) = start(tmp.path()).await;
    let publish = app.url(&format!("/api/v1/studies/{study}/prolific/publish"));
    let origin = Some(json!({ "origin": "https://h.example.org/" }));
    fake.fault("POST", "/api/v1/studies/*/transition/", "400", 1).await;
    let (s, v) = post(&r, &publish, origin.clone()).await;
    assert_eq!(s, 422, "{v}");
    assert!(v["error"].as_str().unwrap().contains("PUBLISH of study"), "{v}");
    let (s, v) = post(&r, &publish, origin.clone()).await;
    assert_eq!(s, 200, "sent again: {v}");
    assert_eq!(fake.state().await["studies"][0]["status"], "ACTIVE");
    // Pressed once more, it is already published: nothing more is sent.
    let (s, v) = post(&r, &publish, origin).await;
    assert_eq!(s, 200, "{v}");
    let transitions = fake.state().await["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["path"].as_str().is_some_and(|p| p.ends_with("/transition/")))
        .count();
    assert_eq!(transitions, 2, "the refused PUBLISH and the one sent again");
}
