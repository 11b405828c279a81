//! Every adaptive study finishes on its own and every path reports the same
//! value (issue 52), over real HTTP on either backend: a participant with a
//! single answer (a follow-up bundle of one item) no longer holds the crowd
//! model up; the adaptive endpoint and the export agree on every item's
//! settled value, posterior and the posterior's model, whatever order the
//! answers were stored in; and stops the final model doubts are listed.
use crate::adaptive_trust::{careful, key};
use crate::crowd_kit::{arrive, create_link_study, link_spec, stage, start};
use crate::helpers::{untar, Spec, TestApp};
use hardneg::api_types::TaskView;
use reqwest::Client;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// An option of `t` other than every one in `not` (ids sorted, the first left).
fn other(t: &TaskView, not: &[&str]) -> String {
    let mut ids: Vec<&str> = t.options.iter().map(|o| o.id.as_str()).filter(|id| !not.contains(id)).collect();
    ids.sort_unstable();
    ids[0].to_string()
}

/// The export's `study-<id>-adaptive.csv` by instance id.
async fn adaptive_csv(app: &TestApp, researcher: &Client, study: i64) -> BTreeMap<i64, HashMap<String, String>> {
    let res = researcher.get(app.url("/api/v1/datasets/demo/export?format=csv&stage=candidates")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let files = untar(&res.bytes().await.unwrap());
    let name = files.keys().find(|k| k.ends_with(&format!("study-{study}-adaptive.csv"))).expect("the adaptive file");
    let mut reader = csv::Reader::from_reader(files[name].as_slice());
    let head: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    reader
        .records()
        .map(|r| {
            let row: HashMap<String, String> =
                head.iter().cloned().zip(r.unwrap().iter().map(str::to_string)).collect();
            (row["instance_id"].parse().unwrap(), row)
        })
        .collect()
}

/// The endpoint's items by instance id.
async fn report_items(app: &TestApp, researcher: &Client, study: i64) -> (Value, BTreeMap<i64, Value>) {
    let report: Value = app.get(researcher, &format!("/api/v1/studies/{study}/adaptive")).await;
    let items = report["items"].as_array().unwrap().iter().map(|i| (i["instance_id"].as_i64().unwrap(), i.clone()));
    let items = items.collect();
    (report, items)
}

/// The endpoint's settled value, how, posterior and model equal the export's, item by item.
async fn paths_agree(app: &TestApp, researcher: &Client, study: i64) -> BTreeMap<i64, Value> {
    let (_, items) = report_items(app, researcher, study).await;
    let csv = adaptive_csv(app, researcher, study).await;
    assert_eq!(items.keys().collect::<Vec<_>>(), csv.keys().collect::<Vec<_>>());
    for (id, item) in &items {
        let row = &csv[id];
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        assert_eq!(text(&item["value"]), row["settled_value"], "item {id}: {item} vs {row:?}");
        assert_eq!(text(&item["resolved_by"]), row["resolved_by"], "item {id}");
        assert_eq!(text(&item["posterior_model"]), row["settled_posterior_model"], "item {id}");
        let posterior = item["posterior"].as_f64().map(|p| format!("{p:.6}")).unwrap_or_default();
        assert_eq!(posterior, row["settled_posterior"], "item {id}");
        assert_eq!(
            item["posterior"].is_null(),
            item["posterior_model"].is_null(),
            "a posterior names its model: {item}"
        );
    }
    items
}

/// Two careful people disagree on one item; its follow-up bundle of one
/// item goes to a third, who gives it a third value: one answer. The crowd
/// model settles the item at `max` anyway, and the study finishes.
#[tokio::test]
async fn a_participant_with_one_answer_no_longer_holds_the_crowd_model_up() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "6"]);
    let researcher = app.login("researcher").await;
    let spec = link_spec("one-answer people", 6, &[])
        .replace("access = \"link\"", "access = \"link\"\nresolve = \"dawid_skene\"");
    let spec = format!("{spec}[assignment.adaptive]\nmin = 2\nmax = 3\nstop = \"agree\"\n");
    let (study, token) = create_link_study(&app, &researcher, &spec).await;
    let mut split = None;
    for (pid, deviate) in [("CAREFUL1", false), ("CAREFUL2", true)] {
        let client = arrive(&app, &token, study, pid).await;
        start(&app, &client, study).await;
        let mut first = deviate;
        while let Some(task) = app.next_task(&client, study).await {
            let mut option = careful(&task);
            if std::mem::take(&mut first) {
                let theirs = option.clone();
                option = other(&task, &[theirs.as_str()]);
                split = Some((key(&task), theirs, option.clone()));
            }
            assert_eq!(app.answer(&client, task.task_id, &option).await.status(), 200);
        }
        assert_eq!(stage(&app, &client, study).await["stage"], "complete");
    }
    let (split_key, a, b) = split.unwrap();
    // The follow-up bundle holds the one split item; its taker answers once.
    let third = arrive(&app, &token, study, "THIRD").await;
    start(&app, &third, study).await;
    let task = app.next_task(&third, study).await.expect("the follow-up item");
    assert_eq!(key(&task), split_key);
    assert_eq!(app.answer(&third, task.task_id, &other(&task, &[a.as_str(), b.as_str()])).await.status(), 200);
    assert!(app.next_task(&third, study).await.is_none(), "one item, one answer");

    let items = paths_agree(&app, &researcher, study).await;
    assert_eq!(items.len(), 6);
    let at_max: Vec<&Value> = items.values().filter(|i| i["reason"] == "max").collect();
    assert_eq!(at_max.len(), 1, "{items:?}");
    assert_eq!(at_max[0]["answers"], 3);
    assert_eq!(at_max[0]["resolved_by"], "dawid_skene", "the model settled it: {}", at_max[0]);
    assert_eq!(at_max[0]["posterior_model"], "dawid_skene");
    assert!(items.values().all(|i| i["value"].is_string()), "every item settled: {items:?}");
    let disputes: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/disputes")).await;
    assert!(disputes.is_empty(), "nothing waits for adjudication: {disputes:?}");
}

/// annotator1 careful; annotator2 careful but off on every third item; ann3
/// (after both) on each item they split: careful on half, a third value on the rest.
fn second(t: &TaskView) -> String {
    let c = careful(t);
    if key(t).len().is_multiple_of(3) {
        other(t, &[c.as_str()])
    } else {
        c
    }
}

fn third(t: &TaskView) -> String {
    let (c, s) = (careful(t), second(t));
    if key(t).len().is_multiple_of(2) {
        c
    } else {
        other(t, &[c.as_str(), s.as_str()])
    }
}

/// The same people give the same answers to the same items in two studies,
/// stored in two orders (one after the other; interleaved, the second
/// first). Every item's settled value and how it was settled are the same
/// in both, and in each the endpoint and the export agree; items left at
/// `max` carry the crowd model's posterior, named as such.
#[tokio::test]
async fn every_path_reports_the_settled_value_whatever_order_the_answers_were_stored_in() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = TestApp::spawn_on(tmp.path(), &["--demo-size", "24"]);
    app.add_user("ann3", "annotator", "a long password three");
    let researcher = app.login("researcher").await;
    let spec = |name: &str| {
        Spec::new(name)
            .annotators(&["annotator1", "annotator2", "ann3"])
            .seed(52)
            .resolve("dawid_skene")
            .line("[assignment.adaptive]\nmin = 2\nmax = 3\nstop = \"agree\"")
    };
    let in_turn = app.create_study_ok(&researcher, &spec("answers in turn")).await;
    app.work_through("annotator1", in_turn, careful).await;
    app.work_through("annotator2", in_turn, second).await;
    app.work_through("ann3", in_turn, third).await;

    let mixed = app.create_study_ok(&researcher, &spec("answers interleaved")).await;
    let (one, two) = (app.login("annotator1").await, app.login("annotator2").await);
    loop {
        let mut any = false;
        for (client, choose) in [(&two, second as fn(&TaskView) -> String), (&one, careful)] {
            if let Some(t) = app.next_task(client, mixed).await {
                assert_eq!(app.answer(client, t.task_id, &choose(&t)).await.status(), 200);
                any = true;
            }
        }
        if !any {
            break;
        }
    }
    app.work_through("ann3", mixed, third).await;

    let a = paths_agree(&app, &researcher, in_turn).await;
    let b = paths_agree(&app, &researcher, mixed).await;
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "the same items");
    let mut at_max = 0;
    for (id, x) in &a {
        let y = &b[id];
        assert_eq!(
            (&x["value"], &x["resolved_by"], &x["reason"]),
            (&y["value"], &y["resolved_by"], &y["reason"]),
            "item {id}"
        );
        if x["reason"] == "max" {
            at_max += 1;
            assert_eq!(x["posterior_model"], "dawid_skene", "{x}");
            assert_eq!(x["posterior"], y["posterior"], "the final fit does not see the order: item {id}");
        } else {
            assert_eq!(x["posterior_model"], "earned_reliability", "{x}");
        }
    }
    assert!(at_max > 0, "some items reached max: {a:?}");
}

/// Two annotators who answer alike, and wrongly alike: None where the item
/// shows slot 1, slot 3 where it shows None, else right. Every item stops on
/// their agreement. Once a researcher has settled most items, the final
/// Dawid–Skene fit learns the swap and is certain that the remaining items
/// they agreed were None show slot 1: those stops are listed as doubtful,
/// and still stand.
#[tokio::test]
async fn stops_the_final_crowd_model_doubts_are_listed_and_stand() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "40"]);
    let researcher = app.login("researcher").await;
    let spec = Spec::new("agreeing swappers")
        .annotators(&["annotator1", "annotator2"])
        .seed(3)
        .resolve("dawid_skene")
        .line("[assignment.adaptive]\nmin = 2\nmax = 2\nstop = \"agree\"");
    let study = app.create_study_ok(&researcher, &spec).await;
    // Each item's candidates (instance, slot, image), to know what an item shows.
    let db = app.db().await;
    let rows: Vec<(i64, i64, String)> = sqlx::query_as(
        "SELECT c.instance_id, c.slot, c.image FROM candidates c
         JOIN study_items si ON si.instance_id = c.instance_id WHERE si.study_id = $1",
    )
    .bind(study)
    .fetch_all(&db)
    .await
    .unwrap();
    let mut items: BTreeMap<i64, BTreeMap<String, i64>> = BTreeMap::new();
    for (i, slot, h) in rows {
        items.entry(i).or_default().insert(format!("/img/{h}"), slot);
    }
    let items = &items;
    // (instance, the slot a careful person picks, None as -1)
    let truth = move |t: &TaskView| -> (i64, i64) {
        let shown: Vec<&String> = t.options.iter().filter_map(|o| o.image_url.as_ref()).collect();
        let (instance, slots) = items
            .iter()
            .find(|(_, s)| s.len() == shown.len() && shown.iter().all(|u| s.contains_key(*u)))
            .expect("the item's instance");
        let c = careful(t);
        let slot = t.options.iter().find(|o| o.id == c).and_then(|o| o.image_url.as_ref()).map_or(-1, |u| slots[u]);
        (*instance, slot)
    };
    let slot_of = move |t: &TaskView, u: &String| items[&truth(t).0][u];
    let swap = move |t: &TaskView| -> String {
        match truth(t).1 {
            1 => "none".into(),
            -1 => {
                t.options.iter().find(|o| o.image_url.as_ref().is_some_and(|u| slot_of(t, u) == 3)).unwrap().id.clone()
            }
            _ => careful(t),
        }
    };
    let tasks = app.work_through("annotator1", study, swap).await;
    app.work_through("annotator2", study, swap).await;
    let truths: BTreeMap<i64, i64> = tasks.iter().map(truth).collect();
    let ones: Vec<i64> = truths.iter().filter(|(_, s)| **s == 1).map(|(i, _)| *i).collect();
    assert!(ones.len() >= 2, "the demo items include slot-1 truths: {truths:?}");
    // The researcher settles every item but every other slot-1 item.
    let left: Vec<i64> = ones.iter().copied().skip(1).step_by(2).collect();
    for (&instance, &slot) in truths.iter().filter(|(i, _)| !left.contains(i)) {
        let value = if slot < 0 { "none".to_string() } else { slot.to_string() };
        let body = serde_json::json!({"instance_id": instance, "value": value});
        let res =
            researcher.post(app.url(&format!("/api/v1/studies/{study}/adjudicate"))).json(&body).send().await.unwrap();
        assert_eq!(res.status(), 204, "{}", res.text().await.unwrap());
    }
    let (report, items) = report_items(&app, &researcher, study).await;
    assert_eq!(report["stopped"]["agreed"], 40, "every item stopped on agreement: {report}");
    let doubtful: Vec<i64> =
        report["doubtful"].as_array().unwrap().iter().map(|d| d["instance_id"].as_i64().unwrap()).collect();
    assert_eq!(doubtful, left, "{report}");
    for d in report["doubtful"].as_array().unwrap() {
        assert_eq!(
            (&d["rule_value"], &d["model_value"], &d["model"]),
            (&"none".into(), &"1".into(), &"dawid_skene".into())
        );
        assert!(d["model_posterior"].as_f64().unwrap() >= 0.95, "{d}");
        let item = &items[&d["instance_id"].as_i64().unwrap()];
        assert_eq!(item["value"], "none", "the stop stands: {item}");
    }
    let csv = adaptive_csv(&app, &researcher, study).await;
    let marked: Vec<i64> = csv.iter().filter(|(_, r)| r["doubtful"] == "yes").map(|(i, _)| *i).collect();
    assert_eq!(marked, left);
}

/// A posterior stop in a link study without gold items is not the promise it
/// reads as against people who agree on a wrong value (study-spec.md): the
/// creation answer and the adaptive endpoint say so, and gold silences both.
#[tokio::test]
async fn a_posterior_link_study_without_gold_is_warned_of() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "6"]);
    let researcher = app.login("researcher").await;
    let posterior = "[assignment.adaptive]\nmin = 2\nmax = 3\nstop = \"posterior\"\nthreshold = 0.95\n";
    for (name, link, warned) in
        [("no gold", vec![], true), ("gold", vec!["gold = [{ key = \"demo-000\", answer = \"none\" }]"], false)]
    {
        let spec = format!("{}{posterior}", link_spec(name, 3, &link));
        let res = researcher.post(app.url("/api/v1/studies")).body(spec).send().await.unwrap();
        assert_eq!(res.status(), 201);
        let created: Value = res.json().await.unwrap();
        let said = created["warnings"].as_array().map(|w| w.iter().any(|w| w.as_str().unwrap().starts_with("no gold")));
        assert_eq!(said.unwrap_or(false), warned, "{name}: {created}");
        let report: Value = app.get(&researcher, &format!("/api/v1/studies/{}/adaptive", created["id"])).await;
        let warning = report["calibration_warning"].as_str().unwrap_or_default();
        assert_eq!(warning.contains("no gold items (link.gold)"), warned, "{name}: {warning}");
        assert!(warning.starts_with("6 items (under 100)"), "the small study is still told so: {warning}");
    }
}
