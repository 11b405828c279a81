//! SugarCrepe++'s odd-one-out design, `rule = "stratified_sample"`: each
//! person (account or link participant) their own seeded sample of
//! `per_subset` items from each subset, and the report's accuracy per
//! person and subset with the means over people.
use crate::helpers::{text, Spec, TestApp};
use crate::odd_one_out::option_with;
use crate::placeholders;
use hardneg::api_types::TaskView;
use serde_json::Value;
use std::collections::HashMap;

const PP_SUBSETS: [(&str, &str); 5] =
    [("swap", "obj"), ("swap", "att"), ("replace", "obj"), ("replace", "att"), ("replace", "rel")];

/// A dataset `strat` of four triplets in each of SugarCrepe++'s five
/// subsets; each triplet's P1 names it: (subset, P2, negative) by P1.
fn stratified_dataset(app: &TestApp) -> HashMap<String, (String, String, String)> {
    let dir = app.data_dir.join("strat-in");
    let images = placeholders::png_dir(&dir, 20);
    let mut csv = "image,p1,p2,negative,type,subtype\n".to_string();
    let mut by_p1 = HashMap::new();
    for (s, (t, sub)) in PP_SUBSETS.iter().enumerate() {
        for i in 0..4 {
            let (p1, p2, n) = (format!("Scene {s}-{i}."), format!("The scene {s}-{i}."), format!("Not scene {s}-{i}."));
            csv += &format!("{}.png,{p1},{p2},{n},{t},{sub}\n", s * 4 + i);
            by_p1.insert(p1, (format!("{t}/{sub}"), p2, n));
        }
    }
    let file = dir.join("strat.csv");
    std::fs::write(&file, csv).unwrap();
    let out = app.cli(&["import", "triplets", file.to_str().unwrap(), "--images", images.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    by_p1
}

fn stratified_spec(name: &str, assignment: &str) -> Spec {
    Spec::new(name)
        .kind("odd_one_out")
        .dataset("strat")
        .annotators(&["annotator1", "annotator2"])
        .seed(11)
        .line(&format!("[assignment]\nrule = \"stratified_sample\"\n{assignment}"))
}

/// SugarCrepe++'s design at a small scale: each annotator their own
/// seeded sample of `per_subset` = 2 items from each of the five subsets,
/// the same after a restart and in a study with the same seed; the report
/// has each person's accuracy per subset and the means over people.
#[tokio::test]
async fn stratified_samples_per_person_with_accuracy_per_person_and_subset() {
    let tmp = tempfile::tempdir().unwrap();
    let app = TestApp::spawn_on(tmp.path(), &[]);
    let by_p1 = &stratified_dataset(&app);
    let researcher = app.login("researcher").await;
    let subsets = "subsets = [\"swap/obj\", \"swap/att\", \"replace/obj\", \"replace/att\", \"replace/rel\"]";
    let id = app.create_study_ok(&researcher, &stratified_spec("Strat", &format!("per_subset = 2\n{subsets}"))).await;
    let p1_of =
        |task: &TaskView| task.options.iter().find_map(|o| by_p1.get_key_value(o.text.as_deref()?)).unwrap().0.clone();
    // annotator1 picks P2 on swap/obj, else the negative; annotator2 always the negative.
    let choose = |who: &'static str| {
        move |task: &TaskView| {
            let (subset, p2, n) = &by_p1[&p1_of(task)];
            let wrong = who == "annotator1" && subset == "swap/obj";
            option_with(task, if wrong { p2 } else { n }).to_string()
        }
    };
    let client = app.login("annotator1").await;
    let mut first: Vec<String> = Vec::new();
    for _ in 0..4 {
        let task = app.next_task(&client, id).await.unwrap();
        assert_eq!(task.progress.total, 10, "5 subsets x 2");
        assert_eq!(app.answer(&client, task.task_id, &choose("annotator1")(&task)).await.status(), 200);
        first.push(p1_of(&task));
    }
    // A restart: the rest of the same sample, nothing asked twice.
    let passwords = app.accounts.clone();
    drop(app);
    let mut app = TestApp::spawn_on(tmp.path(), &[]);
    app.accounts = passwords;
    let rest: Vec<String> = app.work_through("annotator1", id, choose("annotator1")).await.iter().map(p1_of).collect();
    assert_eq!(rest.len(), 6);
    let mut samples = Vec::new();
    let mine: Vec<String> = first.into_iter().chain(rest).collect();
    let other: Vec<String> = app.work_through("annotator2", id, choose("annotator2")).await.iter().map(p1_of).collect();
    for sample in [&mine, &other] {
        let set: std::collections::BTreeSet<&String> = sample.iter().collect();
        assert_eq!(set.len(), 10, "no item twice: {sample:?}");
        for (t, s) in PP_SUBSETS {
            let n = sample.iter().filter(|p1| by_p1[*p1].0 == format!("{t}/{s}")).count();
            assert_eq!(n, 2, "{t}/{s} in {sample:?}");
        }
        samples.push(set);
    }
    assert_ne!(samples[0], samples[1], "each person their own sample");
    // The sample is the study seed's and the person's: a study with the same seed gives the same one.
    let researcher = app.login("researcher").await;
    let again = app.create_study_ok(&researcher, &stratified_spec("Strat again", "per_subset = 2")).await;
    let replay: std::collections::BTreeSet<String> =
        app.work_through("annotator1", again, choose("annotator1")).await.iter().map(p1_of).collect();
    assert_eq!(replay.iter().collect::<std::collections::BTreeSet<_>>(), samples[0]);

    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{id}/report")).await;
    assert_eq!((r["statistic"].as_str(), r["answers"].as_i64()), (Some("accuracy"), Some(20)));
    let people = r["people"].as_array().unwrap();
    let names: Vec<&str> = people.iter().map(|p| p["annotator"].as_str().unwrap()).collect();
    assert_eq!(names, ["annotator1", "annotator2"]);
    let cell = |p: usize, subset: Value| {
        people[p]["rows"].as_array().unwrap().iter().find(|r| r["subset"] == subset).unwrap().clone()
    };
    let swap_obj = serde_json::json!({"neg_type": "swap", "subtype": "obj"});
    let c = cell(0, swap_obj.clone());
    assert_eq!((c["answers"].as_i64(), c["correct"].as_i64(), c["accuracy"].as_f64()), (Some(2), Some(0), Some(0.0)));
    let all = cell(0, Value::Null);
    assert_eq!(
        (all["answers"].as_i64(), all["correct"].as_i64(), all["accuracy"].as_f64()),
        (Some(10), Some(8), Some(0.8))
    );
    assert_eq!(cell(1, swap_obj.clone())["accuracy"].as_f64(), Some(1.0));
    assert_eq!(people[1]["rows"].as_array().unwrap().len(), 6, "five subsets and overall");
    // The means over people: swap/obj (0 + 1) / 2, overall (0.8 + 1) / 2.
    let rows = r["rows"].as_array().unwrap();
    let mean = |subset: &Value| rows.iter().find(|r| r["subset"] == *subset).unwrap()["accuracy"].as_f64().unwrap();
    assert!((mean(&swap_obj) - 0.5).abs() < 1e-12 && (mean(&Value::Null) - 0.9).abs() < 1e-12, "{rows:?}");
    let cli = text(&app.cli(&["report", &id.to_string()]).stdout);
    assert!(
        cli.contains("annotator1: ") && cli.contains("swap/obj 0/2 0.0%") && cli.contains("all 8/10 80.0%"),
        "{cli}"
    );
}

#[tokio::test]
async fn stratified_sample_specs_that_cannot_work_are_refused_with_the_field() {
    let app = TestApp::spawn();
    stratified_dataset(&app);
    let researcher = app.login("researcher").await;
    for (assignment, field, says) in [
        ("per_subset = 0", "assignment.per_subset", "at least 1"),
        ("", "assignment.per_subset", "missing"),
        (
            "per_subset = 5",
            "assignment.per_subset",
            "5 items of subset replace/obj asked per person, but the study has only 4",
        ),
        ("per_subset = 2\nsubsets = [\"swap/rel\"]", "assignment.subsets", "swap has no subtype rel"),
        ("per_subset = 2\nsubsets = [\"shuffle/obj\"]", "assignment.subsets", "unknown type"),
        ("per_subset = 2\nsubsets = [\"add/obj\"]", "assignment.subsets", "no items of subset add/obj"),
        ("per_subset = 2\noverlap = 3", "assignment.rule", "per_subset and subsets only"),
    ] {
        let res = app.create_study(&researcher, &stratified_spec("Bad", assignment)).await;
        assert_eq!(res.status(), 422, "{assignment}");
        let body = res.text().await.unwrap();
        assert!(body.contains(&format!("field `{field}`")) && body.contains(says), "{assignment}: {body}");
    }
    // per_subset belongs to the stratified rule alone.
    let other = Spec::new("Bad").kind("odd_one_out").dataset("strat").line("[assignment]\nper_subset = 2");
    let body = app.create_study(&researcher, &other).await.text().await.unwrap();
    assert!(
        body.contains("field `assignment.per_subset`: per_subset and subsets belong to rule =")
            && body.contains("stratified_sample"),
        "{body}"
    );
    assert!(app.studies(&researcher).await.iter().all(|s| s.name != "Bad"), "nothing half-written");
}

/// A link study: each place is its own stratified sample, `link.samples`
/// of them; participants arriving by the link get one each.
#[tokio::test]
async fn link_participants_get_a_stratified_sample_each() {
    use crate::crowd_kit::{arrive, create_link_study, start};
    let app = TestApp::spawn();
    let by_p1 = stratified_dataset(&app);
    let researcher = app.login("researcher").await;
    let spec = |link: &str| {
        format!(
            "name = \"Strat link\"\nkind = \"odd_one_out_text\"\ndataset = \"strat\"\nseed = 5\naccess = \"link\"\n\
             [assignment]\nrule = \"stratified_sample\"\nper_subset = 2\n\
             [link]\nconsent = \"I agree.\"\n{link}\n"
        )
    };
    for (link, says) in [
        ("bundle_size = 10", "field `link.samples`: missing"),
        ("bundle_size = 12\nsamples = 2", "field `link.bundle_size`: rule = \\\"stratified_sample\\\" gives each participant per_subset x subsets = 10 items"),
        ("bundle_size = 10\nsamples = 0", "field `link.samples`: must be at least 1"),
    ] {
        let res = researcher.post(app.url("/api/v1/studies")).body(spec(link)).send().await.unwrap();
        assert_eq!(res.status(), 422, "{link}");
        let body = res.text().await.unwrap();
        assert!(body.contains(says), "{link}: {body}");
    }
    let (id, token) = create_link_study(&app, &researcher, &spec("bundle_size = 10\nsamples = 2")).await;
    let mut samples = Vec::new();
    for pid in ["PID0001", "PID0002"] {
        let client = arrive(&app, &token, id, pid).await;
        start(&app, &client, id).await;
        let mut seen = std::collections::BTreeSet::new();
        while let Some(task) = app.next_task(&client, id).await {
            let p1 = task.options.iter().find_map(|o| by_p1.get_key_value(o.text.as_deref()?)).unwrap().0.clone();
            let negative = by_p1[&p1].2.clone();
            assert_eq!(app.answer(&client, task.task_id, option_with(&task, &negative)).await.status(), 200);
            assert!(seen.insert(p1), "an item twice");
        }
        for (t, s) in PP_SUBSETS {
            assert_eq!(seen.iter().filter(|p1| by_p1[*p1].0 == format!("{t}/{s}")).count(), 2, "{pid} {t}/{s}");
        }
        samples.push(seen);
    }
    assert_ne!(samples[0], samples[1], "each place its own sample");
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{id}/report")).await;
    let people = r["people"].as_array().unwrap();
    assert_eq!(people.len(), 2, "{r}");
    assert!(people.iter().all(|p| p["rows"].as_array().unwrap().last().unwrap()["accuracy"] == 1.0), "{r}");
}
