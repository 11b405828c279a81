//! The command line: study specs and accounts, against a running server's data dir.
mod common;
use common::TestApp;
use serde_json::Value;
use std::process::Command;

fn hardneg(app: &TestApp, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_hardneg")).args(args).arg("--data-dir").arg(&app.data_dir).output().unwrap()
}

async fn study_names(app: &TestApp, user: &str) -> Vec<String> {
    let client = app.login(user).await;
    let studies: Vec<Value> = client.get(app.url("/api/v1/studies")).send().await.unwrap().json().await.unwrap();
    studies.iter().map(|s| s["name"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn a_study_spec_with_named_annotators_admits_only_them() {
    let app = TestApp::spawn();
    let spec = app.data_dir.join("pilot.toml");
    std::fs::write(
        &spec,
        "name = \"Pilot\"\nkind = \"four_image\"\ndataset = \"demo\"\nannotators = [\"annotator2\"]\nseed = 11\n",
    )
    .unwrap();
    let out = hardneg(&app, &["study", "create", spec.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Pilot (seed 11)"));

    assert!(study_names(&app, "annotator2").await.contains(&"Pilot".to_string()));
    assert!(!study_names(&app, "annotator1").await.contains(&"Pilot".to_string()));
    assert!(study_names(&app, "researcher").await.contains(&"Pilot".to_string()));

    // The same name twice is refused, naming the field.
    let again = hardneg(&app, &["study", "create", spec.to_str().unwrap()]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("field `name`"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

#[tokio::test]
async fn bad_specs_and_accounts_are_refused_with_a_reason() {
    let app = TestApp::spawn();
    let cases = [
        ("kind = \"five_image\"", "field `kind`"),
        ("kind = \"four_image\"\ndataset = \"nope\"", "no dataset named \"nope\""),
        ("kind = \"four_image\"\nannotators_typo = 1", "annotators_typo"),
    ];
    for (i, (body, expected)) in cases.iter().enumerate() {
        let spec = app.data_dir.join(format!("bad{i}.toml"));
        let text = if body.contains("dataset") || body.contains("typo") {
            format!(
                "name = \"Bad {i}\"\nannotators = \"all\"\n{body}\n{}",
                if body.contains("dataset") { "" } else { "dataset = \"demo\"" }
            )
        } else {
            format!("name = \"Bad {i}\"\nannotators = \"all\"\ndataset = \"demo\"\n{body}\n")
        };
        std::fs::write(&spec, text).unwrap();
        let out = hardneg(&app, &["study", "create", spec.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(expected), "case {i}: {err}");
        assert!(err.contains(&format!("bad{i}.toml")), "the error names the file: {err}");
    }
    let named_researcher = app.data_dir.join("r.toml");
    std::fs::write(
        &named_researcher,
        "name = \"R\"\nkind = \"four_image\"\ndataset = \"demo\"\nannotators = [\"researcher\"]\n",
    )
    .unwrap();
    let out = hardneg(&app, &["study", "create", named_researcher.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a researcher, not an annotator"));

    let bad_role = hardneg(&app, &["user", "add", "x", "--role", "root", "--password-stdin"]);
    assert!(String::from_utf8_lossy(&bad_role.stderr).contains("unknown role"));
}
