//! The uncurated stand-in for "the negative" of an instance: before any
//! curation, a candidate known to match (demo data), else slot 0. What
//! curation chose comes first (`studies::negatives`, the one place that
//! decides: it needs Step 3's settled outcomes, which SQL cannot compute).

/// SQL expression: the stand-in negative of the instance whose id is the
/// SQL expression `instance` (a column such as `i.id`, or `?`).
pub fn stand_in_sql(instance: &str) -> String {
    format!(
        "(SELECT c.image FROM candidates c WHERE c.instance_id = {instance} AND (c.known_match = 1 OR c.slot = 0)
          ORDER BY CASE WHEN c.known_match = 1 THEN 1 ELSE 0 END DESC, c.slot LIMIT 1)"
    )
}
