//! Which generated image is "the negative" of an instance; the one place
//! that decides. Step 3 settles it: the candidate whose slot is its final
//! answer ([`step3_choice`]). Step 4's and the human baseline's items copy
//! that choice into `study_items.chosen_image`, so afterwards the latest item
//! with a chosen image names it ([`curated_sql`]). Before any curation,
//! scoring stands in a candidate known to match (demo data), else slot 0
//! ([`negative_sql`]).
use sqlx::AnyPool;

/// SQL expression: the curated negative of the instance whose id is the
/// SQL expression `instance` (a column such as `i.id`, or `?`).
pub fn curated_sql(instance: &str) -> String {
    format!(
        "(SELECT si.chosen_image FROM study_items si WHERE si.instance_id = {instance} AND si.chosen_image IS NOT NULL
          ORDER BY si.study_id DESC LIMIT 1)"
    )
}

/// SQL expression: the curated negative, else the uncurated stand-in.
pub fn negative_sql(instance: &str) -> String {
    format!(
        "COALESCE({}, (SELECT c.image FROM candidates c WHERE c.instance_id = {instance} AND (c.known_match = 1 OR c.slot = 0)
                       ORDER BY CASE WHEN c.known_match = 1 THEN 1 ELSE 0 END DESC, c.slot LIMIT 1))",
        curated_sql(instance)
    )
}

/// The negative image an instance is scored against, if it has candidates.
pub async fn negative_image_for(db: &AnyPool, instance_id: i64) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar(&format!("SELECT {}", negative_sql("$1"))).bind(instance_id).fetch_one(db).await
}
