//! Prompts with generated images to rank, as researchers bring them for the
//! `ranking` kind: `prompt, images, scores, type, subtype` (CSV or JSON Lines
//! of strings). `images` lists 2–10 file names separated by `|`; `scores` is
//! empty or `model:s1|s2|…` entries separated by `;`, one number per image
//! (higher: the model finds the image a better match). Row checks are pure.
use crate::domain::candidates::check_file_name;
use crate::domain::category::{Category, CategoryError};
use crate::domain::results::FieldError;
use super::{MAX_IMAGES, MIN_IMAGES};
use std::collections::BTreeMap;

pub const COLUMNS: [&str; 5] = ["prompt", "images", "scores", "type", "subtype"];

#[derive(Debug, Clone, PartialEq)]
pub struct RankingRow {
    pub prompt: String,
    pub images: Vec<String>,
    /// Per model, one score per image in `images` order.
    pub scores: BTreeMap<String, Vec<f64>>,
    pub category: Category,
}

fn err(field: &'static str, message: impl Into<String>) -> FieldError {
    FieldError { field, message: message.into() }
}

fn scores(text: &str, n: usize) -> Result<BTreeMap<String, Vec<f64>>, String> {
    let mut out = BTreeMap::new();
    for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let (model, values) = entry.split_once(':').ok_or_else(|| format!("{entry:?}: expected model:s1|s2|…"))?;
        let model = model.trim();
        if model.is_empty() {
            return Err(format!("{entry:?}: no model name"));
        }
        let values: Vec<f64> = values
            .split('|')
            .map(|v| v.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
            .collect::<Option<_>>()
            .ok_or_else(|| format!("model {model:?}: not a list of finite numbers"))?;
        if values.len() != n {
            return Err(format!("model {model:?}: {} scores for {n} images", values.len()));
        }
        if out.insert(model.to_string(), values).is_some() {
            return Err(format!("model {model:?} twice"));
        }
    }
    Ok(out)
}

/// Checks one row's values, in [`COLUMNS`] order; every bad field is named.
pub fn ranking_row(v: &[&str]) -> Result<RankingRow, Vec<FieldError>> {
    let mut errors = Vec::new();
    if let Some(m) = crate::domain::names::imported_text_problem(v[0]) {
        errors.push(err("prompt", m));
    }
    let images: Vec<String> = v[1].split('|').map(|s| s.trim().to_string()).collect();
    if !(MIN_IMAGES..=MAX_IMAGES).contains(&images.len()) {
        errors.push(err("images", format!("{} images; a prompt takes {MIN_IMAGES} to {MAX_IMAGES}", images.len())));
    }
    for (i, image) in images.iter().enumerate() {
        if let Err(m) = check_file_name(image) {
            errors.push(err("images", m));
        } else if images[..i].contains(image) {
            // One image in two places would be ranked against itself.
            errors.push(err("images", format!("{image:?} is named twice")));
        }
    }
    let scores = scores(v[2], images.len()).map_err(|m| errors.push(err("scores", m)));
    let category = Category::parse(v[3], v[4]).map_err(|e| {
        let field = if matches!(e, CategoryError::Type(_)) { "type" } else { "subtype" };
        errors.push(err(field, e.to_string()));
    });
    match (scores, category) {
        (Ok(scores), Ok(category)) if errors.is_empty() => {
            Ok(RankingRow { prompt: v[0].trim().to_string(), images, scores, category })
        }
        _ => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_good_row_keeps_its_images_in_order_and_each_models_scores() {
        let r =
            ranking_row(&["a red cube", "a.png|b.png | c.png", "clip:0.3|0.1|0.2; blip: 1|2|3", "add", "att"]).unwrap();
        assert_eq!(r.images, ["a.png", "b.png", "c.png"]);
        assert_eq!(r.scores["clip"], [0.3, 0.1, 0.2]);
        assert_eq!(r.scores["blip"], [1.0, 2.0, 3.0]);
        assert_eq!(r.category.to_string(), "add/att");
        assert!(ranking_row(&["p", "a.png|b.png", "", "swap", "obj"]).unwrap().scores.is_empty());
    }

    #[test]
    fn every_bad_field_is_named() {
        let fields =
            |v: &[&str]| -> Vec<&'static str> { ranking_row(v).unwrap_err().iter().map(|e| e.field).collect() };
        assert_eq!(fields(&["", "a.png", "clip:1", "swap", "rel"]), ["prompt", "images", "subtype"]);
        assert_eq!(fields(&["p", "a.png|../b.png", "", "swap", "obj"]), ["images"]);
        let eleven = (0..11).map(|i| format!("{i}.png")).collect::<Vec<_>>().join("|");
        assert_eq!(fields(&["p", &eleven, "", "swap", "obj"]), ["images"]);
        let twice = ranking_row(&["p", "a.png|b.png|./a.png|a.png", "", "swap", "obj"]).unwrap_err();
        let said: Vec<_> = twice.iter().map(|e| (e.field, e.message.as_str())).collect();
        assert_eq!(said[1], ("images", r#""a.png" is named twice"#), "{said:?}");
        assert_eq!(fields(&["p\u{202e}", "a.png|b.png", "", "swap", "obj"]), ["prompt"]);
        for bad in ["clip:1|2|3", "clip:1|x", "clip 1|2", ":1|2", "clip:1|2;clip:2|1", "clip:1|inf"] {
            let e = ranking_row(&["p", "a.png|b.png", bad, "replace", "obj"]).unwrap_err();
            assert_eq!(e.iter().map(|e| e.field).collect::<Vec<_>>(), ["scores"], "{bad}: {e:?}");
        }
    }
}
