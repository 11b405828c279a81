//! Creating studies from a spec: checking the source study and sampling
//! its survivors, then the study row and its items in one transaction. A
//! kind may make its items from its source study's answers instead (HNC's
//! validation of written pairs): the registry handed in supplies them
//! (`hooks::SourceItems`).
use crate::domain::assignment::Annotators;
use crate::domain::ids::{DatasetId, StudyId};
use crate::domain::study::{Study, StudySpec};
use crate::domain::survey::SurveyKind;
use crate::error::ServiceError;
use crate::store::db::now_secs;
use crate::studies::hooks::Registry;
use sqlx::AnyPool;

type Tx = sqlx::Transaction<'static, sqlx::Any>;

/// Parses a TOML spec (errors name the field) into a typed study.
pub fn parse_spec(kinds: &Registry, text: &str, default_seed: u64) -> Result<Study, ServiceError> {
    let spec: StudySpec =
        toml::from_str(text).map_err(|e| ServiceError::Invalid(format!("invalid study spec: {e}")))?;
    Ok(spec.parse_in(kinds.list, default_seed)?)
}

/// Creates the study over every instance of its dataset. Returns its id.
/// A taken name is `Invalid` (422, as docs/api.md documents), a database
/// failure `Internal`.
pub async fn create_study(
    db: &AnyPool,
    kinds: &Registry,
    study: &Study,
    spec_text: &str,
) -> Result<StudyId, ServiceError> {
    // Items made from the source's answers become the new dataset's instances; a vocabulary is read once.
    let written = match kinds.server(study.kind).and_then(|s| s.from_source) {
        Some(from_source) => from_source(db, study).await?,
        None => None,
    };
    let vocabulary = match &study.vocabulary {
        Some((source, strict)) => Some((crate::studies::vocabulary::read(db, source)?, *strict)),
        None => None,
    };
    let mut tx = crate::store::db::begin_write(db).await?;
    if let Some(items) = &written {
        items.insert(&mut tx, &study.dataset).await?;
    }
    let dataset_id: DatasetId = sqlx::query_scalar("SELECT id FROM datasets WHERE name = $1")
        .bind(&study.dataset)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| invalid(format!("field `dataset`: no dataset named {:?}", study.dataset)))?;
    if let Annotators::Named(names) = &study.annotators {
        check_annotators(&mut tx, names).await?;
    }
    let source = source_study(&mut tx, study, dataset_id, written.is_some()).await?;
    let survivors = match source {
        Some(sid) if written.is_none() => Some(sampled_survivors(db, kinds.list, sid, study).await?),
        _ => None,
    };
    let annotators = match &written {
        Some(items) => items.annotators(&study.annotators, study.source.as_deref())?,
        None => study.annotators.clone(),
    };
    let id = insert_study(&mut tx, study, spec_text, dataset_id, source, &annotators).await?;
    let items = insert_items(&mut tx, id, dataset_id, survivors).await?;
    if items == 0 {
        return Err(invalid(format!("field `dataset`: no instances to annotate in {:?}", study.dataset)));
    }
    if let Some(n) = study.kind.spec().raters {
        check_raters(&mut tx, study, &annotators, n, items).await?;
    }
    check_needs(&mut tx, id, study).await?;
    if let crate::domain::assignment::AssignmentRule::Pairs { pairs, overlap } = &study.rule {
        // Blocks are dealt pair by pair: past the items, a later pair would share
        // fewer than `overlap` or none (one pair may ask for more: it shares all).
        let (n, shared) = (pairs.len(), pairs.len().saturating_mul(*overlap));
        if n > 1 && shared as u64 > items {
            return Err(invalid(format!(
                "field `assignment.overlap`: {n} pairs sharing {overlap} items each need {shared} items; the study has {items}"
            )));
        }
    }
    if let crate::domain::assignment::AssignmentRule::StratifiedSample { per_subset, subsets } = &study.rule {
        let items = crate::studies::meta::study_items(&mut *tx, id).await?;
        crate::domain::stratified::check(*per_subset, subsets.as_deref(), &items)
            .map_err(|(field, message)| invalid(format!("field `{field}`: {message}")))?;
    }
    if let Some((words, strict)) = &vocabulary {
        crate::studies::vocabulary::store(&mut tx, id, words, *strict).await?;
    }
    if let Some(link) = &study.link {
        crate::studies::link::setup::create_link(&mut tx, id, study, link).await?;
    }
    if let Some(a) = &study.adaptive {
        crate::studies::adaptive::create(&mut tx, id, a).await?;
    }
    tx.commit().await?;
    Ok(id)
}

/// Every item holds what the kind shows (its descriptor's `needs`): a
/// study of a dataset without it would be refused item by item as people
/// open it (a triplets dataset has no candidate images for Step 3).
async fn check_needs(tx: &mut Tx, id: StudyId, study: &Study) -> Result<(), ServiceError> {
    let needs = study.kind.spec().needs;
    let (fewest, most) = needs.candidates.unwrap_or_default();
    let candidates =
        format!("(SELECT count(*) FROM candidates c WHERE c.instance_id = i.id) NOT BETWEEN {fewest} AND {most}");
    let count = match (fewest, most) {
        (a, b) if a == b => format!("exactly {a} candidate images"),
        _ => format!("{fewest} to {most} candidate images"),
    };
    let lacking = [
        (needs.candidates.is_some(), candidates.as_str(), count.as_str()),
        (needs.positive_image, "i.positive_image IS NULL", "an image"),
        (needs.paraphrase, "i.paraphrase IS NULL", "a second positive caption (p2)"),
        (needs.negative_b, "i.negative_b IS NULL", "a second negative caption (negative_b)"),
        (
            needs.captions,
            "(trim(i.caption) = '' OR trim(i.negative_caption) = '')",
            "both a caption and a hard negative",
        ),
        (needs.caption_type, "(i.caption_type IS NULL OR trim(i.caption_type) = '')", "an assigned caption type"),
    ];
    for (needed, condition, what) in lacking.into_iter().filter(|l| l.0) {
        let query = format!(
            "SELECT count(*) FROM study_items si JOIN instances i ON i.id = si.instance_id WHERE si.study_id = $1 AND {condition}"
        );
        let without: i64 = sqlx::query_scalar(&query).bind(id).fetch_one(&mut **tx).await?;
        if needed && without > 0 {
            return Err(invalid(format!(
                "field `dataset`: {without} instance(s) of {:?} lack {what}, which {} shows; \
                 choose a dataset imported for it (docs/import.md)",
                study.dataset,
                study.kind.name()
            )));
        }
    }
    Ok(())
}

fn invalid(message: String) -> ServiceError {
    ServiceError::Invalid(message)
}

/// The people on every item are as many as the kind's protocol fixes
/// (`domain::study::check_raters`), "all" counted over today's accounts.
async fn check_raters(
    tx: &mut Tx,
    study: &Study,
    annotators: &Annotators,
    n: usize,
    items: u64,
) -> Result<(), ServiceError> {
    let names: Vec<String> =
        sqlx::query_scalar("SELECT username FROM users WHERE role = 'annotator'").fetch_all(&mut **tx).await?;
    let accounts = match annotators {
        Annotators::AllBut(out) => names.iter().filter(|n| !out.contains(n)).count(),
        _ => names.len(),
    };
    crate::domain::study::check_raters(study, n, accounts, items).map_err(|e| invalid(e.to_string()))
}

/// Every named annotator is an annotator's account.
async fn check_annotators(tx: &mut Tx, names: &[String]) -> Result<(), ServiceError> {
    for name in names {
        let role: Option<String> = sqlx::query_scalar("SELECT role FROM users WHERE username = $1")
            .bind(name)
            .fetch_optional(&mut **tx)
            .await?;
        match role.as_deref() {
            Some("annotator") => {}
            Some(other) => {
                return Err(invalid(format!("field `annotators`: {name:?} has the role {other}, not annotator")))
            }
            None => return Err(invalid(format!("field `annotators`: no user named {name:?}"))),
        }
    }
    Ok(())
}

/// The source study the spec names, on the same dataset unless its
/// answers make this study's items (`written`).
async fn source_study(
    tx: &mut Tx,
    study: &Study,
    dataset_id: DatasetId,
    written: bool,
) -> Result<Option<StudyId>, ServiceError> {
    let Some(name) = &study.source else { return Ok(None) };
    let (sid, sds): (StudyId, DatasetId) = sqlx::query_as("SELECT id, dataset_id FROM studies WHERE name = $1")
        .bind(name)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or_else(|| invalid(format!("field `source`: no study named {name:?}")))?;
    if sds != dataset_id && !written {
        return Err(invalid(format!("field `source`: study {name:?} is on another dataset than {:?}", study.dataset)));
    }
    Ok(Some(sid))
}

/// Step 4 checks Step 3's survivors; the human baseline samples the final
/// ones (seeded, so the same spec draws the same items). Read through the
/// pool, as the pipeline reads.
async fn sampled_survivors(
    db: &AnyPool,
    kinds: &[SurveyKind],
    source: StudyId,
    study: &Study,
) -> Result<Vec<(i64, String)>, ServiceError> {
    let survivors = crate::studies::outcomes::survivors(db, kinds, source, study.kind.spec().sources).await;
    let mut items = survivors.map_err(|e| match e {
        ServiceError::Invalid(m) | ServiceError::NotFound(m) => invalid(format!("field `source`: {m}")),
        e => e,
    })?;
    if let Some(sample) = study.sample {
        let n = sample.size(items.len()).map_err(|e| invalid(format!("field `assignment.sample`: {e}")))?;
        crate::domain::rng::shuffle(&mut items, crate::domain::rng::mix(&[study.seed, 0x5341_4d50]));
        items.truncate(n);
        items.sort();
    }
    Ok(items)
}

/// The study's row; a taken name is `Invalid`.
async fn insert_study(
    tx: &mut Tx,
    study: &Study,
    spec_text: &str,
    dataset_id: DatasetId,
    source: Option<StudyId>,
    annotators: &Annotators,
) -> Result<StudyId, ServiceError> {
    let id = sqlx::query_scalar::<_, StudyId>(
        "INSERT INTO studies (name, kind, dataset_id, instructions, annotators, rule, seed, spec, spec_hash, created_at,
                              source_study_id, mapping, resolve, primary_user)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id",
    )
    .bind(&study.name)
    .bind(study.kind.as_str())
    .bind(dataset_id)
    .bind(&study.instructions)
    .bind(serde_json::to_string(annotators)?)
    .bind(serde_json::to_string(&study.rule)?)
    .bind(study.seed as i64)
    .bind(spec_text)
    .bind(crate::store::images::sha256_hex(spec_text.as_bytes()))
    .bind(now_secs())
    .bind(source)
    .bind(study.mapping.as_str())
    .bind(study.resolve.as_str())
    .bind(&study.primary)
    .fetch_one(&mut **tx)
    .await
    .map_err(|e| match e {
        sqlx::Error::Database(d) if d.is_unique_violation() => {
            invalid(format!("field `name`: a study named {:?} already exists", study.name))
        }
        e => e.into(),
    })?;
    Ok(id)
}

/// The study's items: the chosen survivors, or every instance of its
/// dataset. Returns how many.
async fn insert_items(
    tx: &mut Tx,
    id: StudyId,
    dataset_id: DatasetId,
    survivors: Option<Vec<(i64, String)>>,
) -> Result<u64, ServiceError> {
    let Some(list) = survivors else {
        let all = "INSERT INTO study_items (study_id, instance_id) SELECT $1, id FROM instances WHERE dataset_id = $2";
        return Ok(sqlx::query(all).bind(id).bind(dataset_id).execute(&mut **tx).await?.rows_affected());
    };
    for chunk in list.chunks(500) {
        let mut q = sqlx::QueryBuilder::new("INSERT INTO study_items (study_id, instance_id, chosen_image) ");
        q.push_values(chunk, |mut row, (instance, image)| {
            row.push_bind(id).push_bind(instance).push_bind(image);
        });
        let (sql, args) = crate::store::db::numbered(&mut q)?;
        sqlx::query_with(&sql, args).execute(&mut **tx).await?;
    }
    Ok(list.len() as u64)
}

/// Step 4 over the survivors of a finished Step 3 study: the spec
/// `step4_spec` writes, created like any other. The UI's "Start Step 4" and
/// `POST /api/v1/studies/{id}/step4` both call this.
pub async fn create_step4(db: &AnyPool, kinds: &Registry, step3: StudyId) -> Result<(StudyId, Study), ServiceError> {
    let spec = crate::studies::step4::step4_spec(db, kinds.list, step3, now_secs() as u64).await?;
    let study = parse_spec(kinds, &spec, 0)?;
    // The researcher wrote Step 3's assignment, not this copy of it: say so.
    let id = create_study(db, kinds, &study, &spec).await.map_err(|e| match e {
        ServiceError::Invalid(m) if m.contains("`assignment.") => ServiceError::Invalid(format!(
            "Step 4 copies Step 3's assignment, which does not fit Step 3's survivors ({m}); create Step 4 \
             from a spec of its own (source = the Step 3 study's name) with an assignment that fits"
        )),
        e => e,
    })?;
    Ok((id, study))
}
