//! A triplet check's corrected P2 must not depend on the order the experts'
//! answers arrived (audit 47/E): two experts who agree on the verdict and
//! tag but wrote different corrections disagree, and only `first` and
//! `primary` settle that as they settle values; under a model the item goes
//! to a person. Texts equal up to whitespace are exported collapsed.
use crate::helpers::TestApp;
use crate::odd_one_out::export_candidates;
use crate::triplet_check::{index_of, plan, post_answer, FIXED, OTHER_FIX};
use hardneg::demo::triplets::generate;
use hardneg::kinds::triplet_check::read_prompt;
use reqwest::Client;
use serde_json::Value;
use std::collections::HashMap;

async fn answer_all(app: &TestApp, c: &Client, study: i64, who: &str, p1s: &HashMap<String, usize>) {
    while let Some(task) = app.next_task(c, study).await {
        let (option, correction) = plan(who, index_of(&task, p1s));
        let res = post_answer(app, c, task.task_id.get(), option, correction).await;
        assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    }
}

#[tokio::test]
async fn corrected_p2_does_not_depend_on_the_order_answers_arrived() {
    let app = TestApp::spawn();
    let demo = generate(10, 2024);
    let p1s: HashMap<String, usize> = demo.iter().enumerate().map(|(i, t)| (t.p1.clone(), i)).collect();
    let researcher = app.login("researcher").await;
    let experts = [app.login("annotator1").await, app.login("annotator2").await];
    let mut studies = Vec::new();
    for (resolve, primary) in [("dawid_skene", ""), ("first", ""), ("primary", "primary = \"annotator2\"\n")] {
        for first in [0, 1] {
            let spec = format!(
                "name = \"{resolve} {first}\"\nkind = \"triplet_check\"\ndataset = \"demo-triplets\"\n\
                 annotators = [\"annotator1\", \"annotator2\"]\nresolve = \"{resolve}\"\n{primary}seed = 4\n"
            );
            let res = researcher.post(app.url("/api/v1/studies")).body(spec).send().await.unwrap();
            assert_eq!(res.status(), 201, "{}", res.text().await.unwrap());
            let study = res.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
            for who in [first, 1 - first] {
                answer_all(&app, &experts[who], study, &format!("annotator{}", who + 1), &p1s).await;
            }
            let disputes: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/disputes")).await;
            let mut disputed: Vec<usize> =
                disputes.iter().map(|d| p1s[read_prompt(d["prompt"].as_str().unwrap()).unwrap().0]).collect();
            disputed.sort();
            studies.push((resolve, first, study, disputed));
        }
    }
    let dir = export_candidates(&app, "demo-triplets");
    for (resolve, first, study, disputed) in studies {
        let mut reader = csv::Reader::from_path(dir.join(format!("study-{study}-triplets.csv"))).unwrap();
        let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        let rows: HashMap<String, csv::StringRecord> =
            reader.records().map(Result::unwrap).map(|r| (r[col("caption")].to_string(), r)).collect();
        let row = |i: usize, c: &str| rows[&demo[i].p1][col(c)].to_string();
        let at = format!("{resolve}, annotator{} first", first + 1);
        // Corrections equal up to spaces agree, and are exported collapsed whoever came first.
        assert_eq!((row(1, "final_p2"), row(1, "settled_by")), (FIXED.to_string(), "unanimous".into()), "{at}");
        let four = (row(4, "status"), row(4, "final_p2"), row(4, "settled_by"));
        match resolve {
            // The model settles values; two different texts go to a person.
            "dawid_skene" => {
                assert!(disputed.contains(&4) && !disputed.contains(&1), "{at}: {disputed:?}");
                assert_eq!(four, ("disputed".into(), String::new(), String::new()), "{at}");
            }
            "first" => {
                let earliest = if first == 0 { FIXED } else { OTHER_FIX };
                assert_eq!(four, ("final".into(), earliest.into(), "first".into()), "{at}");
            }
            _ => assert_eq!(four, ("final".into(), OTHER_FIX.into(), "primary".into()), "{at}"),
        }
    }
}
