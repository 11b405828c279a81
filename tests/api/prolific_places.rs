//! Places lost to screen-outs on Prolific: proposed, bought within the
//! budget cap by `auto_increase`, or, past the cap, said to stop the study.
use crate::prolific_fake::FakeProlific;
use crate::prolific_kit::{post, Hardneg};
use crate::prolific_more::{create, env, spec};
use serde_json::Value;
use std::collections::HashMap;

/// `n` arrivals who fail the comprehension check and submit its code on Prolific.
async fn screen_out(fake: &FakeProlific, app: &Hardneg, pid: &str, n: usize) {
    for _ in 0..n {
        let a = fake.arrive(pid, None).await;
        let (_, _, code) =
            crate::prolific_kit::join(&app.base, &a.study_url, crate::prolific_kit::Way::FailComprehension).await;
        fake.submit(&a.submission_id, code.as_deref()).await;
    }
}

/// Places lost to screen-outs: hardneg proposes the difference, and with
/// `auto_increase` a sync buys it, within the budget cap.
#[tokio::test]
async fn places_lost_to_screen_outs_are_proposed_or_bought_within_the_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start().await;
    let app = Hardneg::start(&tmp.path().join("data"), &env(&fake, &[]), &tmp.path().join("log"), HashMap::new());
    let r = app.login("researcher").await;
    let check = "comprehension = [{ question = \"When do you pick None?\", options = [\"Never\", \"When no image fits\"], answer = \"When no image fits\" }]\nscreen_out_code = \"SCRN0002\"\n";
    let spec = |name: &str, auto: bool, cap: &str| {
        spec(name, &format!("estimated_minutes = 5\nhourly_rate = 9.0\nauto_increase = {auto}\nbudget_cap = \"{cap}\""))
            .replace("[prolific]", &format!("{check}[prolific]"))
    };
    // 9 bundles, 12 places at 0.75; the fake's cost adds 40 % (fee and tax): 12.60.
    for (name, auto, cap, after) in
        [("asks", false, "30.00", 12), ("buys", true, "30.00", 14), ("capped", true, "13.00", 12)]
    {
        let study = create(&app, &r, &spec(name, auto, cap)).await;
        let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
        assert_eq!(s, 200, "{v}");
        let pid = v["prolific_id"].as_str().unwrap().to_string();
        // Five fail the comprehension check: each holds a Prolific place, and no hardneg copy.
        screen_out(&fake, &app, &pid, 5).await;
        // Two more hold places on their way to the join link: they will fill copies, nothing to buy for them.
        for _ in 0..2 {
            fake.arrive(&pid, None).await;
        }
        let (s, report) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
        assert_eq!(s, 200, "{report}");
        let status: Value =
            r.get(app.url(&format!("/api/v1/studies/{study}/prolific"))).send().await.unwrap().json().await.unwrap();
        let remote =
            fake.state().await["studies"].as_array().unwrap().iter().find(|s| s["id"] == pid.as_str()).unwrap().clone();
        assert_eq!(remote["total_available_places"], after, "{name}: {report}");
        match name {
            "asks" => {
                assert_eq!(report["places_raised_to"], Value::Null);
                assert_eq!(
                    status["propose_more_places"], 2,
                    "9 free copies, 12 - 7 = 5 open, 2 on their way: {status}"
                );
                assert_eq!(status["over_cap"], Value::Null, "{status}");
            }
            "buys" => {
                assert_eq!(report["places_raised_to"], 14);
                assert_eq!(status["propose_more_places"], Value::Null, "{status}");
                assert_eq!(
                    status["budget"]["committed"],
                    14 * 75 * 14 / 10,
                    "Prolific's fee and tax counted: {status}"
                );
            }
            _ => {
                assert_eq!(status["propose_more_places"], 2, "14 places would pass the cap of 13.00: {status}");
                // Said as what stops the study, not as a command that would be refused.
                let why = status["over_cap"].as_str().unwrap_or_else(|| panic!("{status}"));
                assert!(
                    why.starts_with("14 places would commit") && why.ends_with("of a budget cap of 13.00"),
                    "{why}"
                );
            }
        }
    }
}

/// People who opened the join link and are still before the comprehension
/// check hold Prolific places and take free copies once they pass: nothing
/// is bought for them (an audit: places bought for them, and everyone who
/// came on those was told the study is full); once they have been there
/// longer than the time limit, they have left, as an overdue lease has.
#[tokio::test]
async fn people_at_the_comprehension_check_count_as_coming() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start().await;
    let clock = tmp.path().join("clock-offset");
    let env = env(&fake, &[("HARDNEG_TEST_CLOCK_FILE", clock.to_str().unwrap())]);
    let app = Hardneg::start(&tmp.path().join("data"), &env, &tmp.path().join("log"), HashMap::new());
    let r = app.login("researcher").await;
    let check = "comprehension = [{ question = \"When do you pick None?\", options = [\"Never\", \"When no image fits\"], answer = \"When no image fits\" }]\nscreen_out_code = \"SCRN0002\"\n";
    let spec =
        spec("at-check", "estimated_minutes = 5\nhourly_rate = 9.0\nauto_increase = true\nbudget_cap = \"30.00\"")
            .replace("[prolific]", &format!("{check}[prolific]"));
    let study = create(&app, &r, &spec).await;
    let (s, v) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/publish")), None).await;
    assert_eq!(s, 200, "{v}");
    let pid = v["prolific_id"].as_str().unwrap().to_string();
    let places = |st: Value| {
        st["studies"].as_array().unwrap().iter().find(|s| s["id"] == pid.as_str()).unwrap()["total_available_places"]
            .as_i64()
            .unwrap()
    };
    // 9 bundles, 12 places: five screened out by the check, two at it, two on their way.
    screen_out(&fake, &app, &pid, 5).await;
    for _ in 0..2 {
        let a = fake.arrive(&pid, None).await;
        crate::prolific_kit::join(&app.base, &a.study_url, crate::prolific_kit::Way::AtTheCheck).await;
    }
    for _ in 0..2 {
        fake.arrive(&pid, None).await;
    }
    let (s, report) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
    assert_eq!(s, 200, "{report}");
    assert_eq!(places(fake.state().await), 14, "9 free copies: 3 places open, 4 coming; 2 more bought: {report}");
    let status: Value =
        r.get(app.url(&format!("/api/v1/studies/{study}/prolific"))).send().await.unwrap().json().await.unwrap();
    assert_eq!(status["propose_more_places"], Value::Null, "{status}");

    // A day later the two are still at the check (Prolific has not timed them out yet): they count no more.
    std::fs::write(&clock, "86400").unwrap();
    let (s, report) = post(&r, &app.url(&format!("/api/v1/studies/{study}/prolific/sync")), None).await;
    assert_eq!(s, 200, "{report}");
    assert_eq!(places(fake.state().await), 16, "the two who left are bought places for: {report}");
}
