//! Ranking generated images (TIFA-style, the human side the LLaVA-score paper
//! evaluates against): a prompt and its N images (2–10, as imported), shown
//! in a seeded order; the annotator orders them from best to worst match.
//! The answer is an order of all the shown letters ("C,A,B"); the stored
//! value the same order as the images' import positions ("2,0,1"), best first.
use crate::domain::survey::{Attention, ItemData, KindSpec, Needs, Presentation, Report, Role, ShownOption, SurveyError};
use crate::domain::rng::shuffle;

#[cfg(feature = "ssr")]
mod export;
pub mod rows;
pub mod stats;

pub const INSTRUCTIONS: &str = "Read the prompt and order the images from the one that matches it best to the \
one that matches it worst, then submit the order. Keys: drag an image to move it, or select it with its \
number and move it with the arrow keys (or u / d); Enter submits.";

pub const MIN_IMAGES: usize = 2;
pub const MAX_IMAGES: usize = 10;

#[cfg(feature = "ssr")]
pub mod server;
mod compare_panel;
#[cfg(feature = "ssr")]
mod form;
pub mod ui;

pub const KIND: KindSpec = KindSpec {
    name: "ranking",
    instructions: INSTRUCTIONS,
    // An order is not one of a few values: answers are read by `parse_order`.
    values: &[],
    present,
    answer: parse_order,
    role: Role::Report(Report::Own),
    sources: &[],
    questions: &[&[0]],
    needs: Needs { candidates: Some((MIN_IMAGES, MAX_IMAGES)), positive_image: false, chosen_image: false, paraphrase: false, negative_b: false, captions: false, caption_type: false },
    adjudicated: false, // rankings differ by taste; their agreement is the statistic
    raters: None,
    // An order has no single option to ask for: link studies refuse `attention_checks`.
    attention: Attention { targets: &[], instruction: "" },
    texts: &[],
};

pub fn present(item: &ItemData, seed: u64) -> Result<Presentation, SurveyError> {
    let n = item.candidate_images.len();
    if !(MIN_IMAGES..=MAX_IMAGES).contains(&n) {
        return Err(SurveyError::BadItem(format!("ranking needs {MIN_IMAGES} to {MAX_IMAGES} images, the item has {n}")));
    }
    let mut order: Vec<usize> = (0..n).collect();
    shuffle(&mut order, seed);
    let options = order
        .iter()
        .enumerate()
        .map(|(pos, &which)| {
            let mut o =
                ShownOption::lettered(pos, Some(item.candidate_images[which].clone()), None, &which.to_string());
            // Digits select: 1–9, then 0 for the tenth.
            o.keys = vec![char::from_digit(((pos + 1) % 10) as u32, 10).expect("a digit")];
            o
        })
        .collect();
    Ok(Presentation {
        prompt_text: item.caption.clone(),
        prompt_image: None,
        options,
        shown_order: order,
        instructions: None,
    })
}

/// An answer ("C,A,B": every shown letter once, best first) as the option
/// ids to store and the value: the images' import positions in that order.
pub fn parse_order(p: &Presentation, answer: &str) -> Result<(String, String), SurveyError> {
    let expected = || p.options.iter().map(|o| o.id.as_str()).collect::<Vec<_>>().join(",");
    let bad = || SurveyError::UnknownOption {
        given: answer.to_string(),
        expected: format!("an order of all of {} separated by commas, best first", expected()),
    };
    let mut ids = Vec::with_capacity(p.options.len());
    let mut values = Vec::with_capacity(p.options.len());
    for part in answer.split(',') {
        let o = p.options.iter().find(|o| o.id.eq_ignore_ascii_case(part.trim())).ok_or_else(bad)?;
        if ids.contains(&o.id.as_str()) {
            return Err(bad());
        }
        ids.push(o.id.as_str());
        values.push(o.value.as_str());
    }
    if ids.len() != p.options.len() {
        return Err(bad());
    }
    Ok((ids.join(","), values.join(",")))
}

/// A stored value back as the images' import positions, best first.
pub fn read_order(value: &str) -> Option<Vec<usize>> {
    let order: Vec<usize> = value.split(',').map(|v| v.parse().ok()).collect::<Option<_>>()?;
    let mut seen = vec![false; order.len()];
    for &i in &order {
        if i >= order.len() || std::mem::replace(&mut seen[i], true) {
            return None;
        }
    }
    Some(order)
}

/// The no-JS ranking form's fields (`rank_A=2`, `rank_B=1`, …: each shown
/// letter's place, 1 = best) as an answer ("B,A"); the places must be
/// 1..=n, each given once. Whether the letters are the task's is
/// `parse_order`'s check.
pub fn order_from_ranks(ranks: &[(String, String)]) -> Result<String, String> {
    let n = ranks.len();
    let mut by_place: Vec<Option<&str>> = vec![None; n];
    for (id, place) in ranks {
        let at = place
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|p| (1..=n).contains(p))
            .ok_or_else(|| format!("image {id}: place {place:?} is not a number from 1 to {n}"))?;
        if let Some(other) = by_place[at - 1].replace(id) {
            return Err(format!("images {other} and {id} are both in place {at}; give each image its own place"));
        }
    }
    if n == 0 {
        return Err("no places given".into());
    }
    Ok(by_place.into_iter().flatten().collect::<Vec<_>>().join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::survey::SurveyKind;

    fn item(n: usize) -> ItemData {
        ItemData {
            caption: "a red circle above a blue square".into(),
            candidate_images: (0..n).map(|i| format!("img{i}")).collect(),
            ..ItemData::default()
        }
    }

    #[test]
    fn shows_the_prompt_and_every_image_lettered_with_digit_keys() {
        let p = present(&item(10), 7).unwrap();
        assert_eq!(p.prompt_text, "a red circle above a blue square");
        let ids: Vec<_> = p.options.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J"]);
        assert!(p.options.iter().all(|o| o.image.is_some() && o.text.is_none()));
        assert_eq!(p.option_for_key('1').unwrap().id, "A");
        assert_eq!(p.option_for_key('0').unwrap().id, "J");
        for (o, &which) in p.options.iter().zip(&p.shown_order) {
            assert_eq!(o.image.as_deref(), Some(format!("img{which}").as_str()));
            assert_eq!(o.value, which.to_string());
        }
        assert_eq!(present(&item(10), 7).unwrap(), p, "seeded");
        let orders: std::collections::HashSet<_> = (0..40).map(|s| present(&item(3), s).unwrap().shown_order).collect();
        assert_eq!(orders.len(), 6, "every order of three occurs");
    }

    #[test]
    fn refuses_fewer_than_two_or_more_than_ten_images() {
        for n in [0, 1, 11] {
            let e = SurveyKind::of(&KIND).present(&item(n), 0).unwrap_err().to_string();
            assert!(e.contains("2 to 10 images"), "{e}");
        }
    }

    #[test]
    fn an_order_of_the_letters_is_stored_as_import_positions() {
        let p = present(&item(3), 5).unwrap();
        let (ids, value) = parse_order(&p, "c, a,B").unwrap();
        assert_eq!(ids, "C,A,B");
        let want: Vec<String> = [2, 0, 1].iter().map(|&pos| p.shown_order[pos].to_string()).collect();
        assert_eq!(value, want.join(","));
        assert_eq!(read_order(&value).unwrap(), [2, 0, 1].map(|pos| p.shown_order[pos]));
        for bad in ["A,B", "A,B,C,D", "A,A,B", "A,B,X", "", "B"] {
            let e = parse_order(&p, bad).unwrap_err().to_string();
            assert!(e.contains("an order of all of A,B,C"), "{bad}: {e}");
        }
    }

    #[test]
    fn read_order_refuses_what_is_not_a_permutation() {
        assert_eq!(read_order("1,0"), Some(vec![1, 0]));
        for bad in ["1,1", "0,2", "a,0", ""] {
            assert_eq!(read_order(bad), None, "{bad}");
        }
    }

    #[test]
    fn places_per_image_become_an_order_best_first() {
        let ranks = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
        };
        assert_eq!(order_from_ranks(&ranks(&[("A", "2"), ("B", "3"), ("C", " 1")])).unwrap(), "C,A,B");
        let twice = order_from_ranks(&ranks(&[("A", "1"), ("B", "1")])).unwrap_err();
        assert_eq!(twice, "images A and B are both in place 1; give each image its own place");
        for bad in ["0", "3", "x", ""] {
            let e = order_from_ranks(&ranks(&[("A", "1"), ("B", bad)])).unwrap_err();
            assert!(e.starts_with("image B: place") && e.ends_with("not a number from 1 to 2"), "{bad}: {e}");
        }
        assert!(order_from_ranks(&[]).is_err());
    }
}
