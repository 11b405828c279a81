//! `hardneg prolific …` as docs/prolific.md tells a new user to run it,
//! against the fake Prolific (which checks every request against the
//! reference): publish (a dry run, a refusal over the budget cap by
//! Prolific's own cost, then for real), participants through the real join
//! link, sync, decide, a bonus round, status.
use crate::prolific_fake::FakeProlific;
use crate::prolific_kit::{answer_all, join, Hardneg, Way};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

fn spec(name: &str, cap: &str) -> String {
    format!(
        r#"name = "{name}"
kind = "four_image"
dataset = "demo"
seed = 5
access = "link"

[link]
bundle_size = 7
copies = 1
consent = "I agree to take part."
completion_code = "CLI00001"
comprehension = [{{ question = "When do you pick None?", options = ["Never", "When no image fits"], answer = "When no image fits" }}]

[prolific]
estimated_minutes = 5
hourly_rate = 9.0
budget_cap = "{cap}"
"#
    )
}

/// `hardneg prolific ARGS` on the server's data: (success, stdout, stderr).
fn cli(data: &Path, fake: &FakeProlific, args: &[&str]) -> (bool, String, String) {
    let out = crate::helpers::command_on(data)
        .arg("prolific")
        .args(args)
        .env("HARDNEG_PROLIFIC_TOKEN", &fake.token)
        .env("HARDNEG_PROLIFIC_URL", &fake.base)
        .env("HARDNEG_PROLIFIC_BACKOFF_MS", "20")
        .output()
        .unwrap();
    (out.status.success(), crate::helpers::text(&out.stdout), crate::helpers::text(&out.stderr))
}

#[tokio::test]
async fn a_new_user_runs_a_study_on_the_fake_from_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeProlific::start().await;
    let data = tmp.path().join("data");
    let env = [("HARDNEG_PROLIFIC_SYNC_SECS", "3600".to_string())];
    let app = Hardneg::start(&data, &env, &tmp.path().join("log"), HashMap::new());
    let r = app.login("researcher").await;
    let mut ids = Vec::new();
    // 9 bundles of 7 + 3 extra places at 0.75: 9.00 by hardneg's own figure (no link.platform_fee),
    // 12.60 with the fake's fee and tax.
    for (name, cap) in [("tight", "10.00"), ("roomy", "50.00")] {
        let res = r.post(app.url("/api/v1/studies")).body(spec(name, cap)).send().await.unwrap();
        assert_eq!(res.status(), 201);
        ids.push(res.json::<Value>().await.unwrap()["id"].as_i64().unwrap().to_string());
    }
    let (tight, roomy) = (ids[0].as_str(), ids[1].as_str());

    let (ok, out, err) = cli(&data, &fake, &["publish", roomy, "--dry-run", "--base-url", &app.base]);
    assert!(ok, "{err}");
    assert!(out.contains("POST /api/v1/studies/ (dry run: nothing sent)") && out.contains("\"reward\": 75"), "{out}");
    assert!(fake.state().await["studies"].as_array().unwrap().is_empty(), "a dry run sends nothing");

    // Prolific's own cost is held to the cap: the draft stays unpublished.
    let (ok, out, err) = cli(&data, &fake, &["publish", tight, "--base-url", &app.base]);
    assert!(!ok, "{out}");
    assert!(err.contains("over the budget cap of 10.00") && err.contains("12.60"), "{err}");
    assert_eq!(fake.state().await["studies"][0]["status"], "UNPUBLISHED");

    let (ok, out, err) = cli(&data, &fake, &["publish", roomy, "--base-url", &app.base]);
    assert!(ok, "{err}");
    assert!(out.contains("Prolific's cost:   12.60 GBP (rewards 9.00 + fees 3.00 + tax 0.60)"), "{out}");
    assert!(out.contains("published: study") && out.contains("is open to participants"), "{out}");
    let st = fake.state().await;
    let remote = st["studies"].as_array().unwrap().iter().find(|s| s["status"] == "ACTIVE").unwrap().clone();
    let pid = remote["id"].as_str().unwrap().to_string();

    // Two finish through the real join link and submit their code; a third returns.
    let mut finishers = Vec::new();
    for _ in 0..2 {
        let a = fake.arrive(&pid, None).await;
        let (c, study, _) = join(&app.base, &a.study_url, Way::Careful).await;
        let code = answer_all(&app.base, &c, study, Way::Careful).await;
        assert_eq!(code, "CLI00001");
        fake.submit(&a.submission_id, Some(&code)).await;
        finishers.push(a);
    }
    let leaver = fake.arrive(&pid, None).await;
    join(&app.base, &leaver.study_url, Way::Stop).await;
    fake.return_(&leaver.submission_id).await;

    let (ok, out, err) = cli(&data, &fake, &["sync", roomy]);
    assert!(ok, "{err}");
    assert!(out.starts_with("synced 3 submissions in 1 pages") && out.contains("1 hardneg places freed"), "{out}");
    let (ok, out, _) = cli(&data, &fake, &["decide", roomy, "--dry-run"]);
    assert!(ok);
    assert!(out.contains("2 request(s) would be sent (dry run)"), "{out}");
    let (ok, out, err) = cli(&data, &fake, &["decide", roomy]);
    assert!(ok, "{err}");
    assert!(out.contains("outbox: everything confirmed"), "{out}");
    fake.tick().await;
    let (ok, out, err) = cli(&data, &fake, &["bonus", roomy, "--round", "thanks", "--each", "0.50"]);
    assert!(ok, "{err}");
    assert!(out.contains("round \"thanks\": 2 bonuses, 1.00 in all, 2 new"), "{out}");
    fake.tick().await;
    let (ok, out, _) = cli(&data, &fake, &["bonus", roomy, "--round", "thanks", "--each", "0.50"]);
    assert!(ok && out.contains("round \"thanks\": 2 bonuses, 1.00 in all, 0 new"), "the same round again: {out}");
    let (ok, out, _) = cli(&data, &fake, &["bonus", roomy, "--round", "thanks", "--each", "0.50", "--dry-run"]);
    assert!(ok && out.contains("0 new (dry run"), "{out}");
    assert!(!out.contains("POST"), "a dry run lists no request the run would not send: {out}");
    // A CSV naming a participant in capitals names the same participant: here
    // twice, so refused as a repeat (exit 2: the file is at fault), not as unknown.
    // Saved by Excel as "CSV UTF-8", it starts with a byte order mark (audit AU).
    let csv = data.join("bonus.csv");
    let upper = finishers[0].participant_id.to_ascii_uppercase();
    std::fs::write(&csv, format!("\u{feff}{upper},0.20\n{},0.20\n", finishers[0].participant_id)).unwrap();
    let out = crate::helpers::command_on(&data)
        .args(["prolific", "bonus", roomy, "--round", "csv", "--csv", csv.to_str().unwrap(), "--dry-run"])
        .env("HARDNEG_PROLIFIC_TOKEN", &fake.token)
        .env("HARDNEG_PROLIFIC_URL", &fake.base)
        .output()
        .unwrap();
    let err = crate::helpers::text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("line 2:") && err.contains("has a bonus on an earlier line") && !err.contains("line 1"),
        "{err}"
    );
    // An amount that is no amount is the caller's fault: exit 2, as for a bad CSV.
    for each in ["abc", "0"] {
        let out = crate::helpers::command_on(&data)
            .args(["prolific", "bonus", roomy, "--round", "bad", "--each", each, "--dry-run"])
            .output()
            .unwrap();
        let err = crate::helpers::text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--each {each}: {err}");
        assert!(err.contains("--each:"), "{err}");
    }
    // Other amounts in a paid round: refused (they would be reported, never paid), dry run or not.
    for dry in [true, false] {
        let mut args = vec!["bonus", roomy, "--round", "thanks", "--each", "0.75"];
        args.extend(dry.then_some("--dry-run"));
        let (ok, out, err) = cli(&data, &fake, &args);
        assert!(!ok, "{out}");
        assert!(err.contains("round \"thanks\" already holds other amounts for 2 submission(s)"), "{err}");
        assert!(err.contains("holds 0.50 (not 0.75)") && err.contains("new round"), "{err}");
    }
    // 14.00 committed (12 places and 1.00 of bonuses, with the fee and tax): 2 × 13.00 fits
    // the 36.00 left by itself, but not with Prolific's fee and tax on it (36.40).
    let (ok, out, err) = cli(&data, &fake, &["bonus", roomy, "--round", "big", "--each", "13.00"]);
    assert!(!ok, "{out}");
    assert!(
        err.contains("26.00 (36.40 with Prolific's fee and tax) would commit 50.40 of a budget cap of 50.00"),
        "{err}"
    );

    let st = fake.state().await;
    for a in &finishers {
        let s = st["submissions"].as_array().unwrap().iter().find(|s| s["id"] == a.submission_id.as_str()).unwrap();
        assert_eq!(s["status"], "APPROVED", "{s}");
        let paid: Vec<f64> = s["bonus_payments"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert!(paid == [50.0] || paid == [0.5], "paid once: {paid:?}");
    }
    assert_eq!(st["payments"].as_array().unwrap().len(), 1, "one pay call");
    assert_eq!(st["groups"][0]["name"], "hardneg-demo");
    assert_eq!(st["groups"][0]["members"].as_array().unwrap().len(), 2);
    let refused: Vec<&Value> = st["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| (400..500).contains(&q["status"].as_u64().unwrap_or(0)))
        .collect();
    assert!(refused.is_empty(), "the fake refused: {refused:?}");

    let (ok, out, _) = cli(&data, &fake, &["status", roomy]);
    assert!(ok);
    assert!(out.contains("2 paid (1.00)") && out.contains("\"APPROVED\":2"), "{out}");
    assert!(!out.contains(&fake.token), "the token is never printed");

    // Prolific refuses a pay (a balance too low, say): nothing of it is paid,
    // and the command fails, so a script reading its status is not misled (audit BA).
    fake.fault("POST", "/api/v1/bulk-bonus-payments/*/pay/", "400", 1).await;
    let (ok, out, err) = cli(&data, &fake, &["bonus", roomy, "--round", "refused", "--each", "0.10"]);
    assert!(!ok, "{out}");
    assert!(out.contains("bonus_pay failed after 1 try"), "{out}");
    assert!(err.contains("not every bonus was paid") && err.contains("--retry-failed"), "{err}");
}
