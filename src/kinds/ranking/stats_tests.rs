use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn spearman_and_kendall_match_scipy() {
    // scipy.stats.spearmanr([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]).statistic = 0.8207826816681233
    // (scipy's documentation): ranks [1..5] and [1, 2, 3.5, 5, 3.5], Pearson of those.
    let r = spearman(&[1.0, 2.0, 3.0, 4.0, 5.0], &[5.0, 6.0, 7.0, 8.0, 7.0]).unwrap();
    assert!(close(r, 0.820_782_681_668_123_3), "{r}");
    // scipy.stats.kendalltau([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]).statistic = -0.47140452079103173:
    // 10 pairs: 2 concordant, 6 discordant, 2 tied on x and 1 on y: -4 / sqrt(8 * 9).
    let t = kendall_tau_b(&[12.0, 2.0, 1.0, 12.0, 2.0], &[1.0, 4.0, 7.0, 1.0, 0.0]).unwrap();
    assert!(close(t, -4.0 / 72f64.sqrt()) && close(t, -0.471_404_520_791_031_73), "{t}");
    assert_eq!(average_ranks(&[5.0, 7.0, 7.0, 1.0]), [2.0, 3.5, 3.5, 1.0]);
    assert_eq!(spearman(&[1.0, 1.0], &[1.0, 2.0]), None, "constant side");
    assert_eq!(kendall_tau_b(&[1.0, 1.0], &[1.0, 2.0]), None);
}

#[test]
fn kendalls_w_worked_by_hand() {
    // Three annotators order four images (best first). Ranks per image:
    // 0: 1,2,1 (sum 4); 1: 2,1,3 (6); 2: 3,3,2 (8); 3: 4,4,4 (12); mean 7.5,
    // S = 3.5² + 1.5² + 0.5² + 4.5² = 35, W = 12·35 / (3²·(4³ − 4)) = 420 / 540.
    let orders = vec![vec![0, 1, 2, 3], vec![1, 0, 2, 3], vec![0, 2, 1, 3]];
    assert!(close(kendalls_w(&orders).unwrap(), 420.0 / 540.0));
    assert!(close(kendalls_w(&[vec![2, 0, 1], vec![2, 0, 1]]).unwrap(), 1.0), "the same order");
    assert!(close(kendalls_w(&[vec![0, 1], vec![1, 0]]).unwrap(), 0.0), "opposite orders");
    assert_eq!(kendalls_w(&[vec![0, 1]]), None, "one annotator");
    assert_eq!(kendalls_w(&[vec![0, 1], vec![0, 1, 2]]), None, "different images");
}

#[test]
fn models_are_correlated_with_the_peoples_mean_rank_and_averaged_over_prompts() {
    let prompt = |orders: Vec<Vec<usize>>, scores: &[(&str, Vec<f64>)]| Prompt {
        orders,
        scores: scores.iter().map(|(m, s)| (m.to_string(), s.clone())).collect(),
    };
    let prompts = [
        // People: image 2 best, then 0, then 1. "good" scores agree, "bad" reverse them.
        prompt(
            vec![vec![2, 0, 1], vec![2, 0, 1]],
            &[("good", vec![0.5, 0.1, 0.9]), ("bad", vec![0.5, 0.9, 0.1]), ("flat", vec![1.0, 1.0, 1.0])],
        ),
        // One annotator: no W; mean ranks 1, 2, 3 for images 0, 1, 2.
        // "good" gets 2 and 0 right and 1 wrong: ρ = 0.5, τ = 1/3 (scipy: spearmanr([3, 1, 2], [3, 2, 1]) = 0.5).
        prompt(vec![vec![0, 1, 2]], &[("good", vec![3.0, 1.0, 2.0]), ("bad", vec![1.0, 2.0, 3.0])]),
        prompt(vec![], &[("good", vec![1.0, 2.0])]),
    ];
    let s = ranking_stats(&prompts);
    assert_eq!((s.prompts, s.rankings, s.w_prompts), (2, 3, 1));
    assert!(close(s.kendalls_w.unwrap(), 1.0));
    let by: BTreeMap<&str, &ModelAgreement> = s.models.iter().map(|m| (m.model.as_str(), m)).collect();
    assert_eq!(by.keys().copied().collect::<Vec<_>>(), ["bad", "flat", "good"]);
    let good = by["good"];
    assert_eq!(good.prompts, 2);
    assert!(
        close(good.spearman.unwrap(), (1.0 + 0.5) / 2.0) && close(good.kendall_tau.unwrap(), (1.0 + 1.0 / 3.0) / 2.0)
    );
    assert!(close(by["bad"].spearman.unwrap(), -1.0) && close(by["bad"].kendall_tau.unwrap(), -1.0));
    assert_eq!((by["flat"].prompts, by["flat"].spearman), (0, None), "constant scores say nothing");
    assert_eq!(mean_ranks(&[vec![2, 0, 1], vec![0, 2, 1]], 3), [1.5, 3.0, 1.5]);
}
