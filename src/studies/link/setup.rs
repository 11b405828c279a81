//! At study creation: the link (token, codes, settings) and the bundles,
//! made once from the study's items inside the creating transaction.
use crate::domain::assignment::AssignmentRule;
use crate::domain::crowd::bundles::{make_bundles, sample_bundles, StratItem};
use crate::domain::crowd::ids::{code_from_bytes, token_from_bytes, CODE_LEN, TOKEN_BYTES};
use crate::domain::crowd::spec::LinkSettings;
use crate::domain::ids::StudyId;
use crate::domain::stratified::subsets_of;
use crate::domain::study::Study;
use crate::error::ServiceError;
use crate::store::db::now_secs;
use rand::RngCore;
use sqlx::AnyConnection;

pub fn new_token() -> String {
    let mut bytes = [0u8; TOKEN_BYTES];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    token_from_bytes(&bytes)
}

pub fn new_code() -> String {
    let mut bytes = [0u8; CODE_LEN];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    code_from_bytes(&bytes)
}

/// Every practice item names an instance of the study's dataset.
async fn check_practice(
    tx: &mut AnyConnection,
    id: StudyId,
    study: &Study,
    link: &LinkSettings,
) -> Result<(), ServiceError> {
    for p in &link.practice {
        let found: Option<i64> = sqlx::query_scalar(
            "SELECT i.id FROM instances i JOIN studies s ON s.dataset_id = i.dataset_id WHERE s.id = $1 AND i.key = $2",
        )
        .bind(id)
        .bind(&p.key)
        .fetch_optional(&mut *tx)
        .await?;
        if found.is_none() {
            return Err(ServiceError::Invalid(format!(
                "field `link.practice`: no instance with key {:?} in {:?}",
                p.key, study.dataset
            )));
        }
    }
    Ok(())
}

/// Stores the link and the bundles of a new link study `id`.
pub async fn create_link(
    tx: &mut AnyConnection,
    id: StudyId,
    study: &Study,
    link: &LinkSettings,
) -> Result<(), ServiceError> {
    let invalid = |m: String| ServiceError::Invalid(m);
    let items: Vec<(i64, String, String)> = sqlx::query_as(
        "SELECT i.id, i.neg_type, i.subtype FROM study_items s JOIN instances i ON i.id = s.instance_id
         WHERE s.study_id = $1 ORDER BY i.id",
    )
    .bind(id)
    .fetch_all(&mut *tx)
    .await?;
    let items: Vec<StratItem> =
        items.into_iter().map(|(instance, neg_type, subtype)| StratItem { instance, neg_type, subtype }).collect();
    let bundles = match (&study.rule, link.samples) {
        (AssignmentRule::StratifiedSample { per_subset, subsets }, Some(samples)) => {
            let items = crate::studies::meta::study_items(&mut *tx, id).await?;
            let size = per_subset * subsets_of(subsets.as_deref(), &items).len();
            if link.bundle_size != size {
                return Err(invalid(format!(
                    "field `link.bundle_size`: rule = \"stratified_sample\" gives each participant per_subset x \
                     subsets = {size} items; set bundle_size = {size}"
                )));
            }
            sample_bundles(
                &items,
                *per_subset,
                subsets.as_deref(),
                samples,
                link.copies,
                link.paired_bundles,
                study.seed,
            )
        }
        _ => make_bundles(&items, link.bundle_size, link.copies, link.paired_bundles, study.seed),
    };
    if link.paired_bundles > bundles.len() {
        return Err(invalid(format!(
            "field `link.paired_bundles`: {} asked, but the study's {} items make only {} bundles of bundle_size {}",
            link.paired_bundles,
            items.len(),
            bundles.len(),
            link.bundle_size
        )));
    }
    check_practice(tx, id, study, link).await?;
    let code = link.completion_code.clone().unwrap_or_else(new_code);
    let mut link = super::checks::prepare(tx, id, study, link, &bundles).await?;
    let checks = &mut link.checks;
    if checks.screens_out() && checks.screen_out_code.is_none() {
        checks.screen_out_code = std::iter::repeat_with(new_code).find(|c| *c != code);
    }
    let link = &link;
    sqlx::query(
        "INSERT INTO study_links (study_id, token, open, completion_code, full_code, settings, created_at)
         VALUES ($1, $2, 1, $3, $4, $5, $6)",
    )
    .bind(id)
    .bind(new_token())
    .bind(&code)
    .bind(&link.full_code)
    .bind(serde_json::to_string(link)?)
    .bind(now_secs())
    .execute(&mut *tx)
    .await?;
    store_bundles(tx, id, study.kind, &bundles, 0).await?;
    Ok(())
}

/// Stores bundles (numbered from `first`) and their items, every question
/// of the kind per instance: at creation, and for adaptive follow-ups.
pub(crate) async fn store_bundles(
    tx: &mut AnyConnection,
    id: StudyId,
    kind: crate::domain::survey::SurveyKind,
    bundles: &[crate::domain::crowd::bundles::Bundle],
    first: i64,
) -> Result<(), ServiceError> {
    let questions: Vec<u8> = kind.spec().questions.iter().flat_map(|p| p.iter().copied()).collect();
    for b in bundles {
        let number = first + b.number;
        sqlx::query("INSERT INTO bundles (study_id, bundle, copies_wanted, paired) VALUES ($1, $2, $3, $4)")
            .bind(id)
            .bind(number)
            .bind(b.copies_wanted)
            .bind(i64::from(b.paired))
            .execute(&mut *tx)
            .await?;
        let rows: Vec<(i64, u8)> = b.instances.iter().flat_map(|&i| questions.iter().map(move |&q| (i, q))).collect();
        for (c, chunk) in rows.chunks(500).enumerate() {
            let mut q =
                sqlx::QueryBuilder::new("INSERT INTO bundle_items (study_id, bundle, position, instance_id, query) ");
            q.push_values(chunk.iter().enumerate(), |mut row, (k, (instance, query))| {
                row.push_bind(id)
                    .push_bind(number)
                    .push_bind((c * 500 + k) as i64)
                    .push_bind(instance)
                    .push_bind(*query as i64);
            });
            let (sql, args) = crate::store::db::numbered(&mut q)?;
            sqlx::query_with(&sql, args).execute(&mut *tx).await?;
        }
    }
    Ok(())
}
