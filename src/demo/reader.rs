//! Reads a demo picture back into a [`Scene`] from its pixels alone: every
//! connected region of one exact fill colour is an object, its fill ratio
//! (area over bounding box) tells the shape, its height the size, and its
//! box centre the position. Works because the renderer paints flat fills in
//! known colours on a plain background; it knows nothing of how the picture
//! was laid out.
use super::render::BACKGROUND;
use super::scene::{Colour, Placed, Scene, Shape, Size, Thing};
use image::RgbImage;

/// Regions smaller than this are anti-aliasing debris, not objects.
const MIN_AREA: usize = 60;

/// One region of a single fill colour.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Region {
    colour: Colour,
    area: usize,
    x0: u32,
    y0: u32,
    x1: u32,
    y1: u32,
}

impl Region {
    fn width(&self) -> f32 {
        (self.x1 - self.x0 + 1) as f32
    }
    fn height(&self) -> f32 {
        (self.y1 - self.y0 + 1) as f32
    }

    /// Area over bounding box: about 1.0 for squares, 0.78 for circles,
    /// 0.5 for triangles and 0.36 for stars.
    fn shape(&self) -> Shape {
        match self.area as f32 / (self.width() * self.height()) {
            r if r > 0.9 => Shape::Square,
            r if r > 0.64 => Shape::Circle,
            r if r > 0.43 => Shape::Triangle,
            _ => Shape::Star,
        }
    }

    /// The nominal radius from the fill's height: each shape's height in
    /// radii, plus the outline band the fill stops short of on both sides.
    fn size(&self, shape: Shape) -> Size {
        let radii = match shape {
            Shape::Circle => 2.0,
            Shape::Square => 1.76,
            Shape::Triangle => 1.84,
            Shape::Star => 2.08,
        };
        let r = (self.height() + 5.0) / radii;
        let cut_small = (Size::Small.radius() + Size::Medium.radius()) / 2.0;
        let cut_large = (Size::Medium.radius() + Size::Large.radius()) / 2.0;
        if r < cut_small {
            Size::Small
        } else if r < cut_large {
            Size::Medium
        } else {
            Size::Large
        }
    }

    fn placed(&self) -> Placed {
        let shape = self.shape();
        Placed {
            thing: Thing { shape, colour: self.colour, size: self.size(shape) },
            cx: ((self.x0 + self.x1) / 2) as i32,
            cy: ((self.y0 + self.y1) / 2) as i32,
        }
    }
}

/// Not a fill colour (background, outline or anti-aliasing).
const NO_FILL: u8 = u8::MAX;

/// Per pixel, the index in [`Colour::ALL`] of its exact fill colour, or
/// [`NO_FILL`]. A plain indexed loop: the demo starts from a debug build in
/// tests, where iterator adaptors cost several times more.
fn fill_labels(img: &RgbImage) -> Vec<u8> {
    let pack = |p: [u8; 3]| (p[0] as u32) << 16 | (p[1] as u32) << 8 | p[2] as u32;
    let fills = Colour::ALL.map(|c| pack(c.rgb()));
    let background = pack(BACKGROUND);
    let raw = img.as_raw();
    let mut labels = vec![NO_FILL; raw.len() / 3];
    let mut i = 0;
    while i < labels.len() {
        let p = (raw[3 * i] as u32) << 16 | (raw[3 * i + 1] as u32) << 8 | raw[3 * i + 2] as u32;
        if p != background {
            let mut k = 0;
            while k < fills.len() {
                if fills[k] == p {
                    labels[i] = k as u8;
                    break;
                }
                k += 1;
            }
        }
        i += 1;
    }
    labels
}

/// The objects in a picture, in the order their regions were found.
pub fn read(img: &RgbImage) -> Scene {
    let (w, h) = img.dimensions();
    let mut labels = fill_labels(img);
    let mut objects = Vec::new();
    let mut stack = Vec::new();
    for start in 0..w * h {
        let label = labels[start as usize];
        if label == NO_FILL {
            continue;
        }
        // A filled region is consumed as it is found, so it is seen once.
        labels[start as usize] = NO_FILL;
        stack.push(start);
        let (sx, sy) = (start % w, start / w);
        let mut region = Region { colour: Colour::ALL[label as usize], area: 0, x0: sx, y0: sy, x1: sx, y1: sy };
        while let Some(i) = stack.pop() {
            let (x, y) = (i % w, i / w);
            region.area += 1;
            region.x0 = region.x0.min(x);
            region.x1 = region.x1.max(x);
            region.y0 = region.y0.min(y);
            region.y1 = region.y1.max(y);
            // Out-of-range neighbours are replaced by `i` itself, already consumed.
            let neighbours = [
                if x > 0 { i - 1 } else { i },
                if x + 1 < w { i + 1 } else { i },
                if y > 0 { i - w } else { i },
                if y + 1 < h { i + w } else { i },
            ];
            for n in neighbours {
                if labels[n as usize] == label {
                    labels[n as usize] = NO_FILL;
                    stack.push(n);
                }
            }
        }
        if region.area >= MIN_AREA {
            objects.push(region.placed());
        }
    }
    Scene { objects }
}

/// Decodes a PNG and reads it; `None` if the bytes are not a PNG.
pub fn read_png(bytes: &[u8]) -> Option<Scene> {
    let img = image::load_from_memory_with_format(bytes, image::ImageFormat::Png).ok()?;
    Some(read(&img.to_rgb8()))
}
