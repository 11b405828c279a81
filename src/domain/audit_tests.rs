use super::*;
use crate::domain::category::{NegType, Subtype};
use std::collections::HashMap;

fn cat(t: NegType, s: Subtype) -> Category {
    Category { neg_type: t, subtype: s }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn wilson_matches_statsmodels() {
    // statsmodels.stats.proportion.proportion_confint(7, 10, method="wilson")
    // = (0.39677814746114546, 0.8922087325936988); by hand: centre
    // (0.7 + z²/20) / (1 + z²/10) = 0.644493, half-width 0.247715.
    let (lo, hi) = wilson(7.0, 10).unwrap();
    assert!(close(lo, 0.396_778_147_461_145_4) && close(hi, 0.892_208_732_593_698_8), "{lo} {hi}");
    // proportion_confint(15, 30, method="wilson") = (0.331541256, 0.668458744): symmetric about 0.5.
    let (lo, hi) = wilson(15.0, 30).unwrap();
    assert!(close(lo, 0.331_541_256_405_337_7) && close(lo + hi, 1.0));
    // No successes: the lower end is exactly 0, the upper z²/(n + z²) = 0.434482.
    let (lo, hi) = wilson(0.0, 5).unwrap();
    assert!(lo == 0.0 && close(hi, 0.434_482_464_783_175), "{hi}");
    // At every n, not only where the float difference happens to vanish (24 gave 1.4e-17).
    for n in [6, 12, 24, 97] {
        let (lo, hi) = wilson(0.0, n).unwrap();
        let (lo_all, hi_all) = wilson(n as f64, n).unwrap();
        assert!(lo == 0.0 && hi_all == 1.0, "n = {n}: {lo:e} {hi_all}");
        assert!(close(hi, 1.0 - lo_all), "symmetric at n = {n}");
    }
    assert_eq!(wilson(0.0, 0), None);
}

#[test]
fn rates_count_ties_as_half_per_subset_and_overall() {
    let (swap, add) = (cat(NegType::Swap, Subtype::Att), cat(NegType::Add, Subtype::Obj));
    let scored = [
        Scored { category: swap, positive: 2.0, negative: 1.0 },
        Scored { category: swap, positive: 1.0, negative: 1.0 },
        Scored { category: swap, positive: 0.0, negative: 1.0 },
        Scored { category: add, positive: 3.0, negative: 1.0 },
    ];
    let rows = audit_table(&scored);
    let names: Vec<&str> = rows.iter().map(|r| r.subset.as_str()).collect();
    assert_eq!(names, ["all", "swap", "add", "swap/att", "add/obj"]);
    let all = &rows[0];
    assert_eq!((all.instances, all.positive, all.ties), (4, 2, 1));
    assert!(close(all.rate, 2.5 / 4.0));
    // Wilson of 2.5 out of 4, worked with the same formula in Python: (0.219427, 0.908101).
    assert!(close(all.low, 0.219_426_520_065_362_78) && close(all.high, 0.908_100_770_820_988), "{all:?}");
    assert!(close(rows[1].rate, 0.5) && close(rows[2].rate, 1.0));
    assert!(audit_table(&[]).is_empty());
}

#[test]
fn length_picks_the_longer_caption() {
    let s = Baseline::Length.score(&[("a dog on a sofa", "a dog")]);
    assert_eq!(s, [(15.0, 5.0)]);
    assert_eq!(Baseline::parse("word-frequency"), Some(Baseline::WordFrequency));
    assert_eq!(Baseline::parse("gpt"), None);
}

#[test]
fn word_frequency_prefers_familiar_words_and_leaves_the_caption_out() {
    let pairs = [
        ("a dog on a sofa", "a zebra on a sofa"),
        ("a dog on the grass", "a dog under the grass"),
        ("a cat on a sofa", "a sofa on a cat"),
    ];
    let s = Baseline::WordFrequency.score(&pairs);
    // "dog" occurs in the other positives, "zebra" nowhere.
    assert!(s[0].0 > s[0].1, "{s:?}");
    // "on" is common in the others' positives, "under" unseen.
    assert!(s[1].0 > s[1].1, "{s:?}");
    // Same words, another order: a unigram model cannot tell them apart.
    assert!(close(s[2].0, s[2].1), "{s:?}");
    // Held out: counts without "a cat on a sofa" are a×3, dog×2, on×2, sofa×1, the×1, grass×1
    // (10 words); vocabulary {a, cat, on, sofa, dog, the, grass, zebra, under} + 1 = 10.
    // Mean log of (count + 1) / 20 over a, cat, on, a, sofa.
    let want = [4.0f64, 1.0, 3.0, 4.0, 2.0].iter().map(|c| (c / 20.0).ln()).sum::<f64>() / 5.0;
    assert!(close(s[2].0, want), "{} {want}", s[2].0);
    // A positive that is only its own evidence gets no credit from itself.
    let lone = Baseline::WordFrequency.score(&[("kayak", "kayak kayak")]);
    assert!(close(lone[0].0, lone[0].1), "{lone:?}");
}

/// The scoring as first written (a lower-cased String per word, a map of
/// the caption's own words): the faster one must give the same bits.
fn word_frequency_as_first_written(pairs: &[(&str, &str)]) -> Vec<(f64, f64)> {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
    };
    let mut distinct: Vec<&str> = pairs.iter().map(|p| p.0).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let mut counts: HashMap<String, f64> = HashMap::new();
    for w in distinct.iter().flat_map(|c| words(c)) {
        *counts.entry(w).or_default() += 1.0;
    }
    let total: f64 = counts.values().sum();
    let mut vocabulary: std::collections::HashSet<String> = counts.keys().cloned().collect();
    vocabulary.extend(pairs.iter().flat_map(|p| words(p.1)));
    let v = vocabulary.len() as f64 + 1.0;
    pairs
        .iter()
        .map(|(positive, negative)| {
            let mut own: HashMap<String, f64> = HashMap::new();
            for w in words(positive) {
                *own.entry(w).or_default() += 1.0;
            }
            let held_out = total - own.values().sum::<f64>();
            let score = |s: &str| {
                let mut logs: Vec<f64> = words(s)
                    .into_iter()
                    .map(|w| {
                        let c = counts.get(&w).copied().unwrap_or(0.0) - own.get(&w).copied().unwrap_or(0.0);
                        ((c + 1.0) / (held_out + v)).ln()
                    })
                    .collect();
                // Summed smallest first, so that a swap ties exactly.
                logs.sort_by(|a, b| a.partial_cmp(b).unwrap());
                if logs.is_empty() {
                    f64::NEG_INFINITY
                } else {
                    logs.iter().sum::<f64>() / logs.len() as f64
                }
            };
            (score(positive), score(negative))
        })
        .collect()
}

#[test]
fn word_frequency_gives_the_same_bits_as_first_written() {
    let mut pairs = vec![
        ("A Dog on a SOFA", "a ZEBRA on a sofa"),
        ("Ärger im Büro, ÉTÉ", "ärger im büro été été"),
        ("ǅemal ǆ", "Ǆ ǅ"),
        ("", "nothing here"),
        ("...", ""),
        ("a dog on a sofa", "a dog on a sofa"),
        ("a dog on a sofa", "two dogs, one sofa"),
    ];
    let texts: Vec<(String, String)> = (0..300)
        .map(|i| (format!("Photo {} of a Red car number {i} near {} trees", i % 7, i % 13), format!("a blue car {i}")))
        .collect();
    pairs.extend(texts.iter().map(|(a, b)| (a.as_str(), b.as_str())));
    let bits = |s: Vec<(f64, f64)>| s.iter().map(|(a, b)| (a.to_bits(), b.to_bits())).collect::<Vec<_>>();
    assert_eq!(bits(Baseline::WordFrequency.score(&pairs)), bits(word_frequency_as_first_written(&pairs)));
}

#[test]
fn word_frequency_ties_every_swap_exactly() {
    // Words with counts 1 to 6 among the other positives, so their terms differ.
    let corpus = ["red red red red red red", "big big big big big", "dog dog dog dog", "on on on", "mat mat", "the"];
    let words = ["the", "big", "red", "dog", "on", "mat"];
    let mut orders = vec![words.to_vec()];
    // Every rotation and every swap of two words: sums in 21 other orders.
    for i in 1..words.len() {
        let mut o = words.to_vec();
        o.rotate_left(i);
        orders.push(o);
    }
    for i in 0..words.len() {
        for j in i + 1..words.len() {
            let mut o = words.to_vec();
            o.swap(i, j);
            orders.push(o);
        }
    }
    let texts: Vec<String> = orders.iter().map(|o| o.join(" ")).collect();
    let mut pairs: Vec<(&str, &str)> = corpus.iter().map(|c| (*c, "x")).collect();
    pairs.extend(texts.iter().map(|t| (texts[0].as_str(), t.as_str())));
    let s = Baseline::WordFrequency.score(&pairs);
    for (t, (p, n)) in texts.iter().zip(&s[corpus.len()..]) {
        assert_eq!(p.to_bits(), n.to_bits(), "{t:?}: {p} against {n}");
    }
    let scored: Vec<Scored> = s[corpus.len()..]
        .iter()
        .map(|&(positive, negative)| Scored { category: cat(NegType::Swap, Subtype::Att), positive, negative })
        .collect();
    let swap = &audit_table(&scored)[0];
    assert_eq!((swap.ties, swap.rate), (texts.len(), 0.5));
}

#[test]
fn pairs_give_back_each_instances_captions_and_skip_prompts_without_a_negative() {
    let [a, b] = [Category::ALL[0], Category::ALL[3]];
    let mut pairs = Pairs::default();
    pairs.push(a, "a dog", "a cat");
    pairs.push(b, "a prompt", " \t");
    pairs.push(b, "", "ünïcode");
    pairs.push(a, "two dogs", "two cats");
    let got: Vec<_> = pairs.iter().collect();
    assert_eq!(got, [(a, "a dog", "a cat"), (b, "", "ünïcode"), (a, "two dogs", "two cats")]);
    assert_eq!(pairs.len(), 3);
    assert!(Pairs::default().is_empty() && Pairs::default().iter().next().is_none());
}
