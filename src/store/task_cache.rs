//! The tasks a caller was just shown, for the answer that follows. A task's
//! owner, study, item, seed and check never change after the transaction
//! that made it (only `done` does, and the writer settles a repeat answer
//! by itself), so the answer need not read the task row again.
use crate::domain::ids::{InstanceId, StudyId, TaskId, UserId};
use crate::store::recent::Recent;
use std::sync::{Arc, Mutex};

/// Shown tasks held: two generations of this many.
const GENERATION: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShownTask {
    pub owner: i64,
    pub study_id: StudyId,
    pub instance_id: InstanceId,
    pub seed: i64,
    pub query: i64,
    /// An instructional attention check (its answer is counted against the participant).
    pub attention: bool,
    /// When it was last served (Unix ms; 0: not known): the time an answer
    /// took where the page did not measure it (a plain form, JavaScript off).
    pub shown_ms: i64,
}

impl ShownTask {
    /// Served now: an answer the page does not time is timed from here.
    pub fn served_now(
        owner: UserId,
        study_id: StudyId,
        instance_id: InstanceId,
        seed: i64,
        query: i64,
        attention: bool,
    ) -> Self {
        ShownTask {
            owner: owner.get(),
            study_id,
            instance_id,
            seed,
            query,
            attention,
            shown_ms: crate::store::db::now_millis(),
        }
    }
}

/// What a page did not time (a plain form): the time since the task was served, when known.
pub fn since_served(shown_ms: i64) -> Option<i64> {
    (shown_ms > 0).then(|| crate::store::db::now_millis() - shown_ms)
}

#[derive(Clone)]
pub struct TaskCache(Arc<Mutex<Recent<TaskId, ShownTask>>>);

impl Default for TaskCache {
    fn default() -> Self {
        TaskCache(Arc::new(Mutex::new(Recent::new(GENERATION))))
    }
}

impl TaskCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Recent<TaskId, ShownTask>> {
        // A panic while holding the lock cannot leave the map half-written.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn put(&self, task_id: TaskId, task: ShownTask) {
        self.lock().put(task_id, task);
    }

    pub fn get(&self, task_id: TaskId) -> Option<ShownTask> {
        self.lock().get(&task_id)
    }
}
