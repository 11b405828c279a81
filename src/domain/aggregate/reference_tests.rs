//! The committed crowd-kit 1.4.2 fixture (scripts/reference/aggregation_fixture.py):
//! 150 items × 4 classes, 6 workers, 3 answers per item.
use super::*;
use serde_json::Value;

const FIXTURE: &str = include_str!("../../../tests/fixtures/aggregation/crowd.json");

struct Reference {
    k: usize,
    answers: Vec<(u64, u64, usize)>,
    json: Value,
}

/// A fixture's `[[item, person, label], ...]` list (also read by the agreement tests).
pub(crate) fn triples(v: &Value) -> Vec<(u64, u64, usize)> {
    let n = |x: &Value| x.as_u64().unwrap();
    v.as_array().unwrap().iter().map(|a| (n(&a[0]), n(&a[1]), n(&a[2]) as usize)).collect()
}

fn reference() -> Reference {
    let json: Value = serde_json::from_str(FIXTURE).unwrap();
    let answers = triples(&json["answers"]);
    Reference { k: json["k"].as_u64().unwrap() as usize, answers, json }
}

fn pairs(v: &Value) -> Vec<(u64, f64)> {
    v.as_array().unwrap().iter().map(|p| (p[0].as_u64().unwrap(), p[1].as_f64().unwrap())).collect()
}

fn by_person(v: &Value, person: u64) -> f64 {
    v[person.to_string()].as_f64().unwrap()
}

/// Every label the same; posteriors and accuracies within `tol`.
fn assert_items_match(a: &Aggregation, model: &Value, tol: f64) {
    let labels = pairs(&model["labels"]);
    assert_eq!(a.items.len(), labels.len());
    for (item, (id, label)) in a.items.iter().zip(&labels) {
        assert_eq!((item.item, item.label), (*id, *label as usize), "{:?} item {id}", a.model);
    }
    for (item, (_, p)) in a.items.iter().zip(pairs(&model["posteriors"])) {
        assert!((item.posterior - p).abs() <= tol, "{:?} item {}: {} vs {p}", a.model, item.item, item.posterior);
    }
    for p in &a.people {
        let want = by_person(&model["accuracy"], p.person);
        assert!((p.accuracy - want).abs() <= tol, "{:?} person {}: {} vs {want}", a.model, p.person, p.accuracy);
    }
}

#[test]
fn dawid_skene_matches_crowd_kit() {
    let r = reference();
    let ds = &r.json["dawid_skene"];
    let a = aggregate(Model::DawidSkene, &r.answers, r.k, &[], &Options::dawid_skene()).unwrap();
    // Same steps and stopping rule: same iteration count, values to rounding.
    assert_eq!(a.iterations as u64, ds["iterations"].as_u64().unwrap());
    assert!(a.converged);
    assert_items_match(&a, ds, 1e-5);
    for p in &a.people {
        let want = &ds["confusion"][p.person.to_string()];
        for (t, row) in p.confusion.as_ref().unwrap().iter().enumerate() {
            for (x, v) in row.iter().enumerate() {
                let w = want[t][x].as_f64().unwrap();
                assert!((v - w).abs() <= 1e-5, "person {} [{t}][{x}]: {v} vs {w}", p.person);
            }
        }
    }
}

/// crowd-kit seeds every restart with the same `random_state`, and our
/// restarts draw different starts (seeded per person by what they answered,
/// so that renumbering people changes nothing), so parameters can differ by
/// where EM stopped after 50 iterations: labels must agree, posteriors,
/// accuracies and competences within 2e-3 (measured: up to 1.6e-3; 2e-4
/// with the starts drawn in person-id order, before session 38),
/// competences in the same order.
#[test]
fn mace_matches_crowd_kit() {
    let r = reference();
    let m = &r.json["mace_em"];
    let opts = Options { max_iter: 50, tol: -1.0, ..Options::mace() };
    let a = aggregate(Model::Mace, &r.answers, r.k, &[], &opts).unwrap();
    assert_eq!(a.iterations, 50);
    assert_items_match(&a, m, 2e-3);
    let ours: Vec<f64> = a.people.iter().map(|p| p.competence.unwrap()).collect();
    let theirs: Vec<f64> = a.people.iter().map(|p| by_person(&m["competence"], p.person)).collect();
    for (o, t) in ours.iter().zip(&theirs) {
        assert!((o - t).abs() <= 2e-3, "competence {ours:?} vs {theirs:?}");
    }
    let order = |v: &[f64]| {
        let mut i: Vec<usize> = (0..v.len()).collect();
        i.sort_by(|&x, &y| v[x].total_cmp(&v[y]));
        i
    };
    assert_eq!(order(&ours), order(&theirs));
}
