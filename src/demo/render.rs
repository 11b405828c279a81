//! Rasterises a [`Scene`] with signed-distance shapes: flat fills, a darker
//! outline and one pixel of anti-aliasing, so PNGs stay small and the fill
//! colour of every object appears exactly (tests look for it).
use super::scene::{Placed, Scene, Shape};
use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ImageEncoder, Rgb, RgbImage};

pub const WIDTH: u32 = 320;
pub const HEIGHT: u32 = 320;
pub const BACKGROUND: [u8; 3] = [248, 248, 244];
const OUTLINE: f32 = 2.5;

/// Distance from the shape's edge (negative inside), relative to its centre.
enum Sdf {
    Circle(f32),
    Square(f32),
    Polygon(Vec<(f32, f32)>),
}

impl Sdf {
    fn of(obj: &Placed) -> Sdf {
        let r = obj.thing.size.radius();
        match obj.thing.shape {
            Shape::Circle => Sdf::Circle(r),
            Shape::Square => Sdf::Square(r * 0.88),
            Shape::Triangle => Sdf::Polygon(vec![(0.0, -r), (1.08 * r, 0.84 * r), (-1.08 * r, 0.84 * r)]),
            Shape::Star => Sdf::Polygon(
                (0..10)
                    .map(|i| {
                        let radius = if i % 2 == 0 { 1.15 * r } else { 0.48 * r };
                        let angle = -std::f32::consts::FRAC_PI_2 + i as f32 * std::f32::consts::PI / 5.0;
                        (radius * angle.cos(), radius * angle.sin() + 0.1 * r)
                    })
                    .collect(),
            ),
        }
    }

    /// Half-width of a box that surely contains the shape.
    fn extent(&self) -> f32 {
        match self {
            Sdf::Circle(r) | Sdf::Square(r) => *r,
            Sdf::Polygon(v) => v.iter().map(|(x, y)| x.abs().max(y.abs())).fold(0.0, f32::max),
        }
    }

    fn distance(&self, x: f32, y: f32) -> f32 {
        match self {
            Sdf::Circle(r) => (x * x + y * y).sqrt() - r,
            Sdf::Square(h) => {
                let (qx, qy) = (x.abs() - h, y.abs() - h);
                (qx.max(0.0).hypot(qy.max(0.0))) + qx.max(qy).min(0.0)
            }
            Sdf::Polygon(v) => polygon_distance(v, x, y),
        }
    }
}

/// Signed distance to a simple polygon (after Inigo Quilez).
fn polygon_distance(v: &[(f32, f32)], px: f32, py: f32) -> f32 {
    let n = v.len();
    let (dx0, dy0) = (px - v[0].0, py - v[0].1);
    let mut d = dx0 * dx0 + dy0 * dy0;
    let mut sign = 1.0;
    let mut j = n - 1;
    for i in 0..n {
        let (ex, ey) = (v[j].0 - v[i].0, v[j].1 - v[i].1);
        let (wx, wy) = (px - v[i].0, py - v[i].1);
        let t = ((wx * ex + wy * ey) / (ex * ex + ey * ey)).clamp(0.0, 1.0);
        let (bx, by) = (wx - ex * t, wy - ey * t);
        d = d.min(bx * bx + by * by);
        let c = [py >= v[i].1, py < v[j].1, ex * wy > ey * wx];
        if c.iter().all(|&b| b) || c.iter().all(|&b| !b) {
            sign = -sign;
        }
        j = i;
    }
    sign * d.sqrt()
}

fn lerp(a: [u8; 3], b: [u8; 3], t: f32) -> [u8; 3] {
    let mix = |x: u8, y: u8| (x as f32 + (y as f32 - x as f32) * t).round() as u8;
    [mix(a[0], b[0]), mix(a[1], b[1]), mix(a[2], b[2])]
}

pub fn render(scene: &Scene) -> RgbImage {
    let mut img = RgbImage::from_pixel(WIDTH, HEIGHT, Rgb(BACKGROUND));
    for obj in &scene.objects {
        let sdf = Sdf::of(obj);
        let fill = obj.thing.colour.rgb();
        let edge = fill.map(|c| (c as f32 * 0.55) as u8);
        let reach = sdf.extent().ceil() as i32 + 2;
        let (x0, x1) = ((obj.cx - reach).max(0), (obj.cx + reach).min(WIDTH as i32 - 1));
        let (y0, y1) = ((obj.cy - reach).max(0), (obj.cy + reach).min(HEIGHT as i32 - 1));
        for y in y0..=y1 {
            for x in x0..=x1 {
                let d = sdf.distance(x as f32 + 0.5 - obj.cx as f32, y as f32 + 0.5 - obj.cy as f32);
                let coverage = (0.5 - d).clamp(0.0, 1.0);
                if coverage <= 0.0 {
                    continue;
                }
                // Inside the outline band the colour fades from fill to edge.
                let band = (d + OUTLINE + 0.5).clamp(0.0, 1.0);
                let ink = if band <= 0.0 { fill } else { lerp(fill, edge, band) };
                let px = img.get_pixel_mut(x as u32, y as u32);
                px.0 = if coverage >= 1.0 { ink } else { lerp(px.0, ink, coverage) };
            }
        }
    }
    img
}

/// PNG bytes of the rendered scene; deterministic for a given scene.
pub fn png(scene: &Scene) -> Vec<u8> {
    let img = render(scene);
    let mut out = Vec::with_capacity(8 * 1024);
    PngEncoder::new_with_quality(&mut out, CompressionType::Fast, FilterType::Sub)
        .write_image(img.as_raw(), WIDTH, HEIGHT, image::ExtendedColorType::Rgb8)
        .expect("encoding a PNG into memory cannot fail");
    out
}
