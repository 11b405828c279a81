//! Statistics of the image-ranking kind: how far annotators agree on each
//! prompt's order (Kendall's W), and how well a model's scores follow the
//! people's order (Spearman's ρ and Kendall's τ-b, as scipy's `spearmanr`
//! and `kendalltau` compute them), each averaged over prompts.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// 1-based ranks, smallest value first; tied values share their mean rank.
pub fn average_ranks(xs: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..xs.len()).collect();
    idx.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut ranks = vec![0.0; xs.len()];
    let mut start = 0;
    while start < idx.len() {
        let mut end = start + 1;
        while end < idx.len() && xs[idx[end]] == xs[idx[start]] {
            end += 1;
        }
        let mean = (start + end + 1) as f64 / 2.0;
        idx[start..end].iter().for_each(|&i| ranks[i] = mean);
        start = end;
    }
    ranks
}

/// Pearson's r; None when either side is constant or shorter than 2.
pub fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len() as f64;
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    (saa > 0.0 && sbb > 0.0).then(|| sab / (saa * sbb).sqrt())
}

/// Spearman's ρ: Pearson's r of the average ranks.
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    pearson(&average_ranks(a), &average_ranks(b))
}

/// Kendall's τ-b: (concordant − discordant) over the geometric mean of the
/// pairs untied on each side; None when either side is constant.
pub fn kendall_tau_b(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    let (mut s, mut untied_a, mut untied_b) = (0.0, 0.0, 0.0);
    for i in 0..a.len() {
        for j in i + 1..a.len() {
            let (da, db) = ((a[i] - a[j]).signum(), (b[i] - b[j]).signum());
            let (da, db) = (if a[i] == a[j] { 0.0 } else { da }, if b[i] == b[j] { 0.0 } else { db });
            s += da * db;
            untied_a += da.abs();
            untied_b += db.abs();
        }
    }
    (untied_a > 0.0 && untied_b > 0.0).then(|| s / (untied_a * untied_b).sqrt())
}

/// Kendall's W of `m` annotators' orders of the same `n` items (each an
/// order of item indices, best first; no ties): 12·S / (m²(n³ − n)), S the
/// squared deviations of the items' rank sums from their mean.
pub fn kendalls_w(orders: &[Vec<usize>]) -> Option<f64> {
    let (m, n) = (orders.len(), orders.first()?.len());
    if m < 2 || n < 2 || orders.iter().any(|o| o.len() != n) {
        return None;
    }
    let mut sums = vec![0.0; n];
    for o in orders {
        for (pos, &item) in o.iter().enumerate() {
            sums[item] += (pos + 1) as f64;
        }
    }
    let mean = m as f64 * (n as f64 + 1.0) / 2.0;
    let s: f64 = sums.iter().map(|r| (r - mean).powi(2)).sum();
    let (m, n) = (m as f64, n as f64);
    Some(12.0 * s / (m * m * (n * n * n - n)))
}

/// One prompt: every annotator's order and each model's score per image
/// (both by the images' import positions).
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    pub orders: Vec<Vec<usize>>,
    pub scores: BTreeMap<String, Vec<f64>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelAgreement {
    pub model: String,
    /// Prompts where both the model's scores and the people's order vary.
    pub prompts: usize,
    pub spearman: Option<f64>,
    pub kendall_tau: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankingStats {
    pub prompts: usize,
    pub rankings: usize,
    /// Kendall's W averaged over the prompts with two or more rankings.
    pub kendalls_w: Option<f64>,
    pub w_prompts: usize,
    pub models: Vec<ModelAgreement>,
}

/// The people's order of one prompt: each image's mean rank (1 = best).
pub fn mean_ranks(orders: &[Vec<usize>], n: usize) -> Vec<f64> {
    let mut sums = vec![0.0; n];
    for o in orders {
        for (pos, &item) in o.iter().enumerate() {
            sums[item] += (pos + 1) as f64;
        }
    }
    sums.iter().map(|s| s / orders.len() as f64).collect()
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The statistics over every prompt with at least one ranking.
pub fn ranking_stats(prompts: &[Prompt]) -> RankingStats {
    let answered: Vec<&Prompt> = prompts.iter().filter(|p| !p.orders.is_empty()).collect();
    let ws: Vec<f64> = answered.iter().filter_map(|p| kendalls_w(&p.orders)).collect();
    let mut per_model: BTreeMap<&str, (Vec<f64>, Vec<f64>, usize)> = BTreeMap::new();
    for p in &answered {
        // Higher score means better; a lower mean rank means better.
        let people: Vec<f64> = mean_ranks(&p.orders, p.orders[0].len()).iter().map(|r| -r).collect();
        for (model, scores) in &p.scores {
            let e = per_model.entry(model).or_default();
            if let (Some(r), Some(t)) = (spearman(scores, &people), kendall_tau_b(scores, &people)) {
                e.0.push(r);
                e.1.push(t);
                e.2 += 1;
            }
        }
    }
    RankingStats {
        prompts: answered.len(),
        rankings: answered.iter().map(|p| p.orders.len()).sum(),
        kendalls_w: mean(&ws),
        w_prompts: ws.len(),
        models: per_model
            .into_iter()
            .map(|(model, (r, t, n))| ModelAgreement {
                model: model.to_string(),
                prompts: n,
                spearman: mean(&r),
                kendall_tau: mean(&t),
            })
            .collect(),
    }
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
