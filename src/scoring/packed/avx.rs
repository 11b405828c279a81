//! The packed kernels (see the parent module): AVX2+FMA, 6 rows × one
//! panel; AVX-512, 8 rows × two panels (or the lone panel left over).
use super::{Epilogue, Isa, KC, MC, NR};
use crate::scoring::kernels::avx::quick_gelu8;
use std::arch::x86_64::*;

/// `dst[r][0..16] = act(start[r] + a[r][0..kc] · b)` for `R` rows, `b`
/// a panel's (kc, 16) slice; `start` is `dst` with `load`, plus `bias`
/// unless null; the activation is QuickGELU with `gelu`.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx2,fma")]
unsafe fn kernel<const R: usize>(
    dst: *mut f32,
    dst_rs: usize,
    a: *const f32,
    a_rs: usize,
    b: *const f32,
    kc: usize,
    (load, bias, gelu): (bool, *const f32, bool),
) {
    let mut c = [[_mm256_setzero_ps(); 2]; R];
    for (r, c) in c.iter_mut().enumerate() {
        if load {
            *c = [_mm256_loadu_ps(dst.add(r * dst_rs)), _mm256_loadu_ps(dst.add(r * dst_rs + 8))];
        }
        if !bias.is_null() {
            *c = [_mm256_add_ps(c[0], _mm256_loadu_ps(bias)), _mm256_add_ps(c[1], _mm256_loadu_ps(bias.add(8)))];
        }
    }
    for kk in 0..kc {
        let (b0, b1) = (_mm256_loadu_ps(b.add(kk * NR)), _mm256_loadu_ps(b.add(kk * NR + 8)));
        for (r, c) in c.iter_mut().enumerate() {
            let a = _mm256_broadcast_ss(&*a.add(r * a_rs + kk));
            *c = [_mm256_fmadd_ps(a, b0, c[0]), _mm256_fmadd_ps(a, b1, c[1])];
        }
    }
    for (r, c) in c.iter().enumerate() {
        let c = if gelu { [quick_gelu8(c[0]), quick_gelu8(c[1])] } else { *c };
        _mm256_storeu_ps(dst.add(r * dst_rs), c[0]);
        _mm256_storeu_ps(dst.add(r * dst_rs + 8), c[1]);
    }
}

/// `$body` for each of the kernel's rows `$r` < `R` and panels `$j` < `P`,
/// with both as literals: the sums then stay in registers whatever the
/// optimiser makes of loops (a build where it did not unroll one spilled
/// them to the stack at every step and ran the towers 25% slower).
macro_rules! each {
    ($r:ident, $j:ident => $body:expr) => {
        each!(@rows $r $j $body; 0 1 2 3 4 5 6 7)
    };
    (@rows $r:ident $j:ident $body:expr; $($n:literal)*) => {
        $( each!(@cols $r $j $body; $n; 0 1); )*
    };
    (@cols $r:ident $j:ident $body:expr; $n:literal; $($m:literal)*) => {
        $( if $n < R && $m < P {
            let ($r, $j): (usize, usize) = ($n, $m);
            $body;
        } )*
    };
}

/// As [`kernel`] on AVX-512 for `P` (1 or 2) panels side by side (`b`'s
/// next panel `b_next` floats on), `R` (1..=8) rows.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn kernel512<const R: usize, const P: usize>(
    dst: *mut f32,
    dst_rs: usize,
    a: *const f32,
    a_rs: usize,
    b: *const f32,
    b_next: usize,
    kc: usize,
    (load, bias, gelu): (bool, *const f32, bool),
) {
    let mut c = [[_mm512_setzero_ps(); 2]; 8];
    each!(r, j => {
        if load {
            c[r][j] = _mm512_loadu_ps(dst.add(r * dst_rs + j * NR));
        }
        if !bias.is_null() {
            c[r][j] = _mm512_add_ps(c[r][j], _mm512_loadu_ps(bias.add(j * NR)));
        }
    });
    for kk in 0..kc {
        let b = [_mm512_loadu_ps(b.add(kk * NR)), _mm512_loadu_ps(b.add((P - 1) * b_next + kk * NR))];
        each!(r, j => c[r][j] = _mm512_fmadd_ps(_mm512_set1_ps(*a.add(r * a_rs + kk)), b[j], c[r][j]));
    }
    each!(r, j => _mm512_storeu_ps(dst.add(r * dst_rs + j * NR), c[r][j]));
    // QuickGELU over what was just stored, apart from the sums above.
    if gelu {
        for r in 0..R {
            for h in 0..2 * P {
                let d = dst.add(r * dst_rs + h * 8);
                _mm256_storeu_ps(d, quick_gelu8(_mm256_loadu_ps(d)));
            }
        }
    }
}

/// `dst = act(start + a · w)` (`e`) over the columns of `panels`,
/// `dst`'s column 0 being panel `first`'s; the caller checks bounds.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gemm(
    dst: *mut f32,
    dst_rs: usize,
    a: *const f32,
    a_rs: usize,
    (m, k): (usize, usize),
    w: &[f32],
    e: Epilogue,
    first: usize,
    panels: std::ops::Range<usize>,
    isa: Isa,
) {
    // Panels a kernel call covers and rows it takes at most.
    let (step, rows) = match isa {
        Isa::Avx2 => (1, 6),
        Isa::Avx512 => (2, 8),
        Isa::Amx => unreachable!("the AMX panels have their own kernel (packed::amx)"),
    };
    // Row blocks as even as they come (106 rows: 8 and 7, not 13 × 8 and
    // 2): a kernel on 1–3 rows has too few sums in flight to keep the
    // multiply-adds busy and ran the tail at a quarter of their speed.
    let (blocks, per_group) = (m.div_ceil(rows), MC / rows);
    let start = |block: usize| m * block / blocks;
    for kb in (0..k).step_by(KC) {
        let kc = KC.min(k - kb);
        // The start and the activation ride on the first and the last pass over k.
        let (load, gelu) = (kb > 0 || e.acc, e.quick_gelu && kb + kc == k);
        for first_block in (0..blocks).step_by(per_group) {
            let last_block = (first_block + per_group).min(blocks);
            for p in panels.clone().step_by(step) {
                let b = w.as_ptr().add((p * k + kb) * NR);
                let bias = match e.bias {
                    Some(bias) if kb == 0 => bias.as_ptr().add((p - first) * NR),
                    _ => std::ptr::null(),
                };
                let f = (load, bias, gelu);
                let two = panels.end - p >= 2;
                for block in first_block..last_block {
                    let (i, r) = (start(block), start(block + 1) - start(block));
                    let (d, a) = (dst.add(i * dst_rs + (p - first) * NR), a.add(i * a_rs + kb));
                    match isa {
                        Isa::Avx2 => avx2_rows(r, d, dst_rs, a, a_rs, b, kc, f),
                        Isa::Avx512 if two => avx512_rows::<2>(r, d, dst_rs, a, a_rs, b, k * NR, kc, f),
                        Isa::Avx512 | Isa::Amx => avx512_rows::<1>(r, d, dst_rs, a, a_rs, b, k * NR, kc, f),
                    }
                }
            }
        }
    }
}

/// [`kernel`] for `r` (1..=6) rows. (Plain arguments here and in
/// [`avx512_rows`] on purpose: one struct of operands for both halved the
/// towers' speed, docs/performance.md, session 12.)
#[allow(clippy::too_many_arguments)]
unsafe fn avx2_rows(
    r: usize,
    d: *mut f32,
    d_rs: usize,
    a: *const f32,
    a_rs: usize,
    b: *const f32,
    kc: usize,
    f: (bool, *const f32, bool),
) {
    match r {
        1 => kernel::<1>(d, d_rs, a, a_rs, b, kc, f),
        2 => kernel::<2>(d, d_rs, a, a_rs, b, kc, f),
        3 => kernel::<3>(d, d_rs, a, a_rs, b, kc, f),
        4 => kernel::<4>(d, d_rs, a, a_rs, b, kc, f),
        5 => kernel::<5>(d, d_rs, a, a_rs, b, kc, f),
        _ => kernel::<6>(d, d_rs, a, a_rs, b, kc, f),
    }
}

/// [`kernel512`] for `r` (1..=8) rows.
#[allow(clippy::too_many_arguments)]
unsafe fn avx512_rows<const P: usize>(
    r: usize,
    d: *mut f32,
    d_rs: usize,
    a: *const f32,
    a_rs: usize,
    b: *const f32,
    b_next: usize,
    kc: usize,
    f: (bool, *const f32, bool),
) {
    match r {
        1 => kernel512::<1, P>(d, d_rs, a, a_rs, b, b_next, kc, f),
        2 => kernel512::<2, P>(d, d_rs, a, a_rs, b, b_next, kc, f),
        3 => kernel512::<3, P>(d, d_rs, a, a_rs, b, b_next, kc, f),
        4 => kernel512::<4, P>(d, d_rs, a, a_rs, b, b_next, kc, f),
        5 => kernel512::<5, P>(d, d_rs, a, a_rs, b, b_next, kc, f),
        6 => kernel512::<6, P>(d, d_rs, a, a_rs, b, b_next, kc, f),
        7 => kernel512::<7, P>(d, d_rs, a, a_rs, b, b_next, kc, f),
        _ => kernel512::<8, P>(d, d_rs, a, a_rs, b, b_next, kc, f),
    }
}
