//! The BiVLC pipeline in a real browser on demo data whose truth is known:
//! two annotators in a pair with overlap answer Step 3 by keyboard, a
//! researcher settles their one disagreement and starts Step 4 from the
//! page, Step 4 is answered, and the funnel shows what the truth predicts.
use crate::annotate_flow::current_task;
use crate::browser::Browser;
use crate::common::TestApp;
use hardneg::demo::{generate, DemoInstance, DEFAULT_SEED};
use hardneg::server::images::sha256_hex;
use std::collections::HashMap;

const SIZE: usize = 21;

/// The demo's truth, looked up by what the browser shows.
struct Truth {
    by_prompt: HashMap<String, usize>,
    slot_of: HashMap<String, usize>,
    demo: Vec<DemoInstance>,
}

impl Truth {
    fn new() -> Truth {
        let demo = generate(SIZE, DEFAULT_SEED);
        let mut by_prompt = HashMap::new();
        let mut slot_of = HashMap::new();
        for (i, d) in demo.iter().enumerate() {
            assert!(by_prompt.insert(d.negative_caption.clone(), i).is_none(), "negative captions are unique");
            assert!(by_prompt.insert(d.caption.clone(), i).is_none(), "captions are unique");
            for (slot, png) in d.candidates_png.iter().enumerate() {
                slot_of.insert(format!("/img/{}", sha256_hex(png)), slot);
            }
        }
        Truth { by_prompt, slot_of, demo }
    }

    /// Step 3: the first candidate that shows the negative caption, else None.
    fn step3_slot(&self, i: usize) -> Option<usize> {
        self.demo[i].matches_negative.iter().position(|&m| m)
    }

    /// Step 4 keeps the instance only when the chosen image does not also show the original caption.
    fn step4_keeps(&self, i: usize) -> bool {
        self.step3_slot(i).is_some_and(|s| !self.demo[i].matches_positive[s])
    }
}

/// Option images on screen: (shown letter, src).
async fn shown_images(b: &Browser) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for el in b.client.find_all(fantoccini::Locator::Css("section.survey button.option.image")).await.unwrap() {
        let id = el.attr("data-option").await.unwrap().unwrap();
        let img = el.find(fantoccini::Locator::Css("img")).await.unwrap();
        out.push((id, img.attr("src").await.unwrap().unwrap()));
    }
    out
}

/// Answers the open study's whole queue by keyboard; `key` picks from the truth.
async fn answer_all(b: &Browser, truth: &Truth, mut key: impl FnMut(usize, &[(String, String)]) -> char) -> Vec<usize> {
    let mut seen = Vec::new();
    let mut task = current_task(b).await;
    loop {
        let prompt = b.text("section.survey blockquote.prompt").await;
        let i = *truth.by_prompt.get(&prompt).unwrap_or_else(|| panic!("unknown prompt {prompt:?}"));
        let images = shown_images(b).await;
        seen.push(i);
        b.press(key(i, &images)).await;
        // Either the next task or the end of the queue, without a page load.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            if b.client.find(fantoccini::Locator::Css("section.finished")).await.is_ok() {
                return seen;
            }
            if let Ok(el) = b.client.find(fantoccini::Locator::Css("section.survey")).await {
                if let Some(now) = el.attr("data-task").await.ok().flatten().filter(|t| *t != task) {
                    task = now;
                    break;
                }
            }
            assert!(std::time::Instant::now() < deadline, "no next task after answering");
            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        }
    }
}

fn letter_key(letter: &str) -> char {
    letter.to_ascii_lowercase().chars().next().unwrap()
}

/// Step 3 by the truth: the letter showing the first matching slot, or N.
fn step3_key(truth: &Truth, i: usize, images: &[(String, String)]) -> char {
    match truth.step3_slot(i) {
        None => 'n',
        Some(slot) => letter_key(&images.iter().find(|(_, src)| truth.slot_of.get(src) == Some(&slot)).unwrap().0),
    }
}

async fn open_study(b: &Browser, app: &TestApp, name: &str) {
    b.goto(&format!("{}/annotate", app.base)).await;
    let links = b.client.find_all(fantoccini::Locator::Css("ul.studies a")).await.unwrap();
    for l in links {
        if l.text().await.unwrap() == name {
            l.click().await.unwrap();
            b.wait_hydrated().await;
            return;
        }
    }
    panic!("study {name:?} not listed");
}

#[tokio::test]
async fn demo_runs_through_step3_with_overlap_adjudication_and_step4() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = TestApp::spawn_on(dir.path(), &["--demo-size", &SIZE.to_string()]);
    let truth = Truth::new();
    let spec = dir.path().join("step3.toml");
    std::fs::write(
        &spec,
        "name = \"E2E Step 3\"\nkind = \"four_image\"\ndataset = \"demo\"\nseed = 3\n\
         [assignment]\nrule = \"pairs\"\npairs = [[\"annotator1\", \"annotator2\"]]\noverlap = 5\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hardneg"))
        .args(["study", "create"])
        .arg(&spec)
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let b = Browser::start().await;
    b.login(&app.base, "annotator1", &app.password("annotator1")).await;
    open_study(&b, &app, "E2E Step 3").await;
    let first = answer_all(&b, &truth, |i, imgs| step3_key(&truth, i, imgs)).await;

    // annotator2 agrees with the truth except on one shared item.
    b.client.delete_all_cookies().await.unwrap();
    b.login(&app.base, "annotator2", &app.password("annotator2")).await;
    open_study(&b, &app, "E2E Step 3").await;
    let mut disagreed = None;
    let second = answer_all(&b, &truth, |i, imgs| {
        let right = step3_key(&truth, i, imgs);
        if disagreed.is_none() && first.contains(&i) {
            disagreed = Some(i);
            if right == 'n' { 'a' } else { 'n' }
        } else {
            right
        }
    })
    .await;
    assert_eq!(first.len() + second.len(), SIZE + 5, "each item once, the five shared ones twice");
    let disputed = disagreed.expect("the pair shares items");

    // The researcher settles the disagreement on the adjudication page.
    b.client.delete_all_cookies().await.unwrap();
    b.login(&app.base, "researcher", &app.password("researcher")).await;
    b.wait_css("a.adjudicate").await.click().await.unwrap();
    b.wait_hydrated().await;
    let prompt = b.text("section.dispute blockquote.prompt").await;
    assert_eq!(truth.by_prompt[&prompt], disputed);
    let value = truth.step3_slot(disputed).map(|s| s.to_string()).unwrap_or_else(|| "none".into());
    b.wait_css(&format!(r#"section.dispute button[data-value="{value}"]"#)).await.click().await.unwrap();
    b.wait_css("p.empty").await;

    // Start Step 4 from the page: the pair again, over Step 3's survivors.
    b.goto(&format!("{}/research", app.base)).await;
    b.wait_css("button.start-step4").await.click().await.unwrap();
    b.wait_css("span.started").await;

    let survivors: Vec<usize> = (0..SIZE).filter(|&i| truth.step3_slot(i).is_some()).collect();
    let step4_name = "E2E Step 3 - Step 4";
    let mut step4_seen = 0;
    for who in ["annotator1", "annotator2"] {
        b.client.delete_all_cookies().await.unwrap();
        b.login(&app.base, who, &app.password(who)).await;
        open_study(&b, &app, step4_name).await;
        if b.client.find(fantoccini::Locator::Css("section.finished")).await.is_ok() {
            continue;
        }
        step4_seen += answer_all(&b, &truth, |i, imgs| {
            assert_eq!(imgs.len(), 2, "Step 4 shows the real and the generated image");
            let generated = imgs.iter().find(|(_, src)| truth.slot_of.contains_key(src)).expect("one generated image");
            if truth.step4_keeps(i) {
                letter_key(&imgs.iter().find(|im| im != &generated).unwrap().0)
            } else {
                '3' // Both: the generated image shows the original caption too
            }
        })
        .await
        .len();
    }
    assert!(step4_seen >= survivors.len());

    // The funnel on the research page follows the truth.
    b.client.delete_all_cookies().await.unwrap();
    b.login(&app.base, "researcher", &app.password("researcher")).await;
    let cell = |c: &str| format!(r#"section.dataset[data-dataset="demo"] tr.overall td.{c}"#);
    let kept = (0..SIZE).filter(|&i| truth.step4_keeps(i)).count();
    assert_eq!(b.text(&cell("candidates")).await, SIZE.to_string());
    assert_eq!(b.text(&cell("s3-kept")).await, survivors.len().to_string());
    assert_eq!(b.text(&cell("s3-discarded")).await, (SIZE - survivors.len()).to_string());
    assert_eq!(b.text(&cell("s4-kept")).await, kept.to_string());
    assert_eq!(b.text(&cell("s4-both")).await, (survivors.len() - kept).to_string());
    b.screenshot("target/e2e-funnel.png").await;
    b.close().await;
    app.kill();
}
