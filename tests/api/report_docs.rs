//! docs/api.md says what the report endpoint answers: each JSON example in
//! its report section has the shape of the server's answer for a demo study
//! of that kind, after two annotators answered a few of its tasks; and the
//! lists of reporting kinds in docs/api.md and docs/export.md are the
//! registry's.
use crate::helpers::TestApp;
use hardneg::api_types::TaskView;
use serde_json::Value;

/// Keys whose object maps data (a value or skip reason) to a count: only the values are compared.
const MAPS: [&str; 2] = ["values", "skipped"];

/// The JSON blocks of the report section of docs/api.md.
fn documented() -> Vec<Value> {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/api.md")).unwrap();
    let start = docs.find("## `GET /api/v1/studies/{id}/report`").expect("a report section in docs/api.md");
    let section = &docs[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    section
        .split("```json\n")
        .skip(1)
        .map(|b| {
            let block = &b[..b.find("```").unwrap()];
            serde_json::from_str(block).unwrap_or_else(|e| panic!("{e}: {block}"))
        })
        .collect()
}

/// Where `doc` and `got` differ in shape: keys, and types where both are set
/// (null stands for any value; an empty array for any array).
fn differences(path: &str, doc: &Value, got: &Value, out: &mut Vec<String>) {
    match (doc, got) {
        (Value::Null, _) | (_, Value::Null) => {}
        (Value::Object(d), Value::Object(g)) => {
            let map = MAPS.iter().any(|m| path.ends_with(m));
            if !map {
                let sorted = |m: &serde_json::Map<String, Value>| {
                    let mut k: Vec<String> = m.keys().cloned().collect();
                    k.sort();
                    k
                };
                let (dk, gk) = (sorted(d), sorted(g));
                if dk != gk {
                    out.push(format!("{path}: documented keys {dk:?}, the server's {gk:?}"));
                }
            }
            for (k, v) in d {
                let other = if map { g.values().next() } else { g.get(k) };
                if let Some(o) = other {
                    differences(&format!("{path}.{k}"), v, o, out);
                }
            }
        }
        (Value::Array(d), Value::Array(g)) => {
            if let (Some(d0), Some(g0)) = (d.first(), g.first()) {
                differences(&format!("{path}[0]"), d0, g0, out);
            }
        }
        (d, g) if std::mem::discriminant(d) == std::mem::discriminant(g) => {}
        (d, g) => out.push(format!("{path}: documented {d}, the server's {g}")),
    }
}

/// An answer any task of these kinds takes: the first option, or every id
/// in order for a ranking.
fn any_answer(t: &TaskView) -> String {
    match t.kind.name() {
        "ranking" => t.options.iter().map(|o| o.id.as_str()).collect::<Vec<_>>().join(","),
        _ => t.options[0].id.clone(),
    }
}

#[tokio::test]
async fn the_report_section_of_the_api_docs_has_the_servers_shape_for_every_reporting_kind() {
    let app = TestApp::spawn();
    let researcher = app.login("researcher").await;
    let examples = documented();
    let statistics: Vec<&str> = examples.iter().map(|e| e["statistic"].as_str().unwrap()).collect();
    let want = ["accuracy", "preference", "ranking", "validation", "writing", "pair_validation"];
    assert!(want.iter().all(|s| statistics.contains(s)), "documented: {statistics:?}");
    let studies = app.studies(&researcher).await;
    for example in &examples {
        let kind = example["kind"].as_str().expect("the example's kind");
        let study = studies.iter().find(|s| s.kind.name() == kind).unwrap_or_else(|| panic!("a demo {kind} study"));
        if kind != "caption_writing" && kind != "pair_validation" {
            for who in ["annotator1", "annotator2"] {
                let c = app.login(who).await;
                for _ in 0..2 {
                    let Some(task) = app.next_task(&c, study.id.get()).await else { break };
                    let res = app.answer(&c, task.task_id, &any_answer(&task)).await;
                    assert_eq!(res.status(), 200, "{kind}: {}", res.text().await.unwrap());
                }
            }
        }
        let got: Value = app.get(&researcher, &format!("/api/v1/studies/{}/report", study.id)).await;
        let mut out = Vec::new();
        differences(kind, example, &got, &mut out);
        assert!(out.is_empty(), "docs/api.md against the server:\n{}\nserver: {got:#}", out.join("\n"));
    }
}

/// The kinds named in the parentheses after `phrase` in the doc `file`.
fn listed_after(file: &str, phrase: &str) -> Vec<String> {
    let path = format!("{}/docs/{file}", env!("CARGO_MANIFEST_DIR"));
    let docs = std::fs::read_to_string(&path).unwrap().replace('\n', " ");
    let at = docs.find(phrase).unwrap_or_else(|| panic!("{file}: no {phrase:?}"));
    let rest = &docs[at + phrase.len()..];
    let list = &rest[rest.find('(').unwrap() + 1..rest.find(')').unwrap()];
    list.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

#[test]
fn the_docs_list_the_registrys_reporting_kinds_in_its_order() {
    let registry: Vec<String> = hardneg::kinds::REGISTRY.reports().map(|k| k.name().to_string()).collect();
    assert!(registry.len() >= 8, "the registry's reporting kinds: {registry:?}");
    for (file, phrase) in
        [("api.md", "For a study whose kind reports statistics"), ("export.md", "whose kind reports statistics")]
    {
        assert_eq!(listed_after(file, phrase), registry, "docs/{file}'s reporting kinds against the registry");
    }
}
