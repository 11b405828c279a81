//! From embeddings to the Winoground outcome of one instance. Pure.
use crate::domain::metrics::{Outcome, Similarities};

/// Dot product accumulated in f64; on unit vectors, the cosine similarity.
pub fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum()
}

/// Scales to unit length; `None` for a zero, non-finite or empty vector.
pub fn normalize(mut v: Vec<f32>) -> Option<Vec<f32>> {
    let norm = dot(&v, &v).sqrt();
    if v.is_empty() || !norm.is_finite() || norm == 0.0 {
        return None;
    }
    v.iter_mut().for_each(|x| *x = (*x as f64 / norm) as f32);
    Some(v)
}

/// Captions C0 (positive), C1 (negative); images I0 (positive), I1 (negative).
pub fn similarities(c0: &[f32], c1: &[f32], i0: &[f32], i1: &[f32]) -> Similarities {
    Similarities::new(dot(c0, i0), dot(c1, i0), dot(c0, i1), dot(c1, i1))
}

pub fn outcome(c0: &[f32], c1: &[f32], i0: &[f32], i1: &[f32]) -> Outcome {
    Outcome::from_scores(similarities(c0, c1, i0, i1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_set_embeddings_give_known_outcomes() {
        let (x, y) = ([1.0f32, 0.0], [0.0f32, 1.0]);
        let tilted = [0.8f32, 0.6];
        // Each caption matches its own image: everything right.
        let o = outcome(&x, &y, &x, &y);
        assert!(o.i2t() && o.t2i() && o.group());
        // I1 looks more like C0 than like C1: Ineg2T, hence I2T, fails; T2I holds.
        let o = outcome(&x, &y, &x, &tilted);
        assert_eq!((o.ipos2t, o.ineg2t, o.tpos2i, o.tneg2i), (true, false, true, true));
        assert!(!o.i2t() && o.t2i() && !o.group());
        // Swapped images: every comparison fails.
        let o = outcome(&x, &y, &y, &x);
        assert_eq!(o, Outcome::default());
        // A constant model ties everywhere: ties are failures.
        assert_eq!(outcome(&x, &x, &x, &x), Outcome::default());
    }

    #[test]
    fn normalize_rejects_degenerate_vectors() {
        assert_eq!(normalize(vec![3.0, 4.0]), Some(vec![0.6, 0.8]));
        assert_eq!(normalize(vec![0.0, 0.0]), None);
        assert_eq!(normalize(vec![f32::NAN, 1.0]), None);
        assert_eq!(normalize(vec![]), None);
    }
}
