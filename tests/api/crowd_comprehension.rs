//! The comprehension check before the bundle over real HTTP: passed at the
//! first or the second attempt (the instructions again in between), failed
//! twice (screen-out code and URL, asked to return, and no lease ever
//! taken), and the spec errors that name their field. The participants
//! list, the approve list, the dashboard and the CLI agree on each one's status.
use crate::crowd_check_kit::{no_lease, post_json};
use crate::crowd_kit::{arrive, arrive_with, browser, browser_from, create_link_study, link_spec, post_ok, stage};
use crate::helpers::TestApp;
use serde_json::{json, Value};

const SPEC: &[&str] = &[
    "screen_out_code = \"SCREEN02\"",
    "screen_out_url = \"http://127.0.0.1:9/out?cc={code}\"",
    "comprehension = [
  { question = \"When do you pick None?\", options = [\"Never\", \"When no image shows everything in the text\"], answer = \"When no image shows everything in the text\" },
  { question = \"Do deformed hands count against an image?\", options = [\"Yes\", \"No\"], answer = \"No\" },
]",
];

fn comprehension(study: i64) -> String {
    format!("/api/v1/take/{study}/comprehension")
}

#[tokio::test]
async fn the_comprehension_check_comes_before_any_lease_and_gives_two_attempts() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("comprehension", 9, SPEC)).await;

    // Passes at once: the lease is taken only then.
    let p1 = arrive(&app, &token, study, "P1").await;
    assert!(no_lease(&app, study, "P1").await, "arriving leases nothing");
    let q = post_ok(&app, &p1, &format!("/api/v1/take/{study}/instructions")).await;
    assert_eq!((q["stage"].as_str(), q["attempt"].as_i64()), (Some("comprehension"), Some(1)), "{q}");
    assert_eq!(q["questions"][1]["options"], json!(["Yes", "No"]));
    assert!(q.to_string().find("answer").is_none(), "the right answers stay on the server: {q}");
    let (status, _) = post_json(&app, &p1, &comprehension(study), json!({"answers": [1]})).await;
    assert_eq!(status, 422, "one answer per question");
    assert!(no_lease(&app, study, "P1").await);
    let (status, next) = post_json(&app, &p1, &comprehension(study), json!({"answers": [1, 1]})).await;
    assert_eq!((status, next["stage"].as_str()), (200, Some("working")), "{next}");
    assert!(!no_lease(&app, study, "P1").await, "leased on passing");
    assert_eq!(next["total"], 9);
    let again = post_json(&app, &p1, &comprehension(study), json!({"answers": [1, 1]})).await;
    assert_eq!(again.0, 422, "no second check once passed");

    // Fails once: the instructions again, then passes the second attempt.
    let p2 = arrive(&app, &token, study, "P2").await;
    post_ok(&app, &p2, &format!("/api/v1/take/{study}/instructions")).await;
    let (_, after) = post_json(&app, &p2, &comprehension(study), json!({"answers": [0, 1]})).await;
    assert_eq!((after["stage"].as_str(), after["again"].as_bool()), (Some("instructions"), Some(true)), "{after}");
    assert!(no_lease(&app, study, "P2").await);
    let q = post_ok(&app, &p2, &format!("/api/v1/take/{study}/instructions")).await;
    assert_eq!(q["attempt"], 2);
    let (_, next) = post_json(&app, &p2, &comprehension(study), json!({"answers": [1, 1]})).await;
    assert_eq!(next["stage"], "working", "{next}");

    // Fails twice: the screen-out code, asked to return, and never a lease.
    let p3 = arrive(&app, &token, study, "P3").await;
    post_ok(&app, &p3, &format!("/api/v1/take/{study}/instructions")).await;
    post_json(&app, &p3, &comprehension(study), json!({"answers": [1, 0]})).await;
    post_ok(&app, &p3, &format!("/api/v1/take/{study}/instructions")).await;
    let (_, out) = post_json(&app, &p3, &comprehension(study), json!({"answers": [0, 0]})).await;
    assert_eq!(out["stage"], "screened_out", "{out}");
    assert_eq!((out["reason"].as_str(), out["code"].as_str()), (Some("comprehension"), Some("SCREEN02")));
    assert_eq!(out["url"], "http://127.0.0.1:9/out?cc=SCREEN02");
    assert_eq!(stage(&app, &p3, study).await, out, "a reload shows the same");
    assert!(no_lease(&app, study, "P3").await, "no lease row");
    let next = p3.get(app.url(&format!("/api/v1/studies/{study}/next"))).send().await.unwrap();
    assert_eq!(next.status(), 204, "ended, as a return or an attention screen-out (docs/api.md)");
    let (status, page) = arrive_with(&app, &browser(), &token, "P3").await;
    assert_eq!(status, 200);
    assert!(page.contains("SCREEN02") && page.contains("Please return the study"), "{page}");

    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    let attempts: Vec<i64> = rows.iter().map(|r| r["comprehension_attempts"].as_i64().unwrap()).collect();
    assert_eq!(attempts, [1, 2, 2]);
    assert_eq!(rows[2]["state"], Value::Null);
    assert_eq!(rows[2]["bundle"], Value::Null);
    assert_eq!(rows[2]["screened_out_reason"], "comprehension");
    assert_eq!((rows[0]["state"].as_str(), rows[1]["state"].as_str()), (Some("active"), Some("active")));
    let bundles: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/bundles")).await;
    assert_eq!(bundles.iter().map(|b| b["active"].as_i64().unwrap()).sum::<i64>(), 2, "P3 took no place");

    // P4 has arrived and not taken the check yet. Every view says the same of each.
    let p4 = arrive(&app, &token, study, "P4").await;
    let next = p4.get(app.url(&format!("/api/v1/studies/{study}/next"))).send().await.unwrap();
    assert_eq!(next.status(), 422, "no bundle yet");
    assert!(next.text().await.unwrap().contains("pass the comprehension check first"));
    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    let status: Vec<&str> = rows.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(status, ["active", "active", "screened_out", "arriving"]);
    let res = researcher.get(app.url(&format!("/api/v1/studies/{study}/approve-list.csv"))).send().await.unwrap();
    let csv = res.text().await.unwrap();
    let listed: Vec<&str> = csv.lines().skip(1).map(|l| l.split(',').nth(3).unwrap()).collect();
    assert_eq!(listed, status, "{csv}");
    let d: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/dashboard")).await;
    let p = &d["participants"];
    assert_eq!((p["started"].as_i64(), p["working"].as_i64(), p["screened_out"].as_i64()), (Some(4), Some(2), Some(1)));
    let out = app.cli(&["participants", &study.to_string(), "--csv"]);
    let cli = String::from_utf8_lossy(&out.stdout);
    let states: Vec<&str> = cli.lines().skip(1).map(|l| l.split(',').nth(3).unwrap()).collect();
    assert_eq!(states, status, "{cli}");
}

/// "Return this study" shows before the check too (audit S: it was a 422,
/// "pass the comprehension check first"): nothing to free, and no error.
#[tokio::test]
async fn giving_the_study_back_before_the_check_is_no_error() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("comprehension", 9, SPEC)).await;
    let p0 = arrive(&app, &token, study, "P0").await;
    let (status, back) = post_json(&app, &p0, &format!("/api/v1/take/{study}/return"), json!({})).await;
    assert_eq!((status, back["stage"].as_str()), (200, Some("returned")), "{back}");
    assert!(no_lease(&app, study, "P0").await, "nothing was leased");
}

#[tokio::test]
async fn check_spec_errors_name_their_field() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let cases = [
        // 63 items in one bundle: no other items to make attention checks from.
        (
            link_spec("one bundle", 63, &["attention_checks = 2"]),
            "field `link.attention_checks`: 2 per bundle, but bundle 0 has only 0",
        ),
        (
            link_spec("bad gold", 9, &["gold = [{ key = \"no-such-key\", answer = \"none\" }]"]),
            "field `link.gold`: \"no-such-key\" is not an item",
        ),
        (link_spec("bad max", 9, &["attention_checks = 1"]), "field `link.max_failed_checks`"),
        (
            link_spec(
                "bad q",
                9,
                &["comprehension = [{ question = \"q\", options = [\"a\", \"b\"], answer = \"c\" }]"],
            ),
            "field `link.comprehension`: question 1",
        ),
    ];
    for (spec, want) in cases {
        let res = researcher.post(app.url("/api/v1/studies")).body(spec).send().await.unwrap();
        assert_eq!(res.status(), 422);
        let body: Value = res.json().await.unwrap();
        assert!(body["error"].as_str().unwrap().contains(want), "{body} should say {want:?}");
    }
    let studies: Vec<Value> = app.get(&researcher, "/api/v1/studies").await;
    assert!(studies.iter().all(|s| !s["name"].as_str().unwrap().starts_with("bad")), "nothing created");
}

/// Passing the check when every place is taken: the page says full, and
/// every view names that status, with no decision to take on Prolific.
#[tokio::test]
async fn full_after_the_check_is_its_own_status_with_no_decision() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("one place", 63, SPEC)).await;
    let (first, late) = (arrive(&app, &token, study, "P1").await, arrive(&app, &token, study, "P2").await);
    for p in [&first, &late] {
        post_ok(&app, p, &format!("/api/v1/take/{study}/instructions")).await;
    }
    let (_, next) = post_json(&app, &first, &comprehension(study), json!({"answers": [1, 1]})).await;
    assert_eq!(next["stage"], "working", "{next}");
    let (_, next) = post_json(&app, &late, &comprehension(study), json!({"answers": [1, 1]})).await;
    assert_eq!(next["stage"], "full", "{next}");

    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    let status: Vec<&str> = rows.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(status, ["active", "full_after_comprehension"]);
    let csv = app.get_text(&researcher, &format!("/api/v1/studies/{study}/approve-list.csv")).await;
    let row: Vec<&str> = csv.lines().find(|l| l.starts_with("P2,")).expect("P2's row").split(',').collect();
    assert_eq!((row[3], row[11]), ("full_after_comprehension", "none"), "{csv}");
    let d: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/dashboard")).await;
    assert_eq!((d["participants"]["started"].as_i64(), d["participants"]["working"].as_i64()), (Some(2), Some(1)));
}

/// Arrivals are participants before they pass the check, so an anonymous
/// flood is bounded by the places it could take: with one place, 23
/// may wait at the check at once; the 24th is told the study is full, and
/// someone who arrived before still gets back in.
#[tokio::test]
async fn arrivals_at_the_comprehension_check_are_bounded_by_the_places() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "6"]);
    let researcher = app.login("researcher").await;
    let mut lines = SPEC.to_vec();
    lines.push("copies = 1");
    let (study, token) = create_link_study(&app, &researcher, &link_spec("flooded", 6, &lines)).await;
    for i in 0..23 {
        arrive(&app, &token, study, &format!("F{i}")).await;
    }
    let (_, page) = arrive_with(&app, &browser(), &token, "F23").await;
    assert!(page.contains("This study is full"), "{page}");
    arrive(&app, &token, study, "F0").await;
    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    assert_eq!(rows.len(), 23, "the one turned away left no row");
}

/// The same bound holds arrivals that leave at once: arrive, return (or
/// fail the comprehension check twice), arrive again with a new id. With
/// one place, 23 such arrivals within the time limit; the 24th is told
/// the study is full and leaves no row; once the time limit has passed,
/// the link admits again.
#[tokio::test]
async fn arrivals_that_return_or_fail_the_check_at_once_are_bounded_too() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = tmp.path().join("clock-offset");
    let app = TestApp::spawn_with_env(
        &tmp.path().join("data"),
        &["--demo-size", "6"],
        &[("HARDNEG_TEST_CLOCK_FILE", &clock)],
    );
    let researcher = app.login("researcher").await;
    // Without a comprehension check: every arrival takes the one place, then returns it.
    let returns = link_spec("return flood", 6, &["copies = 1", "time_limit_minutes = 10"]);
    let (study, token) = create_link_study(&app, &researcher, &returns).await;
    for i in 0..23 {
        let p = arrive(&app, &token, study, &format!("R{i}")).await;
        post_ok(&app, &p, &format!("/api/v1/take/{study}/return")).await;
    }
    let (_, page) = arrive_with(&app, &browser(), &token, "R23").await;
    assert!(page.contains("This study is full"), "{page}");
    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    assert_eq!(rows.len(), 23, "the one turned away left no row");
    // With one: failing it twice leaves at once too.
    let mut lines = SPEC.to_vec();
    lines.extend(["copies = 1", "time_limit_minutes = 10"]);
    let (checked, checked_token) = create_link_study(&app, &researcher, &link_spec("fail flood", 6, &lines)).await;
    for i in 0..23 {
        let p = arrive(&app, &checked_token, checked, &format!("C{i}")).await;
        for _ in 0..2 {
            post_ok(&app, &p, &format!("/api/v1/take/{checked}/instructions")).await;
            post_json(&app, &p, &comprehension(checked), json!({"answers": [0, 0]})).await;
        }
        assert_eq!(stage(&app, &p, checked).await["stage"], "screened_out");
    }
    let (_, page) = arrive_with(&app, &browser(), &checked_token, "C23").await;
    assert!(page.contains("This study is full"), "{page}");
    // The time limit later both links admit again.
    std::fs::write(&clock, "601").unwrap();
    arrive(&app, &token, study, "R24").await;
    arrive(&app, &checked_token, checked, "C24").await;
}

/// The bound counts the study's places, not the open ones: a crowd where
/// most return piles up returns while the places fill, and the last open
/// place must still be taken (with "3 × open + 20", 23 returns beside one
/// open place of two turned the next real arrival away as "full").
#[tokio::test]
async fn many_returns_do_not_keep_the_last_place_from_being_taken() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "6"]);
    let researcher = app.login("researcher").await;
    let (study, token) = create_link_study(&app, &researcher, &link_spec("returns", 6, &["copies = 2"])).await;
    arrive(&app, &token, study, "KEEPS").await;
    for i in 0..23 {
        let p = arrive(&app, &token, study, &format!("R{i}")).await;
        post_ok(&app, &p, &format!("/api/v1/take/{study}/return")).await;
    }
    arrive(&app, &token, study, "LAST").await; // admitted: 303 to the survey, not the full page
    let (_, page) = arrive_with(&app, &browser(), &token, "AFTER").await;
    assert!(page.contains("This study is full"), "both places are taken: {page}");
}

/// Past the bound, an address that has not arrived within the time limit
/// still comes in, so one address flooding the link does not make it
/// "full" for everyone; past twice the bound no one new does.
#[tokio::test]
async fn a_flood_from_one_address_leaves_the_link_open_to_others_up_to_twice_the_bound() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "6"]);
    let researcher = app.login("researcher").await;
    let mut lines = SPEC.to_vec();
    lines.push("copies = 1");
    let (study, token) = create_link_study(&app, &researcher, &link_spec("one address", 6, &lines)).await;
    for i in 0..23 {
        fail_twice(&app, &arrive(&app, &token, study, &format!("F{i}")).await, study).await;
    }
    let (_, page) = arrive_with(&app, &browser(), &token, "F23").await;
    assert!(page.contains("This study is full"), "the flooding address is turned away: {page}");
    // 23 more, each from an address of its own, still come in.
    for i in 0..23 {
        let p = browser_from(&format!("127.0.1.{}", i + 1));
        let (status, at) = arrive_with(&app, &p, &token, &format!("N{i}")).await;
        assert_eq!((status.as_u16(), at), (303, format!("/take/{study}")), "N{i}");
        fail_twice(&app, &p, study).await;
    }
    let (_, page) = arrive_with(&app, &browser_from("127.0.2.1"), &token, "LATE").await;
    assert!(page.contains("This study is full"), "past twice the bound: {page}");
    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    assert_eq!(rows.len(), 46);
}

async fn fail_twice(app: &TestApp, p: &reqwest::Client, study: i64) {
    for _ in 0..2 {
        post_ok(app, p, &format!("/api/v1/take/{study}/instructions")).await;
        post_json(app, p, &comprehension(study), json!({"answers": [0, 0]})).await;
    }
}
