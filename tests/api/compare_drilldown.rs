//! The comparison page's failure drill-down for run names that mean
//! something in a URL (`+`, `&`, `#`), the failures endpoint's refusals,
//! and rows measured on no instance.
use crate::helpers::{text, TestApp};
use hardneg::api_types::Failure;
use serde_json::Value;

/// The demo run that fails some instances on the group score.
const SOURCE_RUN: &str = "demo: bag of words";
// `a%41` read back as `aA` when the router decoded the address twice.
const NAMES: [&str; 4] = ["clip+ft", "a&b", "x#1", "a%41"];

/// A copy of the demo's run under `name`, outcomes and all.
async fn copy_run(db: &sqlx::AnyPool, name: &str) {
    sqlx::query(
        "INSERT INTO model_runs (dataset_id, name, source, device, created_at)
         SELECT dataset_id, $1, source, device, created_at FROM model_runs WHERE name = $2",
    )
    .bind(name)
    .bind(SOURCE_RUN)
    .execute(db)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO model_outcomes (run_id, instance_id, ipos2t, ineg2t, tpos2i, tneg2i, negative_image)
         SELECT (SELECT id FROM model_runs WHERE name = $1), instance_id, ipos2t, ineg2t, tpos2i, tneg2i, negative_image
         FROM model_outcomes WHERE run_id = (SELECT id FROM model_runs WHERE name = $2)",
    )
    .bind(name)
    .bind(SOURCE_RUN)
    .execute(db)
    .await
    .unwrap();
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The group-failures link the page renders beside `name`, as a path.
fn group_link(page: &str, name: &str) -> String {
    let after = page.split(&format!("<strong>{}</strong>", html_escape(name))).nth(1).expect("the model's links");
    let href = after.split("href=\"").skip(1).map(|h| h.split('"').next().unwrap()).find(|h| h.contains("fail=group"));
    href.expect("a group link").replace("&amp;", "&")
}

/// The count the drill-down states ("N instances listed").
fn listed(page: &str) -> usize {
    let after = page.split("class=\"failure-count\">").nth(1).expect("a failure count");
    after.chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap()
}

async fn error_of(res: reqwest::Response) -> String {
    let body: Value = res.json().await.unwrap();
    body["error"].as_str().unwrap_or_else(|| panic!("no error in {body}")).to_string()
}

#[tokio::test]
async fn drill_down_links_carry_any_run_name_and_unknowns_are_refused() {
    let app = TestApp::spawn();
    let db = app.db().await;
    for name in NAMES {
        copy_run(&db, name).await;
    }
    db.close().await;
    let researcher = app.login("researcher").await;
    let page = app.get_text(&researcher, "/research/compare?dataset=demo").await;
    let get = |q: &[(&str, &str)]| researcher.get(app.url("/api/v1/compare/failures")).query(q).send();
    for name in NAMES {
        let href = group_link(&page, name);
        assert!(!href.contains('#') && !href.contains('+'), "{name}: {href}");
        let fails: Vec<Failure> = get(&[("dataset", "demo"), ("model", name)]).await.unwrap().json().await.unwrap();
        assert!(!fails.is_empty(), "{name}: the copied run fails some instances");
        let drill = app.get_text(&researcher, &href).await;
        assert_eq!(listed(&drill), fails.len(), "{name}: {href}");
        assert_eq!(drill.matches("class=\"failure\"").count(), fails.len(), "{name}");
    }

    // Unknown values answer as /api/v1/compare does, not with an empty list.
    let res = get(&[("dataset", "demo"), ("model", "nosuchmodel")]).await.unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(error_of(res).await, "no model run named \"nosuchmodel\" on dataset \"demo\"");
    let res = get(&[("dataset", "demo"), ("model", "clip"), ("type", "swap")]).await.unwrap();
    assert_eq!(res.status(), 404, "a prefix of clip+ft is no run");
    let res = get(&[("dataset", "demo"), ("model", "a&b"), ("type", "bogus")]).await.unwrap();
    assert_eq!(res.status(), 422);
    assert_eq!(error_of(res).await, "query parameter `type`: unknown type \"bogus\" (expected replace, swap or add)");
    let res = get(&[("dataset", "nodata"), ("model", "a&b")]).await.unwrap();
    assert_eq!(res.status(), 404);
    let swap: Vec<Failure> =
        get(&[("dataset", "demo"), ("model", "x#1"), ("type", "SWAP")]).await.unwrap().json().await.unwrap();
    assert!(!swap.is_empty() && swap.iter().all(|f| f.category.starts_with("swap/")), "{swap:?}");
    let page = app.get_text(&researcher, "/research/compare?dataset=demo&model=nosuchmodel&fail=group").await;
    assert!(page.contains("no model run named"), "the page says so too");
}

/// Before any Step 3 answer no model is measured on the Step 3 survivors:
/// its figures are "—", on the page and in the CLI, not 0.00.
#[tokio::test]
async fn rows_on_no_instance_show_dashes() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let page = app.get_text(&researcher, "/research/compare?dataset=demo&stage=step3").await;
    let table = page.split("class=\"data scores\"").nth(1).unwrap().split("</table>").next().unwrap();
    let row = table.split(&format!("data-model=\"{SOURCE_RUN}\"")).nth(1).unwrap().split("</tr>").next().unwrap();
    assert!(!row.contains("0.00"), "{row}");
    assert_eq!(row.matches(">—<").count(), 8, "n and seven figures: {row}");
    let random = table.split("data-model=\"Random\"").nth(1).unwrap().split("</tr>").next().unwrap();
    assert!(random.contains("16.67"), "chance keeps its figures: {random}");

    let out = app.cli(&["compare", "--dataset", "demo", "--stage", "step3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let line = table.lines().find(|l| l.starts_with(SOURCE_RUN)).unwrap_or_else(|| panic!("{table}"));
    assert!(!line.contains("0.00") && line.matches('—').count() == 8, "{line}");
    assert!(table.lines().any(|l| l.starts_with("Random") && l.contains("16.67")), "{table}");
}

/// An outcome computed on a negative that Step 3 has since replaced is
/// left out of the drill-down as of the comparison, and the drill-down
/// says how many, as the comparison's notice does.
#[tokio::test]
async fn the_drill_down_counts_what_it_leaves_out() {
    let app = TestApp::spawn();
    let db = app.db().await;
    copy_run(&db, "stale").await;
    let researcher = app.login("researcher").await;
    let get = |model: &'static str| {
        researcher.get(app.url("/api/v1/compare/failures")).query(&[("dataset", "demo"), ("model", model)]).send()
    };
    let before: Vec<Failure> = get("stale").await.unwrap().json().await.unwrap();
    // One failed instance's outcome now names another image than the negative it has.
    let gone = before[0].instance_id.get();
    sqlx::query(
        "UPDATE model_outcomes SET negative_image = (SELECT positive_image FROM instances WHERE id = $1)
         WHERE instance_id = $1 AND run_id = (SELECT id FROM model_runs WHERE name = 'stale')",
    )
    .bind(gone)
    .execute(&db)
    .await
    .unwrap();
    db.close().await;
    let after: Vec<Failure> = get("stale").await.unwrap().json().await.unwrap();
    assert_eq!(after.len(), before.len() - 1, "the stale outcome is not listed");
    assert!(after.iter().all(|f| f.instance_id.get() != gone));

    let page = app.get_text(&researcher, "/research/compare?dataset=demo").await;
    assert!(page.contains("stale: 1 outcome(s) left out"), "the comparison's notice");
    let drill = app.get_text(&researcher, &group_link(&page, "stale")).await;
    assert_eq!(listed(&drill), after.len());
    let count = drill.split("class=\"failure-count\">").nth(1).unwrap().split("</p>").next().unwrap();
    assert!(count.contains("1 outcome(s) left out"), "{count}");
    let drill = app.get_text(&researcher, &group_link(&page, SOURCE_RUN)).await;
    let count = drill.split("class=\"failure-count\">").nth(1).unwrap().split("</p>").next().unwrap();
    assert!(!count.contains("left out"), "the demo's own run leaves nothing out: {count}");
}
