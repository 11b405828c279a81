//! The demo's crowd study by link: its checks and simulated participants
//! are there at start, and the dashboard's counts equal the stored rows.
use crate::helpers::TestApp;
use hardneg::cli::demo_crowd::DEMO_CROWD_STUDY;
use serde_json::Value;

#[tokio::test]
async fn the_demo_has_a_link_study_with_checks_participants_and_a_filled_dashboard() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let overview: Vec<Value> = app.get(&researcher, "/api/v1/studies/overview").await;
    let id = overview
        .iter()
        .find(|s| s["progress"]["name"] == DEMO_CROWD_STUDY)
        .and_then(|s| s["progress"]["study_id"].as_i64())
        .expect("the demo crowd study");
    let d: Value = app.get(&researcher, &format!("/api/v1/studies/{id}/dashboard")).await;

    let db = app.db().await;
    let count = |sql: &'static str| {
        let db = db.clone();
        async move { sqlx::query_scalar::<_, i64>(sql).bind(id).fetch_one(&db).await.unwrap() }
    };
    let leases = |state: &'static str| {
        let db = db.clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT count(*) FROM leases WHERE study_id = $1 AND state = $2")
                .bind(id)
                .bind(state)
                .fetch_one(&db)
                .await
                .unwrap()
        }
    };
    let p = &d["participants"];
    assert_eq!(p["started"].as_i64(), Some(count("SELECT count(*) FROM participants WHERE study_id = $1").await));
    assert_eq!(p["started"], 4, "{d}");
    assert_eq!((p["completed"].as_i64(), Some(leases("completed").await)), (Some(2), Some(2)));
    assert_eq!((p["working"].as_i64(), Some(leases("active").await)), (Some(1), Some(1)));
    assert_eq!((p["screened_out"].as_i64(), Some(leases("screened_out").await)), (Some(1), Some(1)));
    assert_eq!(d["answers"].as_i64(), Some(count("SELECT count(*) FROM answers WHERE study_id = $1").await));
    // Three bundles of four, two copies each: two done, the careless one's
    // given to the participant now working, three free for a newcomer.
    assert_eq!(
        (d["places"].as_i64(), d["completed"].as_i64(), d["leased"].as_i64(), d["free"].as_i64()),
        (Some(6), Some(2), Some(1), Some(3))
    );
    let bundles: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{id}/bundles")).await;
    let taken: Vec<(i64, i64)> =
        bundles.iter().map(|b| (b["completed"].as_i64().unwrap(), b["active"].as_i64().unwrap())).collect();
    assert_eq!(taken, [(1, 0), (1, 0), (0, 1)], "each simulated participant on its own bundle, as with one copy");
    let checks = count("SELECT count(*) FROM tasks WHERE study_id = $1 AND check_kind = 'attention'").await;
    let gold = count("SELECT count(*) FROM tasks WHERE study_id = $1 AND check_kind = 'gold'").await;
    assert!(checks >= 4 * 3 && gold >= 2, "attention checks in every bundle, gold where not a real item");
    assert!(d["cost"]["spent"].as_f64().unwrap() > 0.0, "finished bundles cost something: {d}");

    let csv = app.get_text(&researcher, &format!("/api/v1/studies/{id}/approve-list.csv")).await;
    let decision = |pid: &str| {
        let row = csv.lines().find(|l| l.starts_with(pid)).unwrap_or_else(|| panic!("{pid}: {csv}"));
        let cells: Vec<&str> = row.split(',').collect();
        (cells[3].to_string(), cells[11].to_string())
    };
    assert_eq!(decision("demo-crowd-careful"), ("completed".into(), "approve".into()));
    assert_eq!(decision("demo-crowd-hasty"), ("completed".into(), "review".into()));
    assert_eq!(decision("demo-crowd-careless").0, "screened_out");
    assert_eq!(decision("demo-crowd-working"), ("active".into(), "wait".into()));
    assert_eq!(csv.lines().count(), 1 + 4);

    // A restart seeds nothing twice.
    db.close().await;
    let mut app = app;
    app.kill();
    let _again = TestApp::spawn_on(&app.data_dir, &[]);
    let status = app.cli(&["study", "status", &id.to_string(), "--json"]);
    let again: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(again["participants"], d["participants"]);
    assert_eq!(again["answers"], d["answers"]);
}
