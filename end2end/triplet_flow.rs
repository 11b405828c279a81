//! End to end in real headless Chromium at phone width: an expert checks the
//! demo triplets with the keyboard alone (v / n the verdict, digits the
//! tag, e edits P2, Enter submits), including a corrected P2; a second
//! expert disagrees over the API, and the disputes show the correction typed
//! in the browser. The researcher then settles both disputes on the
//! adjudication page (one taking the expert's correction, one with a P2
//! written anew), and the report and the export carry the decisions.
use crate::annotate_flow::{current_task, wait_next_task};
use crate::browser::Browser;
use crate::helpers::TestApp;
use crate::pipeline_flow::open_study;
use hardneg::kinds::triplet_check::read_prompt;
use serde_json::Value;

const STUDY: &str = "Demo: SugarCrepe++ triplet check";
const ENTER: char = '\u{E007}';

#[tokio::test]
async fn an_expert_checks_triplets_and_corrects_p2_by_keyboard() {
    let app = TestApp::spawn();
    let b = Browser::start().await;
    b.client.set_window_size(390, 844).await.unwrap();
    b.login(&app.base, "annotator1", &app.password("annotator1")).await;
    open_study(&b, &app, STUDY).await;
    b.wait_css("section.triplet-check img.prompt-image").await;
    let v =
        b.client.execute("return [window.innerWidth, document.documentElement.scrollWidth];", vec![]).await.unwrap();
    assert!(v[1].as_i64() <= v[0].as_i64(), "no sideways scroll at phone width: {v}");

    // 1: valid as it is.
    let mut task = current_task(&b).await;
    b.press('v').await;
    b.press(ENTER).await;
    task = wait_next_task(&b, &task).await;
    // 2: not valid, hallucination.
    b.press('n').await;
    b.press('2').await;
    let checked = b.client.execute("return document.querySelector('input[name=tag]:checked').value;", vec![]).await;
    assert_eq!(checked.unwrap(), "hallucination", "the digit checks the tag");
    b.press(ENTER).await;
    task = wait_next_task(&b, &task).await;
    // 3: P2 corrected (spatial mismatch): e fills the box with P2 and focuses it; Enter there submits.
    let p2 = b.text("dd.p2").await;
    b.press('v').await;
    b.press('3').await;
    b.press('e').await;
    let focused = b.client.execute("return document.activeElement.name;", vec![]).await.unwrap();
    assert_eq!(focused, "text", "e puts the focus in the text box");
    for c in " today".chars() {
        b.press(c).await;
    }
    b.screenshot("e2e-triplet-check.png").await;
    b.press(ENTER).await;
    wait_next_task(&b, &task).await;
    assert_eq!(b.text(".progress span").await, "3 / 10");

    // A second expert marks every triplet valid: items 2 and 3 disagree.
    let researcher = app.login("researcher").await;
    let study = app.studies(&researcher).await.into_iter().find(|s| s.name == STUDY).unwrap().id.get();
    app.work_through("annotator2", study, |_| "valid".to_string()).await;
    let disputes: Vec<Value> = app.get(&researcher, &format!("/api/v1/studies/{study}/disputes")).await;
    assert_eq!(disputes.len(), 2, "{disputes:#?}");
    let corrected = disputes
        .iter()
        .find(|d| read_prompt(d["prompt"].as_str().unwrap()).is_some_and(|(_, shown, _)| shown == p2))
        .expect("the corrected triplet is disputed");
    assert_eq!(corrected["texts"][0]["text"].as_str().unwrap(), format!("{p2} today"));
    assert_eq!(corrected["texts"][0]["value"], "valid:spatial_mismatch");
    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/report")).await;
    let tag = |t: &str| r["tags"].as_array().unwrap().iter().find(|c| c["tag"] == t).unwrap()["answers"].clone();
    assert_eq!((tag("hallucination"), tag("spatial_mismatch")), (1.into(), 1.into()));

    // The researcher settles both in the browser.
    let other = disputes.iter().find(|d| d["instance_id"] != corrected["instance_id"]).unwrap();
    let p1 = |d: &Value| read_prompt(d["prompt"].as_str().unwrap()).unwrap().0.to_string();
    let (fixed, written) = (corrected["instance_id"].as_i64().unwrap(), other["instance_id"].as_i64().unwrap());
    b.client.delete_all_cookies().await.unwrap();
    b.login(&app.base, "researcher", &app.password("researcher")).await;
    b.goto(&format!("{}/research/studies/{study}/adjudicate", app.base)).await;
    let card = |id: i64, css: &str| format!(r#"section.dispute[data-instance="{id}"] {css}"#);
    // The expert's correction, taken as it is, with the expert's tag.
    b.wait_css(&card(fixed, "button.use-text")).await.click().await.unwrap();
    let typed = b.wait_css(&card(fixed, "input.final-text")).await.prop("value").await.unwrap();
    assert_eq!(typed.as_deref(), Some(format!("{p2} today").as_str()), "the button fills the final P2");
    b.wait_css(&card(fixed, r#"button[data-value="valid:spatial_mismatch"]"#)).await.click().await.unwrap();
    b.wait_css(&card(fixed, "button.confirm-settle")).await.click().await.unwrap();
    b.wait_css(&format!(r#"section.settled[data-instance="{fixed}"]"#)).await;
    // The other: valid after all, once P2 is rewritten by the researcher.
    const REWRITTEN: &str = "A P2 the researcher wrote.";
    b.wait_css(&card(written, "input.final-text")).await.send_keys(REWRITTEN).await.unwrap();
    b.wait_css(&card(written, r#"button[data-value="valid:hallucination"]"#)).await.click().await.unwrap();
    b.wait_css(&card(written, "button.confirm-settle")).await.click().await.unwrap();
    b.wait_css("p.empty").await;
    let history = b.text(&format!(r#"section.settled[data-instance="{written}"] li[data-action]"#)).await;
    assert!(history.ends_with("by researcher"), "{history}");
    b.screenshot("e2e-triplet-adjudication.png").await;
    b.close().await;

    let r: Value = app.get(&researcher, &format!("/api/v1/studies/{study}/report")).await;
    let all = r["rows"].as_array().unwrap().last().unwrap();
    assert_eq!(all["corrected"], 2, "both settled with a final P2: {all}");
    let settled = |t: &str| r["tags"].as_array().unwrap().iter().find(|c| c["tag"] == t).unwrap()["settled"].clone();
    assert_eq!((settled("hallucination"), settled("spatial_mismatch")), (1.into(), 1.into()));
    let out = app.data_dir.join("export-triplets");
    let args = ["export", "demo-triplets", "--stage", "candidates", "--format", "csv", "--out", out.to_str().unwrap()];
    assert!(app.cli(&args).status.success());
    let mut reader = csv::Reader::from_path(out.join(format!("study-{study}-triplets.csv"))).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let row = |d: &Value| rows.iter().find(|r| r[col("caption")] == p1(d)).expect("the triplet is exported").clone();
    for (d, value, p2_final) in
        [(corrected, "valid:spatial_mismatch", format!("{p2} today")), (other, "valid:hallucination", REWRITTEN.into())]
    {
        let r = row(d);
        assert_eq!(
            (&r[col("final_value")], &r[col("final_p2")], &r[col("p2_corrected")]),
            (value, p2_final.as_str(), "true")
        );
        assert_eq!(&r[col("settled_by")], "adjudication by researcher");
    }
}
