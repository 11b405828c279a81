//! The `[link]` table's parsing: defaults, refusals by field, warnings.
use super::*;

const VALUES: &[&str] = &["0", "1", "2", "3", "none"];

fn link(toml_text: &str) -> LinkSpec {
    toml::from_str(toml_text).unwrap()
}

fn err(access: Option<&str>, l: Option<LinkSpec>) -> String {
    parse_access(access, l, VALUES).unwrap_err().to_string()
}

#[test]
fn defaults() {
    let s =
        parse_access(Some("link"), Some(link("bundle_size = 100\nconsent = \"I agree\"")), VALUES).unwrap().unwrap();
    assert_eq!(s.bundle_size, 100);
    assert_eq!(s.copies, 1);
    assert_eq!(s.paired_bundles, 0);
    assert_eq!(s.time_limit_minutes, 60);
    assert_eq!(s.completion_code, None);
    assert_eq!(s.completion_url, "https://app.prolific.com/submissions/complete?cc={code}");
    assert!(!s.allow_anonymous && s.practice.is_empty());
    assert_eq!(s.quality, QualitySettings::default());
    assert_eq!((s.quality.hourly_wage, s.quality.platform_fee), (12.0, 0.0));
    assert_eq!(parse_access(None, None, VALUES).unwrap(), None);
    assert_eq!(parse_access(Some("accounts"), None, VALUES).unwrap(), None);
}

#[test]
fn a_comprehension_check_without_a_full_code_warns() {
    let base = "bundle_size = 5\nconsent = \"ok\"\n";
    let check = "comprehension = [{ question = \"Q?\", options = [\"a\", \"b\"], answer = \"b\" }]\n";
    let parse = |extra: &str| {
        parse_access(Some("link"), Some(link(&format!("{base}{extra}"))), VALUES).unwrap().unwrap().warnings()
    };
    let warned = parse(check);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].starts_with("link.full_code is not set"), "{}", warned[0]);
    assert!(parse(&format!("{check}full_code = \"FULL0001\"\n")).is_empty());
    assert!(parse("").is_empty(), "no check: nobody does the check and then finds the study full");
}

#[test]
fn everything_given() {
    let s = parse_access(
        Some("link"),
        Some(link(
            r#"bundle_size = 25
copies = 2
paired_bundles = 5
time_limit_minutes = 30
consent = "ok"
completion_code = "C0DE1234"
full_code = "FULL0001"
completion_url = "http://127.0.0.1:9/done?cc={code}"
allow_anonymous = true
practice = [{ key = "k1", answer = "none" }]
min_seconds_per_item = 2.5
straight_line_run = 6
hourly_wage = 9.5
platform_fee = 0.333"#,
        )),
        VALUES,
    )
    .unwrap()
    .unwrap();
    assert_eq!((s.copies, s.paired_bundles, s.time_limit_minutes), (2, 5, 30));
    assert_eq!(s.completion_code.as_deref(), Some("C0DE1234"));
    assert_eq!(s.practice, [PracticeSpec { key: "k1".into(), answer: "none".into() }]);
    let q = QualitySettings { min_seconds_per_item: 2.5, straight_line_run: 6, hourly_wage: 9.5, platform_fee: 0.333 };
    assert_eq!(s.quality, q);
}

#[test]
fn errors_name_the_field() {
    let ok = "consent = \"ok\"\nbundle_size = 5\n";
    let cases = [
        (Some("link"), None, "field `link`"),
        (None, Some(link(ok)), "field `link`: belongs"),
        (Some("public"), None, "field `access`: unknown access \"public\""),
        (Some("link"), Some(link("consent = \"ok\"")), "field `link.bundle_size`: missing"),
        (Some("link"), Some(link("consent = \"ok\"\nbundle_size = 0")), "field `link.bundle_size`"),
        (Some("link"), Some(link("bundle_size = 5")), "field `link.consent`: missing"),
        (Some("link"), Some(link("bundle_size = 5\nconsent = \"  \"")), "field `link.consent`"),
        (Some("link"), Some(link(&format!("{ok}copies = 0"))), "field `link.copies`"),
        (Some("link"), Some(link(&format!("{ok}copies = 1000000000"))), "field `link.copies`: must be from 1 to 100"),
        (
            Some("link"),
            Some(link("bundle_size = 5\nconsent = \"ok\\u0000\"")),
            "field `link.consent`: character U+0000",
        ),
        (Some("link"), Some(link(&format!("{ok}time_limit_minutes = 0"))), "field `link.time_limit_minutes`"),
        (Some("link"), Some(link(&format!("{ok}completion_code = \"a b\""))), "field `link.completion_code`"),
        (
            Some("link"),
            Some(link(&format!("{ok}completion_code = \"AB\"\nfull_code = \"AB\""))),
            "field `link.full_code`",
        ),
        (Some("link"), Some(link(&format!("{ok}completion_url = \"javascript:x\""))), "field `link.completion_url`"),
        (
            Some("link"),
            Some(link(&format!("{ok}practice = [{{ key = \"k\", answer = \"E\" }}]"))),
            "field `link.practice`: item 1 (k): answer \"E\"",
        ),
    ];
    let quality = [
        ("min_seconds_per_item = -1", "field `link.min_seconds_per_item`: must be 0 or more, got -1"),
        ("straight_line_run = 1", "field `link.straight_line_run`: must be at least 2, got 1"),
        ("hourly_wage = 0", "field `link.hourly_wage`: must be above 0"),
        ("hourly_wage = nan", "field `link.hourly_wage`"),
        ("platform_fee = 1.5", "field `link.platform_fee`: must be a fraction from 0 to 1"),
        ("platform_fee = -0.1", "field `link.platform_fee`"),
    ];
    for (line, want) in quality {
        let got = err(Some("link"), Some(link(&format!("{ok}{line}"))));
        assert!(got.starts_with(want), "{got:?} should start with {want:?}");
    }
    for (access, l, want) in cases {
        let got = err(access, l);
        assert!(got.starts_with(want), "{got:?} should start with {want:?}");
    }
    assert!(toml::from_str::<LinkSpec>("bundle_size = 1\nbundle = 2").is_err(), "unknown fields refused");
}

#[test]
fn settings_stored_before_the_quality_fields_read_with_defaults() {
    let old = r#"{"bundle_size":5,"copies":1,"paired_bundles":0,"time_limit_minutes":60,"consent":"ok",
        "completion_code":null,"completion_url":"http://x/{code}","full_code":null,"allow_anonymous":false,
        "practice":[]}"#;
    let s: LinkSettings = serde_json::from_str(old).unwrap();
    assert_eq!(s.quality, QualitySettings::default());
    let round: LinkSettings = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(round, s);
}
