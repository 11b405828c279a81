use super::*;
use crate::domain::prolific::outbox::{OutboxEvent as E, OutboxState as S};

#[test]
fn a_line_reads_as_a_sentence() {
    let line = |state: &str, attempts, last_error: Option<&str>| OutboxLine {
        id: 6,
        action: "transition".into(),
        state: state.into(),
        attempts,
        last_status: None,
        last_error: last_error.map(str::to_string),
    };
    assert_eq!(
        line("failed", 1, Some("Bad Request")).sentence(),
        "outbox row 6 transition failed after 1 try: Bad Request"
    );
    assert_eq!(line("pending", 3, None).sentence(), "outbox row 6 transition is pending after 3 tries: no answer yet");
}

async fn read(db: &AnyPool, id: i64) -> Row {
    let r: RawRow = sqlx::query_as(&format!("SELECT {COLUMNS} FROM prolific_outbox WHERE id = $1"))
        .bind(id)
        .fetch_one(db)
        .await
        .unwrap();
    row(r).unwrap()
}

/// Two workers read back the same unconfirmed pay: one finds it absent,
/// sends it again and loses the answer again; the other's read-back,
/// taken before that send, must not make the row pending once more (it
/// would send the pay a second time without reading the first back).
/// A database with one study (the data dir stays while the guard lives).
async fn a_study() -> (tempfile::TempDir, AnyPool, StudyId) {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::store::db::open_pool(&dir.path().join("t.sqlite")).await.unwrap();
    let images = crate::store::images::ImageStore::new(dir.path().join("images"));
    crate::cli::demo_seed::seed_demo_triplets(&db, &images).await.unwrap();
    crate::cli::demo_seed::seed_demo_accounts(&db).await.unwrap();
    let spec = crate::cli::demo_seed::DEMO_PROTOCOL_SPECS[0];
    let parsed = crate::studies::create::parse_spec(&crate::kinds::REGISTRY, spec, 0).unwrap();
    let study = crate::studies::create::create_study(&db, &crate::kinds::REGISTRY, &parsed, spec).await.unwrap();
    (dir, db, study)
}

/// A pay of `bonuses` in bulk `bulk`, queued; its row's id.
async fn pay(db: &AnyPool, study: StudyId, bulk: &str, bonuses: &[(&str, u64)]) -> i64 {
    let remote = Remote::BonusPay {
        bulk_id: bulk.into(),
        round: "r".into(),
        bonuses: bonuses.iter().map(|(s, c)| (s.to_string(), *c)).collect(),
        seen_before: None,
    };
    assert!(enqueue(db, study, &format!("bonus_pay:{bulk}"), &remote).await.unwrap());
    sqlx::query_scalar("SELECT max(id) FROM prolific_outbox").fetch_one(db).await.unwrap()
}

#[tokio::test]
async fn a_read_back_overtaken_by_a_send_moves_nothing() {
    let (_dir, db, study) = a_study().await;
    let id = pay(&db, study, "b1", &[("s1", 150)]).await;
    for event in [E::Claim, E::Lost] {
        assert!(advance(&db, &read(&db, id).await, event, 0, None, None).await.unwrap());
    }
    let (a, b) = (read(&db, id).await, read(&db, id).await);
    assert_eq!((a.state, a.attempts), (S::Unconfirmed, 1));
    // A: absent, sent again, lost again.
    assert!(advance(&db, &a, E::ReadBackAbsent, 0, None, None).await.unwrap());
    for event in [E::Claim, E::Lost] {
        assert!(advance(&db, &read(&db, id).await, event, 0, None, None).await.unwrap());
    }
    // B, on its stale read: refused; the row waits for a read-back of A's send.
    assert!(!advance(&db, &b, E::ReadBackAbsent, 0, None, None).await.unwrap());
    let now = read(&db, id).await;
    assert_eq!((now.state, now.attempts), (S::Unconfirmed, 2));
}

/// Two senders each found no pay in doubt before either claimed (the
/// check before the snapshot): the claim itself checks again, so the
/// second pay of the same amount to the same person waits for the first,
/// while a pay to someone else goes ahead.
#[tokio::test]
async fn a_pay_is_not_claimed_while_another_it_could_be_taken_for_is_sending() {
    let (_dir, db, study) = a_study().await;
    let a = pay(&db, study, "b1", &[("s1", 150), ("s2", 150)]).await;
    let b = pay(&db, study, "b2", &[("s2", 150)]).await;
    let other = pay(&db, study, "b3", &[("s2", 200), ("s3", 150)]).await;
    let (a_read, b_read) = (read(&db, a).await, read(&db, b).await);
    assert!(!bonus_in_doubt(&db, &a_read, 60_000).await.unwrap());
    assert!(!bonus_in_doubt(&db, &b_read, 60_000).await.unwrap());
    assert!(claim_to_send(&db, &a_read, 60_000, 5_000, "in doubt").await.unwrap());
    assert!(!claim_to_send(&db, &b_read, 60_000, 5_000, "in doubt").await.unwrap());
    let waits = read(&db, b).await;
    assert_eq!((waits.state, waits.attempts), (S::Pending, 0));
    let note: String = sqlx::query_scalar("SELECT last_error FROM prolific_outbox WHERE id = $1")
        .bind(b)
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!(note, "in doubt");
    assert!(claim_to_send(&db, &read(&db, other).await, 60_000, 5_000, "in doubt").await.unwrap());
    // Confirmed, and its grace over (none here): the second pay goes.
    assert!(advance(&db, &read(&db, a).await, E::Answered, 0, Some(201), None).await.unwrap());
    assert!(claim_to_send(&db, &read(&db, b).await, -1, 5_000, "in doubt").await.unwrap());
    assert_eq!(read(&db, b).await.state, S::Sending);
}
