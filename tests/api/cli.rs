//! The command line: study specs and accounts, against a running server's data dir.
use crate::helpers::{text, Spec, TestApp};

async fn study_names(app: &TestApp, user: &str) -> Vec<String> {
    app.studies(&app.login(user).await).await.into_iter().map(|s| s.name).collect()
}

#[tokio::test]
async fn a_study_spec_with_named_annotators_admits_only_them() {
    let app = TestApp::spawn();
    let spec = Spec::new("Pilot").annotators(&["annotator2"]).seed(11).write(&app.data_dir, "pilot.toml");
    let out = app.cli(&["study", "create", spec.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Pilot (seed 11)"));

    assert!(study_names(&app, "annotator2").await.contains(&"Pilot".to_string()));
    assert!(!study_names(&app, "annotator1").await.contains(&"Pilot".to_string()));
    assert!(study_names(&app, "researcher").await.contains(&"Pilot".to_string()));

    // The same name twice is refused, naming the field.
    let again = app.cli(&["study", "create", spec.to_str().unwrap()]);
    assert!(!again.status.success());
    assert!(text(&again.stderr).contains("field `name`"), "{}", text(&again.stderr));
}

#[tokio::test]
async fn bad_specs_and_accounts_are_refused_with_a_reason() {
    let app = TestApp::spawn();
    let cases = [
        (Spec::new("Bad 0").kind("five_image"), "field `kind`"),
        (Spec::new("Bad 1").dataset("nope"), "no dataset named \"nope\""),
        (Spec::new("Bad 2").line("annotators_typo = 1"), "annotators_typo"),
    ];
    for (i, (spec, expected)) in cases.iter().enumerate() {
        let spec = spec.write(&app.data_dir, &format!("bad{i}.toml"));
        let out = app.cli(&["study", "create", spec.to_str().unwrap()]);
        let err = text(&out.stderr);
        assert!(!out.status.success() && err.contains(expected), "case {i}: {err}");
        assert_eq!(out.status.code(), Some(2), "a bad spec is the input's fault: {err}");
        assert!(err.contains(&format!("bad{i}.toml")), "the error names the file: {err}");
    }
    let named_researcher = Spec::new("R").annotators(&["researcher"]).write(&app.data_dir, "r.toml");
    let out = app.cli(&["study", "create", named_researcher.to_str().unwrap()]);
    assert!(text(&out.stderr).contains("is a researcher, not an annotator"));

    let bad_role = app.cli(&["user", "add", "x", "--role", "root", "--password-stdin"]);
    assert!(text(&bad_role.stderr).contains("unknown role"));
}
