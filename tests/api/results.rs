//! Imported model results reproduce the BiVLC paper's tables, through the
//! CLI and the API alike; bad files are refused whole.
use crate::helpers::{fixture, text, TestApp};
use hardneg::api_types::{CompareReport, Failure};
use hardneg::domain::category::NegType;
use hardneg::domain::metrics::Scores;
use std::path::PathBuf;

fn shared(file: &str) -> PathBuf {
    fixture(&format!("bivlc/{file}"))
}

/// A score by its JSON name.
fn score(s: &Scores, key: &str) -> f64 {
    match key {
        "i2t" => s.i2t,
        "t2i" => s.t2i,
        "group" => s.group,
        "ipos2t" => s.ipos2t,
        "ineg2t" => s.ineg2t,
        "tpos2i" => s.tpos2i,
        "tneg2i" => s.tneg2i,
        other => panic!("no score {other}"),
    }
}

const MODELS: [(&str, &str); 4] = [
    ("CLIP", "results_ViT-B-32.csv"),
    ("CLIP_COCO", "results_CLIP_COCO.csv"),
    ("CLIP_TROHN-Text", "results_CLIP_TROHN-Text.csv"),
    ("CLIP_TROHN-Img", "results_CLIP_TROHN-Img.csv"),
];

/// Column means straight from the file, as the paper computed them.
fn column_means(file: &str, only_type: Option<&str>) -> Vec<(String, f64)> {
    let mut r = csv::Reader::from_path(shared(file)).unwrap();
    let headers = r.headers().unwrap().clone();
    let cols = [
        "text_score",
        "image_score",
        "group_score",
        "text_score_i0",
        "text_score_i1",
        "image_score_c0",
        "image_score_c1",
    ];
    let idx: Vec<usize> = cols.iter().map(|c| headers.iter().position(|h| h == *c).unwrap()).collect();
    let t = headers.iter().position(|h| h == "type").unwrap();
    let (mut sums, mut n) = (vec![0usize; cols.len()], 0usize);
    for rec in r.records() {
        let rec = rec.unwrap();
        if only_type.is_some_and(|ty| rec[t] != *ty) {
            continue;
        }
        n += 1;
        for (k, &i) in idx.iter().enumerate() {
            sums[k] += (&rec[i] == "True") as usize;
        }
    }
    let keys = ["i2t", "t2i", "group", "ipos2t", "ineg2t", "tpos2i", "tneg2i"];
    keys.iter().zip(sums).map(|(k, s)| (k.to_string(), (s as f64 / n as f64 * 10000.0).round() / 100.0)).collect()
}

#[tokio::test]
async fn imported_bivlc_results_give_the_papers_tables() {
    let app = TestApp::spawn();
    for (model, file) in MODELS {
        let out = app.cli(&["results", "import", "--model", model, shared(file).to_str().unwrap()]);
        assert!(out.status.success(), "{model}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("imported 2933 results"));
    }
    let out = app.cli(&["compare", "--dataset", "bivlc", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cli: CompareReport = serde_json::from_slice(&out.stdout).unwrap();
    let researcher = app.login("researcher").await;
    let api: CompareReport = app.get(&researcher, "/api/v1/compare?dataset=bivlc").await;
    assert_eq!(cli, api, "CLI and API disagree");

    // Table 2, CLIP ViT-B/32, and Table 4's SWAP group score.
    let clip = &api.models[0];
    assert_eq!(clip.name, "CLIP");
    assert_eq!(clip.n, 2933);
    let overall = &clip.report.overall;
    assert_eq!((overall.i2t, overall.t2i, overall.group), (75.83, 52.40, 49.06));
    assert_eq!(clip.report.by_type[&NegType::Swap].group, 13.65);
    // Every model, overall and per type, matches the means of the released columns.
    for (i, (model, file)) in MODELS.iter().enumerate() {
        let m = &api.models[i];
        assert_eq!(m.name, *model);
        for (key, want) in column_means(file, None) {
            assert_eq!(score(&m.report.overall, &key), want, "{model} overall {key}");
        }
        for ty in NegType::ALL {
            for (key, want) in column_means(file, Some(ty.as_str())) {
                assert_eq!(score(&m.report.by_type[&ty], &key), want, "{model} {ty:?} {key}");
            }
        }
        assert_eq!(m.report.by_subtype.len(), 7);
    }
    assert_eq!(api.random.group, 16.67);
    assert_eq!(api.random.ipos2t, 50.0);
    assert!(api.humans.is_empty(), "no baseline study, no human row");

    // The comparison page (server-rendered) shows the same figures.
    let page = researcher.get(app.url("/research/compare?dataset=bivlc")).send().await.unwrap().text().await.unwrap();
    let clip_row = page.split("data-model=\"CLIP\"").nth(1).expect("a CLIP row");
    for figure in ["75.83", "52.40", "49.06"] {
        assert!(clip_row.split("</tr>").next().unwrap().contains(figure), "{figure} missing from the CLIP row");
    }
    assert!(page.contains("data-model=\"Random\""));
    assert!(page.contains("<svg"), "the I2T/T2I chart is drawn");
    assert!(page.contains("class=\"data by-subtype\""));

    // The drill-down lists SWAP instances CLIP fails on the group score,
    // consistent with the SWAP group figure (13.65 % of them succeed).
    let fails: Vec<Failure> =
        app.get(&researcher, "/api/v1/compare/failures?dataset=bivlc&model=CLIP&score=group&type=swap").await;
    assert_eq!(fails.len(), 200, "capped list");
    for f in &fails {
        assert!(f.category.starts_with("swap/"));
        assert!(!(f.ipos2t && f.ineg2t && f.tpos2i && f.tneg2i), "a listed instance really fails: {f:?}");
    }
    let swap = &clip.report.by_type[&NegType::Swap];
    let swap_fails = (swap.n as f64 * (1.0 - swap.group / 100.0)).round();
    assert!(swap_fails > 200.0, "{swap_fails}");
    let bad =
        researcher.get(app.url("/api/v1/compare/failures?dataset=bivlc&model=CLIP&score=odd")).send().await.unwrap();
    assert_eq!(bad.status(), 422);
    let page = app.get_text(&researcher, "/research/compare?dataset=bivlc&model=CLIP&fail=i2t").await;
    assert!(page.contains("class=\"failure\""), "the drill-down renders on the page");

    // Importing again replaces the run instead of adding one.
    let again = app.cli(&["results", "import", "--model", "CLIP", shared("results_ViT-B-32.csv").to_str().unwrap()]);
    assert!(text(&again.stdout).contains("replacing"));
    let api: CompareReport = app.get(&researcher, "/api/v1/compare?dataset=bivlc").await;
    assert_eq!(api.models.len(), 4);
    let annotator = app.login("annotator1").await;
    assert_eq!(annotator.get(app.url("/api/v1/compare?dataset=bivlc")).send().await.unwrap().status(), 403);
}

/// Field `i` of a fixture line (every field quoted, none holding `","`).
fn field(line: &str, i: usize) -> String {
    line.trim_matches('"').split("\",\"").nth(i).unwrap().to_string()
}

fn set_field(line: &str, i: usize, f: impl Fn(&str) -> String) -> String {
    let mut v: Vec<String> = line.trim_matches('"').split("\",\"").map(str::to_string).collect();
    v[i] = f(&v[i]);
    format!("\"{}\"", v.join("\",\""))
}

#[tokio::test]
async fn corrupted_results_are_refused_whole_naming_the_line() {
    let app = TestApp::spawn();
    let original = std::fs::read_to_string(shared("results_ViT-B-32.csv")).unwrap();
    let lines: Vec<&str> = original.lines().collect();
    let corrupt = |f: &dyn Fn(&mut Vec<String>)| {
        let mut v: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
        f(&mut v);
        v.join("\n")
    };
    let cases: Vec<(&str, String, &str)> = vec![
        ("bad-bool", corrupt(&|v| v[4] = v[4].replacen("\"True\"", "\"Maybe\"", 1)), ":5: field `text_score_i1`"),
        ("truncated", corrupt(&|v| v[9] = v[9][..v[9].len() / 2].to_string()), ":10:"),
        ("bad-subtype", corrupt(&|v| v[2] = v[2].replacen("\"obj\"", "\"thing\"", 1)), ":3: field `subtype`"),
        // A spreadsheet's CRLF lines are counted as an editor counts them (the csv crate's count is one short).
        (
            "crlf",
            corrupt(&|v| v[4] = v[4].replacen("\"True\"", "\"Maybe\"", 1)).replace('\n', "\r\n"),
            ":5: field `text_score_i1`",
        ),
        // A new dataset's texts follow the candidate import's rules.
        ("nul-caption", corrupt(&|v| v[3] = set_field(&v[3], 1, |c| format!("{c}\u{0}"))), ":4: field `caption`"),
        (
            "same-negative",
            corrupt(&|v| v[6] = set_field(&v[6], 2, |_| field(&v[6], 1).replace(' ', "  "))),
            ":7: field `negative_caption`: the same text as caption",
        ),
        (
            "no-column",
            corrupt(&|v| v[0] = v[0].replace("\"negative_caption\"", "\"neg\"")),
            ":1: missing column(s): negative_caption",
        ),
    ];
    for (name, body, expected) in cases {
        let path = app.data_dir.join(format!("{name}.csv"));
        std::fs::write(&path, body).unwrap();
        let out = app.cli(&["results", "import", "--model", "CLIP", path.to_str().unwrap()]);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{name} was accepted");
        assert!(err.contains(&format!("{name}.csv{expected}")), "{name}: {err}");
    }
    // Rows that match no instance of an existing dataset are refused too.
    let out = app.cli(&[
        "results",
        "import",
        "--model",
        "CLIP",
        "--dataset",
        "demo",
        shared("results_ViT-B-32.csv").to_str().unwrap(),
    ]);
    assert!(text(&out.stderr).contains(":2: no instance of dataset \"demo\""));
    // A repeated row is named as one, with the line it repeats.
    let few = app.data_dir.join("few.csv");
    std::fs::write(&few, lines[..4].join("\n")).unwrap();
    assert!(app
        .cli(&["results", "import", "--model", "M", "--dataset", "few", few.to_str().unwrap()])
        .status
        .success());
    let again = app.data_dir.join("again.csv");
    std::fs::write(&again, [&lines[..4], &lines[2..3]].concat().join("\n")).unwrap();
    let out = app.cli(&["results", "import", "--model", "M", "--dataset", "few", again.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert!(err.contains("again.csv:5: the same caption, negative_caption, type and subtype as line 3"), "{err}");
    // Nothing was written: no dataset, no run.
    let out = app.cli(&["compare", "--dataset", "bivlc", "--json"]);
    assert!(text(&out.stderr).contains("no dataset named \"bivlc\""));
    let demo: CompareReport =
        serde_json::from_slice(&app.cli(&["compare", "--dataset", "demo", "--json"]).stdout).unwrap();
    let names: Vec<&str> = demo.models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["demo: scene reader", "demo: bag of words"], "only the demo's own models, nothing imported");
}
