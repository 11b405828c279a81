//! `hardneg prolific`'s waiting on the outbox: a command sends what it
//! wrote for at most a minute, then prints what is left (part of
//! `prolific.rs`).
use crate::domain::ids::StudyId;
use crate::prolific::{self, publish};
use std::time::{Duration, Instant};

pub(super) fn e(err: crate::error::ServiceError) -> anyhow::Error {
    // Kept as the error itself: a refusal (Invalid, NotFound) exits 2.
    anyhow::Error::new(err)
}

/// The round's set-ups and pays only, saying at once what waits past the
/// command's minute (a long `Retry-After`).
/// Fails (exit 1) when Prolific refused one of them: nothing of that row was
/// paid, and a script reading the exit status must not take it for paid.
pub(super) async fn flush_round(client: &prolific::client::Client, study: StudyId, round: &str) -> anyhow::Result<()> {
    let left = || async { prolific::bonus::open_rows_of_round(client.db(), study, round).await.map_err(e) };
    let lines = wait_on(client, study, left, "outbox: the round's bonuses are all confirmed").await?;
    let failed = lines.iter().filter(|l| l.state == "failed").count();
    if failed > 0 {
        anyhow::bail!(
            "round {round:?}: {failed} of its set-ups or pays failed (above), so not every bonus was paid; \
             fix the cause, then `hardneg prolific flush {study} --retry-failed`"
        );
    }
    Ok(())
}

/// Runs the study's outbox until nothing is open or a minute passes; prints what is left.
pub(super) async fn flush(client: &prolific::client::Client, study: StudyId) -> anyhow::Result<()> {
    // Every open row, none of them counted as waiting past the minute.
    let left = || async {
        let lines = prolific::outbox::lines(client.db(), study, true).await.map_err(e)?;
        anyhow::Ok(lines.into_iter().map(|l| (l, 0)).collect())
    };
    wait_on(client, study, left, "outbox: everything confirmed").await.map(|_| ())
}

/// Runs the study's outbox in short rounds (the study's other rows may stay
/// open for the whole minute) until every row `left` lists (each with when
/// it may be sent next, ms) is failed or pending past the command's minute,
/// or the minute passes; prints what is left, or `none_left`, and returns it.
async fn wait_on<F, Fut>(
    client: &prolific::client::Client,
    study: StudyId,
    left: F,
    none_left: &str,
) -> anyhow::Result<Vec<prolific::outbox::OutboxLine>>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Vec<(prolific::outbox::OutboxLine, i64)>>>,
{
    let until = Instant::now() + publish::COMMAND_WAIT;
    while Instant::now() < until {
        let round = (Instant::now() + Duration::from_millis(500)).min(until);
        prolific::sender::run(client, Some(study), round, None).await.map_err(e)?;
        let end_ms = prolific::client::now_ms() + until.saturating_duration_since(Instant::now()).as_millis() as i64;
        let waiting = |(l, not_before): &(prolific::outbox::OutboxLine, i64)| {
            l.state == "failed" || (l.state == "pending" && *not_before > end_ms)
        };
        if left().await?.iter().all(waiting) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let lines: Vec<_> = left().await?.into_iter().map(|(l, _)| l).collect();
    if lines.is_empty() {
        println!("{none_left}");
    }
    for l in &lines {
        println!("{}", l.sentence());
    }
    Ok(lines)
}
