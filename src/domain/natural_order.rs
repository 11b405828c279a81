//! Names in the order people read them: runs of digits compare as numbers,
//! so participant p7-2 comes before p7-10 (and annotator2 before annotator10).
use std::cmp::Ordering;

/// Splits into runs of digits and runs of anything else.
fn runs(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let digit = first.is_ascii_digit();
        let end = rest.find(|c: char| c.is_ascii_digit() != digit).unwrap_or(rest.len());
        let (run, tail) = rest.split_at(end);
        rest = tail;
        Some(run)
    })
}

/// Digit runs by value (leading zeros ignored, no overflow: by length
/// after the zeros, then by text), other runs as text; ties by the whole text.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let mut x = runs(a);
    let mut y = runs(b);
    loop {
        let order = match (x.next(), y.next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) if p.as_bytes()[0].is_ascii_digit() && q.as_bytes()[0].is_ascii_digit() => {
                let (p, q) = (p.trim_start_matches('0'), q.trim_start_matches('0'));
                p.len().cmp(&q.len()).then_with(|| p.cmp(q))
            }
            (Some(p), Some(q)) => p.cmp(q),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_inside_names_sort_by_value() {
        let mut names = vec!["p7-10", "p7-2", "p7-1", "p12-1", "annotator10", "annotator2", "p7-02", "b", "a"];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(names, ["a", "annotator2", "annotator10", "b", "p7-1", "p7-02", "p7-2", "p7-10", "p12-1"]);
        let long = "p1-123456789012345678901234567890";
        assert_eq!(natural_cmp(long, "p1-9"), Ordering::Greater, "longer than any integer type");
        assert_eq!(natural_cmp("x", "x"), Ordering::Equal);
    }
}
