//! A tiny deterministic generator: shuffles must be reproducible from a
//! recorded seed on any platform, including the wasm client, so no `rand`.

#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; bias is below 2^-32 for our n).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Fisher–Yates shuffle of `items` driven by `seed`.
pub fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut rng = SplitMix64::new(seed);
    for i in (1..items.len()).rev() {
        let j = rng.below(i + 1);
        items.swap(i, j);
    }
}

/// Mixes several identifiers into one seed (for "per study, per annotator").
pub fn mix(parts: &[u64]) -> u64 {
    let mut rng = SplitMix64::new(0x5EED);
    let mut acc = 0u64;
    for &p in parts {
        rng = SplitMix64::new(acc ^ p ^ rng.next_u64());
        acc = rng.next_u64();
    }
    acc
}

/// A text as a seed part (FNV-1a, 64 bits): stable on every platform and
/// release, unlike `std`'s hasher.
pub fn text_seed(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_order_and_is_a_permutation() {
        let mut a: Vec<u32> = (0..50).collect();
        let mut b = a.clone();
        shuffle(&mut a, 42);
        shuffle(&mut b, 42);
        assert_eq!(a, b);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert_ne!(a, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn different_seeds_give_different_orders() {
        let mut a: Vec<u32> = (0..20).collect();
        let mut b = a.clone();
        shuffle(&mut a, 1);
        shuffle(&mut b, 2);
        assert_ne!(a, b);
    }

    #[test]
    fn all_positions_of_four_are_reached_evenly() {
        // Each of 4 items lands first about a quarter of the time.
        let mut first = [0u32; 4];
        for seed in 0..4000u64 {
            let mut v = [0usize, 1, 2, 3];
            shuffle(&mut v, mix(&[seed, 7]));
            first[v[0]] += 1;
        }
        for c in first {
            assert!((800..1200).contains(&c), "skewed: {first:?}");
        }
    }

    #[test]
    fn mix_depends_on_order_and_values() {
        assert_ne!(mix(&[1, 2]), mix(&[2, 1]));
        assert_ne!(mix(&[1, 2]), mix(&[1, 3]));
        assert_eq!(mix(&[9, 9]), mix(&[9, 9]));
    }

    #[test]
    fn text_seed_is_fnv1a() {
        // FNV-1a's published test vectors.
        assert_eq!(text_seed(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(text_seed("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(text_seed("foobar"), 0x8594_4171_f739_67e8);
    }
}
