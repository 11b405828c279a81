// A probe, not part of the app: how fast and how exact an f32 product gets
// on this CPU's AMX tiles (bf16 in, f32 sums) when each f32 is split into
// bf16 parts: 1 part (plain bf16), 2 parts (3 products: hi·hi, hi·lo,
// lo·hi) or 3 parts (6 products, every term above 2^-24). Single thread,
// 32×32 output blocks, A in the tile's layout (16 rows × 32 depths, 1 KB
// contiguous). Loop orders (env): ORDER=0 row blocks outer, 1 column
// blocks outer, 2 rows in chunks of MC (default 256) with the column
// blocks inside, 3 as 2 in passes of KC depths (sums stored between).
// Session 15's figures (A row-major) came from this file at fa67f55.
// Linux x86-64 with amx_bf16 only (docs/performance.md, sessions 15, 16).
//
//   rustc -O -C target-cpu=native scripts/reference/amx_probe.rs -o /tmp/amx_probe
//   ORDER=3 MC=256 KC=768 taskset -c 0 /tmp/amx_probe M K N PARTS   # M, N, K multiples of 32
use std::arch::asm;

extern "C" {
    fn syscall(n: i64, ...) -> i64;
}

/// f32 to bf16, rounding to nearest even.
fn bf16(x: f32) -> u16 {
    let b = x.to_bits();
    (b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

fn widen(x: u16) -> f32 {
    f32::from_bits((x as u32) << 16)
}

/// x ≈ hi + mid + lo, each a bf16.
fn split(x: f32) -> [u16; 3] {
    let hi = bf16(x);
    let r = x - widen(hi);
    let mid = bf16(r);
    [hi, mid, bf16(r - widen(mid))]
}

#[repr(C, align(64))]
struct TileConfig([u8; 64]);

/// Asks Linux for the tile state, then makes tmm0–7 16 rows of 64 bytes.
unsafe fn enable_tiles() {
    const ARCH_REQ_XCOMP_PERM: i64 = 0x1023;
    const XFEATURE_XTILEDATA: i64 = 18;
    assert_eq!(syscall(158, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), 0, "no AMX tile state from the kernel");
    let mut c = TileConfig([0; 64]);
    c.0[0] = 1; // palette 1
    for t in 0..8 {
        c.0[16 + 2 * t] = 64;
        c.0[48 + t] = 16;
    }
    asm!("ldtilecfg [{}]", in(reg) c.0.as_ptr());
}

/// A packed as tiles: per 16-row block, per 32-depth step, 16 rows x 64 bytes contiguous.
unsafe fn product(c: &mut [f32], a: &[Vec<u16>; 3], b: &[Vec<u16>; 3], (m, k, n): (usize, usize, usize), parts: usize) {
    let seq: &[(usize, usize)] = match parts {
        3 => &[(0, 2), (0, 1), (0, 0), (1, 0), (2, 0), (1, 1)],
        2 => &[(0, 1), (0, 0), (1, 0)],
        _ => &[(0, 0)],
    };
    let order = std::env::var("ORDER").map(|v| v.parse::<usize>().unwrap()).unwrap_or(0);
    let mc: usize = std::env::var("MC").map(|v| v.parse().unwrap()).unwrap_or(256);
    let (c_stride, panel) = (n * 4, (k / 2) * 32);
    let ablk = 16 * k; // u16 per 16-row block
    let kcb: usize = std::env::var("KC").map(|v| v.parse().unwrap()).unwrap_or(k);
    let mut block = |i: usize, j: usize, k0: usize, k1: usize| {
        let c0 = c.as_mut_ptr().add(i * n + j) as *mut u8;
        if k0 == 0 {
            asm!("tilezero tmm0", "tilezero tmm1", "tilezero tmm2", "tilezero tmm3");
        } else {
            asm!(
                "tileloadd tmm0, [{c0} + {s}*1]", "tileloadd tmm1, [{c1} + {s}*1]",
                "tileloadd tmm2, [{c2} + {s}*1]", "tileloadd tmm3, [{c3} + {s}*1]",
                c0 = in(reg) c0, c1 = in(reg) c0.add(64), c2 = in(reg) c0.add(16 * c_stride),
                c3 = in(reg) c0.add(16 * c_stride + 64), s = in(reg) c_stride,
            );
        }
        for kk in (k0..k1).step_by(32) {
            let (mut la, mut lb) = (usize::MAX, usize::MAX);
            for &(ap, bp) in seq {
                if ap != la {
                    let a0 = a[ap].as_ptr().add((i / 16) * ablk + (kk / 32) * 512) as *const u8;
                    asm!("tileloadd tmm4, [{a0} + {s}*1]", "tileloadd tmm5, [{a1} + {s}*1]",
                        a0 = in(reg) a0, a1 = in(reg) a0.add(ablk * 2), s = in(reg) 64usize);
                    la = ap;
                }
                if bp != lb {
                    let b0 = b[bp].as_ptr().add((j / 16) * panel + (kk / 2) * 32) as *const u8;
                    asm!("tileloadd tmm6, [{b0} + {s}*1]", "tileloadd tmm7, [{b1} + {s}*1]",
                        b0 = in(reg) b0, b1 = in(reg) b0.add(panel * 2), s = in(reg) 64usize);
                    lb = bp;
                }
                asm!(
                    "tdpbf16ps tmm0, tmm4, tmm6",
                    "tdpbf16ps tmm1, tmm4, tmm7",
                    "tdpbf16ps tmm2, tmm5, tmm6",
                    "tdpbf16ps tmm3, tmm5, tmm7"
                );
            }
        }
        let c0 = c.as_mut_ptr().add(i * n + j) as *mut u8;
        asm!(
            "tilestored [{c0} + {s}*1], tmm0", "tilestored [{c1} + {s}*1], tmm1",
            "tilestored [{c2} + {s}*1], tmm2", "tilestored [{c3} + {s}*1], tmm3",
            c0 = in(reg) c0, c1 = in(reg) c0.add(64), c2 = in(reg) c0.add(16 * c_stride),
            c3 = in(reg) c0.add(16 * c_stride + 64), s = in(reg) c_stride,
        );
    };
    match order {
        0 => {
            for i in (0..m).step_by(32) {
                for j in (0..n).step_by(32) {
                    block(i, j, 0, k)
                }
            }
        }
        1 => {
            for j in (0..n).step_by(32) {
                for i in (0..m).step_by(32) {
                    block(i, j, 0, k)
                }
            }
        }
        2 => {
            for ic in (0..m).step_by(mc) {
                for j in (0..n).step_by(32) {
                    for i in (ic..(ic + mc).min(m)).step_by(32) {
                        block(i, j, 0, k)
                    }
                }
            }
        }
        _ => {
            for kb in (0..k).step_by(kcb) {
                for ic in (0..m).step_by(mc) {
                    for j in (0..n).step_by(32) {
                        for i in (ic..(ic + mc).min(m)).step_by(32) {
                            block(i, j, kb, (kb + kcb).min(k))
                        }
                    }
                }
            }
        }
    }
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|v| v.parse().expect("M K N PARTS")).collect();
    let [m, k, n, parts] = args[..] else { panic!("usage: amx_probe M K N PARTS") };
    assert!(
        m % 32 == 0 && n % 32 == 0 && k % 32 == 0 && (1..=3).contains(&parts),
        "M, N, K multiples of 32; PARTS 1-3"
    );
    unsafe { enable_tiles() };
    let mut s = 12345u64;
    let mut random = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    };
    let a: Vec<f32> = (0..m * k).map(|_| random()).collect();
    let b: Vec<f32> = (0..k * n).map(|_| random() * 0.05).collect();
    let a_parts: [Vec<u16>; 3] = std::array::from_fn(|p| {
        let mut v = vec![0u16; m * k];
        for row in 0..m {
            for q in 0..k {
                v[(row / 16) * 16 * k + (q / 32) * 512 + (row % 16) * 32 + q % 32] = split(a[row * k + q])[p];
            }
        }
        v
    });
    let panel = (k / 2) * 32;
    let b_parts: [Vec<u16>; 3] = std::array::from_fn(|p| {
        let mut v = vec![0u16; k * n];
        for row in 0..k {
            for col in 0..n {
                v[(col / 16) * panel + (row / 2) * 32 + (col % 16) * 2 + row % 2] = split(b[row * n + col])[p];
            }
        }
        v
    });
    let mut c = vec![0f32; m * n];
    let reps = 10;
    unsafe { product(&mut c, &a_parts, &b_parts, (m, k, n), parts) };
    let start = std::time::Instant::now();
    for _ in 0..reps {
        unsafe { product(&mut c, &a_parts, &b_parts, (m, k, n), parts) };
    }
    let secs = start.elapsed().as_secs_f64() / reps as f64;
    // Error against f64 on a sample, relative to the sum of |terms|, beside
    // a plain f32 loop's.
    let (mut amx, mut f32_loop) = (0f64, 0f64);
    for i in (0..m).step_by(37) {
        for j in (0..n).step_by(13) {
            let terms = (0..k).map(|q| (a[i * k + q] as f64, b[q * n + j] as f64));
            let (exact, size) = terms.fold((0.0, 0.0), |(e, s), (x, y)| (e + x * y, s + (x * y).abs()));
            let plain = (0..k).fold(0f32, |acc, q| a[i * k + q].mul_add(b[q * n + j], acc));
            amx = amx.max((c[i * n + j] as f64 - exact).abs() / size);
            f32_loop = f32_loop.max((plain as f64 - exact).abs() / size);
        }
    }
    println!(
        "{parts} part(s), {m}x{k}x{n}: {:.2} ms, {:.1} GFLOP/s as f32; largest error / sum|terms| {amx:.2e} (an f32 loop: {f32_loop:.2e})",
        secs * 1e3,
        2.0 * (m * k * n) as f64 / secs / 1e9
    );
}
