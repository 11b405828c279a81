//! SugarCrepe++ triplets as researchers bring them for the odd-one-out
//! kinds: `image, p1, p2, negative, type, subtype` (CSV or JSON Lines), one
//! row per image. Row checks are pure; the shell reads the file and images.
use super::answer_text::reads_the_same;
use super::candidates::check_file_name;
use super::category::{Category, CategoryError};
use super::results::FieldError;
use super::rng::shuffle;
use super::survey::{ItemData, Presentation, ShownOption, SurveyError};

pub const COLUMNS: [&str; 6] = ["image", "p1", "p2", "negative", "type", "subtype"];

/// One checked row: the image's file name, the two positives and the negative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Triplet {
    pub image: String,
    pub p1: String,
    pub p2: String,
    pub negative: String,
    pub category: Category,
}

/// Checks one row's values, in [`COLUMNS`] order; every bad field is named.
pub fn triplet(v: &[&str]) -> Result<Triplet, Vec<FieldError>> {
    let mut errors = Vec::new();
    if let Err(message) = check_file_name(v[0]) {
        errors.push(FieldError { field: COLUMNS[0], message });
    }
    for (col, text) in v.iter().enumerate().take(4).skip(1) {
        if let Some(message) = crate::domain::names::imported_text_problem(text) {
            errors.push(FieldError { field: COLUMNS[col], message });
        }
    }
    // Compared as the import of pairs and the answers' texts compare: a case
    // or spacing difference says nothing in other words.
    let same = |a: &str, b: &str| !a.trim().is_empty() && reads_the_same(a, b);
    if same(v[1], v[2]) {
        errors.push(FieldError { field: "p2", message: "the same text as p1; P2 must say it in other words".into() });
    }
    for (col, p) in [(1, "p1"), (2, "p2")] {
        if same(v[3], v[col]) {
            let message = format!("the same text as {p}; the negative must change its meaning");
            errors.push(FieldError { field: "negative", message });
        }
    }
    let category = Category::parse(v[4], v[5]).map_err(|e| {
        let field = if matches!(e, CategoryError::Type(_)) { "type" } else { "subtype" };
        errors.push(FieldError { field, message: e.to_string() });
    });
    match category {
        Ok(category) if errors.is_empty() => Ok(Triplet {
            image: v[0].to_string(),
            p1: v[1].trim().to_string(),
            p2: v[2].trim().to_string(),
            negative: v[3].trim().to_string(),
            category,
        }),
        _ => Err(errors),
    }
}

/// Stored values name the caption (P1, P2, the negative), never its position.
pub const VALUES: [&str; 3] = ["p1", "p2", "negative"];
/// The right answer: the hard negative is the odd one out.
pub const CORRECT: &str = "negative";

/// The three captions as lettered text options in a seeded order, no image:
/// what both odd-one-out kinds show (the image-to-text one adds the image).
pub fn present_triplet(item: &ItemData, seed: u64) -> Result<Presentation, SurveyError> {
    let p2 = item
        .paraphrase
        .as_ref()
        .ok_or_else(|| SurveyError::BadItem("odd-one-out needs a second positive caption (p2)".into()))?;
    let texts = [&item.caption, p2, &item.negative_caption];
    let mut order = [0usize, 1, 2];
    shuffle(&mut order, seed);
    let options = order
        .iter()
        .enumerate()
        .map(|(pos, &which)| ShownOption::lettered(pos, None, Some(texts[which].clone()), VALUES[which]))
        .collect();
    Ok(Presentation {
        prompt_text: String::new(),
        prompt_image: None,
        options,
        shown_order: order.to_vec(),
        instructions: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_good_row_keeps_its_captions_and_category() {
        let t =
            triplet(&["a/1.png", "A cat on a mat.", "A mat under a cat.", "A mat on a cat.", "swap", "obj"]).unwrap();
        assert_eq!((t.image.as_str(), t.p2.as_str()), ("a/1.png", "A mat under a cat."));
        assert_eq!(t.category.to_string(), "swap/obj");
    }

    #[test]
    fn every_bad_field_is_named() {
        let e = triplet(&["../x.png", "Same.", "Same.", " ", "shuffle", "obj"]).unwrap_err();
        let fields: Vec<_> = e.iter().map(|e| e.field).collect();
        assert_eq!(fields, ["image", "negative", "p2", "type"]);
        let e = triplet(&["x.png", "a", "b", "c", "swap", "rel"]).unwrap_err();
        assert_eq!(e[0].field, "subtype");
        assert!(e[0].message.contains("swap has no subtype rel"), "{}", e[0].message);
    }

    #[test]
    fn a_negative_that_repeats_a_positive_is_refused() {
        let e = triplet(&["x.png", "A cat on a mat.", "A mat under a cat.", " A cat on a mat.", "swap", "obj"]);
        let e = e.unwrap_err();
        assert_eq!(
            (e[0].field, e[0].message.as_str()),
            ("negative", "the same text as p1; the negative must change its meaning")
        );
        let e = triplet(&["x.png", "A cat on a mat.", "A mat under a cat.", "A mat under a cat.", "swap", "obj"]);
        assert!(e.unwrap_err()[0].message.contains("as p2"));
        // Case and spacing say nothing new (as `import pairs` compares).
        let e = triplet(&["x.png", "A cat on a mat.", "A mat under a cat.", "a cat  ON a mat.", "swap", "obj"]);
        assert_eq!(e.unwrap_err()[0].field, "negative");
        let e = triplet(&["x.png", "A cat on a mat.", "a cat on a MAT.", "A mat on a cat.", "swap", "obj"]);
        assert_eq!(e.unwrap_err()[0].field, "p2");
    }
}
