//! OpenAI CLIP image preprocessing, reproduced exactly: torchvision's
//! `Resize(size, BICUBIC)` (short side to `size`) on a PIL image, then
//! `CenterCrop(size)`, `ToTensor`, `Normalize(MEAN, STD)`. The resize is
//! PIL's 8-bit resampler, integer arithmetic included, so pixels match PIL's
//! bit for bit on the same decoded RGB input. Pure: no IO.

/// Part of the embedding cache key: bump when anything here changes output.
pub const PREPROCESS_VERSION: &str = "openai-clip-bicubic-v1";
pub const MEAN: [f32; 3] = [0.481_454_66, 0.457_827_5, 0.408_210_73];
pub const STD: [f32; 3] = [0.268_629_54, 0.261_302_6, 0.275_777_1];

/// PIL's fixed-point precision for 8-bit resampling (32 - 8 - 2).
const PRECISION_BITS: u32 = 22;

/// An RGB image, row-major, 3 bytes per pixel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rgb {
    pub width: usize,
    pub height: usize,
    pub data: Vec<u8>,
}

/// PIL's bicubic kernel (a = -0.5).
fn bicubic(x: f64) -> f64 {
    let a = -0.5;
    let x = x.abs();
    if x < 1.0 {
        ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    } else if x < 2.0 {
        (((x - 5.0) * x + 8.0) * x - 4.0) * a
    } else {
        0.0
    }
}

/// For each output index: first input index and fixed-point weights
/// (PIL's `precompute_coeffs` + `normalize_coeffs_8bpc`).
fn coefficients(in_size: usize, out_size: usize) -> Vec<(usize, Vec<i32>)> {
    let scale = in_size as f64 / out_size as f64;
    let filterscale = scale.max(1.0);
    let support = 2.0 * filterscale;
    (0..out_size)
        .map(|xx| {
            let center = (xx as f64 + 0.5) * scale;
            // C casts truncate toward zero; both bounds are then clamped.
            let xmin = ((center - support + 0.5) as i64).max(0) as usize;
            let xmax = ((center + support + 0.5) as i64).min(in_size as i64) as usize;
            let w: Vec<f64> = (xmin..xmax).map(|x| bicubic((x as f64 - center + 0.5) / filterscale)).collect();
            let total: f64 = w.iter().sum();
            let fixed = w
                .iter()
                .map(|&k| {
                    let k = if total != 0.0 { k / total } else { k };
                    let v = k * (1u32 << PRECISION_BITS) as f64;
                    (if v < 0.0 { v - 0.5 } else { v + 0.5 }) as i32
                })
                .collect();
            (xmin, fixed)
        })
        .collect()
}

fn clip8(acc: i64) -> u8 {
    (acc >> PRECISION_BITS).clamp(0, 255) as u8
}

/// One resampling pass along x (`horizontal`) or y, as PIL runs it.
fn pass(img: &Rgb, out_w: usize, out_h: usize, horizontal: bool) -> Rgb {
    let coeffs = if horizontal { coefficients(img.width, out_w) } else { coefficients(img.height, out_h) };
    let mut data = vec![0u8; out_w * out_h * 3];
    for y in 0..out_h {
        for x in 0..out_w {
            let (start, w) = &coeffs[if horizontal { x } else { y }];
            for c in 0..3 {
                let mut acc: i64 = 1 << (PRECISION_BITS - 1);
                for (k, &wk) in w.iter().enumerate() {
                    let (sx, sy) = if horizontal { (start + k, y) } else { (x, start + k) };
                    acc += img.data[(sy * img.width + sx) * 3 + c] as i64 * wk as i64;
                }
                data[(y * out_w + x) * 3 + c] = clip8(acc);
            }
        }
    }
    Rgb { width: out_w, height: out_h, data }
}

/// PIL `Image.resize((w, h), BICUBIC)`: two passes, each skipped when that
/// side keeps its size. Pillow (checked against 13.0) runs the vertical pass
/// first when the height shrinks by more than twice what the width does,
/// and the order changes the 8-bit intermediate, so it is followed here.
pub fn resize_bicubic(img: &Rgb, w: usize, h: usize) -> Rgb {
    let (dw, dh) = (img.width as i64 - w as i64, img.height as i64 - h as i64);
    let horizontal_first = !(dh > 0 && dh > dw * 2);
    let mut out = img.clone();
    for horizontal in if horizontal_first { [true, false] } else { [false, true] } {
        if horizontal && w != out.width {
            out = pass(&out, w, out.height, true);
        } else if !horizontal && h != out.height {
            out = pass(&out, out.width, h, false);
        }
    }
    out
}

/// torchvision's `Resize(size)` output size: short side to `size`, the long
/// side scaled and truncated.
pub fn resized_size(w: usize, h: usize, size: usize) -> (usize, usize) {
    if w <= h {
        (size, size * h / w)
    } else {
        (size * w / h, size)
    }
}

/// torchvision's `CenterCrop` offset: `int(round((len - size) / 2))`, with
/// Python's round-half-to-even.
pub fn crop_offset(len: usize, size: usize) -> usize {
    let d = len.saturating_sub(size);
    let half = d / 2;
    if d.is_multiple_of(2) || half.is_multiple_of(2) {
        half
    } else {
        half + 1
    }
}

/// The model input for one image: CHW, `size`×`size`, normalised.
pub fn preprocess(img: &Rgb, size: usize) -> Vec<f32> {
    let (w, h) = resized_size(img.width, img.height, size);
    let resized = resize_bicubic(img, w, h);
    let (left, top) = (crop_offset(w, size), crop_offset(h, size));
    let mut out = vec![0f32; 3 * size * size];
    for c in 0..3 {
        for y in 0..size {
            for x in 0..size {
                let v = resized.data[((top + y) * w + left + x) * 3 + c] as f32 / 255.0;
                out[(c * size + y) * size + x] = (v - MEAN[c]) / STD[c];
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gradient(w: usize, h: usize) -> Rgb {
        let data = (0..w * h).flat_map(|i| [(i % w * 40) as u8, (i / w * 60) as u8, 200]).collect();
        Rgb { width: w, height: h, data }
    }

    #[test]
    fn kernel_weights_are_pils() {
        // Upscaling 2 -> 4: output 0 is centred at 0.25 in input coordinates;
        // input pixel centres are 0.5 and 1.5, so the distances are 0.25 and 1.25.
        let c = coefficients(2, 4);
        let (w0, w1) = (bicubic(0.25), bicubic(1.25));
        assert_eq!((w0, w1), (0.867_187_5, -0.070_312_5));
        let one = (1 << PRECISION_BITS) as f64;
        // Negative weights round away from zero too.
        assert_eq!(c[0], (0, vec![(w0 / (w0 + w1) * one + 0.5) as i32, (w1 / (w0 + w1) * one - 0.5) as i32]));
        assert_eq!(c[0].1, vec![4_564_390, -370_086]);
        assert_eq!((bicubic(0.0), bicubic(1.0), bicubic(2.0)), (1.0, 0.0, 0.0));
        // Downscaling 4 -> 2 widens the support (antialiasing): all four inputs count.
        assert_eq!(coefficients(4, 2)[0].1.len(), 4);
    }

    #[test]
    fn sizes_and_crop_follow_torchvision() {
        assert_eq!(resized_size(640, 480, 224), (298, 224));
        assert_eq!(resized_size(480, 640, 224), (224, 298));
        assert_eq!(resized_size(100, 100, 224), (224, 224));
        // round(0.5) = 0, round(1.5) = 2, round(2.5) = 2 in Python.
        assert_eq!(
            [crop_offset(225, 224), crop_offset(227, 224), crop_offset(229, 224), crop_offset(298, 224)],
            [0, 2, 2, 37]
        );
    }

    #[test]
    fn hand_computed_pixel_of_a_tiny_image() {
        // 3x2 image, red channel 0, 90, 180 / 30, 120, 210; resize to 2 (short side).
        // Width 3 -> 3 (2*3/2) keeps the horizontal pass out; height 2 -> 2 too,
        // so the pixels are untouched and only the crop and normalisation act.
        let img =
            Rgb { width: 3, height: 2, data: [0u8, 90, 180, 30, 120, 210].iter().flat_map(|&r| [r, 0, 255]).collect() };
        let t = preprocess(&img, 2);
        // Crop offset of 3 -> 2 is round(0.5) = 0: columns 0 and 1.
        let r = |v: f32| (v / 255.0 - MEAN[0]) / STD[0];
        assert_eq!(&t[0..4], &[r(0.0), r(90.0), r(30.0), r(120.0)]);
        assert!((t[0] - (-1.792_263)).abs() < 1e-5, "{}", t[0]);
        assert!((t[4] - (-0.457_827_5 / 0.261_302_6)).abs() < 1e-6);
        assert!((t[8] - ((1.0 - 0.408_210_73) / 0.275_777_1)).abs() < 1e-6);
    }

    #[test]
    fn downscale_of_a_two_level_image_is_hand_computable() {
        // 4 columns [0, 0, 200, 200] -> 2: each output is a weighted mean over
        // all four inputs with PIL's widened kernel (support 4, scale 2).
        let img = Rgb { width: 4, height: 1, data: [0u8, 0, 200, 200].iter().flat_map(|&v| [v, v, v]).collect() };
        let out = resize_bicubic(&img, 2, 1);
        // Centre 1.0: taps at distances (0.5, 0.5, 1.5, 2.5)/2 -> weights k(.25) k(.25) k(.75) k(1.25).
        let (a, b, c) = (bicubic(0.25), bicubic(0.75), bicubic(1.25));
        let expect = (200.0 * (b + c) / (2.0 * a + b + c)).round() as u8;
        assert_eq!((out.data[0], expect), (17, 17)); // 200 * 0.15625 / 1.890625 = 16.53
        assert_eq!(out.data[3], 183); // the mirror image: 200 - 17
    }

    #[test]
    fn pass_order_follows_pillow() {
        // Noisy enough that the 8-bit intermediate depends on the order.
        let mut rng = crate::domain::rng::SplitMix64::new(5);
        let noisy = |w: usize, h: usize, rng: &mut crate::domain::rng::SplitMix64| Rgb {
            width: w,
            height: h,
            data: (0..w * h * 3).map(|_| rng.below(256) as u8).collect(),
        };
        // 232x500 -> 224x482: height shrinks by 18 > 2 * 8: vertical first.
        let tall = noisy(232, 500, &mut rng);
        let v_first = pass(&pass(&tall, 232, 482, false), 224, 482, true);
        let h_first = pass(&pass(&tall, 224, 500, true), 224, 482, false);
        assert_ne!(v_first, h_first);
        assert_eq!(resize_bicubic(&tall, 224, 482), v_first);
        // 333x250 -> 298x224: horizontal first.
        let wide = noisy(333, 250, &mut rng);
        assert_eq!(resize_bicubic(&wide, 298, 224), pass(&pass(&wide, 298, 250, true), 298, 224, false));
    }

    #[test]
    fn output_is_chw_of_the_requested_size() {
        let t = preprocess(&gradient(7, 5), 4);
        assert_eq!(t.len(), 3 * 16);
        assert!(t.iter().all(|v| v.is_finite()));
    }
}
