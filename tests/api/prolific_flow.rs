//! A study of 210 simulated participants run through the fake Prolific from publish to bonuses: faults on every kind of
//! call, and the server SIGKILLed mid-decision (after the outbox rows are written, before any is sent; and after a
//! request was answered, before the answer was stored). It ends with both sides agreeing: every place accounted for,
//! nobody paid or bonused twice, no bonus lost, no comprehension failure rejected (those screened out by attention
//! checks are, as the approve list says, and the finished ones among them discarded), and the token in no log, page, export or
//! database row.
use crate::prolific_fake::FakeProlific;
use crate::prolific_kit::{answer_all, database_text, join, post, Hardneg, Way};
use reqwest::Client;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

const SPEC: &str = r#"name = "prolific flow"
kind = "four_image"
dataset = "demo"
seed = 11
access = "link"

[link]
bundle_size = 1
copies = 3
consent = "I agree to take part."
completion_code = "DONE0001"
screen_out_code = "SCRN0001"
attention_checks = 3
max_failed_checks = 3
comprehension = [{ question = "When do you pick None?", options = ["Never", "When no image fits"], answer = "When no image fits" }]

[prolific]
estimated_minutes = 5
hourly_rate = 9.0
budget_cap = "5000.00"
"#;

fn env(fake: &FakeProlific, clock: &Path, crash: Option<&str>) -> Vec<(&'static str, String)> {
    let mut e = vec![
        ("HARDNEG_PROLIFIC_TOKEN", fake.token.clone()),
        ("HARDNEG_PROLIFIC_URL", fake.base.clone()),
        ("HARDNEG_PROLIFIC_SYNC_SECS", "0.3".into()),
        ("HARDNEG_PROLIFIC_BACKOFF_MS", "40".into()),
        ("HARDNEG_PROLIFIC_WAIT_MS", "200".into()),
        ("HARDNEG_PROLIFIC_TIMEOUT_MS", "1500".into()),
        ("HARDNEG_PROLIFIC_CLAIM_MS", "2500".into()),
        ("HARDNEG_PROLIFIC_BONUS_GRACE_SECS", "2".into()),
        ("HARDNEG_TEST_CLOCK_FILE", clock.display().to_string()),
    ];
    if let Some(c) = crash {
        e.push(("HARDNEG_TEST_CRASH_AFTER", c.to_string()));
    }
    e
}

/// Calls `f` until it gives Some, ticking the fake between tries (at most `secs`).
async fn until<T, F, Fut>(fake: &FakeProlific, secs: u64, what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: not within {secs} s");
        fake.tick().await;
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

async fn status(app: &Hardneg, r: &Client, study: i64) -> Value {
    let res = r.get(app.url(&format!("/api/v1/studies/{study}/prolific"))).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

async fn sync(app: &Hardneg, r: &Client, study: i64) -> Value {
    let (s, v) = post(r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
    assert_eq!(s, 200, "sync: {v}");
    v
}

/// Waits until the study's outbox has nothing open.
async fn settled(fake: &FakeProlific, app: &Hardneg, r: &Client, study: i64) -> Value {
    until(fake, 90, "the outbox settles", || async {
        let s = status(app, r, study).await;
        let open = s["outbox"].as_array().unwrap().iter().filter(|l| l["state"] != "failed").count();
        (open == 0).then_some(s)
    })
    .await
}

#[tokio::test]
async fn a_study_of_210_participants_from_publish_to_bonuses_through_faults_and_crashes() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, log, clock) = (tmp.path().join("data"), tmp.path().join("server.log"), tmp.path().join("clock"));
    std::fs::write(&clock, "0").unwrap();
    let fake = FakeProlific::start().await;
    let mut app = Hardneg::start(&data, &env(&fake, &clock, None), &log, HashMap::new());
    let accounts = app.accounts.clone();
    let r = app.login("researcher").await;
    let res = r.post(app.url("/api/v1/studies")).body(SPEC).send().await.unwrap();
    assert_eq!(res.status(), 201);
    let study = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();

    // Publish: the draft's answer is lost and the first PUBLISH meets a 503; one draft, published once.
    let (s, dry) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish?dry_run=true")), None).await;
    assert_eq!(s, 200, "{dry}");
    assert_eq!((dry["plan"]["places"].as_u64(), dry["plan"]["reward_cents"].as_u64()), (Some(208), Some(75)));
    assert!(fake.state().await["studies"].as_array().unwrap().is_empty(), "a dry run sends nothing");
    fake.fault("POST", "/api/v1/studies/", "drop_response", 1).await;
    fake.fault("POST", "/api/v1/studies/*/transition/", "503", 1).await;
    let (s, published) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
    assert_eq!(s, 200, "{published}");
    assert_eq!(published["status"], "ACTIVE", "{published}");
    let pid = published["prolific_id"].as_str().unwrap().to_string();
    let st = fake.state().await;
    assert_eq!(st["studies"].as_array().unwrap().len(), 1, "a lost answer made no second draft");
    let remote = &st["studies"][0];
    assert_eq!(remote["total_available_places"], 208);
    assert!(remote["external_study_url"].as_str().unwrap().starts_with(&app.base));

    // Nine take a place and leave on Prolific: 5 return, 4 time out; the sync frees their places.
    let mut leavers = Vec::new();
    for _ in 0..9 {
        let a = fake.arrive(&pid, None).await;
        join(&app.base, &a.study_url, Way::Stop).await;
        leavers.push(a);
    }
    for (i, a) in leavers.iter().enumerate() {
        if i < 5 {
            fake.return_(&a.submission_id).await;
        } else {
            fake.timeout(&a.submission_id).await;
        }
    }
    // The background sync (every 0.3 s) may meet the 500 or free places first: the outcome is asserted.
    fake.fault("GET", "/api/v1/submissions/", "500", 1).await;
    let freed = sync(&app, &r, study).await["freed"].as_u64().unwrap();
    assert!(freed <= 9, "freed {freed}");
    let s = status(&app, &r, study).await;
    assert_eq!(s["hardneg_working"], 0, "all nine places are free again: {s}");
    let st = fake.state().await;
    assert!(st["faults"].as_array().unwrap().is_empty(), "the 500 was met");
    let page =
        |q: &&Value| q["method"] == "GET" && q["path"].as_str().unwrap_or("").starts_with("/api/v1/submissions/?");
    let pages: Vec<u64> =
        st["requests"].as_array().unwrap().iter().filter(page).filter_map(|q| q["status"].as_u64()).collect();
    let met = pages.iter().position(|&c| c == 500).expect("a page answered 500");
    assert!(pages[met + 1..].contains(&200), "a 500 on a page is retried: {pages:?}");

    // Six fail every attention check, four the comprehension check, two never open the link.
    let (mut by_checks, mut by_comprehension) = (Vec::new(), Vec::new());
    for way in [Way::FailChecks(3); 6].into_iter().chain([Way::FailComprehension; 4]) {
        let a = fake.arrive(&pid, None).await;
        let (c, hstudy, code) = join(&app.base, &a.study_url, way).await;
        assert_eq!(hstudy, study);
        let code = match code {
            Some(code) => code,
            None => answer_all(&app.base, &c, study, way).await,
        };
        assert_eq!(code, "SCRN0001");
        fake.submit(&a.submission_id, Some(&code)).await;
        let screened = if way == Way::FailComprehension { &mut by_comprehension } else { &mut by_checks };
        screened.push(a.submission_id.clone());
    }
    for _ in 0..2 {
        let a = fake.arrive(&pid, None).await;
        fake.submit(&a.submission_id, None).await;
    }

    // 189 finishers take the places, then work 10 minutes (so rejecting for failed checks is allowed).
    let mut finishers = Vec::new();
    for i in 0..189 {
        let a = fake.arrive(&pid, None).await;
        let way = if i % 21 == 0 { Way::FailChecks(2) } else { Way::Careful };
        let (c, _, _) = join(&app.base, &a.study_url, way).await;
        finishers.push((a, c, way));
    }
    std::fs::write(&clock, "600").unwrap();
    for chunk in finishers.chunks(12) {
        let codes =
            futures_util::future::join_all(chunk.iter().map(|(_, c, way)| answer_all(&app.base, c, study, *way))).await;
        for ((a, _, _), code) in chunk.iter().zip(codes) {
            assert_eq!(code, "DONE0001");
            fake.submit(&a.submission_id, Some(&code)).await;
        }
    }
    // Two failed checks in a 10-minute study: rejected, finished or screened out at the third.
    let rejected: HashSet<String> = finishers
        .iter()
        .filter(|f| f.2 != Way::Careful)
        .map(|f| f.0.submission_id.clone())
        .chain(by_checks.iter().cloned())
        .collect();
    assert_eq!(rejected.len(), 15);
    sync(&app, &r, study).await;
    let s = status(&app, &r, study).await;
    assert_eq!((s["hardneg_completed"].as_i64(), s["hardneg_free"].as_i64()), (Some(189), Some(0)), "{s}");
    let never: Vec<&Value> =
        s["mismatches"].as_array().unwrap().iter().filter(|m| m["kind"] == "never_arrived").collect();
    assert_eq!(never.len(), 2, "{}", s["mismatches"]);

    // Decide. A dry run lists exactly what would go; nothing is written or sent.
    let (sd, dry) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/decide?dry_run=true")), None).await;
    assert_eq!(sd, 200, "{dry}");
    let reqs = dry["requests"].as_array().unwrap();
    let bulk: Vec<&Value> = reqs.iter().filter(|q| q["path"] == "/api/v1/submissions/bulk-approve/").collect();
    assert_eq!(bulk.len(), 1);
    assert_eq!(bulk[0]["body"]["submission_ids"].as_array().unwrap().len(), 180);
    let rejects: Vec<&Value> = reqs.iter().filter(|q| q["body"]["action"] == "REJECT").collect();
    assert_eq!(rejects.len(), 15);
    assert!(rejects.iter().all(|q| q["body"]["rejection_category"] == "FAILED_CHECK"
        && q["body"]["message"].as_str().unwrap().chars().count() >= 100));
    let returns: Vec<&Value> =
        reqs.iter().filter(|q| q["path"].as_str().unwrap().ends_with("/request-return/")).collect();
    assert_eq!(returns.len(), 4, "every comprehension failure is asked to return");
    let joins: Vec<&Value> =
        reqs.iter().filter(|q| q["path"].as_str().unwrap().contains("participant-groups")).collect();
    assert_eq!(joins.len(), 1, "the finishers join the benchmark's group");
    assert!(joins[0]["path"].as_str().unwrap().contains("hardneg-demo"), "a group not made yet is named: {}", joins[0]);
    assert_eq!(reqs.len(), 21);
    assert!(status(&app, &r, study).await["outbox"].as_array().unwrap().is_empty());

    // Crash 1: the server dies right after the decision's rows are committed.
    app.kill();
    app = Hardneg::start(&data, &env(&fake, &clock, Some("outbox_written")), &log, accounts.clone());
    let r = app.login("researcher").await;
    let cut = r.post(app.url(&format!("/api/v1/studies/{study}/prolific/decide"))).send().await;
    assert!(cut.is_err() || !cut.unwrap().status().is_success(), "the server aborted mid-decision");
    assert!(app.exited_within(60));
    // Crash 2: the next server dies after Prolific answered the bulk approval, before storing it.
    fake.fault("POST", "/api/v1/submissions/*/transition/", "500", 2).await;
    fake.fault("POST", "/api/v1/submissions/*/request-return/", "429", 2).await;
    app = Hardneg::start(&data, &env(&fake, &clock, Some("sent:approve")), &log, accounts.clone());
    assert!(app.exited_within(60), "the restarted server sends the written rows");
    // The third runs to the end: the unconfirmed approval is read back, not lost.
    fake.fault("POST", "/api/v1/submissions/bulk-approve/", "drop_response", 1).await;
    app = Hardneg::start(&data, &env(&fake, &clock, None), &log, accounts.clone());
    let r = app.login("researcher").await;
    settled(&fake, &app, &r, study).await;

    // Bonuses: 0.50 to everyone approved, then a CSV round; a crash after a pay was answered.
    fake.tick().await;
    sync(&app, &r, study).await;
    let (sb, plan) =
        post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/bonuses?round=all&each=0.50")), None).await;
    assert_eq!(sb, 200, "{plan}");
    assert_eq!(plan["bonuses"].as_array().unwrap().len(), 180);
    app.kill();
    app = Hardneg::start(&data, &env(&fake, &clock, Some("sent:bonus_pay")), &log, accounts.clone());
    assert!(app.exited_within(60), "the pay was sent");
    fake.fault("POST", "/api/v1/submissions/bonus-payments/", "drop_response", 1).await;
    fake.fault("POST", "/api/v1/bulk-bonus-payments/*/pay/", "502", 1).await;
    app = Hardneg::start(&data, &env(&fake, &clock, None), &log, accounts.clone());
    let r = app.login("researcher").await;
    let best: Vec<&(crate::prolific_fake::Arrival, Client, Way)> =
        finishers.iter().filter(|f| f.2 == Way::Careful).take(20).collect();
    let csv: String = best.iter().map(|f| format!("{},1.25\n", f.0.participant_id)).collect();
    let res = r
        .post(app.url(&format!("/api/v1/studies/{study}/prolific/bonuses?round=best")))
        .body(csv)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let s = settled(&fake, &app, &r, study).await;
    assert_eq!(s["bonuses"], json!([0, 0, 200, 180 * 50 + 20 * 125]), "every bonus paid");

    // Both sides agree.
    fake.tick().await;
    sync(&app, &r, study).await;
    let st = fake.state().await;
    let subs: HashMap<String, &Value> =
        st["submissions"].as_array().unwrap().iter().map(|s| (s["id"].as_str().unwrap().to_string(), s)).collect();
    let approved = subs.values().filter(|s| s["status"] == "APPROVED").count();
    assert_eq!(approved, 180);
    for id in &rejected {
        assert_eq!(subs[id]["status"], "REJECTED", "{}", subs[id]);
    }
    assert_eq!(subs.values().filter(|s| s["status"] == "REJECTED").count(), 15);
    for id in &by_comprehension {
        assert_ne!(subs[id]["status"], "REJECTED", "a comprehension failure is never rejected");
        assert!(!subs[id]["return_requested"].is_null(), "{}", subs[id]);
    }
    // Every approved submission got its 0.50 once; the 20 best their 1.25 once.
    let bonus_of =
        |s: &Value| s["bonus_payments"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect::<Vec<_>>();
    let best_ids: HashSet<&str> = best.iter().map(|f| f.0.submission_id.as_str()).collect();
    for s in subs.values().filter(|s| s["status"] == "APPROVED") {
        let mut got = bonus_of(s);
        got.sort_by(f64::total_cmp);
        let want: Vec<f64> = if best_ids.contains(s["id"].as_str().unwrap()) { vec![50.0, 125.0] } else { vec![50.0] };
        let want_money: Vec<f64> = want.iter().map(|c| c / 100.0).collect();
        assert!(got == want || got == want_money, "{}: bonuses {got:?}", s["id"]);
    }
    assert!(subs.values().filter(|s| s["status"] != "APPROVED").all(|s| bonus_of(s).is_empty()));
    // The approved finishers are in the benchmark's group, once each, so a later study can block them.
    let groups = st["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "one group, made once: {groups:?}");
    assert_eq!(groups[0]["name"], "hardneg-demo");
    let members: HashSet<&str> = groups[0]["members"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    let approved_people: HashSet<&str> =
        subs.values().filter(|s| s["status"] == "APPROVED").map(|s| s["participant_id"].as_str().unwrap()).collect();
    assert_eq!(members, approved_people);
    // Places: Prolific's taken places are hardneg's participants who did not leave, and the free ones match.
    let remote = &st["studies"][0];
    let taken = remote["places_taken"].as_i64().unwrap();
    assert_eq!(taken, 189 + 6 + 4 + 2, "{remote}");
    let s = status(&app, &r, study).await;
    assert_eq!(s["places"].as_i64(), remote["total_available_places"].as_i64());
    assert_eq!(s["counts"]["APPROVED"].as_f64(), Some(180.0));
    let rows: Vec<Value> = r
        .get(app.url(&format!("/api/v1/studies/{study}/participants?platform_ids=true")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for row in &rows {
        let sub = row["platform_session"].as_str().unwrap();
        let remote = subs[sub]["status"].as_str().unwrap();
        let want = match row["status"].as_str().unwrap() {
            "completed" => ["APPROVED", "REJECTED"].as_slice(),
            "returned" => &["RETURNED"],
            "timed_out" => &["TIMED-OUT"],
            "screened_out" => &["AWAITING REVIEW", "RETURNED", "REJECTED"],
            // Finished with two failed checks: rejected, and the copy discarded with it.
            "discarded" => &["REJECTED"],
            other => panic!("participant {} is {other}", row["number"]),
        };
        assert!(
            want.contains(&remote),
            "participant {}: hardneg {} but Prolific {remote}",
            row["number"],
            row["status"]
        );
        // Every end of a place is on the lease clock, a return seen through Prolific's too.
        if let (Some(arrived), Some(ended)) = (row["arrived_at"].as_i64(), row["ended_at"].as_i64()) {
            assert!(ended >= arrived, "participant {} ended before arriving: {row}", row["number"]);
        }
    }
    assert_eq!(rows.len(), 9 + 10 + 189);

    // Every request hardneg sent met the reference: the fake refused none (faults aside).
    let refused: Vec<&Value> = st["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["fault"].is_null() && (400..500).contains(&q["status"].as_u64().unwrap_or(0)))
        .collect();
    assert!(st["requests"].as_array().unwrap().iter().filter(|q| q["status"].is_u64()).count() > 200);
    assert!(refused.is_empty(), "refused by the reference: {refused:?}");
    assert_eq!(st["requests_dropped"], 0, "the fake kept every request");

    // The token is in no log line, page, export or database row.
    let token = fake.token.as_str();
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("Prolific sync started"), "the log was captured");
    assert!(!logged.contains(token), "the token is in the server's log");
    for page in [
        "/research",
        &format!("/api/v1/studies/{study}/prolific"),
        &format!("/api/v1/studies/{study}/approve-list.csv"),
    ] {
        let text = r.get(app.url(page)).send().await.unwrap().text().await.unwrap();
        assert!(!text.contains(token), "the token is on {page}");
    }
    assert!(!database_text(&data).await.contains(token), "the token is in the database");
}
