//! SugarCrepe's A/B/Tie over the real binary: the demo pairs answered on
//! both criteria, the source table per subset, type and overall with its
//! sign test over items, the export, and `import ab-pairs` refusing a bad
//! file whole.
use crate::helpers::{text, Spec, TestApp};
use crate::odd_one_out::export_candidates;
use hardneg::demo::ab_pairs::{generate, FLUENT};
use serde_json::Value;
use std::collections::HashMap;

const STUDY: &str = "Demo: SugarCrepe A/B/Tie";

#[tokio::test]
async fn demo_pairs_judged_on_both_criteria_give_the_source_table_and_sign_test() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let id = app.studies(&researcher).await.into_iter().find(|s| s.name == STUDY).unwrap().id;
    // The fluent negative of each demo item, by its positive caption.
    let fluent: HashMap<String, String> = generate(7, 2024)
        .into_iter()
        .map(|p| {
            let f = if p.source_a == FLUENT { p.negative_a } else { p.negative_b };
            (p.caption, f)
        })
        .collect();
    let mut wrong_once = false;
    for who in ["annotator1", "annotator2"] {
        let tasks = app
            .work_through(who, id.get(), |task| {
                let ids: Vec<&str> = task.options.iter().map(|o| o.id.as_str()).collect();
                assert_eq!(ids, ["A", "B", "tie"]);
                if task.instructions.contains("plausible") {
                    return if who == "annotator1" { "tie" } else { "A" }.into();
                }
                assert!(task.instructions.contains("grammatical"), "{}", task.instructions);
                let good = &fluent[&task.prompt.text];
                let pick_bad = who == "annotator2" && !std::mem::replace(&mut wrong_once, true);
                let o = task.options.iter().find(|o| o.text.is_some() && (o.text.as_ref() == Some(good)) != pick_bad);
                o.unwrap().id.clone()
            })
            .await;
        assert_eq!(tasks.len(), 14, "two questions per item");
        for pair in tasks.chunks(2) {
            assert_eq!(pair[0].prompt.text, pair[1].prompt.text, "the same item twice in a row");
            let texts = |i: usize| pair[i].options.iter().map(|o| o.text.clone()).collect::<Vec<_>>();
            assert_eq!(texts(0), texts(1), "negatives keep their places for the second question");
            assert!(pair[0].instructions.contains("plausible") && pair[1].instructions.contains("grammatical"));
        }
    }
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{id}/report")).await;
    assert_eq!((r["statistic"].as_str(), r["answers"].as_i64()), (Some("preference"), Some(28)));
    assert_eq!(r["test"], "item_majority_sign_test");
    let rows = r["rows"].as_array().unwrap();
    let overall = |criterion: &str| {
        rows.iter().find(|row| row["criterion"] == criterion && row["label"] == "all").unwrap().clone()
    };
    let g = overall("grammar");
    assert_eq!(
        g["sources"],
        serde_json::json!([{"source": "fluent", "better": 13, "items": 6}, {"source": "scrambled", "better": 1, "items": 0}])
    );
    // The item annotator2 got wrong is split one to one: dropped. 0 of 6 items: 2 / 2^6.
    assert_eq!(
        (g["ties"].as_i64(), g["items"].as_i64(), g["items_tied"].as_i64(), g["n"].as_i64()),
        (Some(0), Some(7), Some(1), Some(6))
    );
    assert!((g["sign_test_p"].as_f64().unwrap() - 0.03125).abs() < 1e-12, "{g}");
    // Commonsense: a Tie against a source on every item: every item dropped, no test.
    let c = overall("commonsense");
    let better: i64 = c["sources"].as_array().unwrap().iter().map(|s| s["better"].as_i64().unwrap()).sum();
    assert_eq!((c["ties"].as_i64(), better, c["n"].as_i64(), c["items_tied"].as_i64()), (Some(7), 7, Some(0), Some(7)));
    assert!(c["sign_test_p"].is_null(), "{c}");
    assert_eq!(rows.len(), 2 * (7 + 3 + 1), "seven subsets, three types and overall, per criterion");

    let out = export_candidates(&app, "demo-ab-pairs");
    let answers = std::fs::read_to_string(out.join(format!("study-{id}-answers.csv"))).unwrap();
    assert_eq!(answers.lines().count(), 1 + 28);
    assert_eq!(answers.matches(",tie,commonsense_tie").count(), 7, "annotator1's ties, as shown and as stored");
    // Each answer names its question, negative b and both sources: the sign test can be redone per item.
    let head = answers.lines().next().unwrap();
    assert!(head.ends_with(",annotator,option,value,question,negative_b,source_a,source_b"), "{head}");
    let mut rows = csv::Reader::from_reader(answers.as_bytes());
    for row in rows.records().map(Result::unwrap) {
        let (value, question) = (&row[11], &row[12]);
        assert!(value.starts_with(question), "{value} answers {question}");
        assert_eq!(&row[0], id.to_string(), "the study's id, as in the file's name");
        assert!(
            !row[13].is_empty() && [&row[14], &row[15]].iter().all(|s| ["fluent", "scrambled"].contains(s)),
            "{row:?}"
        );
    }
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join(format!("study-{id}-report.json"))).unwrap()).unwrap();
    assert_eq!(report["rows"], r["rows"]);
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(card.contains("sign test n = 6, p = 0.0313"), "{card}");
}

#[tokio::test]
async fn ab_pair_import_refuses_a_bad_file_whole_and_takes_a_good_one() {
    let app = TestApp::spawn();
    let dir = app.data_dir.join("in");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("ab.csv");
    let header = "caption,negative_a,source_a,negative_b,source_b,type\n";
    let good_rows = "A dog on a sofa.,A sofa on a dog.,SugarCrepe,A dog sofa on.,ARO,swap_obj\n\
                     A red apple.,A green apple.,SugarCrepe,A apple red.,ARO,replace-att\n";
    std::fs::write(
        &bad,
        format!("{header}{good_rows}A cat.,A dog.,ARO,A bat.,ARO,replace_obj\nA cup.,A mug.,x,A jug.,y,swap\n"),
    )
    .unwrap();
    let out = app.cli(&["import", "ab-pairs", bad.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains(&format!("{}:4: field `source_b`", bad.display())), "{err}");
    assert!(err.contains(&format!("{}:5: field `type`", bad.display())), "{err}");
    let researcher = app.login("researcher").await;
    let res = app.create_study(&researcher, &Spec::new("Nope").kind("ab_tie").dataset("ab")).await;
    assert_eq!(res.status(), 422, "nothing was imported");

    std::fs::write(&bad, format!("{header}{good_rows}")).unwrap();
    let out = app.cli(&["import", "ab-pairs", bad.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("imported 2 A/B pairs into dataset \"ab\""));
    let id = app.create_study_ok(&researcher, &Spec::new("AB").kind("ab_tie").dataset("ab")).await;
    // Each item asks its own criterion: the page shows it above every item, not only in the fold.
    let annotator = app.login("annotator1").await;
    assert_eq!(app.start(&annotator, id).await.status(), 200);
    let page = annotator.get(app.url(&format!("/annotate/{id}"))).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("class=\"item-instructions\""), "{page}");
    let tasks = app.work_through("annotator1", id, |_| "tie".into()).await;
    assert!(tasks.iter().all(|t| t.item_instructions), "ab_tie's instructions are per item");
    let prompts: Vec<&str> = tasks.iter().map(|t| t.prompt.text.as_str()).collect();
    assert_eq!(prompts.len(), 4);
    assert!(prompts.contains(&"A red apple.") && prompts.contains(&"A dog on a sofa."));
}

/// Agreement per criterion: commonsense answered alike (κ = 1), grammar
/// half alike (κ = 0, α = 1/8 by hand); pooled over (item, criterion) the
/// pair agrees on 6 of 8 with p_e = 1/4, so κ = 2/3.
#[tokio::test]
async fn agreement_is_computed_per_criterion_over_http_and_in_the_cli() {
    let app = TestApp::spawn();
    let file = app.data_dir.join("ab-agree.csv");
    let rows: Vec<(String, String)> = (1..=4).map(|i| (format!("Caption {i}."), format!("Negative a {i}."))).collect();
    let mut csv = "caption,negative_a,source_a,negative_b,source_b,type\n".to_string();
    for (i, (caption, a)) in rows.iter().enumerate() {
        csv += &format!("{caption},{a},SugarCrepe,Negative b {}.,ARO,swap_obj\n", i + 1);
    }
    std::fs::write(&file, csv).unwrap();
    assert!(app.cli(&["import", "ab-pairs", file.to_str().unwrap()]).status.success());
    let researcher = app.login("researcher").await;
    let spec = Spec::new("AB agreement").kind("ab_tie").dataset("ab-agree").annotators(&["annotator1", "annotator2"]);
    let id = app.create_study_ok(&researcher, &spec).await;
    for who in ["annotator1", "annotator2"] {
        app.work_through(who, id, |task| {
            let item = task.prompt.text[8..9].parse::<usize>().unwrap();
            let grammar = task.instructions.contains("grammatical");
            // Negative a on items 1 and 3 (commonsense, both); grammar: annotator1 a on 1, 2.
            let pick_a = match (grammar, who) {
                (false, _) | (true, "annotator2") => item % 2 == 1,
                (true, _) => item <= 2,
            };
            let a = &rows[item - 1].1;
            let o = task.options.iter().find(|o| o.text.is_some() && (o.text.as_ref() == Some(a)) == pick_a);
            o.unwrap().id.clone()
        })
        .await;
    }
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{id}/agreement?resamples=50&seed=3")).await;
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-9;
    assert!(close(&r["pairs"][0]["kappa"], 2.0 / 3.0), "{r}");
    assert_eq!(r["pairs"][0]["n"], 8, "each (item, criterion) is an item");
    let pooled = r["pooled_over_questions"].as_str().unwrap_or_default();
    assert!(pooled.starts_with("these figures pool the 2 questions"), "the pooled κ 2/3 says it is not to report: {r}");
    let q = r["questions"].as_array().unwrap();
    let names: Vec<&str> = q.iter().map(|q| q["question"].as_str().unwrap()).collect();
    assert_eq!(names, ["commonsense", "grammar"]);
    assert_eq!(q[0]["categories"], serde_json::json!(["commonsense_a", "commonsense_b", "commonsense_tie"]));
    assert_eq!(q[1]["pairs"][0]["confusion"], serde_json::json!([[1, 1, 0], [1, 1, 0], [0, 0, 0]]));
    assert!(close(&q[0]["pairs"][0]["kappa"], 1.0) && close(&q[0]["fleiss_kappa"], 1.0));
    assert!(close(&q[1]["pairs"][0]["kappa"], 0.0) && close(&q[1]["fleiss_kappa"], 0.0));
    assert!(close(&q[1]["krippendorff_alpha"], 0.125), "{}", q[1]);
    assert_eq!(q[1]["bootstrap"]["resamples"], 50);
    assert!(q[1]["bootstrap"]["krippendorff_alpha"]["low"].as_f64().unwrap() <= 0.125);

    let out = app.cli(&["agreement", &id.to_string(), "--resamples", "0"]);
    let table = text(&out.stdout);
    assert!(table.contains("question grammar (grammar_a, grammar_b, grammar_tie):"), "{table}");
    assert!(table.contains("  Krippendorff's alpha 0.125"), "{table}");
    assert!(table.starts_with("all questions pooled (these figures pool the 2 questions"), "{table}");
    // The overview (research page, card) has a row per criterion and none pooled over them.
    let all: Vec<Value> = app.get(&researcher, "/api/v1/studies/overview").await;
    let rows = all.iter().find(|s| s["status"]["study_id"] == id).unwrap()["agreement"].as_array().unwrap().clone();
    let named: Vec<&str> = rows.iter().map(|a| a["question"].as_str().unwrap_or("(pooled)")).collect();
    assert_eq!(named, ["commonsense", "grammar"], "{rows:?}");
    assert!(rows[1]["fleiss_reason"].is_null() && rows[1].get("alpha_reason").is_some(), "{rows:?}");
    let page = researcher.get(app.url("/research")).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("data-question=\"commonsense\""), "the research page lists each criterion");
}

/// Three raters on each of five items: the sign test counts items (each
/// its raters' majority), not answers; REPLACE and NEGATE/ADD rows as
/// SugarCrepe's table. p-values are `scipy.stats.binomtest(k, n).pvalue`.
#[tokio::test]
async fn several_raters_per_item_give_one_vote_per_item_in_rows_per_type() {
    let mut app = TestApp::spawn();
    app.add_user("annotator3", "annotator", "annotator3-password");
    let file = app.data_dir.join("ab-raters.csv");
    let mut csv = "caption,negative_a,source_a,negative_b,source_b,type\n".to_string();
    for i in 1..=5 {
        let t = if i <= 3 { "replace_obj" } else { "add_att" };
        // Item 5 has the sources the other way round.
        let (a, b) = if i == 5 { ("ARO", "SugarCrepe") } else { ("SugarCrepe", "ARO") };
        let (na, nb) = if i == 5 { ("Bad", "Good") } else { ("Good", "Bad") };
        csv += &format!("Caption {i}.,{na} {i}.,{a},{nb} {i}.,{b},{t}\n");
    }
    std::fs::write(&file, csv).unwrap();
    assert!(app.cli(&["import", "ab-pairs", file.to_str().unwrap()]).status.success());
    let researcher = app.login("researcher").await;
    let who = ["annotator1", "annotator2", "annotator3"];
    let spec = Spec::new("AB raters").kind("ab_tie").dataset("ab-raters").annotators(&who);
    let id = app.create_study_ok(&researcher, &spec).await;
    for w in who {
        app.work_through(w, id, |task| {
            let item = &task.prompt.text[8..9];
            let pick = |start: &str| {
                task.options
                    .iter()
                    .find(|o| o.text.as_deref().is_some_and(|t| t.starts_with(start)))
                    .unwrap()
                    .id
                    .clone()
            };
            if task.instructions.contains("grammatical") {
                return pick("Good"); // everyone, every item: SugarCrepe
            }
            // Commonsense: SugarCrepe, SugarCrepe, Tie; on item 5 SugarCrepe, ARO, Tie.
            match (w, item) {
                ("annotator3", _) => "tie".into(),
                ("annotator2", "5") => pick("Bad"),
                _ => pick("Good"),
            }
        })
        .await;
    }
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{id}/report")).await;
    assert_eq!(r["answers"], 30);
    let rows = r["rows"].as_array().unwrap();
    let row = |criterion: &str, label: &str| {
        rows.iter()
            .find(|r| r["criterion"] == criterion && r["label"] == label)
            .unwrap_or_else(|| panic!("{criterion} {label}: {rows:?}"))
            .clone()
    };
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-12;
    // Grammar: 15 answers for SugarCrepe, but 5 items: binomtest(0, 5) = 0.0625, not 2 / 2^15.
    let g = row("grammar", "all");
    assert_eq!((g["answers"].as_i64(), g["items"].as_i64(), g["n"].as_i64()), (Some(15), Some(5), Some(5)));
    assert_eq!(g["sources"][1], serde_json::json!({"source": "SugarCrepe", "better": 15, "items": 5}));
    assert!(close(&g["sign_test_p"], 0.0625), "{g}");
    let replace = row("grammar", "REPLACE");
    assert_eq!(
        (replace["type"].as_str(), replace["subset"].is_null(), replace["n"].as_i64()),
        (Some("replace"), true, Some(3))
    );
    assert!(close(&replace["sign_test_p"], 0.25), "binomtest(0, 3): {replace}");
    let add = row("grammar", "NEGATE/ADD");
    assert_eq!((add["n"].as_i64(), add["sources"][1]["items"].as_i64()), (Some(2), Some(2)));
    assert!(close(&add["sign_test_p"], 0.5), "binomtest(0, 2): {add}");
    assert!(rows.iter().all(|r| r["label"] != "SWAP"), "no swap items, no SWAP row");
    // Commonsense: item 5 splits (SugarCrepe, ARO, Tie) and is dropped; 4 of 4 items: 0.125.
    let c = row("commonsense", "all");
    assert_eq!(
        (c["items"].as_i64(), c["items_tied"].as_i64(), c["n"].as_i64(), c["ties"].as_i64()),
        (Some(5), Some(1), Some(4), Some(5))
    );
    assert!(close(&c["sign_test_p"], 0.125), "{c}");
    let cli = text(&app.cli(&["report", &id.to_string()]).stdout);
    assert!(cli.contains("sign test over items") && cli.contains("NEGATE/ADD"), "{cli}");
    assert!(cli.contains("5 items, 0 tied, sign test n = 5, p = 0.0625"), "{cli}");
}

#[tokio::test]
async fn a_link_participant_answers_both_questions_of_an_item_together_with_checks_only_between_items() {
    use crate::crowd_kit::{arrive, create_link_study, start};
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let spec = "name = \"A/B by link\"\nkind = \"ab_tie\"\ndataset = \"demo-ab-pairs\"\nseed = 12\naccess = \"link\"\n\
                [link]\nbundle_size = 3\nconsent = \"ok\"\nattention_checks = 2\n";
    let (id, token) = create_link_study(&app, &researcher, spec).await;
    for pid in ["5f00000000000000000000f1", "5f00000000000000000000f2", "5f00000000000000000000f3"] {
        let client = arrive(&app, &token, id, pid).await;
        start(&app, &client, id).await;
        let mut seen = Vec::new();
        while let Some(task) = app.next_task(&client, id).await {
            let check = task.prompt.text.starts_with("Attention check");
            // Checks answered as they ask, so nobody is screened out on the way.
            let pick = match check {
                true => task.options.iter().find(|o| task.prompt.text.contains(&format!("select {} ", o.label))),
                false => task.options.first(),
            };
            let res = app.answer(&client, task.task_id, &pick.expect("an option to pick").id).await;
            assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
            seen.push((check, task));
        }
        let real: Vec<usize> = (0..seen.len()).filter(|&k| !seen[k].0).collect();
        assert_eq!((real.len() % 2, seen.len() - real.len()), (0, 2), "each item asked twice, two checks");
        assert!(real.len() >= 4, "{pid}: a bundle of at least two items");
        for pair in real.chunks(2) {
            let (first, second) = (&seen[pair[0]].1, &seen[pair[1]].1);
            assert_eq!(pair[1], pair[0] + 1, "{pid}: nothing between one item's two questions");
            assert_eq!(first.prompt.text, second.prompt.text, "{pid}: the same item twice in a row");
            assert!(first.instructions.contains("plausible") && second.instructions.contains("grammatical"));
            let texts = |t: &hardneg::api_types::TaskView| t.options.iter().map(|o| o.text.clone()).collect::<Vec<_>>();
            assert_eq!(texts(first), texts(second), "{pid}: the negatives keep their places");
        }
    }
}
