//! HNC's caption-pair writing and pair validation over the real binary:
//! writing items are imported (a bad file refused whole), two writers write
//! pairs and skip over HTTP (one pair through the no-JS form), bad texts,
//! identical captions and words outside a strict vocabulary are refused with
//! the field named and nothing stored, a validation study is built from the
//! written pairs (a writer named as validator refused, "all" leaving the
//! writers out), two other validators answer, a dispute is settled, and the
//! export holds exactly the validated pairs, which import back as a dataset.
use crate::helpers::{text, Spec, TestApp};
use crate::odd_one_out::{export_candidates, refused_whole};
use crate::placeholders;
use hardneg::api_types::TaskView;
use hardneg::kinds::caption_writing::read_prompt;
use hardneg::kinds::pair_validation;
use reqwest::Client;
use serde_json::{json, Value};
use std::collections::BTreeSet;

const VOCAB: &str = r#"vocabulary = ["a", "the", "dog", "cat", "red", "blue", "two", "three", "on", "mat"]"#;

async fn write(app: &TestApp, c: &Client, task: i64, option: &str, texts: &[(&str, &str)]) -> reqwest::Response {
    let texts: serde_json::Map<String, Value> = texts.iter().map(|(n, t)| (n.to_string(), json!(t))).collect();
    let body = json!({ "option": option, "elapsed_ms": 2000, "texts": texts });
    c.post(app.url(&format!("/api/v1/tasks/{task}/answer"))).json(&body).send().await.unwrap()
}

/// Posts the writing card's plain form (no JavaScript).
async fn write_form(app: &TestApp, c: &Client, study: i64, form: &[(&str, String)]) -> reqwest::Response {
    let url = app.url(&format!("/annotate/{study}/write"));
    c.post(url).header("origin", app.base.clone()).form(form).send().await.unwrap()
}

fn no_redirects() -> Client {
    Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// The pair writer `w` writes on its `i`-th task: numbered, so each is unique.
fn pair(w: usize, i: usize, caption_type: &str) -> (String, String) {
    let k = 10 * w + i;
    match caption_type {
        "counting" => (format!("Two cats on the mat {k}."), format!("Three cats on the mat {k}.")),
        _ => (format!("A red dog on the mat {k}."), format!("A blue dog on the mat {k}.")),
    }
}

#[tokio::test]
async fn writers_write_validators_validate_and_only_validated_pairs_export_and_reimport() {
    let mut app = TestApp::spawn();
    for checker in ["checker1", "checker2"] {
        app.add_user(checker, "annotator", "a long password");
    }
    let dir = app.data_dir.join("in");
    let images = placeholders::png_dir(&dir, 4);
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "image,type\n0.png,attribute\n1.png,\n9.png,relation\n").unwrap();
    let researcher =
        refused_whole(&app, &["import", "pairs"], &bad, &images, [(3, "type"), (4, "image")], "caption_writing").await;
    let good = dir.join("items.jsonl");
    let rows: Vec<String> = ["attribute", "relation", "counting", "attribute"]
        .iter()
        .enumerate()
        .map(|(i, t)| json!({ "image": format!("{i}.png"), "type": t, "id": format!("item-{i}") }).to_string())
        .collect();
    std::fs::write(&good, rows.join("\n")).unwrap();
    let out = app.cli(&["import", "pairs", good.to_str().unwrap(), "--images", images.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("imported 4 images to write caption pairs for into dataset \"items\""));

    let spec =
        Spec::new("HNC writing").kind("caption_writing").dataset("items").annotators(&["annotator1", "annotator2"]);
    let writing = app.create_study_ok(&researcher, &spec.line(VOCAB).line("vocabulary_strict = true")).await;

    // annotator1 over the JSON API: bad texts first, then pairs, and a skip of the counting image.
    let c = app.login("annotator1").await;
    let mut written: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(task) = app.next_task(&c, writing).await {
        let caption_type = read_prompt(&task.prompt.text).expect("the assigned type").to_string();
        assert!(task.prompt.image_url.is_some());
        if i == 0 {
            let long = "a ".repeat(151);
            for (option, texts, says) in [
                (
                    "written",
                    vec![("positive", long.trim()), ("negative", "A cat.")],
                    "Positive caption (field \"positive\"): 301 characters",
                ),
                (
                    "written",
                    vec![("positive", "A red dog."), ("negative", " a  RED dog. ")],
                    "Negative caption (field \"negative\"): the same text as Positive caption",
                ),
                ("written", vec![("positive", "A red\u{7} dog."), ("negative", "A cat.")], "control character U+0007"),
                ("written", vec![("positive", "A red dog.")], "(field \"negative\"): required"),
                ("skip:other", vec![("positive", "A red dog.")], "(field \"positive\"): must be empty"),
                ("skip:bored", vec![], "unknown option"),
                ("written", vec![("positive", "A red fox."), ("negative", "A cat.")], "vocabulary: fox"),
            ] {
                let res = write(&app, &c, task.task_id.get(), option, &texts).await;
                assert_eq!(res.status(), 422, "{option} {texts:?}");
                let body: Value = res.json().await.unwrap();
                let message = body["error"].as_str().unwrap();
                assert!(message.contains(says), "{says}: {message}");
            }
            let again = app.next_task(&c, writing).await.unwrap();
            assert_eq!((again.task_id, again.progress.done), (task.task_id, 0), "nothing was stored");
        }
        let res = match caption_type.as_str() {
            "counting" => write(&app, &c, task.task_id.get(), "skip:type_does_not_apply", &[]).await,
            t => {
                let (p, n) = pair(1, i, t);
                written.push(p.clone());
                write(&app, &c, task.task_id.get(), "written", &[("positive", &p), ("negative", &n)]).await
            }
        };
        assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
        i += 1;
    }
    assert_eq!(i, 4);

    // annotator2: the first pair through the no-JS form, where a word outside
    // the strict vocabulary comes back named, nothing stored, until fixed;
    // identical captions come back with their texts, refused.
    let c2 = no_redirects();
    app.log_in(&c2, "annotator2").await;
    let mut i = 0;
    while let Some(task) = app.next_task(&c2, writing).await {
        let (p, n) = pair(2, i, read_prompt(&task.prompt.text).unwrap());
        written.push(p.clone());
        if i == 0 {
            let form = |positive: &str| {
                vec![
                    ("task_id", task.task_id.to_string()),
                    ("option", "written".to_string()),
                    ("positive", positive.to_string()),
                    ("negative", n.clone()),
                ]
            };
            let res = write_form(&app, &c2, writing, &form("A red dog on the sofa.")).await;
            assert_eq!(res.status(), 200);
            let page = res.text().await.unwrap();
            assert!(page.contains("Words outside the vocabulary") && page.contains("<mark>sofa</mark>"), "{page}");
            assert!(!page.contains("Keep these words"), "a strict vocabulary cannot be kept");
            assert!(page.contains("value=\"A red dog on the sofa.\""), "the texts come back to fix");
            assert_eq!(app.next_task(&c2, writing).await.unwrap().progress.done, 0);
            // A pair the kind refuses (the negative the same as the positive) keeps its texts too.
            let res = write_form(&app, &c2, writing, &[&form(&n)[..3], &[("negative", n.clone())]].concat()).await;
            assert_eq!(res.status(), 422);
            let page = res.text().await.unwrap();
            assert!(page.contains("Please fix the caption pair") && page.contains("must differ"), "{page}");
            assert_eq!(page.matches(&format!("value=\"{n}\"")).count(), 2, "both texts come back: {page}");
            assert_eq!(app.next_task(&c2, writing).await.unwrap().progress.done, 0);
            let res = write_form(&app, &c2, writing, &form(&p)).await;
            assert_eq!(res.status(), 303);
        } else {
            let res = write(&app, &c2, task.task_id.get(), "written", &[("positive", &p), ("negative", &n)]).await;
            assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
        }
        i += 1;
    }

    // The validation study: every written pair is an item of the new dataset.
    let bad_source = Spec::new("Bad").kind("pair_validation").dataset("x").source("Demo: BiVLC Step 3 (four images)");
    let res = app.create_study(&researcher, &bad_source).await;
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("expected caption_writing"));
    let spec = Spec::new("HNC validation").kind("pair_validation").dataset("written").source("HNC writing");
    // Validators are another group than the writers: a writer among them is refused, named, nothing made.
    let res = app.create_study(&researcher, &spec.clone().annotators(&["checker1", "annotator2"])).await;
    assert_eq!(res.status(), 422);
    let body: Value = res.json().await.unwrap();
    let message = body["error"].as_str().unwrap();
    assert!(message.contains("field `annotators`: \"annotator2\" wrote pairs of \"HNC writing\""), "{message}");
    let validation = app.create_study_ok(&researcher, &spec.clone().annotators(&["checker1", "checker2"])).await;
    let res = app
        .create_study(&researcher, &Spec::new("Again").kind("pair_validation").dataset("written").source("HNC writing"))
        .await;
    assert_eq!(res.status(), 422);
    assert!(res.text().await.unwrap().contains("already exists"));

    // Validators: both find the negative of annotator1's first pair wrong;
    // on its second they disagree.
    let (wrong, disputed) = (written[0].clone(), written[1].clone());
    let verdict = |who: &str, t: &TaskView| -> String {
        let (positive, _) = pair_validation::read_prompt(&t.prompt.text).expect("the pair");
        match who {
            _ if positive == wrong => "negative_wrong",
            "checker2" if positive == disputed => "both_wrong",
            _ => "valid",
        }
        .to_string()
    };
    let mut shown = BTreeSet::new();
    for who in ["checker1", "checker2"] {
        let tasks = app.work_through(who, validation, |t| verdict(who, t)).await;
        assert_eq!(tasks.len(), 7, "3 pairs of annotator1, 4 of annotator2");
        shown.extend(tasks.iter().map(|t| t.prompt.text.clone()));
    }
    assert_eq!(shown.len(), 7);
    // "all": every annotator but the writers, who neither see nor start it.
    let spec = Spec::new("HNC validation by all").kind("pair_validation").dataset("written-all").source("HNC writing");
    let by_all = app.create_study_ok(&researcher, &spec).await;
    for writer in ["annotator1", "annotator2"] {
        let c = app.login(writer).await;
        assert!(app.studies(&c).await.iter().all(|s| s.id.get() != by_all), "{writer} sees it");
        let res = app.start(&c, by_all).await;
        assert_eq!(res.status(), 403, "{writer}");
        assert!(res.text().await.unwrap().contains("you wrote pairs that study"));
    }
    let checker = app.login("checker1").await;
    assert_eq!(app.next_task(&checker, by_all).await.unwrap().progress.total, 7);
    assert!(shown.iter().filter(|p| p.contains("Two cats")).all(|p| p.ends_with("\nType: counting")), "{shown:?}");
    let disputes: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{validation}/disputes")).await;
    assert_eq!(disputes.len(), 1, "{disputes:?}");
    let body = json!({ "instance_id": disputes[0]["instance_id"], "value": "positive_wrong" });
    let res =
        researcher.post(app.url(&format!("/api/v1/studies/{validation}/adjudicate"))).json(&body).send().await.unwrap();
    assert_eq!(res.status(), 204);

    // The report: written, skipped, validated share per type, the validators' kappa.
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{validation}/report")).await;
    assert_eq!((r["statistic"].as_str(), r["answers"].as_i64()), (Some("pair_validation"), Some(14)));
    let all = r["rows"].as_array().unwrap().last().unwrap();
    assert!(all["caption_type"].is_null());
    assert_eq!(
        (all["pairs"].as_i64(), all["settled"].as_i64(), all["values"]["valid"].as_i64()),
        (Some(7), Some(7), Some(5))
    );
    assert!((all["valid_share"].as_f64().unwrap() - 5.0 / 7.0).abs() < 1e-12);
    let counting = r["rows"].as_array().unwrap().iter().find(|r| r["caption_type"] == "counting").unwrap();
    assert_eq!((counting["pairs"].as_i64(), counting["valid_share"].as_f64()), (Some(1), Some(1.0)));
    // p_o = 6/7; marginals (6, 1, 0, 0) and (5, 0, 1, 1) of 7: p_e = 31/49; kappa = 11/18.
    assert!((r["mean_kappa"].as_f64().unwrap() - 11.0 / 18.0).abs() < 1e-12, "{r}");
    let w = r["writing"]["rows"].as_array().unwrap().last().unwrap();
    assert_eq!((w["answers"].as_i64(), w["written"].as_i64()), (Some(8), Some(7)));
    assert_eq!(w["skipped"]["type_does_not_apply"], 1);
    let oov = &r["writing"]["vocabulary"];
    assert_eq!((oov["strict"].as_bool(), oov["pairs_with_unknown"].as_i64()), (Some(true), Some(0)));
    let cli = text(&app.cli(&["report", &validation.to_string()]).stdout);
    assert!(cli.contains("mean kappa of the validators: 0.611") && cli.contains("skip: type_does_not_apply"), "{cli}");

    // The writing study's own dataset exports every written pair with its caption type.
    let items = export_candidates(&app, "items");
    let mut reader = csv::Reader::from_path(items.join(format!("study-{writing}-written.csv"))).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(header, ["study", "instance", "key", "caption_type", "annotator", "value", "positive", "negative"]);
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let pairs: BTreeSet<String> = rows.iter().filter(|r| &r[5] == "written").map(|r| r[6].to_string()).collect();
    assert_eq!(pairs, written.iter().cloned().collect(), "every written positive, once");
    assert!(rows.iter().all(|r| r[0] == writing.to_string() && !r[3].is_empty()), "{rows:?}");
    assert!(rows.iter().filter(|r| &r[5] != "written").all(|r| r[6].is_empty() && r[7].is_empty()));

    // The export: exactly the validated pairs, in the shape `import pairs` reads back.
    let out = export_candidates(&app, "written");
    let mut reader = csv::Reader::from_path(out.join(format!("study-{validation}-validated-pairs.csv"))).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(header[..5], ["image", "type", "id", "caption", "negative_caption"]);
    let exported: BTreeSet<String> = reader.records().map(|r| r.unwrap()[3].to_string()).collect();
    let validated: BTreeSet<String> = written.iter().filter(|p| **p != wrong && **p != disputed).cloned().collect();
    assert_eq!((exported.len(), exported), (5, validated));
    for (file, name) in [("csv", "again-csv"), ("jsonl", "again-jsonl")] {
        let path = out.join(format!("study-{validation}-validated-pairs.{file}"));
        let args = ["import", "pairs", path.to_str().unwrap(), "--images", out.to_str().unwrap(), "--dataset", name];
        let res = app.cli(&args);
        assert!(res.status.success(), "{}", text(&res.stderr));
        assert!(text(&res.stdout).contains(&format!("imported 5 caption pairs into dataset \"{name}\"")));
    }
}

#[tokio::test]
async fn the_demo_shows_both_kinds_answered_and_a_warning_vocabulary_lets_words_be_kept() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let studies = app.studies(&researcher).await;
    let id = |name: &str| studies.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name}")).id;
    let (writing, validation) = (id("Demo: HNC caption writing"), id("Demo: HNC pair validation"));
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{validation}/report")).await;
    assert_eq!(r["answers"].as_i64(), Some(4), "annotator1 validated 4 of the 8 pairs written");
    assert_eq!(r["rows"].as_array().unwrap().last().unwrap()["values"]["negative_wrong"], 1);
    // Their writer, annotator2, is not a validator; annotator1 has the other 4 to try.
    let writer = app.login("annotator2").await;
    assert_eq!(app.start(&writer, validation.get()).await.status(), 403);
    let validator = app.login("annotator1").await;
    let next = app.next_task(&validator, validation.get()).await.expect("pairs left to validate").progress;
    assert_eq!((next.done, next.total), (4, 8));
    let w: Value = app.get(&researcher, &format!("/api/v1/studies/{writing}/report")).await;
    assert_eq!(w["statistic"], "writing");
    assert_eq!(
        (w["vocabulary"]["strict"].as_bool(), w["vocabulary"]["pairs_with_unknown"].as_i64()),
        (Some(false), Some(1))
    );
    assert_eq!(w["vocabulary"]["top_unknown"][0], json!(["shiny", 1]));

    // annotator1 writes on the demo study: the unknown word is named first, then kept.
    let c = no_redirects();
    app.log_in(&c, "annotator1").await;
    let task = app.next_task(&c, writing.get()).await.unwrap();
    let form = |confirmed: bool| {
        let mut f = vec![
            ("task_id", task.task_id.to_string()),
            ("option", "written".to_string()),
            ("positive", "A shiny red circle.".to_string()),
            ("negative", "A blue circle.".to_string()),
        ];
        if confirmed {
            f.push(("confirmed", "1".to_string()));
        }
        f
    };
    let res = write_form(&app, &c, writing.get(), &form(false)).await;
    assert_eq!(res.status(), 200);
    let page = res.text().await.unwrap();
    assert!(page.contains("<mark>shiny</mark>") && page.contains("Keep these words"), "{page}");
    assert_eq!(app.next_task(&c, writing.get()).await.unwrap().progress.done, 0, "nothing stored yet");
    assert_eq!(write_form(&app, &c, writing.get(), &form(true)).await.status(), 303);
    assert_eq!(app.next_task(&c, writing.get()).await.unwrap().progress.done, 1);
    let skip = [
        ("task_id", app.next_task(&c, writing.get()).await.unwrap().task_id.to_string()),
        ("option", "skip:unclear_image".into()),
    ];
    assert_eq!(write_form(&app, &c, writing.get(), &skip).await.status(), 303, "a skip needs no texts");
    let w: Value = app.get(&researcher, &format!("/api/v1/studies/{writing}/report")).await;
    assert_eq!(w["vocabulary"]["pairs_with_unknown"].as_i64(), Some(2));
    assert_eq!(w["rows"].as_array().unwrap().last().unwrap()["skipped"]["unclear_image"], 1);
}
