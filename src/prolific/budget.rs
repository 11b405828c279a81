//! A Prolific study's money against its cap: spent (approved places and paid
//! bonuses) and committed (every place bought or taken, and every bonus set
//! up), both with Prolific's fee and tax, and what raising the places adds.
use crate::domain::ids::StudyId;
use crate::domain::prolific::money::{self, Budget};
use crate::error::ServiceError;
use sqlx::{AnyConnection, AnyPool};

/// Submissions Prolific pays or will pay for: a late one (timed out, then
/// finished) takes a place past the study's total and is paid all the same.
const PAID_PLACES: &str = "'RESERVED', 'ACTIVE', 'AWAITING REVIEW', 'APPROVED', 'PARTIALLY APPROVED'";

/// What a study's money is held to that no sender changes: the spec's
/// `budget_cap` and the link's `platform_fee`. Read before a write
/// transaction opens, so that the transaction needs no second connection.
pub struct Terms {
    cap: Option<u64>,
    link_fee: f64,
}

impl Terms {
    pub async fn read(db: &AnyPool, study: StudyId) -> Result<Terms, ServiceError> {
        let link_fee = crate::studies::link::link_of_study(db, study).await?.settings.quality.platform_fee;
        Ok(Terms { cap: cap(db, study).await?, link_fee })
    }
}

/// The money side: spent, committed and the cap, in cents.
pub async fn budget(db: &AnyPool, study: StudyId) -> Result<Budget, ServiceError> {
    Ok(budget_and_fee(db, study).await?.0)
}

/// The places Prolific pays for, by status: (approved, taken), where taken
/// counts every submission that is or will be paid.
async fn paid_places(conn: &mut AnyConnection, study: StudyId) -> Result<(i64, i64), ServiceError> {
    let sql = format!(
        "SELECT CAST(coalesce(sum(CASE WHEN status IN ('APPROVED', 'PARTIALLY APPROVED') THEN 1 ELSE 0 END), 0) AS BIGINT),
                CAST(coalesce(sum(CASE WHEN status IN ({PAID_PLACES}) THEN 1 ELSE 0 END), 0) AS BIGINT)
         FROM prolific_submissions WHERE study_id = $1"
    );
    Ok(sqlx::query_as(&sql).bind(study).fetch_one(conn).await?)
}

/// The largest total of places a raise not yet confirmed asks for (0 when
/// none): it is committed from the moment it is queued, or two raises, or a
/// raise and a bonus round, could each fit in what the cap left.
async fn raising_to(conn: &mut AnyConnection, study: StudyId) -> Result<i64, ServiceError> {
    let payloads: Vec<String> = sqlx::query_scalar(
        "SELECT payload FROM prolific_outbox WHERE study_id = $1 AND action = 'set_places'
           AND state IN ('pending', 'sending', 'unconfirmed')",
    )
    .bind(study)
    .fetch_all(conn)
    .await?;
    let mut most = 0;
    for payload in payloads {
        if let super::remote::Remote::SetPlaces { total } = serde_json::from_str(&payload)? {
            most = most.max(total.min(i64::MAX as u64) as i64);
        }
    }
    Ok(most)
}

/// What the study's money rests on, read once: the places bought (or being
/// bought), the reward, the fee, the places paid for (approved, taken) and
/// the bonuses.
struct Money {
    places: i64,
    reward: i64,
    fee: f64,
    approved: i64,
    taken: i64,
    paid_bonuses: i64,
    all_bonuses: i64,
}

impl Money {
    /// Read on `conn` (a write transaction, where a commitment is checked
    /// and stored at once).
    async fn read(conn: &mut AnyConnection, terms: &Terms, study: StudyId) -> Result<Money, ServiceError> {
        let row: Option<(i64, i64, f64)> =
            sqlx::query_as("SELECT places, reward_cents, fee FROM prolific_studies WHERE study_id = $1")
                .bind(study)
                .fetch_optional(&mut *conn)
                .await?;
        let (places, reward, fee) = row
            .ok_or_else(|| ServiceError::Invalid(format!("study {study} is not on Prolific yet: publish it first")))?;
        let places = places.max(raising_to(conn, study).await?);
        // Prolific's fee and tax as its cost showed them; before a cost was read, the link's.
        let fee = if fee > 0.0 { fee } else { terms.link_fee };
        let (approved, taken) = paid_places(conn, study).await?;
        let mut bonus = async |states: &'static str| {
            let sql = format!(
                "SELECT CAST(coalesce(sum(amount_cents), 0) AS BIGINT) FROM prolific_bonuses WHERE study_id = $1 AND state IN ({states})"
            );
            sqlx::query_scalar::<_, i64>(&sql).bind(study).fetch_one(&mut *conn).await
        };
        let paid_bonuses = bonus("'paid'").await?;
        let all_bonuses = bonus("'planned', 'set_up', 'paid'").await?;
        Ok(Money { places, reward, fee, approved, taken, paid_bonuses, all_bonuses })
    }

    /// Places bought, or taken where late submissions hold more.
    fn held(&self) -> i64 {
        self.places.max(self.taken)
    }

    fn budget(&self, cap: Option<u64>) -> Budget {
        let with_fee = |cents: i64| money::with_fee(cents.max(0) as u64, self.fee);
        Budget {
            // Saturating: a total read from Prolific can be anything.
            spent: with_fee(self.approved.saturating_mul(self.reward).saturating_add(self.paid_bonuses)),
            committed: with_fee(self.held().saturating_mul(self.reward).saturating_add(self.all_bonuses)),
            cap,
        }
    }
}

/// The spec's `budget_cap`; none without a `[prolific]` table. A spec that
/// cannot be read is an error, never "no cap": that would let bonuses and
/// places past the cap through.
async fn cap(db: &AnyPool, study: StudyId) -> Result<Option<u64>, ServiceError> {
    Ok(super::settings::stored_spec(db, study).await?.2.prolific.and_then(|p| p.budget_cap))
}

/// [`budget`], and Prolific's fee and tax as a fraction of the payments
/// (what a new commitment adds on top of its amount).
pub async fn budget_and_fee(db: &AnyPool, study: StudyId) -> Result<(Budget, f64), ServiceError> {
    let terms = Terms::read(db, study).await?;
    budget_and_fee_on(&mut *db.acquire().await?, &terms, study).await
}

/// [`budget_and_fee`] read on `conn`: in the write transaction that stores
/// a new commitment, so that two at once cannot each fit in what the cap left.
pub async fn budget_and_fee_on(
    conn: &mut AnyConnection,
    terms: &Terms,
    study: StudyId,
) -> Result<(Budget, f64), ServiceError> {
    let m = Money::read(conn, terms, study).await?;
    Ok((m.budget(terms.cap), m.fee))
}

/// The budget, and what a new total of places adds to it: places past those
/// bought, being bought or taken already (late submissions past the total
/// hold some). Read on `conn`, as [`budget_and_fee_on`].
pub async fn raising_places(
    conn: &mut AnyConnection,
    terms: &Terms,
    study: StudyId,
    total: i64,
) -> Result<(Budget, u64), ServiceError> {
    let m = Money::read(conn, terms, study).await?;
    let more = money::with_fee((total.saturating_sub(m.held()).max(0).saturating_mul(m.reward.max(0))) as u64, m.fee);
    Ok((m.budget(terms.cap), more))
}
