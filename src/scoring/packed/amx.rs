//! The AMX kernel (see the parent module). The tiles multiply bf16 and sum
//! in f32, so each f32 is split into three bf16 parts, hi + mid + lo (each
//! rounding what is left; together exact), and six of the nine part
//! products are summed: the three dropped (mid·lo, lo·mid, lo·lo) add at
//! most 2^-24 of |a·b| each, the size of one f32 rounding. Against f64 the
//! sums are closer than an f32 loop's (docs/performance.md, session 16).
//! Both operands are laid out as tiles: the weights once at load, the input
//! at every product.
use super::{Epilogue, NR};
use crate::scoring::kernels::avx::quick_gelu8;
use parts::block_len;
pub(super) use parts::{pack, Split};
use std::arch::asm;
use std::arch::x86_64::*;
use std::ops::Range;
use std::sync::OnceLock;

mod parts;

/// Depth per tile step: 32 bf16, one 64-byte tile row.
const KT: usize = 32;
/// Rows per tile.
const MT: usize = 16;
/// Rows per chunk: a chunk's input parts for a pass over the depth (256 ×
/// 768 × 6 bytes) stay in L2 while a task's column blocks go past them.
const MC: usize = 256;
/// Depth per pass: deeper products (the MLP's second layer, 3072) in
/// passes, their sums kept between (+17% there, in a probe).
const KC: usize = 768;
/// (A part, B part) in the order the kernel multiplies them: each step
/// keeps one operand's tiles, so 16 tile loads serve 24 multiplies.
const TERMS: [(usize, usize); 6] = [(0, 2), (0, 1), (0, 0), (1, 0), (2, 0), (1, 1)];

/// Whether this CPU has the tiles and Linux lets the process use them.
pub(super) fn available() -> bool {
    static READY: OnceLock<bool> = OnceLock::new();
    *READY.get_or_init(|| {
        let edx = __cpuid_count(7, 0).edx;
        let (tile, bf16) = (edx >> 24 & 1 == 1, edx >> 22 & 1 == 1);
        tile && bf16 && std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx2") && permitted()
    })
}

/// Linux hands out the tiles' 8 KiB of state per process, on request.
#[cfg(target_os = "linux")]
fn permitted() -> bool {
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // Safety: a request with no memory operands; it fails cleanly where refused.
    unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn permitted() -> bool {
    false
}

/// Depth padded to whole tile steps (the padding is zero on both sides).
pub(super) fn padded(k: usize) -> usize {
    k.next_multiple_of(KT)
}

#[repr(C, align(64))]
struct Config([u8; 64]);

/// A block's sums: 32 rows × 32 columns.
#[derive(Clone)]
#[repr(C, align(64))]
struct Sums([f32; 2 * MT * 2 * NR]);

impl Sums {
    const ZERO: Sums = Sums([0.0; 2 * MT * 2 * NR]);
}

/// Tiles 0–7 as 16 rows of 64 bytes: 0–3 sums (rows 0–15 and 16–31 ×
/// panels 0 and 1), 4–5 the input's two row tiles, 6–7 the two panels.
unsafe fn configure() {
    let mut c = Config([0; 64]);
    c.0[0] = 1;
    for t in 0..8 {
        c.0[16 + 2 * t] = 64;
        c.0[48 + t] = MT as u8;
    }
    asm!("ldtilecfg [{}]", in(reg) c.0.as_ptr(), options(nostack, readonly));
}

/// The products of `a` (split, m rows) and the packed weights `w` (k
/// padded to `kp`) for the columns of `panels`, `e`
/// around them into `dst` (column 0 being panel `first`'s); the caller
/// checks bounds and that `available()` holds.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gemm(
    dst: *mut f32,
    dst_rs: usize,
    a: &Split,
    w: *const u16,
    kp: usize,
    e: Epilogue,
    first: usize,
    panels: Range<usize>,
) {
    configure();
    let (m, blocks, steps) = (a.m, a.m.div_ceil(MT), kp / KT);
    let pairs = panels.len().div_ceil(2);
    // Sums between passes over the depth: a 32×32 slot per (pair of row
    // tiles, pair of panels) of a chunk.
    let mut partial = vec![Sums::ZERO; if steps > KC / KT { MC / MT / 2 * pairs } else { 0 }];
    let mut sums = Sums::ZERO;
    for chunk in (0..blocks).step_by(MC / MT) {
        let chunk_end = (chunk + MC / MT).min(blocks);
        for s0 in (0..steps).step_by(KC / KT) {
            let depth = s0..(s0 + KC / KT).min(steps);
            let last = depth.end == steps;
            for (q, p) in panels.clone().step_by(2).enumerate() {
                let b = w.add(p * 3 * kp * NR);
                let two_cols = panels.end - p >= 2;
                for block in (chunk..chunk_end).step_by(2) {
                    let two_rows = chunk_end - block >= 2;
                    let a = a.ptr().add(block * block_len(kp));
                    let slot = partial
                        .get_mut((block - chunk) / 2 * pairs + q)
                        .map_or(std::ptr::null_mut(), |s| s.0.as_mut_ptr());
                    let start = if s0 == 0 { std::ptr::null() } else { slot.cast_const() };
                    let out = if last { sums.0.as_mut_ptr() } else { slot };
                    let f = (depth.clone(), start, out);
                    match (two_rows, two_cols) {
                        (true, true) => tiles::<true, true>(a, b, kp, f),
                        (true, false) => tiles::<true, false>(a, b, kp, f),
                        (false, true) => tiles::<false, true>(a, b, kp, f),
                        (false, false) => tiles::<false, false>(a, b, kp, f),
                    }
                    if last {
                        let rows = (m - block * MT).min(if two_rows { 2 * MT } else { MT });
                        let col = (p - first) * NR;
                        let bias = e.bias.map(|b| b.as_ptr().add(col));
                        finish(
                            &sums,
                            rows,
                            if two_cols { 2 } else { 1 },
                            dst.add(block * MT * dst_rs + col),
                            dst_rs,
                            e,
                            bias,
                        );
                    }
                }
            }
        }
    }
    asm!("tilerelease", options(nostack, nomem));
}

/// One block's sums (32 or 16 rows × 32 or 16 columns) over the tile
/// steps `depth`, from `start` (zeros if null) into `out`, both with row
/// stride 32 floats. `a`: the block's parts; `b`: the first panel's.
#[inline(always)]
unsafe fn tiles<const TWO_ROWS: bool, const TWO_COLS: bool>(
    a: *const u16,
    b: *const u16,
    kp: usize,
    (depth, start, out): (Range<usize>, *const f32, *mut f32),
) {
    let rs = 2 * NR * 4;
    if start.is_null() {
        asm!("tilezero tmm0", "tilezero tmm1", "tilezero tmm2", "tilezero tmm3", options(nostack, nomem));
    } else {
        let c = start.cast::<u8>();
        asm!(
            "tileloadd tmm0, [{c0} + {s}*1]",
            "tileloadd tmm1, [{c1} + {s}*1]",
            "tileloadd tmm2, [{c2} + {s}*1]",
            "tileloadd tmm3, [{c3} + {s}*1]",
            c0 = in(reg) c, c1 = in(reg) c.add(4 * NR), c2 = in(reg) c.add(MT * rs),
            c3 = in(reg) c.add(MT * rs + 4 * NR), s = in(reg) rs, options(nostack, readonly),
        );
    }
    let (a_next, b_next) = (block_len(kp) * 2, 3 * kp * NR * 2);
    for s in depth {
        let (mut held_a, mut held_b) = (usize::MAX, usize::MAX);
        for (pa, pb) in TERMS {
            if pa != held_a {
                let a0 = a.add(pa * MT * kp + s * MT * KT).cast::<u8>();
                asm!("tileloadd tmm4, [{a} + {s}*1]", a = in(reg) a0, s = in(reg) 2 * KT, options(nostack, readonly));
                if TWO_ROWS {
                    asm!("tileloadd tmm5, [{a} + {s}*1]", a = in(reg) a0.add(a_next), s = in(reg) 2 * KT, options(nostack, readonly));
                }
                held_a = pa;
            }
            if pb != held_b {
                let b0 = b.add(pb * kp * NR + s * KT * NR).cast::<u8>();
                asm!("tileloadd tmm6, [{b} + {s}*1]", b = in(reg) b0, s = in(reg) 4 * NR, options(nostack, readonly));
                if TWO_COLS {
                    asm!("tileloadd tmm7, [{b} + {s}*1]", b = in(reg) b0.add(b_next), s = in(reg) 4 * NR, options(nostack, readonly));
                }
                held_b = pb;
            }
            asm!("tdpbf16ps tmm0, tmm4, tmm6", options(nostack, nomem));
            if TWO_COLS {
                asm!("tdpbf16ps tmm1, tmm4, tmm7", options(nostack, nomem));
            }
            if TWO_ROWS {
                asm!("tdpbf16ps tmm2, tmm5, tmm6", options(nostack, nomem));
                if TWO_COLS {
                    asm!("tdpbf16ps tmm3, tmm5, tmm7", options(nostack, nomem));
                }
            }
        }
    }
    let c = out.cast::<u8>();
    asm!(
        "tilestored [{c0} + {s}*1], tmm0",
        "tilestored [{c1} + {s}*1], tmm1",
        "tilestored [{c2} + {s}*1], tmm2",
        "tilestored [{c3} + {s}*1], tmm3",
        c0 = in(reg) c, c1 = in(reg) c.add(4 * NR), c2 = in(reg) c.add(MT * rs),
        c3 = in(reg) c.add(MT * rs + 4 * NR), s = in(reg) rs, options(nostack),
    );
}

/// `dst = act(start + bias + sums)` for `rows` × `panels` panels.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn finish(
    sums: &Sums,
    rows: usize,
    panels: usize,
    dst: *mut f32,
    dst_rs: usize,
    e: Epilogue,
    bias: Option<*const f32>,
) {
    for r in 0..rows {
        for j in 0..panels {
            let d = dst.add(r * dst_rs + j * NR);
            let mut v = _mm512_loadu_ps(sums.0.as_ptr().add(r * 2 * NR + j * NR));
            if e.acc {
                v = _mm512_add_ps(v, _mm512_loadu_ps(d));
            }
            if let Some(bias) = bias {
                v = _mm512_add_ps(v, _mm512_loadu_ps(bias.add(j * NR)));
            }
            if e.quick_gelu {
                let high = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v)));
                _mm256_storeu_ps(d, quick_gelu8(_mm512_castps512_ps256(v)));
                _mm256_storeu_ps(d.add(8), quick_gelu8(high));
            } else {
                _mm512_storeu_ps(d, v);
            }
        }
    }
}
