//! What an answer sets off after its commit (an adaptive round's decision,
//! an attention check's screen-out) can be cut short by a fault: the
//! database busy past its timeout, a connection cut by a PostgreSQL restart.
//! The answer stands, and every server sweeps what was left: at start-up
//! and then every `HARDNEG_SWEEP_SECS` (default 60). Servers sharing
//! PostgreSQL each sweep, so no study waits for an answer at the server
//! that failed, nor for its restart; every sweep is idempotent.
use crate::domain::ids::StudyId;
use crate::state::AppState;
use std::time::Duration;

/// The interval between sweeps (`HARDNEG_SWEEP_SECS`, default 60).
pub fn interval() -> Duration {
    let secs = std::env::var("HARDNEG_SWEEP_SECS").ok().and_then(|v| v.parse::<f64>().ok());
    // NaN passes through `clamp` and `from_secs_f64` panics on it: the default.
    let secs = secs.filter(|s| s.is_finite()).unwrap_or(60.0);
    Duration::from_secs_f64(secs.clamp(0.2, 86_400.0))
}

/// One sweep of every study (`periodic`: adaptive studies only where a round
/// is left undecided); errors are logged, never fatal.
pub async fn sweep_all(state: &AppState, periodic: bool) {
    crate::studies::adaptive::sweep_all(state, periodic).await;
    let studies: Vec<StudyId> = match sqlx::query_scalar("SELECT study_id FROM study_links").fetch_all(&state.db).await
    {
        Ok(s) => s,
        Err(e) => return tracing::error!("listing link studies to sweep: {e}"),
    };
    for study in studies {
        match crate::studies::link::checks::sweep_failed(state, study).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(%study, n, "ended the places of participants past the failed-check limit"),
            Err(e) => tracing::error!(%study, "sweeping failed attention checks: {}", e.chain()),
        }
    }
}

/// Sweeps now, then every [`interval`], for as long as the server runs.
pub async fn start(state: AppState) {
    sweep_all(&state, false).await;
    let every = interval();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            sweep_all(&state, true).await;
        }
    });
}
