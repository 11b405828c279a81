//! The features' statements whose SQL differs between SQLite and PostgreSQL,
//! by name, each with both texts ([`Sql`]): a feature runs
//! `sqlx::query(NAME.on(db))` and never asks which database runs. Every other
//! statement is written once, in the SQL both share, where it is used. The
//! differences are SQLite's JSON functions (a list of many rows in one
//! parameter, many rows packed into one result) and, for the round trip's
//! read, the planners.
use super::dialect::{Backend, Sql};

/// A participation's progress and its first two open tasks, in one query
/// (`studies::next_read`; $1 the study, $2 the user). On SQLite the one
/// participation row drives a walk of `tasks_queue` in position order, so
/// SQLite needs no temporary table or sort (a subquery with its own LIMIT
/// cost both on every `next`; `studies/next_read_tests.rs` checks the plan).
/// PostgreSQL's planner does not carry the index's order through that join:
/// it read every open task of the participant and sorted them (1.9 ms at
/// 5,000 tasks, most of a round trip's database CPU), so there the LIMIT is
/// inside a LATERAL subquery and reads two index entries (SQLite has no
/// LATERAL). Public for the API suite's `postgres_plans`, which checks the
/// PostgreSQL plan on a real server.
pub const NEXT_TASKS: Sql = Sql {
    sqlite: "SELECT p.done, p.total, t.id AS task_id, t.instance_id, t.seed, t.query,
        CASE WHEN t.check_kind = 'attention' THEN t.check_answer END AS attention
    FROM participations p
    LEFT JOIN tasks t ON t.study_id = p.study_id AND t.user_id = p.user_id AND t.done = 0
    WHERE p.study_id = $1 AND p.user_id = $2 ORDER BY t.position LIMIT 2",
    postgres: "SELECT p.done, p.total, t.id AS task_id, t.instance_id, t.seed, t.query,
        CASE WHEN t.check_kind = 'attention' THEN t.check_answer END AS attention
    FROM participations p
    LEFT JOIN LATERAL (SELECT id, instance_id, seed, query, check_kind, check_answer, position FROM tasks
        WHERE study_id = p.study_id AND user_id = p.user_id AND done = 0 ORDER BY position LIMIT 2) t ON true
    WHERE p.study_id = $1 AND p.user_id = $2 ORDER BY t.position",
};

/// Appends tasks to an annotator's queue (`studies::adaptive`): $1 the
/// study, $2 the user, $3 a JSON list of [instance, position, seed].
pub const APPEND_TASKS: Sql = Sql {
    sqlite: "INSERT INTO tasks (study_id, user_id, instance_id, position, seed, query)
         SELECT $1, $2, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'), 0
         FROM json_each($3) j",
    postgres:
        "INSERT INTO tasks (study_id, user_id, instance_id, position, seed, query)
         SELECT $1, $2, (j->>0)::bigint, (j->>1)::bigint, (j->>2)::bigint, 0 FROM json_array_elements($3::json) AS e(j)",
};

/// A dataset's ($1) studies of the kinds in the JSON list $2 (of names):
/// id, name, kind, by id (`models::human`).
pub const STUDIES_OF_KINDS: Sql = Sql {
    sqlite: "SELECT id, name, kind FROM studies WHERE dataset_id = $1 AND kind IN (SELECT value FROM json_each($2))
         ORDER BY id",
    postgres: "SELECT id, name, kind FROM studies
         WHERE dataset_id = $1 AND kind IN (SELECT value FROM json_array_elements_text($2::json)) ORDER BY id",
};

/// The names of the datasets with a model run or a study of the kinds in
/// the JSON list $1 (of names), by name (`models::compare`).
pub const DATASETS_WITH_RESULTS: Sql = Sql {
    sqlite: "SELECT name FROM datasets WHERE id IN (SELECT dataset_id FROM model_runs UNION
           SELECT dataset_id FROM studies WHERE kind IN (SELECT value FROM json_each($1))) ORDER BY name",
    postgres: "SELECT name FROM datasets WHERE id IN (SELECT dataset_id FROM model_runs UNION
           SELECT dataset_id FROM studies WHERE kind IN (SELECT value FROM json_array_elements_text($1::json))) ORDER BY name",
};

/// A page of the export (`datasets::export::read`): the instances of dataset
/// $1 with ids in $2..$3, each with all its candidates, as one JSON array of
/// `InstanceRow` arrays: [id, key, caption, negative caption, their
/// originals, positive image, its mime and bytes, [[slot, image, mime,
/// bytes], …]]; NULL for no rows. `+i.dataset_id`: SQLite walks the id
/// range, not the dataset's index (which would sort the whole dataset per
/// page).
pub const EXPORT_PAGE: Sql = Sql {
    sqlite: "SELECT json_group_array(json_array(i.id, i.key, i.caption, i.negative_caption, i.caption_orig,
                i.negative_caption_orig, i.positive_image, img.mime, img.bytes,
                json((SELECT json_group_array(json_array(c.slot, c.image, ci.mime, ci.bytes))
                      FROM candidates c JOIN images ci ON ci.hash = c.image WHERE c.instance_id = i.id))))
         FROM instances i LEFT JOIN images img ON img.hash = i.positive_image
         WHERE +i.dataset_id = $1 AND i.id >= $2 AND i.id < $3",
    postgres: "SELECT json_agg(json_build_array(i.id, i.key, i.caption, i.negative_caption, i.caption_orig,
                i.negative_caption_orig, i.positive_image, img.mime, img.bytes,
                coalesce((SELECT json_agg(json_build_array(c.slot, c.image, ci.mime, ci.bytes))
                      FROM candidates c JOIN images ci ON ci.hash = c.image WHERE c.instance_id = i.id), '[]'::json)))::text
         FROM instances i LEFT JOIN images img ON img.hash = i.positive_image
         WHERE i.dataset_id = $1 AND i.id >= $2 AND i.id < $3",
};

/// [`EXPORT_PAGE`] for the instances of a JSON list $1 of [id, slot], each
/// with the candidate of that slot only, of dataset $2.
pub const EXPORT_PAGE_OF_IDS: Sql = Sql {
    sqlite: "SELECT json_group_array(json_array(i.id, i.key, i.caption, i.negative_caption, i.caption_orig,
                i.negative_caption_orig, i.positive_image, img.mime, img.bytes,
                json((SELECT json_group_array(json_array(c.slot, c.image, ci.mime, ci.bytes))
                      FROM candidates c JOIN images ci ON ci.hash = c.image
                      WHERE c.instance_id = i.id AND c.slot = j.value ->> 1))))
         FROM json_each($1) j JOIN instances i ON i.id = j.value ->> 0
         LEFT JOIN images img ON img.hash = i.positive_image WHERE +i.dataset_id = $2",
    postgres: "SELECT json_agg(json_build_array(i.id, i.key, i.caption, i.negative_caption, i.caption_orig,
                i.negative_caption_orig, i.positive_image, img.mime, img.bytes,
                coalesce((SELECT json_agg(json_build_array(c.slot, c.image, ci.mime, ci.bytes))
                      FROM candidates c JOIN images ci ON ci.hash = c.image
                      WHERE c.instance_id = i.id AND c.slot = (j->>1)::bigint), '[]'::json)))::text
         FROM json_array_elements($1::json) AS e(j) JOIN instances i ON i.id = (j->>0)::bigint
         LEFT JOIN images img ON img.hash = i.positive_image WHERE i.dataset_id = $2",
};

/// A study's ($1) answers packed per participant (`crowd::kept`), of
/// everyone or of the `users` given as $2, $3, …: (user, its answers joined by
/// `;`, each `instance,query,position,elapsed_ms,check,answered_at,option
/// hex,value hex`; `check` is 0 for none, 2/3 for gold wrong/right, 4/5 for
/// attention). Packed, because one row per answer dominated at 200k answers;
/// hex (upper-case on both) keeps free text from splitting.
pub fn kept_answers(on: &impl Backend, users: Option<usize>) -> String {
    let (concat, hex, hex_end) = if on.is_postgres() {
        ("string_agg", "upper(encode(convert_to(", ", 'UTF8'), 'hex'))")
    } else {
        ("group_concat", "hex(", ")")
    };
    let only = users
        .map(|n| format!(" AND a.user_id IN ({})", (2..n + 2).map(|i| format!("${i}")).collect::<Vec<_>>().join(",")))
        .unwrap_or_default();
    format!(
        "SELECT a.user_id, {concat}(
                    a.instance_id || ',' || t.query || ',' || t.position || ',' || a.elapsed_ms || ',' ||
                    (CASE t.check_kind WHEN 'gold' THEN 2 WHEN 'attention' THEN 4 ELSE 0 END
                     + CASE WHEN a.value = t.check_answer THEN 1 ELSE 0 END) || ',' || a.answered_at || ',' ||
                    {hex}a.option_id{hex_end} || ',' || {hex}a.value{hex_end}, ';')
         FROM answers a JOIN tasks t ON t.id = a.task_id WHERE a.study_id = $1{only} GROUP BY a.user_id"
    )
}
