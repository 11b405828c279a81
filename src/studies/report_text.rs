//! Plain-text pieces the kinds' reports share (CLI, export card): a share
//! as a percentage, a table line, and pairwise kappas.
use crate::domain::agreement::PairKappa;

/// A share as a percentage with one decimal; "-" where undefined.
pub fn pct(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| format!("{:.1}%", 100.0 * v))
}

/// One table line: a label and columns `width` wide, the first two narrower.
pub fn line(label: &str, first: [String; 2], rest: impl Iterator<Item = String>, width: usize) -> String {
    let mut out = format!("{label:<20} {:>8} {:>8}", first[0], first[1]);
    for c in rest {
        out.push_str(&format!(" {c:>width$}"));
    }
    out
}

/// Cohen's kappa per pair of annotators and their mean, one line each.
pub fn kappa_lines(kappa: &[PairKappa], mean: Option<f64>, on: &str, items: &str, mean_of: &str) -> String {
    let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    let mut out = String::new();
    for k in kappa {
        let (a, b) = &k.annotators;
        out.push_str(&format!("Cohen's kappa{on}, {a} and {b}: {} over {} {items}\n", show(k.kappa), k.n));
    }
    out.push_str(&format!("mean kappa {mean_of}: {}\n", show(mean)));
    out
}
