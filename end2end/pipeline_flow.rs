//! The BiVLC pipeline in a real browser on demo data whose truth is known:
//! two annotators in a pair with overlap answer Step 3 by keyboard, a
//! researcher settles their one disagreement and starts Step 4 from the
//! page, Step 4 is answered, and the funnel shows what the truth predicts.
use crate::annotate_flow::current_task;
use crate::browser::Browser;
use crate::helpers::{cli, text, Spec, TestApp};
use hardneg::demo::{generate, DemoInstance, DEFAULT_SEED};
use hardneg::store::images::sha256_hex;
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

/// What a task shows: prompt text and image, options as (letter, image src, text).
struct Screen {
    prompt: Option<String>,
    prompt_image: Option<String>,
    options: Vec<(String, Option<String>, Option<String>)>,
}

impl Screen {
    async fn read(b: &Browser) -> Screen {
        use fantoccini::Locator::Css;
        let prompt = match b.client.find(Css("section.survey blockquote.prompt")).await {
            Ok(el) => Some(el.text().await.unwrap()),
            Err(_) => None,
        };
        let prompt_image = match b.client.find(Css("section.survey img.prompt-image")).await {
            Ok(el) => el.attr("src").await.unwrap(),
            Err(_) => None,
        };
        let mut options = Vec::new();
        for el in b.client.find_all(Css("section.survey button.option")).await.unwrap() {
            let id = el.attr("data-option").await.unwrap().unwrap();
            let img = match el.find(Css("img")).await {
                Ok(i) => i.attr("src").await.unwrap(),
                Err(_) => None,
            };
            let text = match el.find(Css(".text")).await {
                Ok(t) => Some(t.text().await.unwrap()),
                Err(_) => None,
            };
            options.push((id, img, text));
        }
        Screen { prompt, prompt_image, options }
    }

    /// The (letter, src) of every option that shows an image.
    fn images(&self) -> Vec<(String, String)> {
        self.options.iter().filter_map(|(id, img, _)| Some((id.clone(), img.clone()?))).collect()
    }
}

/// Answers the open study's whole queue by keyboard; `key` decides from the screen.
async fn answer_all(b: &Browser, mut key: impl FnMut(&Screen) -> char) -> Vec<Screen> {
    let mut seen = Vec::new();
    let mut task = current_task(b).await;
    loop {
        let screen = Screen::read(b).await;
        b.press(key(&screen)).await;
        seen.push(screen);
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

impl Truth {
    fn instance(&self, s: &Screen) -> usize {
        let p = s.prompt.as_deref().expect("a caption on screen");
        *self.by_prompt.get(p).unwrap_or_else(|| panic!("unknown prompt {p:?}"))
    }
}

/// An option on screen: its letter, image source and text.
type ShownOption = (String, Option<String>, Option<String>);

fn letter_key(letter: &str) -> char {
    letter.to_ascii_lowercase().chars().next().unwrap()
}

/// Step 3 by the truth: the letter showing the first matching slot, or N.
fn step3_key(truth: &Truth, i: usize, images: &[(String, String)]) -> char {
    assert_eq!(images.len(), 4);
    match truth.step3_slot(i) {
        None => 'n',
        Some(slot) => letter_key(&images.iter().find(|(_, src)| truth.slot_of.get(src) == Some(&slot)).unwrap().0),
    }
}

/// `hardneg study create` from the shell, as a researcher would.
fn create_study(data_dir: &std::path::Path, spec: &Spec) {
    let path = spec.write(data_dir, "spec.toml");
    let out = cli(data_dir, &["study", "create", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

pub(crate) async fn open_study(b: &Browser, app: &TestApp, name: &str) {
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
    create_study(dir.path(), &Spec::new("E2E Step 3").seed(3).pairs(&[["annotator1", "annotator2"]], 5));

    let b = Browser::start().await;
    b.login(&app.base, "annotator1", &app.password("annotator1")).await;
    open_study(&b, &app, "E2E Step 3").await;
    let first: Vec<usize> = answer_all(&b, |s| step3_key(&truth, truth.instance(s), &s.images()))
        .await
        .iter()
        .map(|s| truth.instance(s))
        .collect();

    // annotator2 agrees with the truth except on one shared item.
    b.client.delete_all_cookies().await.unwrap();
    b.login(&app.base, "annotator2", &app.password("annotator2")).await;
    open_study(&b, &app, "E2E Step 3").await;
    let mut disagreed = None;
    let second = answer_all(&b, |s| {
        let i = truth.instance(s);
        let right = step3_key(&truth, i, &s.images());
        if disagreed.is_none() && first.contains(&i) {
            disagreed = Some(i);
            if right == 'n' {
                'a'
            } else {
                'n'
            }
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
    assert!(b.client.find(fantoccini::Locator::Css("p.empty")).await.is_err(), "a click alone settles nothing");
    b.wait_css("section.dispute button.confirm-settle").await.click().await.unwrap();
    b.wait_css("p.empty").await;

    // Start Step 4 from the page: the pair again, over Step 3's survivors.
    b.goto(&format!("{}/research", app.base)).await;
    // On this study's card: the demo's own Step 3 studies may offer it too.
    let step3 = app.studies(&app.login("researcher").await).await.into_iter().find(|s| s.name == "E2E Step 3");
    let card = format!(r#"section.study[data-study="{}"]"#, step3.expect("the Step 3 study").id);
    b.wait_css(&format!("{card} button.start-step4")).await.click().await.unwrap();
    b.wait_css(&format!("{card} span.started")).await;

    let survivors: Vec<usize> = (0..SIZE).filter(|&i| truth.step3_slot(i).is_some()).collect();
    let step4_name = "E2E Step 4";
    let mut step4_seen = 0;
    for who in ["annotator1", "annotator2"] {
        b.client.delete_all_cookies().await.unwrap();
        b.login(&app.base, who, &app.password(who)).await;
        open_study(&b, &app, step4_name).await;
        if b.client.find(fantoccini::Locator::Css("section.finished")).await.is_ok() {
            continue;
        }
        step4_seen += answer_all(&b, |s| {
            let (i, imgs) = (truth.instance(s), s.images());
            assert_eq!(
                s.prompt.as_deref(),
                Some(truth.demo[i].caption.as_str()),
                "Step 4 asks about the original caption"
            );
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
    b.screenshot("e2e-funnel.png").await;

    // The page's download link gives the curated rows: exactly the instances
    // the truth keeps, with the real image and the chosen generated image.
    let href = b
        .wait_css(r#"section.dataset[data-dataset="demo"] a.download[data-format="csv"]"#)
        .await
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    let cookies = b.client.get_all_cookies().await.unwrap();
    let session = cookies.iter().find(|c| c.name() == "hardneg_session").expect("the session cookie");
    let res = reqwest::Client::new()
        .get(format!("{}{href}", app.base))
        .header("cookie", format!("hardneg_session={}", session.value()))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let files = crate::helpers::untar(&res.bytes().await.unwrap());
    let data = files.get("demo-final/data.csv").expect("the rows file");
    let mut rows = csv::Reader::from_reader(data.as_slice());
    let headers = rows.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap_or_else(|| panic!("column {name}"));
    let (img, cap, neg_img) = (col("image"), col("caption"), col("negative_image"));
    let mut exported = Vec::new();
    for r in rows.records() {
        let r = r.unwrap();
        let i = truth.by_prompt[&r[cap].to_string()];
        assert!(truth.step4_keeps(i), "instance {i} should not be in the final export");
        let slot = truth.step3_slot(i).unwrap();
        assert_eq!(files[&format!("demo-final/{}", &r[img])], truth.demo[i].positive_png, "real image of {i}");
        assert_eq!(
            files[&format!("demo-final/{}", &r[neg_img])],
            truth.demo[i].candidates_png[slot],
            "chosen image of {i}"
        );
        exported.push(i);
    }
    assert_eq!(exported.len(), kept, "every kept instance is exported");
    assert!(files.contains_key("demo-final/README.md"), "with a dataset card");

    // The human baseline over the curated survivors, answered by keyboard
    // only: right everywhere except the negative caption's text-to-image
    // question on every other instance.
    assert!(kept >= 2, "the demo keeps enough instances for a baseline");
    let sample = kept.min(4);
    let baseline =
        Spec::new("E2E human baseline").kind("human_baseline").source(step4_name).annotators(&["annotator1"]);
    create_study(dir.path(), &baseline.seed(8).groups(sample, sample));
    b.client.delete_all_cookies().await.unwrap();
    b.login(&app.base, "annotator1", &app.password("annotator1")).await;
    open_study(&b, &app, "E2E human baseline").await;
    let mut order: Vec<usize> = Vec::new();
    let screens = answer_all(&b, |s| {
        assert_eq!(s.options.len(), 2, "a forced choice between two");
        let generated = |src: &str| truth.slot_of.contains_key(src);
        let pick = |want: &dyn Fn(&ShownOption) -> bool| {
            letter_key(&s.options.iter().find(|o| want(o)).expect("the wanted option").0)
        };
        if let Some(img) = &s.prompt_image {
            // Image to text: the caption that describes this image.
            assert!(order.len() < 2 * sample, "image-to-text questions come first");
            let i = truth
                .demo
                .iter()
                .position(|d| s.options.iter().any(|(_, _, t)| t.as_deref() == Some(d.caption.as_str())))
                .expect("known captions");
            if !order.contains(&i) {
                order.push(i);
            }
            let want = if generated(img) { &truth.demo[i].negative_caption } else { &truth.demo[i].caption };
            pick(&|o| o.2.as_deref() == Some(want.as_str()))
        } else {
            let i = truth.instance(s);
            let negative = s.prompt.as_deref() == Some(truth.demo[i].negative_caption.as_str());
            let rank = order.iter().position(|&x| x == i).expect("seen in part 1");
            let right_is_generated = negative;
            let answer_generated = if negative && rank % 2 == 0 { !right_is_generated } else { right_is_generated };
            pick(&|o| o.1.as_deref().is_some_and(|src| generated(src) == answer_generated))
        }
    })
    .await;
    assert_eq!(screens.len(), 4 * sample);
    let wrong = (0..sample).filter(|r| r % 2 == 0).count();
    let t2i = 100.0 * (sample - wrong) as f64 / sample as f64;

    b.client.delete_all_cookies().await.unwrap();
    b.login(&app.base, "researcher", &app.password("researcher")).await;
    b.goto(&format!("{}/research/compare?dataset=demo", app.base)).await;
    let human = |col: &str| format!(r#"table.scores tr[data-model^="Human: E2E human baseline"] td[data-col="{col}"]"#);
    assert_eq!(b.text(&human("I2T")).await, "100.00");
    assert_eq!(b.text(&human("T2I")).await, format!("{t2i:.2}"));
    assert_eq!(b.text(&human("Group")).await, format!("{t2i:.2}"));
    assert_eq!(b.text(&human("Tneg2I")).await, format!("{t2i:.2}"));
    assert_eq!(b.text(&human("Tpos2I")).await, "100.00");
    b.screenshot("e2e-compare.png").await;
    b.close().await;
    app.kill();
}
