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
    assert!(text(&out.stderr).contains("has the role researcher, not annotator"));

    let bad_role = app.cli(&["user", "add", "x", "--role", "root", "--password-stdin"]);
    assert!(text(&bad_role.stderr).contains("unknown role"));
    assert_eq!(bad_role.status.code(), Some(2), "input at fault");
}

/// A command that only reads refuses a data dir without a database (it made
/// an empty one and reported on it); a study that does not exist is named
/// as such; input at fault exits 2, imports included.
#[tokio::test]
async fn commands_name_what_is_missing_and_leave_no_stray_database() {
    // On PostgreSQL every test data dir has its database: only SQLite can lack one.
    if !crate::helpers::on_postgres() {
        let empty = tempfile::tempdir().unwrap();
        for args in [&["participants", "14"][..], &["report", "14"], &["agreement", "14"], &["datasets"]] {
            let out = crate::helpers::cli(empty.path(), args);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains("no database at"), "{args:?}: {err}");
        }
        assert!(!empty.path().join("hardneg.sqlite").exists(), "nothing was created");
    }

    let app = TestApp::spawn();
    for args in
        [&["participants", "999"][..], &["report", "999"], &["study", "link", "999"], &["study", "status", "999"]]
    {
        let out = app.cli(args);
        let err = text(&out.stderr);
        assert_eq!((out.status.code(), err.trim()), (Some(2), "error: no study 999"), "{args:?}");
    }
    // The demo study is an account study: no dashboard of places to show.
    let demo = crate::helpers::demo_study(&app.login("researcher").await, &app).await.to_string();
    // A bad flag value or name is the input's fault too, checked before any model loads.
    let missing = app.data_dir.join("no-model");
    let missing = missing.to_str().unwrap();
    let empty_model = app.data_dir.join("empty-model");
    std::fs::create_dir_all(&empty_model).unwrap();
    let empty_model = empty_model.to_str().unwrap();
    for (args, said) in [
        (vec!["agreement", &demo, "--mapping", "bogus"], "unknown mapping \"bogus\""),
        (vec!["audit", "demo", "--stage", "bogus"], "--stage: "),
        (vec!["score", "--model-dir", missing, "--name", "x", "--dataset", "demo"], "not a directory"),
        (vec!["score", "--model-dir", empty_model, "--name", "x", "--dataset", "demo"], "holds config.json"),
        (vec!["score", "--external", "true", "--name", "x", "--dataset", "nope"], "no dataset named \"nope\""),
        (vec!["score", "--external", "true", "--name", "x", "--dataset", "demo", "--batch", "0"], "at least 1"),
        (vec!["score", "--external", "true", "--name", "x", "--dataset", "demo", "--device", "tpu"], "unknown device"),
    ] {
        let out = app.cli(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
    let out = app.cli(&["study", "status", &demo]);
    let err = text(&out.stderr);
    assert_eq!((out.status.code(), err.trim()), (Some(2), format!("error: study {demo} is not a link study").as_str()));
    let bad = app.data_dir.join("bad-ab.csv");
    std::fs::write(&bad, "caption,negative_a,source_a,negative_b,source_b,type\na,b,x,c,y,zzz\n").unwrap();
    let out = app.cli(&["import", "ab-pairs", bad.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a refused file is the input's fault: {err}");
    assert!(err.contains("nothing imported") && err.contains("field `type`"), "{err}");
    let out_dir = app.data_dir.join("export-of-nothing");
    for (args, says) in [
        (&["export", "no-such-set", "--out", out_dir.to_str().unwrap(), "--format", "csv"][..], "no-such-set"),
        // No password on standard input.
        (&["user", "add", "ana", "--role", "annotator", "--password-stdin"], "at least 8 characters"),
    ] {
        let out = app.cli(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
