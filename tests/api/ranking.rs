//! Ranking generated images over the real binary: the demo prompts ordered
//! by two annotators (one by the truth, one swapping the last two), orders
//! refused unless complete, Kendall's W and the demo models' correlations in
//! the report and the export, and `import rankings` refusing a bad file whole.
use crate::helpers::{text, Spec, TestApp};
use crate::odd_one_out::{export_candidates, refused_whole};
use crate::placeholders;
use hardneg::api_types::TaskView;
use hardneg::demo::ranking_prompts::{generate, DemoPrompt};
use hardneg::store::images::sha256_hex;
use serde_json::Value;

const STUDY: &str = "Demo: ranking generated images";

/// The shown letters best first by the demo's truth; `swap_last` swaps the last two.
pub fn order(task: &TaskView, demo: &[DemoPrompt], swap_last: bool) -> String {
    let p = demo.iter().find(|p| p.prompt == task.prompt.text).expect("a demo prompt");
    let errors = |url: &str| {
        let slot = p.images.iter().position(|png| url.ends_with(&sha256_hex(png))).expect("a demo image");
        p.errors[slot]
    };
    let mut shown: Vec<(usize, &str)> =
        task.options.iter().map(|o| (errors(o.image_url.as_deref().unwrap()), o.id.as_str())).collect();
    shown.sort();
    let mut ids: Vec<&str> = shown.into_iter().map(|s| s.1).collect();
    if swap_last {
        let n = ids.len();
        ids.swap(n - 2, n - 1);
    }
    ids.join(",")
}

#[tokio::test]
async fn demo_prompts_ranked_by_two_annotators_reported_and_exported() {
    let app = TestApp::spawn();
    let demo = generate(8, 2024);
    let researcher = app.login("researcher").await;
    let id = app.studies(&researcher).await.into_iter().find(|s| s.name == STUDY).expect("the demo study").id;

    // An incomplete or repeated order is refused with what is expected.
    let a1 = app.login("annotator1").await;
    let task = app.next_task(&a1, id.get()).await.unwrap();
    assert!(task.options.len() >= 2 && task.options.iter().all(|o| o.image_url.is_some() && o.text.is_none()));
    for bad in ["A", "A,A", "A,Z"] {
        let res = app.answer(&a1, task.task_id, bad).await;
        assert_eq!(res.status(), 422, "{bad}");
        assert!(res.text().await.unwrap().contains("an order of all of"), "{bad}");
    }

    let mut sizes = Vec::new();
    app.work_through("annotator1", id.get(), |t| {
        sizes.push(t.options.len());
        order(t, &demo, false)
    })
    .await;
    sizes.sort();
    assert_eq!(sizes, [2, 2, 3, 3, 4, 4, 5, 5], "N from the data");
    app.work_through("annotator2", id.get(), |t| order(t, &demo, true)).await;

    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{id}/report")).await;
    assert_eq!((r["statistic"].as_str(), r["answers"].as_i64()), (Some("ranking"), Some(16)));
    assert_eq!((r["prompts"].as_i64(), r["rankings"].as_i64(), r["w_prompts"].as_i64()), (Some(8), Some(16), Some(8)));
    // Two orders of n differing in one adjacent swap: S = 2·(1/2)²·… gives
    // W = 1 − 6/(n³ − n): n = 2 → 0, 3 → 3/4, 4 → 9/10, 5 → 19/20; two prompts each.
    let want = (0.0 + 0.75 + 0.9 + 0.95) / 4.0;
    assert!((r["kendalls_w"].as_f64().unwrap() - want).abs() < 1e-9, "{r}");
    let models = r["models"].as_array().unwrap();
    let exact = models.iter().find(|m| m["model"] == "demo-exact").unwrap();
    // demo-exact follows the truth; the people's mean ranks tie the last two,
    // so on the two-image prompts (opposite orders) the people have no order.
    assert_eq!(exact["prompts"].as_i64(), Some(6));
    assert!(exact["spearman"].as_f64().unwrap() > 0.8 && exact["kendall_tau"].as_f64().unwrap() > 0.7, "{exact}");
    assert!(models.iter().any(|m| m["model"] == "demo-random"));

    // Every order counts toward the letter ranked first, each letter up to J listed.
    let progress: Value = app.get(&researcher, &format!("/api/v1/studies/{id}/progress")).await;
    let dist = progress["distribution"].as_array().unwrap();
    let letters: String = dist.iter().map(|d| d["option"].as_str().unwrap()).collect();
    assert_eq!(letters, "ABCDEFGHIJ");
    assert_eq!(dist.iter().map(|d| d["count"].as_i64().unwrap()).sum::<i64>(), 16, "{progress}");

    let res = researcher.get(app.url(&format!("/api/v1/studies/{id}/agreement"))).send().await.unwrap();
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("Kendall's W"));

    let audits: Vec<Value> = app.get(&researcher, "/api/v1/datasets/demo-rankings/audit").await;
    assert!(audits.iter().all(|a| a["rows"].as_array().unwrap().is_empty()), "prompts have no negative to audit");

    let out = export_candidates(&app, "demo-rankings");
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join(format!("study-{id}-report.json"))).unwrap()).unwrap();
    assert_eq!(report["kendalls_w"], r["kendalls_w"]);
    let answers = std::fs::read_to_string(out.join(format!("study-{id}-answers.csv"))).unwrap();
    assert_eq!(answers.lines().count(), 17, "a header and 16 orders");
    // The models' scores the report's correlations rest on: two models, each image of the 8 prompts.
    let scores = std::fs::read_to_string(out.join(format!("study-{id}-scores.csv"))).unwrap();
    assert_eq!(scores.lines().next(), Some("instance,key,slot,image,model,score"));
    assert_eq!(scores.lines().count(), 1 + 2 * (2 + 2 + 3 + 3 + 4 + 4 + 5 + 5), "{scores}");
    assert!(scores.lines().skip(1).all(|l| l.contains(",demo-exact,") || l.contains(",demo-random,")));
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(card.contains("Kendall's W") && card.contains("demo-exact"), "{card}");
}

#[tokio::test]
async fn ranking_import_refuses_a_bad_file_whole_and_takes_a_good_one() {
    let app = TestApp::spawn();
    let dir = app.data_dir.join("in");
    let images = placeholders::png_dir(&dir, 3);
    let bad = dir.join("bad.csv");
    std::fs::write(
        &bad,
        "prompt,images,scores,type,subtype\n\
         a red cube,0.png|1.png|2.png,clip:0.1|0.2|0.3,replace,att\n\
         a blue ball,0.png|1.png,clip:0.1,replace,obj\n\
         a dog,0.png|9.png,,swap,obj\n",
    )
    .unwrap();
    let researcher =
        refused_whole(&app, &["import", "rankings"], &bad, &images, [(3, "scores"), (4, "images")], "ranking").await;

    let good = dir.join("gen.jsonl");
    let rows = [
        serde_json::json!({"prompt": "a red cube", "images": "0.png|1.png|2.png", "scores": "clip:3|2|1", "type": "replace", "subtype": "att"}),
        serde_json::json!({"prompt": "a dog", "images": "2.png|0.png", "scores": "", "type": "swap", "subtype": "obj"}),
    ];
    std::fs::write(&good, rows.map(|r| r.to_string()).join("\n")).unwrap();
    let out = app.cli(&["import", "rankings", good.to_str().unwrap(), "--images", images.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("imported 2 prompts to rank into dataset \"gen\""));
    let id = app.create_study_ok(&researcher, &Spec::new("Gen").kind("ranking").dataset("gen")).await;
    // Reverse of the shown order for the first prompt, shown order for the second.
    let tasks = app
        .work_through("annotator1", id, |t| {
            let ids: Vec<&str> = t.options.iter().map(|o| o.id.as_str()).collect();
            ids.join(",")
        })
        .await;
    assert_eq!(tasks.iter().map(|t| t.options.len()).sum::<usize>(), 5);
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{id}/report")).await;
    assert_eq!((r["prompts"].as_i64(), r["kendalls_w"].as_f64()), (Some(2), None), "one annotator: no W");
    assert_eq!(r["models"][0]["model"], "clip");
}

/// A link study's report counts what every report counts: a participant who
/// returned their place takes their orders with them.
#[tokio::test]
async fn a_returned_participants_orders_leave_the_report() {
    use crate::crowd_kit::{arrive, create_link_study, post_ok, start};
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let spec =
        "name = \"Ranked by link\"\nkind = \"ranking\"\ndataset = \"demo-rankings\"\nseed = 5\naccess = \"link\"\n\
                [link]\nbundle_size = 8\ncopies = 2\nconsent = \"I agree.\"\n";
    let (study, token) = create_link_study(&app, &researcher, spec).await;
    let shown = |t: &TaskView| t.options.iter().map(|o| o.id.as_str()).collect::<Vec<_>>().join(",");
    let mut people = Vec::new();
    for (pid, orders) in [("FINISHES", 8), ("RETURNS", 2)] {
        let p = arrive(&app, &token, study, pid).await;
        start(&app, &p, study).await;
        for _ in 0..orders {
            let task = app.next_task(&p, study).await.expect("a prompt to rank");
            assert_eq!(app.answer(&p, task.task_id, &shown(&task)).await.status(), 200);
        }
        people.push(p);
    }
    post_ok(&app, &people[1], &format!("/api/v1/take/{study}/return")).await;
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/report")).await;
    assert_eq!((r["answers"].as_i64(), r["rankings"].as_i64()), (Some(8), Some(8)), "{r}");
    assert_eq!(r["kendalls_w"], Value::Null, "one counted order per prompt: no W");
}
