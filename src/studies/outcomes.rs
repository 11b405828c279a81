//! Where each instance stands in the curation pipeline: a study's answers
//! settled item by item (pure `domain::resolution`), Step 3 survivors
//! turned into Step 4 items, and the dataset funnel.
use crate::domain::assignment::{Annotators, StudyItem};
use crate::domain::category::Category;
use crate::domain::ids::StudyId;
use crate::domain::resolution::{resolve, ItemAnswer, ItemState, Posterior};
use crate::domain::survey::{ItemData, SurveyKind, Verdict};
use crate::error::ServiceError;
use crate::state::StudyMeta;
use crate::store::pages::{all_rows, page_starts, range_pages, JsonPages, PAGE_SHIFT};
use crate::studies::meta::load_study_meta;
use crate::studies::votes::Votes;
use sqlx::AnyPool;
use std::collections::HashMap;

/// One item of a study and what its answers decided so far.
#[derive(Debug, Clone)]
pub struct ItemOutcome {
    pub instance_id: i64,
    pub category: Category,
    pub state: ItemState,
    /// The settled value's posterior and the model that gave it: a crowd
    /// model `resolve`, or adaptive overlap's stop rule.
    pub posterior: Option<Posterior>,
}

impl ItemOutcome {
    pub fn verdict(&self, kind: SurveyKind) -> Option<Verdict> {
        match &self.state {
            ItemState::Final { value, .. } => kind.verdict(value),
            _ => None,
        }
    }

    pub fn final_value(&self) -> Option<&str> {
        match &self.state {
            ItemState::Final { value, .. } => Some(value),
            _ => None,
        }
    }
}

/// How many answers the plan asks for per item. Named annotators: from the
/// plan itself (so an annotator who has not arrived yet still counts);
/// "all": from the tasks of those who have arrived.
async fn expected_answers(
    db: &AnyPool,
    meta: &StudyMeta,
    items: &[StudyItem],
) -> Result<HashMap<i64, usize>, ServiceError> {
    if let Some(wanted) = crate::studies::adaptive::wanted(db, meta.id).await? {
        return Ok(wanted);
    }
    let mut expected = HashMap::with_capacity(items.len());
    // Link studies: each bundle's tasks, once per wanted copy.
    let bundled: Vec<(i64, i64)> = all_rows(
        db,
        "SELECT json_group_array(json_array(instance_id, n)) FROM (
           SELECT bi.instance_id, CAST(sum(b.copies_wanted) AS BIGINT) AS n FROM bundle_items bi
           JOIN bundles b ON b.study_id = bi.study_id AND b.bundle = bi.bundle
           WHERE bi.study_id = $1 GROUP BY bi.instance_id) AS r",
        meta.id.get(),
    )
    .await?;
    if !bundled.is_empty() {
        expected.extend(bundled.into_iter().map(|(i, n)| (i, n as usize)));
        return Ok(expected);
    }
    match &meta.annotators {
        Annotators::Named(names) => {
            // The rules plan over the items' subsets too (stratified samples).
            for name in names {
                for t in meta.rule.plan_upfront(meta.kind.spec().questions, meta.seed, 0, name, items) {
                    *expected.entry(t.item).or_insert(0) += 1;
                }
            }
        }
        Annotators::All | Annotators::AllBut(_) => {
            let rows: Vec<(i64, i64)> = all_rows(
                db,
                "SELECT json_group_array(json_array(instance_id, n)) FROM (
                   SELECT instance_id, count(*) AS n FROM tasks WHERE study_id = $1 GROUP BY instance_id) AS r",
                meta.id.get(),
            )
            .await?;
            expected.extend(rows.into_iter().map(|(i, n)| (i, n as usize)));
        }
    }
    Ok(expected)
}

/// The primary annotator whose answer settles a disagreement on an item
/// answered by `answerers`: pairs name their own; otherwise the spec's.
fn primary_for(
    meta: &StudyMeta,
    ids: &HashMap<String, i64>,
    names: &HashMap<i64, String>,
    answerers: &[ItemAnswer<'_>],
) -> Option<i64> {
    let name = meta.primary_among(answerers.iter().filter_map(|a| names.get(&a.annotator).map(String::as_str)))?;
    ids.get(name).copied()
}

/// Every item of the study with its state, in instance order. Items and
/// answers are streamed side by side (both ordered by instance), so only the
/// outcomes and a compact copy of the answers (`Votes`) stay in memory.
pub async fn study_outcomes(
    db: &AnyPool,
    kinds: &[SurveyKind],
    study_id: StudyId,
) -> Result<(StudyMeta, Vec<ItemOutcome>), ServiceError> {
    let (meta, outcomes, _) = study_outcomes_paged(db, kinds, study_id, PAGE_SHIFT).await?;
    Ok((meta, outcomes))
}

/// [`study_outcomes`] with the answers they were settled on, item by item.
pub async fn study_outcomes_and_votes(
    db: &AnyPool,
    kinds: &[SurveyKind],
    study_id: StudyId,
) -> Result<StudyOutcomes, ServiceError> {
    study_outcomes_paged(db, kinds, study_id, PAGE_SHIFT).await
}

/// A study, its items' outcomes and their answers (`votes.of(i)` for `outcomes[i]`).
pub type StudyOutcomes = (StudyMeta, Vec<ItemOutcome>, Votes);

/// [`study_outcomes_and_votes`] reading 2^`shift` instance ids per page (tests vary it).
pub async fn study_outcomes_paged(
    db: &AnyPool,
    kinds: &[SurveyKind],
    study_id: StudyId,
    shift: u32,
) -> Result<StudyOutcomes, ServiceError> {
    let meta = load_study_meta(db, kinds, study_id).await?;
    // The items in one handoff (ids and subsets: 16 bytes each), which
    // also cut the answers' pages (every answer is in one).
    let study_items = crate::studies::meta::study_items(db, study_id).await?;
    let expected = expected_answers(db, &meta, &study_items).await?;
    let mut out = Vec::with_capacity(study_items.len());
    let ids: Vec<i64> = study_items.iter().map(|i| i.id).collect();
    let starts = page_starts(&ids, shift);
    drop(ids);
    let adjudicated: HashMap<i64, String> =
        sqlx::query_as("SELECT instance_id, value FROM adjudications WHERE study_id = $1")
            .bind(study_id)
            .fetch_all(db)
            .await?
            .into_iter()
            .collect();
    let users: Vec<(i64, String)> = sqlx::query_as("SELECT id, username FROM users").fetch_all(db).await?;
    let user_ids: HashMap<String, i64> = users.iter().map(|(id, n)| (n.clone(), *id)).collect();
    let mut votes = Votes::new(users.into_iter().collect());

    // In pages (crate::store::pages): one driver handoff per page, not per
    // row. Earliest first: answered_at has second resolution, then the
    // writer's arrival stamp, then task id (answers stored before stamps).
    let mut answers = JsonPages::<(i64, i64, String, i64, i64, i64)>::new(range_pages(
        db,
        "SELECT json_group_array(json_array(instance_id, user_id, value, answered_at, arrival, task_id))
         FROM counted_answers WHERE study_id = $1 AND instance_id BETWEEN $2 AND $3",
        study_id.get(),
        starts,
    ))
    .ordered_by(|a, b| (a.0, a.3, a.4, a.5).cmp(&(b.0, b.3, b.4, b.5)));
    // `order` counts every answer in the study's order, as if all were listed.
    let (mut next, mut order, mut given) = (None::<(i64, i64, String, i64, i64, i64)>, 0i64, Vec::new());
    let mut model_answers: Vec<(u64, u64, usize)> = Vec::new();
    // Adaptive overlap: places ended as carrying no information count toward
    // no settled value (docs/study-spec.md), the model's neither.
    let weightless = match (meta.adaptive, meta.resolve.model()) {
        (Some(_), Some(_)) => crate::studies::adaptive::ended_uninformative(db, study_id).await?,
        _ => Default::default(),
    };
    votes.leave_out_of_model(weightless.clone());
    for &StudyItem { id: instance_id, subset: category } in &study_items {
        given.clear();
        loop {
            if next.is_none() {
                next = answers.try_next().await?;
            }
            match next.take() {
                Some((item, user, value, ..)) if item <= instance_id => {
                    if item == instance_id {
                        given.push((user, value, order));
                    }
                    order += 1;
                }
                other => {
                    next = other;
                    break;
                }
            }
        }
        given.iter().for_each(|(user, value, _)| votes.push(*user, value));
        votes.end_item();
        let given: Vec<ItemAnswer<'_>> =
            given.iter().map(|(user, value, order)| ItemAnswer { annotator: *user, value, order: *order }).collect();
        if meta.resolve.model().is_some() {
            for a in given.iter().filter(|a| !weightless.contains(&a.annotator)) {
                let class = crate::studies::aggregate::class_of(meta.kind, a.value).ok_or_else(|| {
                    ServiceError::Internal(format!("stored value {:?} is not a value of its kind", a.value))
                })?;
                model_answers.push((instance_id as u64, a.annotator as u64, class));
            }
        }
        let primary = primary_for(&meta, &user_ids, votes.names(), &given);
        let state = resolve(
            &given,
            expected.get(&instance_id).copied().unwrap_or(0),
            meta.resolve,
            primary,
            adjudicated.get(&instance_id).map(String::as_str),
        );
        out.push(ItemOutcome { instance_id, category, state, posterior: None });
    }
    let items = out.iter_mut().map(|o| (o.instance_id, &mut o.state, &mut o.posterior));
    let scope = match meta.adaptive {
        Some(a) => crate::studies::aggregate::Scope {
            settled: crate::studies::adaptive::settle(db, study_id, items).await?,
            only_given: !a.allow_unchosen,
        },
        // Fixed overlap: a model settles on a value somebody gave, too.
        None => crate::studies::aggregate::Scope { only_given: true, ..Default::default() },
    };
    if let Some(model) = meta.resolve.model() {
        let items = out.iter_mut().map(|o| (o.instance_id, &mut o.state, &mut o.posterior));
        crate::studies::aggregate::settle(model, meta.kind, meta.seed, &model_answers, &adjudicated, &scope, items);
    }
    // HOOK (free-text answers): the same value with different texts is a
    // disagreement that a value rule (a model, the stop rule) cannot settle.
    let items = out.iter_mut().map(|o| (o.instance_id, &mut o.state));
    crate::studies::answer_texts::settle(db, &meta, items).await?;
    Ok((meta, out, votes))
}

/// The survivors of a finished curation study (Step 3 or Step 4), each with
/// the generated image it carries (the one Step 3 chose): the items of the next stage.
pub async fn survivors(
    db: &AnyPool,
    kinds: &[SurveyKind],
    study: StudyId,
    want: &[SurveyKind],
) -> Result<Vec<(i64, String)>, ServiceError> {
    let (meta, outcomes) = study_outcomes(db, kinds, study).await?;
    if !want.contains(&meta.kind) {
        let want: Vec<&str> = want.iter().map(|k| k.as_str()).collect();
        return Err(ServiceError::Invalid(format!(
            "study {:?} is of kind {}; expected {}",
            meta.name,
            meta.kind.as_str(),
            want.join(" or ")
        )));
    }
    let open: Vec<&ItemOutcome> = outcomes.iter().filter(|o| !matches!(o.state, ItemState::Final { .. })).collect();
    if !open.is_empty() {
        let disputed = open.iter().filter(|o| matches!(o.state, ItemState::Disputed { .. })).count();
        return Err(ServiceError::Invalid(format!(
            "{} study {:?} is not finished: {} items still wait for answers and {disputed} for adjudication",
            meta.kind.label(),
            meta.name,
            open.len() - disputed
        )));
    }
    if meta.kind.curation().is_none() {
        return Err(ServiceError::Invalid(format!("study {:?} curates nothing", meta.name)));
    }
    let settled = settled_images(db, meta.kind, study, &outcomes).await?;
    Ok(settled.into_iter().filter_map(|(instance, image)| Some((instance, image?))).collect())
}

/// Each settled item of a curation study, whether or not the study has
/// finished: the image a kept item carries (the candidate Step 3 chose),
/// None for an item it dropped.
pub async fn settled_images(
    db: &AnyPool,
    kind: SurveyKind,
    study: StudyId,
    outcomes: &[ItemOutcome],
) -> Result<Vec<(i64, Option<String>)>, ServiceError> {
    let Some(curation) = kind.curation() else { return Ok(Vec::new()) };
    let items = item_images(db, kind, study).await?;
    let mut out = Vec::new();
    for o in outcomes.iter().filter(|o| matches!(o.state, ItemState::Final { .. })) {
        if o.verdict(kind) != Some(Verdict::Kept) {
            out.push((o.instance_id, None));
            continue;
        }
        let value = o.final_value().unwrap_or_default();
        let image = items
            .get(&o.instance_id)
            .and_then(|item| (curation.carried_image)(item, value))
            .ok_or_else(|| ServiceError::Internal(format!("instance {} has no image for {value:?}", o.instance_id)))?;
        out.push((o.instance_id, Some(image)));
    }
    Ok(out)
}

/// The images of every item of a study that its kind reads, in bulk (only
/// the image fields of each `ItemData` are filled).
async fn item_images(db: &AnyPool, kind: SurveyKind, study: StudyId) -> Result<HashMap<i64, ItemData>, ServiceError> {
    let needs = kind.spec().needs;
    let rows: Vec<(i64, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT si.instance_id, si.chosen_image, i.positive_image FROM study_items si JOIN instances i ON i.id = si.instance_id
         WHERE si.study_id = $1",
    )
    .bind(study)
    .fetch_all(db)
    .await?;
    let mut items: HashMap<i64, ItemData> = rows
        .into_iter()
        .map(|(i, chosen, positive)| {
            let item = ItemData {
                chosen_image: chosen.filter(|_| needs.chosen_image),
                positive_image: positive.filter(|_| needs.positive_image),
                ..ItemData::default()
            };
            (i, item)
        })
        .collect();
    if needs.candidates.is_some() {
        let slots: Vec<(i64, String)> = sqlx::query_as(
            "SELECT c.instance_id, c.image FROM candidates c JOIN study_items si ON si.instance_id = c.instance_id
             WHERE si.study_id = $1 ORDER BY c.instance_id, c.slot",
        )
        .bind(study)
        .fetch_all(db)
        .await?;
        for (i, image) in slots {
            items.entry(i).or_default().candidate_images.push(image);
        }
    }
    Ok(items)
}

pub async fn study_status(
    db: &AnyPool,
    kinds: &[SurveyKind],
    study_id: StudyId,
) -> Result<crate::api_types::StudyStatus, ServiceError> {
    let (meta, outcomes) = study_outcomes(db, kinds, study_id).await?;
    let disputed = outcomes.iter().filter(|o| matches!(o.state, ItemState::Disputed { .. })).count();
    let final_items = outcomes.iter().filter(|o| matches!(o.state, ItemState::Final { .. })).count();
    // A kind nobody adjudicates (a human baseline's four answers, a report)
    // has no disputes: its answered items wait for no one.
    let (final_items, disputed) = match meta.kind.spec().adjudicated {
        true => (final_items, disputed),
        false => (final_items + disputed, 0),
    };
    // The next curation step built from it; a human baseline drawn from the same study is none.
    let step4: Option<String> = match meta.kind.next_step_in(kinds) {
        Some(next) => {
            sqlx::query_scalar(
                "SELECT name FROM studies WHERE source_study_id = $1 AND kind = $2 ORDER BY id DESC LIMIT 1",
            )
            .bind(study_id)
            .bind(next.name())
            .fetch_optional(db)
            .await?
        }
        None => None,
    };
    Ok(crate::api_types::StudyStatus {
        study_id,
        kind: meta.kind,
        final_items,
        waiting: outcomes.len() - final_items - disputed,
        disputed,
        step4,
    })
}
