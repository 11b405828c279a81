//! Single-pass CPU kernels over contiguous row-major f32 slices, for the
//! CPU encoder layers (`cpu_layer`): each replaces a chain of candle ops
//! that would allocate and walk a whole tensor per op.
use super::config::Activation;
use rayon::prelude::*;

/// Rows per rayon task: small rows would drown in scheduling overhead.
fn rows_per_task(cols: usize) -> usize {
    (16_384 / cols.max(1)).max(1)
}

/// `f` over matching chunks of `out` and `x`, on the rayon pool when
/// `threads` > 1, else on this thread (e.g. inside a task that owns a
/// whole sequence).
fn zip_chunks(
    threads: usize,
    chunk: usize,
    out: &mut [f32],
    x: &[f32],
    f: impl Fn((&mut [f32], &[f32])) + Sync + Send,
) {
    if threads > 1 {
        out.par_chunks_mut(chunk).zip(x.par_chunks(chunk)).for_each(f)
    } else {
        out.chunks_mut(chunk).zip(x.chunks(chunk)).for_each(f)
    }
}

/// `out = (x - mean) / sqrt(var + eps) * w + b` per row of `w.len()` columns.
pub fn layer_norm(x: &[f32], w: &[f32], b: &[f32], eps: f32, out: &mut [f32], threads: usize) {
    let cols = w.len();
    assert!(b.len() == cols && x.len() == out.len() && x.len().is_multiple_of(cols), "layer_norm: shapes differ");
    zip_chunks(threads, cols * rows_per_task(cols), out, x, |(out, x)| {
        for (o, x) in out.chunks_exact_mut(cols).zip(x.chunks_exact(cols)) {
            // Two passes, as PyTorch does: sum - sum of squares loses digits.
            let mean = sum_lanes(x, |v| v) / cols as f32;
            let var = sum_lanes(x, |v| (v - mean) * (v - mean)) / cols as f32;
            let inv = (var + eps).sqrt().recip();
            for (((o, x), w), b) in o.iter_mut().zip(x).zip(w).zip(b) {
                *o = (x - mean) * inv * w + b;
            }
        }
    });
}

/// The sum of `f` over `x` in 16 lanes: a single running sum is one
/// dependent add per element (most of a layer norm's time), lanes let the
/// compiler vectorise it.
fn sum_lanes(x: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut lanes = [0f32; 16];
    let (chunks, rest) = x.as_chunks::<16>();
    for chunk in chunks {
        lanes.iter_mut().zip(chunk).for_each(|(acc, &v)| *acc += f(v));
    }
    lanes.iter().sum::<f32>() + rest.iter().map(|&v| f(v)).sum::<f32>()
}

/// Softmax in place over `row[..live]`; the rest becomes 0, as a -inf
/// mask there before the softmax would make it.
pub fn softmax_row(row: &mut [f32], live: usize) {
    let (row, masked) = row.split_at_mut(live);
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0f32;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    let inv = sum.recip();
    row.iter_mut().for_each(|v| *v *= inv);
    masked.fill(0.0);
}

/// The activation in place, with the same formulas as candle's ops.
pub fn activate(act: Activation, x: &mut [f32], threads: usize) {
    let f: fn(f32) -> f32 = match act {
        Activation::QuickGelu => |v| v * (1.0 + (-1.702 * v).exp()).recip(),
        Activation::Gelu => |v| (candle_core::cpu::erf::erf_f32(v * std::f32::consts::FRAC_1_SQRT_2) + 1.0) * 0.5 * v,
        Activation::GeluTanh => |v| {
            const SQRT_TWO_OVER_PI: f32 = 0.797_884_6;
            0.5 * v * (1.0 + (SQRT_TWO_OVER_PI * v * (1.0 + 0.044715 * v * v)).tanh())
        },
    };
    let apply = |c: &mut [f32]| {
        #[cfg(target_arch = "x86_64")]
        if act == Activation::QuickGelu && std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
        {
            // Safety: the CPU has AVX2 and FMA (checked just above).
            return unsafe { avx::quick_gelu(c) };
        }
        c.iter_mut().for_each(|v| *v = f(*v))
    };
    if threads > 1 {
        x.par_chunks_mut(16_384).for_each(apply)
    } else {
        apply(x)
    }
}

/// QuickGELU eight lanes at a time: the scalar `exp` was most of the
/// activation's time (3072 per token per layer in ViT-B/32).
#[cfg(target_arch = "x86_64")]
pub(super) mod avx {
    use std::arch::x86_64::*;

    /// `exp` as Cephes' `expf` computes it (within 2 ulp), for inputs in
    /// [-87.3, 88.3]: beyond, the clamp gives e^±87.3 / e^88.3, which QuickGELU
    /// turns into v and 0 as the true values would.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn exp(x: __m256) -> __m256 {
        let x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3)), _mm256_set1_ps(88.3));
        let n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(std::f32::consts::LOG2_E)), _MM_FROUND_TO_NEAREST_INT);
        // x - n ln 2, with ln 2 in two parts so the product is exact.
        let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693_359_4), x);
        let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.121_944_4e-4), r);
        let mut p = _mm256_set1_ps(1.987_569_1e-4);
        for c in [1.398_199_9e-3, 8.333_452e-3, 4.166_579_6e-2, 0.166_666_65, 0.5] {
            p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
        }
        let p = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0));
        // Times 2^n through the exponent bits.
        let scale = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
        _mm256_mul_ps(p, _mm256_castsi256_ps(scale))
    }

    /// `v * 1 / (1 + exp(-1.702 v))` on eight lanes (also the packed
    /// products' epilogue, `packed::Epilogue`).
    #[target_feature(enable = "avx2,fma")]
    pub(in crate::scoring) unsafe fn quick_gelu8(v: __m256) -> __m256 {
        let e = exp(_mm256_mul_ps(v, _mm256_set1_ps(-1.702)));
        let sig = _mm256_div_ps(_mm256_set1_ps(1.0), _mm256_add_ps(e, _mm256_set1_ps(1.0)));
        _mm256_mul_ps(v, sig)
    }

    /// `quick_gelu8` in place.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn quick_gelu(x: &mut [f32]) {
        let mut lanes = x.chunks_exact_mut(8);
        for c in lanes.by_ref() {
            _mm256_storeu_ps(c.as_mut_ptr(), quick_gelu8(_mm256_loadu_ps(c.as_ptr())));
        }
        for v in lanes.into_remainder() {
            *v *= (1.0 + (-1.702 * *v).exp()).recip();
        }
    }
}

/// A strided view of a row-major matrix: element (i, j) at `data[i * rs + j * cs]`.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub data: &'a [f32],
    pub rs: usize,
    pub cs: usize,
}

impl<'a> View<'a> {
    pub fn rows(data: &'a [f32], rs: usize) -> Self {
        View { data, rs, cs: 1 }
    }

    /// The transpose of a row-major matrix with row stride `rs`.
    pub fn transposed(data: &'a [f32], rs: usize) -> Self {
        View { data, rs: 1, cs: rs }
    }

    fn check(&self, rows: usize, cols: usize, what: &str) {
        let last = (rows.max(1) - 1) * self.rs + (cols.max(1) - 1) * self.cs;
        assert!(self.data.len() > last, "matmul: {what} ({rows}x{cols}) does not fit in {}", self.data.len());
    }
}

/// `dst = lhs · rhs * scale`, or `dst += …` with `accumulate`; `dst` is
/// (m, n) with row stride `dst_rs`, `lhs` (m, k), `rhs` (k, n). `threads` > 1
/// splits the product itself over the rayon pool.
#[allow(clippy::too_many_arguments)]
pub fn matmul(
    dst: &mut [f32],
    dst_rs: usize,
    lhs: View,
    rhs: View,
    (m, n, k): (usize, usize, usize),
    scale: f32,
    accumulate: bool,
    threads: usize,
) {
    View::rows(dst, dst_rs).check(m, n, "dst");
    lhs.check(m, k, "lhs");
    rhs.check(k, n, "rhs");
    let parallelism = if threads > 1 { gemm::Parallelism::Rayon(threads) } else { gemm::Parallelism::None };
    // Safety: the checks above keep every element gemm reads or writes
    // inside the three slices, and `dst` is borrowed mutably (no aliasing).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            dst_rs as isize,
            accumulate,
            lhs.data.as_ptr(),
            lhs.cs as isize,
            lhs.rs as isize,
            rhs.data.as_ptr(),
            rhs.cs as isize,
            rhs.rs as isize,
            1.0,
            scale,
            false,
            false,
            false,
            parallelism,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::rng::SplitMix64;
    use candle_core::{Device, Tensor, D};

    fn random(n: usize, seed: u64) -> Vec<f32> {
        let mut rng = SplitMix64::new(seed);
        (0..n).map(|_| (rng.next_f64() * 6.0 - 3.0) as f32).collect()
    }

    fn max_diff(a: &[f32], b: &Tensor) -> f32 {
        let b = b.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        assert_eq!(a.len(), b.len());
        a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
    }

    #[test]
    fn layer_norm_matches_candle() {
        let (rows, cols) = (37, 101); // six 16-lane chunks and a remainder
        let (x, w, b) = (random(rows * cols, 1), random(cols, 2), random(cols, 3));
        let t = |v: &[f32], s: &[usize]| Tensor::from_slice(v, s, &Device::Cpu).unwrap();
        let want = candle_nn::ops::layer_norm_slow(&t(&x, &[rows, cols]), &t(&w, &[cols]), &t(&b, &[cols]), 1e-5);
        for threads in [1, 2] {
            let mut out = vec![0.0; x.len()];
            layer_norm(&x, &w, &b, 1e-5, &mut out, threads);
            assert!(max_diff(&out, want.as_ref().unwrap()) < 1e-6, "{threads} threads");
        }
    }

    #[test]
    fn softmax_row_matches_candle_with_and_without_a_causal_mask() {
        let t = 13;
        let x = random(t * t, 4);
        let logits = Tensor::from_slice(&x, (t, t), &Device::Cpu).unwrap();
        let mask: Vec<f32> = (0..t * t).map(|k| if k % t > k / t { f32::NEG_INFINITY } else { 0.0 }).collect();
        let mask = Tensor::from_vec(mask, (t, t), &Device::Cpu).unwrap();
        for causal in [false, true] {
            let mut got = x.clone();
            for (i, row) in got.chunks_exact_mut(t).enumerate() {
                softmax_row(row, if causal { i + 1 } else { t });
            }
            let masked = if causal { logits.broadcast_add(&mask).unwrap() } else { logits.clone() };
            assert!(max_diff(&got, &candle_nn::ops::softmax_last_dim(&masked).unwrap()) < 1e-6);
        }
    }

    #[test]
    fn activations_match_candle() {
        // Past both ends of the vector exp's clamp too (|1.702 v| > 88).
        let mut x = random(5003, 5);
        x.extend([-60.0, -52.0, -40.0, 52.0, 60.0, 0.0, -0.0]);
        let xt = Tensor::from_slice(&x, x.len(), &Device::Cpu).unwrap();
        let quick = (&xt * candle_nn::ops::sigmoid(&(&xt * 1.702).unwrap()).unwrap()).unwrap();
        for (act, want) in [
            (Activation::QuickGelu, quick),
            (Activation::Gelu, xt.gelu_erf().unwrap()),
            (Activation::GeluTanh, xt.gelu().unwrap()),
        ] {
            let mut got = x.clone();
            for threads in [1, 2] {
                activate(act, &mut got, threads);
                assert!(max_diff(&got, &want) < 1e-6, "{act:?} on {threads} threads");
                got.copy_from_slice(&x);
            }
        }
    }

    #[test]
    fn strided_matmul_matches_candle_and_accumulates() {
        let (m, n, k) = (7, 5, 11);
        let (a, b) = (random(m * 2 * k, 6), random(n * k, 7));
        let at = Tensor::from_slice(&a, (m, 2 * k), &Device::Cpu).unwrap().narrow(D::Minus1, k, k).unwrap();
        // rhs read as the transpose of an (n, k) matrix, lhs as every row's second half.
        let want =
            (at.matmul(&Tensor::from_slice(&b, (n, k), &Device::Cpu).unwrap().t().unwrap()).unwrap() * 0.5).unwrap();
        let mut dst = vec![1.0; m * n];
        matmul(&mut dst, n, View::rows(&a[k..], 2 * k), View::transposed(&b, k), (m, n, k), 0.5, false, 2);
        assert!(max_diff(&dst, &want) < 1e-6);
        matmul(&mut dst, n, View::rows(&a[k..], 2 * k), View::transposed(&b, k), (m, n, k), 0.5, true, 1);
        assert!(max_diff(&dst, &(want * 2.0).unwrap()) < 1e-6);
    }

    #[test]
    #[should_panic(expected = "does not fit")]
    fn matmul_refuses_views_past_their_slice() {
        let mut dst = vec![0.0; 4];
        matmul(&mut dst, 2, View::rows(&[1.0; 3], 2), View::rows(&[1.0; 4], 2), (2, 2, 2), 1.0, false, 1);
    }
}
