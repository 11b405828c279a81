//! The fake's own timer: bulk approvals and bonus payments once their delay
//! has passed, scheduled studies at their time, and due webhook deliveries.
use super::state::State;
use super::{bonuses, deliver, studies, submissions, Fake};
use std::sync::Arc;
use std::time::Duration;

/// Runs due asynchronous work (all of it when `all`); returns (approvals, payments) made.
pub fn run(state: &mut State, all: bool) -> (usize, usize) {
    studies::publish_scheduled(state);
    let approvals = submissions::run_approvals(state, all);
    let payments = bonuses::run_payments(state, all);
    (approvals, payments)
}

/// Forever: wakes on every state change and at least every 100 ms.
pub async fn worker(fake: Arc<Fake>) {
    loop {
        let _ = tokio::time::timeout(Duration::from_millis(100), fake.wake.notified()).await;
        {
            let mut state = fake.state.lock().unwrap_or_else(|e| e.into_inner());
            run(&mut state, false);
        }
        deliver::deliver_due(&fake, false).await;
    }
}
