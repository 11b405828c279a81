//! People who carry no information get no more adaptive items (issue 34):
//! over real HTTP, a link participant who answers None to everything, on
//! items two careful people have answered, has its place ended early, its
//! unanswered items go to a follow-up bundle, and it gets its completion
//! code like anyone who finished; careful participants answer their whole
//! bundle.
use crate::adaptive_trust::{careful, key};
use crate::crowd_kit::{arrive, create_link_study, link_spec, stage, start};
use crate::helpers::TestApp;
use hardneg::api_types::TaskView;
use hardneg::domain::ids::TaskId;
use reqwest::Client;
use serde_json::Value;
use std::collections::HashSet;

const ADAPTIVE: &str = "[assignment.adaptive]\nmin = 3\nmax = 4\nstop = \"posterior\"\nthreshold = 0.9";

/// Answers every task `next` hands out, choosing with `choose`; the items answered.
async fn answer_all(app: &TestApp, client: &Client, study: i64, choose: fn(&TaskView) -> String) -> HashSet<String> {
    let mut seen = HashSet::new();
    while let Some(task) = app.next_task(client, study).await {
        let res = app.answer(client, task.task_id, &choose(&task)).await;
        assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
        assert!(seen.insert(key(&task)), "an item twice");
    }
    seen
}

#[tokio::test]
async fn a_participant_who_answers_like_a_spammer_stops_getting_items_and_still_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "20"]);
    let researcher = app.login("researcher").await;
    let spec = format!("{}{ADAPTIVE}\n", link_spec("spammer ends early", 20, &[]));
    let (study, token) = create_link_study(&app, &researcher, &spec).await;
    // One bundle of all 20 items, wanting 3 copies: two careful people first.
    let mut all = HashSet::new();
    for pid in ["GOOD1", "GOOD2"] {
        let client = arrive(&app, &token, study, pid).await;
        start(&app, &client, study).await;
        all = answer_all(&app, &client, study, careful).await;
        assert_eq!(all.len(), 20, "{pid} answers its whole bundle");
        assert_eq!(stage(&app, &client, study).await["stage"], "complete");
    }
    // The third copy goes to someone who answers None whatever the item.
    let spammer = arrive(&app, &token, study, "SPAM1").await;
    start(&app, &spammer, study).await;
    let spammed = answer_all(&app, &spammer, study, |_| "none".to_string()).await;
    assert!(spammed.len() >= 10 && spammed.len() < 20, "ended after 10 or more answers: {}", spammed.len());
    let s = stage(&app, &spammer, study).await;
    assert_eq!(s["stage"], "complete", "{s}");
    let link: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/link")).await;
    assert_eq!(s["code"], link["completion_code"], "the completion code, never a rejection");
    let res = spammer.get(app.url(&format!("/api/v1/take/{study}/completion"))).send().await.unwrap();
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    let spam_row = rows.iter().find(|r| r["number"] == 3).unwrap();
    assert_eq!(spam_row["state"], "completed", "{spam_row}");
    assert_eq!(
        (spam_row["done"].as_u64(), spam_row["total"].as_u64()),
        (Some(spammed.len() as u64), Some(spammed.len() as u64))
    );

    // Its place is marked where the researcher decides: why it ended, approve.
    let csv = app.get_text(&researcher, &format!("/api/v1/studies/{study}/approve-list.csv")).await;
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let head: Vec<String> = rows.headers().unwrap().iter().map(str::to_string).collect();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let spam_csv = rows.records().map(Result::unwrap).find(|r| &r[0] == "SPAM1").unwrap();
    assert_eq!(&spam_csv[col("ended")], "uninformative", "{csv}");
    assert_eq!(&spam_csv[col("decision")], "approve", "{csv}");
    assert!(spam_csv[col("reason")].contains("no information"), "{csv}");
    let dash: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/dashboard")).await;
    assert_eq!(dash["participants"]["ended_uninformative"], 1, "{dash}");
    assert_eq!(dash["participants"]["completed"], 3, "{dash}");

    // A careful newcomer gets (at least) every item the spammer never
    // answered, in a follow-up bundle, and answers all of them.
    let good = arrive(&app, &token, study, "GOOD3").await;
    start(&app, &good, study).await;
    let later = answer_all(&app, &good, study, careful).await;
    let withdrawn: HashSet<&String> = all.iter().filter(|k| !spammed.contains(*k)).collect();
    assert!(withdrawn.iter().all(|k| later.contains(*k)), "{withdrawn:?} within {later:?}");
    assert_eq!(stage(&app, &good, study).await["stage"], "complete");
    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    for r in rows.iter().filter(|r| r["number"] != 3) {
        assert_eq!((&r["state"], &r["done"]), (&Value::from("completed"), &r["total"]), "{r}");
    }
    // Every item got its 3 answers (and none past max).
    let report: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/adaptive")).await;
    for item in report["items"].as_array().unwrap() {
        assert!((3..=4).contains(&item["answers"].as_i64().unwrap()), "{item}");
    }
    // The report names the place and its answers: counted on the card (audit
    // AV: 699 there, 680 in the answers file, with nothing saying why).
    let left_out = &report["ended_uninformative"];
    assert_eq!((left_out["places"].as_u64(), left_out["answers"].as_u64()), (Some(1), Some(spammed.len() as u64)));
    let card: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/progress")).await;
    assert_eq!(card["answers"], report["answers_spent"], "{card}");
}

#[tokio::test]
async fn end_uninformative_is_a_named_option_of_the_posterior_stop() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let table = |stop: &str, extra: &str| format!("[assignment.adaptive]\nmin = 2\nmax = 4\n{stop}\n{extra}");
    let posterior = "stop = \"posterior\"\nthreshold = 0.9";
    for (i, (extra, stop)) in
        [("end_uninformative = true", "stop = \"agree\""), ("end_uninformative = 1", posterior)].into_iter().enumerate()
    {
        let spec = format!("{}{}\n", link_spec(&format!("refused {i}"), 5, &[]), table(stop, extra));
        let res = researcher.post(app.url("/api/v1/studies")).body(spec).send().await.unwrap();
        assert_eq!(res.status(), 422);
        let body = res.text().await.unwrap();
        assert!(body.contains("end_uninformative"), "{body}");
    }
    for (extra, want) in [("", true), ("end_uninformative = false", false)] {
        let spec = format!("{}{}\n", link_spec(&format!("kept {want}"), 5, &[]), table(posterior, extra));
        let (study, _) = create_link_study(&app, &researcher, &spec).await;
        let report: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/adaptive")).await;
        assert_eq!(report["settings"]["end_uninformative"], want, "{report}");
    }
}

/// Answers racing the end of a place (issue 52): the spammer sends two
/// answers at once, its current task and the one after it, until its place
/// ends. Every answer is stored (200) or told it was withdrawn (410), never
/// an error; once the place has ended, an answer to a withdrawn task is 410.
#[tokio::test]
async fn an_answer_racing_the_end_of_a_place_is_told_it_was_withdrawn() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "20"]);
    let researcher = app.login("researcher").await;
    let spec = format!("{}{ADAPTIVE}\n", link_spec("racing the end", 20, &[]));
    let (study, token) = create_link_study(&app, &researcher, &spec).await;
    for pid in ["GOOD1", "GOOD2"] {
        let client = arrive(&app, &token, study, pid).await;
        start(&app, &client, study).await;
        answer_all(&app, &client, study, careful).await;
    }
    let spammer = arrive(&app, &token, study, "SPAM1").await;
    start(&app, &spammer, study).await;
    let (mut statuses, mut last) = (Vec::new(), 0);
    while let Some(task) = app.next_task(&spammer, study).await {
        // The bundle's tasks were made in one statement: the next one is this one's id + 1.
        let (a, b) = tokio::join!(
            app.answer(&spammer, task.task_id, "none"),
            app.answer(&spammer, TaskId::new(task.task_id.get() + 1), "none")
        );
        for res in [a, b] {
            let status = res.status().as_u16();
            let body = res.text().await.unwrap();
            assert!(status == 200 || status == 410, "{status} {body}");
            if status == 410 {
                assert!(body.contains("withdrawn"), "{body}");
            }
            statuses.push(status);
        }
        last = task.task_id.get() + 1;
    }
    assert_eq!(stage(&app, &spammer, study).await["stage"], "complete");
    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    let spam = rows.iter().find(|r| r["number"] == 3).unwrap();
    let total = spam["total"].as_u64().unwrap();
    assert!(total < 20, "the place ended early: {spam}");
    // Past the last task it answered, the rest were withdrawn.
    let res = app.answer(&spammer, TaskId::new(last + 1), "none").await;
    assert_eq!(res.status(), 410, "{}", res.text().await.unwrap());
    assert!(statuses.iter().filter(|s| **s == 200).count() as u64 >= total, "{statuses:?}");
}

/// Gold items are real items of another bundle: a place ended with gold
/// tasks unanswered gives none of them a follow-up answer (an audit: such
/// an item took an answer past `max`).
#[tokio::test]
async fn a_place_ended_with_gold_tasks_open_asks_no_gold_item_past_max() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &["--demo-size", "40"]);
    let researcher = app.login("researcher").await;
    // Keys from both ends of the dataset: each bundle holds gold of the other.
    let gold: Vec<String> =
        [0, 1, 2, 3, 36, 37, 38, 39].iter().map(|i| format!("{{ key = \"demo-{i:03}\" }}")).collect();
    let gold = format!("gold = [{}]", gold.join(", "));
    let spec = format!("{}{ADAPTIVE}\n", link_spec("gold past max", 20, &[&gold]));
    let (study, token) = create_link_study(&app, &researcher, &spec).await;
    // Two bundles of 20, three copies each: four careful people first, then
    // a None-spammer, then careful people until the link is full.
    let mut spammed = 0;
    for n in 0..40 {
        let pid = if n == 4 { "SPAM1".to_string() } else { format!("GOOD{n}") };
        let client = crate::crowd_kit::browser();
        let (status, _) = crate::crowd_kit::arrive_with(&app, &client, &token, &pid).await;
        if status != 303 {
            break;
        }
        start(&app, &client, study).await;
        if n == 4 {
            spammed = answer_all(&app, &client, study, |_| "none".to_string()).await.len();
        } else {
            answer_all(&app, &client, study, careful).await;
        }
        assert_eq!(stage(&app, &client, study).await["stage"], "complete", "{pid}");
    }
    let rows: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/participants")).await;
    let ended = rows.iter().find(|r| r["number"] == 5).unwrap();
    assert!(spammed < 20 && ended["total"].as_u64() < Some(28), "the spammer's place ended early: {ended}");
    let report: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/adaptive")).await;
    let items = report["items"].as_array().unwrap();
    assert_eq!(items.len(), 40);
    for item in items {
        assert!((3..=4).contains(&item["answers"].as_i64().unwrap()), "{item}");
    }
}
