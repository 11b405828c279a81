//! The annotator's loop: next task, answer. Shared by the JSON API and the
//! server functions behind the survey page.
use crate::accounts::SessionUser;
use crate::api_types::{AnswerAck, OptionView, Progress, Prompt, TaskView};
use crate::domain::ids::UserId;
use crate::domain::ids::{InstanceId, StudyId, TaskId};
use crate::domain::survey::Presentation;
use crate::error::ServiceError;
use crate::state::{AppState, StudyMeta};
use crate::store::ids::Flag;
use crate::store::rows::from_row;
use crate::store::task_cache::{self, ShownTask};
use crate::store::writer::{NewAnswer, Stored};
use crate::studies::link::{self, withdrawn, withdrawn_error};
use crate::studies::meta::{load_item, study_meta};
use crate::studies::next_read::{next_rows, NextRow, Queued};

const MAX_ELAPSED_MS: i64 = 3_600_000;

/// Not `format!`: about a thousand instructions a URL, eight URLs a round trip.
pub fn image_url(hash: &str) -> String {
    ["/img/", hash].concat()
}

/// The shown options as the client gets them (image hashes become URLs).
pub fn option_views(options: Vec<crate::domain::survey::ShownOption>) -> Vec<OptionView> {
    options
        .into_iter()
        .map(|o| OptionView {
            image_url: o.image.as_deref().map(image_url),
            keys: o.keys.iter().map(|k| k.to_string()).collect(),
            id: o.id,
            label: o.label,
            text: o.text,
        })
        .collect()
}

/// Who may read what a study's survey shows (its vocabulary): its
/// researchers, its own participants, and the annotators it admits.
pub async fn may_take_part(state: &AppState, user: &SessionUser, meta: &StudyMeta) -> Result<(), ServiceError> {
    if user.role.may_research() {
        Ok(())
    } else if user.role.is_participant() {
        crate::studies::link::own_place(state, user, meta.id).await.map(|_| ())
    } else {
        require_annotator(user, meta)
    }
}

fn require_annotator(user: &SessionUser, meta: &StudyMeta) -> Result<(), ServiceError> {
    if !user.role.may_annotate() {
        return Err(ServiceError::Forbidden("only annotators answer surveys".into()));
    }
    if let crate::domain::assignment::Annotators::AllBut(writers) = &meta.annotators {
        if writers.contains(&user.username) {
            return Err(ServiceError::Forbidden(format!(
                "you wrote pairs that study {} validates; its validators are another group",
                meta.id
            )));
        }
    }
    if !meta.annotators.admits(&user.username) {
        return Err(ServiceError::Forbidden(format!("you are not an annotator of study {}", meta.id)));
    }
    Ok(())
}

/// A participant answers only the bundle its own lease holds (its tasks
/// were made at arrival); an account must be one of the study's annotators.
/// False: a participant whose place no longer takes answers (screened out,
/// returned, finished) is handed no task, the rule the answer path applies.
async fn admit(state: &AppState, user: &SessionUser, meta: &StudyMeta) -> Result<bool, ServiceError> {
    if user.role.is_participant() {
        let place = crate::studies::link::own_lease_unless_ended(state, user, meta.id, meta.practice_items).await?;
        Ok(place.is_some_and(|(_, lease)| lease.may_answer()))
    } else {
        require_annotator(user, meta).map(|_| true)
    }
}

/// An attention check (`attention`: the value it asks for) is the same item
/// with the kind's instruction in place of the prompt; its options are the same.
async fn present(
    state: &AppState,
    meta: &StudyMeta,
    instance_id: InstanceId,
    seed: i64,
    query: i64,
    attention: Option<&str>,
) -> Result<Presentation, ServiceError> {
    let query = query as u8;
    let load = load_item(&state.db, meta.kind, meta.id, instance_id, query);
    let item = state.items.get_or_load((meta.id, instance_id, query), load).await?;
    match attention {
        Some(target) => meta.kind.attention_check(&item, seed as u64, target),
        None => meta.kind.present(&item, seed as u64),
    }
    .map_err(|e| ServiceError::internal(format!("presenting instance {instance_id}"), e))
}

async fn participation(
    db: &sqlx::AnyPool,
    study_id: StudyId,
    user_id: UserId,
) -> Result<Option<Progress>, ServiceError> {
    let row: Option<(i64, i64)> =
        sqlx::query_as("SELECT done, total FROM participations WHERE study_id = $1 AND user_id = $2")
            .bind(study_id)
            .bind(user_id)
            .fetch_optional(db)
            .await?;
    Ok(row.map(|(done, total)| Progress { done, total }))
}

/// Starts the caller's participation: creates their tasks on the first call
/// (rules that plan upfront), does nothing on later ones. The only place
/// tasks are created, so that reading the next task has no side effect.
pub async fn start(state: &AppState, user: &SessionUser, study_id: StudyId) -> Result<Progress, ServiceError> {
    let meta = study_meta(state, study_id).await?;
    admit(state, user, &meta).await?;
    // Adaptive overlap: items are claimed as they want answers (studies::adaptive).
    if !user.role.is_participant() {
        if let Some(progress) = crate::studies::adaptive::start(state, user, &meta).await? {
            return Ok(progress);
        }
    }
    if let Some(progress) = participation(&state.db, meta.id, user.id).await? {
        return Ok(progress);
    }
    // A newcomer's answers would change a curation step's outcomes that a
    // later study was built on (under `annotators = "all"` every item would
    // be open again). A study that reads its source as it goes (HNC's pair
    // validation of pairs still being written) leaves the source open.
    if !user.role.is_participant() && meta.kind.curation().is_some() {
        if let Some(name) = crate::studies::meta::built_into(&state.db, meta.id).await? {
            return Err(ServiceError::Conflict(format!(
                "study {name:?} was built from this study's outcomes, so it takes no new annotators"
            )));
        }
    }
    let items = crate::studies::meta::study_items(&state.db, meta.id).await?;
    let plan = meta.rule.plan_upfront(meta.kind.spec().questions, meta.seed, user.id.get(), &user.username, &items);
    let mut tx = crate::store::db::begin_write(&state.db).await?;
    if !user.role.is_participant() {
        super::queue_write::full_of_raters(&mut tx, &meta).await?;
    }
    let created = sqlx::query(
        "INSERT INTO participations (study_id, user_id, total, done) VALUES ($1, $2, $3, 0) ON CONFLICT DO NOTHING",
    )
    .bind(meta.id)
    .bind(user.id)
    .bind(plan.len() as i64)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if created == 1 {
        super::queue_write::insert_tasks(&mut tx, meta.id, user.id, &plan).await?;
    }
    tx.commit().await?;
    Ok(Progress { done: 0, total: plan.len() as i64 })
}

/// The caller's next unanswered task in the study, or None when done.
/// Read-only: the caller must have [`start`]ed the study.
pub async fn next_task(
    state: &AppState,
    user: &SessionUser,
    study_id: StudyId,
) -> Result<Option<TaskView>, ServiceError> {
    let meta = study_meta(state, study_id).await?;
    if !admit(state, user, &meta).await? {
        return Ok(None);
    }
    // Progress and the first two open tasks (the second one's images are
    // prefetched): no task columns when none is open.
    let rows = next_rows(state, study_id, user.id).await?;
    let first = rows.first().ok_or_else(|| {
        ServiceError::Conflict(format!(
            "you have not started study {study_id}: POST /api/v1/studies/{study_id}/start first"
        ))
    })?;
    let progress = Progress { done: first.done, total: first.total };
    let queue: Vec<Queued> = rows.into_iter().filter_map(NextRow::queued).collect();
    let Some(Queued { task_id, instance_id, seed, query, attention }) = queue.first().cloned() else {
        return Ok(None);
    };
    state.tasks.put(task_id, ShownTask::served_now(user.id, study_id, instance_id, seed, query, attention.is_some()));
    let p = present(state, &meta, instance_id, seed, query, attention.as_deref()).await?;
    // Every image the next task will show, so it appears without a wait.
    let prefetch: Vec<String> = match queue.get(1) {
        Some(next) => {
            let n = present(state, &meta, next.instance_id, next.seed, next.query, None).await?;
            n.prompt_image
                .iter()
                .chain(n.options.iter().filter_map(|o| o.image.as_ref()))
                .map(|h| image_url(h))
                .collect()
        }
        None => Vec::new(),
    };
    Ok(Some(TaskView {
        task_id,
        study_id,
        kind: meta.kind,
        item_instructions: p.instructions.is_some(),
        instructions: p.instructions.map(str::to_string).unwrap_or_else(|| meta.instructions.clone()),
        prompt: Prompt { text: p.prompt_text, image_url: p.prompt_image.as_deref().map(image_url) },
        options: option_views(p.options),
        progress,
        prefetch,
    }))
}

/// The page's view of a study: its name, and the next task when the caller
/// has started it (`None` when not: a page's GET must not start a study).
pub async fn peek(
    state: &AppState,
    user: &SessionUser,
    study_id: StudyId,
) -> Result<(String, Option<Option<TaskView>>), ServiceError> {
    let meta = study_meta(state, study_id).await?;
    admit(state, user, &meta).await?;
    if participation(&state.db, study_id, user.id).await?.is_none() {
        return Ok((meta.name.clone(), None));
    }
    Ok((meta.name.clone(), Some(next_task(state, user, study_id).await?)))
}

/// A task as stored, read when the shown-task cache no longer has it.
struct TaskRow {
    user_id: UserId,
    study_id: StudyId,
    instance_id: InstanceId,
    seed: i64,
    done: bool,
    query: i64,
    check_kind: Option<String>,
}
from_row!(TaskRow { user_id, study_id, instance_id, seed, done as Flag, query, check_kind });

impl TaskRow {
    fn shown(&self) -> ShownTask {
        ShownTask {
            owner: self.user_id.get(),
            study_id: self.study_id,
            instance_id: self.instance_id,
            seed: self.seed,
            query: self.query,
            attention: self.check_kind.as_deref() == Some("attention"),
            shown_ms: 0,
        }
    }
}

/// Stores the caller's answer; returns once it is durable. A repeat is
/// acknowledged again but stores nothing new.
pub async fn answer(
    state: &AppState,
    user: &SessionUser,
    task_id: TaskId,
    option: &str,
    elapsed_ms: Option<i64>,
) -> Result<AnswerAck, ServiceError> {
    answer_with_text(state, user, task_id, option, None, elapsed_ms).await
}

/// [`answer`] with the free-text part of a kind that declares one field.
pub async fn answer_with_text(
    state: &AppState,
    user: &SessionUser,
    task_id: TaskId,
    option: &str,
    text: Option<&str>,
    elapsed_ms: Option<i64>,
) -> Result<AnswerAck, ServiceError> {
    let given: Vec<(&str, &str)> = text.map(|t| ("", t)).into_iter().collect();
    Ok(answer_with_texts(state, user, task_id, option, &given, elapsed_ms).await?.0)
}

/// [`answer`] with the free-text parts the kind declares, by field name (an
/// empty name: the kind's only field), checked before anything is stored.
/// Also the answered task's study, where a client that wants the next task
/// in the same round trip asks [`next_task`] (the answer is durable by then,
/// so it counts in `progress`).
pub async fn answer_with_texts(
    state: &AppState,
    user: &SessionUser,
    task_id: TaskId,
    option: &str,
    texts: &[(&str, &str)],
    elapsed_ms: Option<i64>,
) -> Result<(AnswerAck, StudyId), ServiceError> {
    // A task just shown needs no read: if it was answered already, the writer says so.
    let (task, done) = match state.tasks.get(task_id) {
        Some(t) => (t, false),
        None => {
            let row: Option<TaskRow> = sqlx::query_as(
                "SELECT user_id, study_id, instance_id, seed, done, query, check_kind FROM tasks WHERE id = $1",
            )
            .bind(task_id)
            .fetch_optional(&state.db)
            .await?;
            let Some(row) = row else {
                return Err(match withdrawn(state, user).await? {
                    true => withdrawn_error(task_id),
                    false => ServiceError::NotFound(format!("no task {task_id}")),
                });
            };
            (row.shown(), row.done)
        }
    };
    let ShownTask { owner, study_id, instance_id, seed, query, attention, shown_ms } = task;
    let elapsed_ms = elapsed_ms.or_else(|| task_cache::since_served(shown_ms));
    if owner != user.id.get() || !(user.role.may_annotate() || user.role.is_participant()) {
        return Err(not_yours(user, task_id));
    }
    let meta = study_meta(state, study_id).await?;
    let done = done
        || (user.role.is_participant()
            && link::repeat_after_end(state, user, study_id, meta.practice_items, task_id).await?);
    // A repeat is checked as a first answer is, whether or not the task is
    // still in the shown-task cache, so the same request always gets the same status.
    let p = present(state, &meta, instance_id, seed, query, None).await?;
    let (option_id, value) = meta.kind.answer(&p, option).map_err(|e| ServiceError::Invalid(e.to_string()))?;
    // HOOK (free texts, vocabulary): checked texts, or a 422 naming the field.
    let texts = crate::studies::vocabulary::checked_texts(state, &meta, &value, texts).await?;
    let stored = if done {
        Stored::AlreadyAnswered
    } else {
        state
            .writer
            .store(NewAnswer {
                task_id: task_id.get(),
                study_id: study_id.get(),
                user_id: user.id.get(),
                instance_id: instance_id.get(),
                option_id: option_id.clone(),
                value,
                shown_order: serde_json::to_string(&p.shown_order).unwrap_or_default(),
                elapsed_ms: elapsed_ms.unwrap_or(0).clamp(0, MAX_ELAPSED_MS),
                answered_at: state.crowd.clock.now(),
                arrival: 0,
                texts,
            })
            .await?
    };
    // On a repeat too (it changes nothing twice): a fault after the first's commit may have cut it short.
    if attention && stored != Stored::Withdrawn {
        crate::studies::link::checks::attention_answered(state, user.id, study_id).await?;
    }
    match stored {
        Stored::New => {
            // HOOK (adaptive overlap): decide the item's round once its answers are in.
            crate::studies::adaptive::after_answer(state, study_id, instance_id, user.id).await?;
            Ok((AnswerAck { task_id, option: option_id, duplicate: false }, study_id))
        }
        Stored::AlreadyAnswered => Ok((stored_ack(state, task_id).await?, study_id)),
        Stored::Withdrawn => Err(withdrawn_error(task_id)),
    }
}

async fn stored_ack(state: &AppState, task_id: TaskId) -> Result<AnswerAck, ServiceError> {
    let sql = "SELECT option_id FROM answers WHERE task_id = $1";
    let option: String = sqlx::query_scalar(sql).bind(task_id).fetch_one(&state.db).await?;
    Ok(AnswerAck { task_id, option, duplicate: true })
}

/// Another's task, in the same words whichever study it is of (audit AX:
/// a hint said only for the page's study told which study a task was of).
fn not_yours(user: &SessionUser, task: TaskId) -> ServiceError {
    // A participant's session follows the last study link opened in the browser.
    let hint = "; if you opened another study since, open this one again from its link";
    ServiceError::Forbidden(format!("task {task} is not yours{}", if user.role.is_participant() { hint } else { "" }))
}

/// A form posted under a study's page answers only that study's tasks.
pub async fn in_study(
    db: &sqlx::AnyPool,
    user: &SessionUser,
    task: TaskId,
    study: StudyId,
) -> Result<(), ServiceError> {
    let row: Option<(StudyId, i64)> =
        sqlx::query_as("SELECT study_id, user_id FROM tasks WHERE id = $1").bind(task).fetch_optional(db).await?;
    match row {
        Some((s, _)) if s == study => Ok(()),
        // Another's task is refused alike whatever its study: a 404 here
        // would tell which study it is of (audit AV).
        None => Err(not_yours(user, task)),
        Some((_, owner)) if owner != user.id.get() => Err(not_yours(user, task)),
        // A participant is refused on every other study's routes (docs/crowd.md).
        Some(_) if user.role.is_participant() => Err(ServiceError::Forbidden(format!(
            "task {task} is of another study than {study}; open study {study} again from its link to go on"
        ))),
        Some(_) => Err(ServiceError::NotFound(format!("study {study} has no task {task}"))),
    }
}
