//! A Prolific study's money against its cap: spent (approved places and paid
//! bonuses) and committed (every place bought or taken, and every bonus set
//! up), both with Prolific's fee and tax, and what raising the places adds.
use crate::domain::ids::StudyId;
use crate::domain::prolific::money::{self, Budget};
use crate::error::ServiceError;
use sqlx::AnyPool;

/// Submissions Prolific pays or will pay for: a late one (timed out, then
/// finished) takes a place past the study's total and is paid all the same.
const PAID_PLACES: &str = "'RESERVED', 'ACTIVE', 'AWAITING REVIEW', 'APPROVED', 'PARTIALLY APPROVED'";

/// Prolific's fee and tax as a fraction of rewards, as its cost showed them
/// (`stored`); before a cost was read, `link.platform_fee`.
async fn fee_of(db: &AnyPool, study: StudyId, stored: f64) -> Result<f64, ServiceError> {
    if stored > 0.0 {
        return Ok(stored);
    }
    Ok(crate::studies::link::link_of_study(db, study).await?.settings.quality.platform_fee)
}

/// The money side: spent, committed and the cap, in cents.
pub async fn budget(db: &AnyPool, study: StudyId) -> Result<Budget, ServiceError> {
    Ok(budget_and_fee(db, study).await?.0)
}

/// The places Prolific pays for, by status: (approved, taken), where taken
/// counts every submission that is or will be paid.
async fn paid_places(db: &AnyPool, study: StudyId) -> Result<(i64, i64), ServiceError> {
    let sql = format!(
        "SELECT CAST(coalesce(sum(CASE WHEN status IN ('APPROVED', 'PARTIALLY APPROVED') THEN 1 ELSE 0 END), 0) AS BIGINT),
                CAST(coalesce(sum(CASE WHEN status IN ({PAID_PLACES}) THEN 1 ELSE 0 END), 0) AS BIGINT)
         FROM prolific_submissions WHERE study_id = $1"
    );
    Ok(sqlx::query_as(&sql).bind(study).fetch_one(db).await?)
}

/// What the study's money rests on, read once: the places bought, the
/// reward, the fee, the places paid for (approved, taken) and the bonuses.
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
    async fn read(db: &AnyPool, study: StudyId) -> Result<Money, ServiceError> {
        let row: Option<(i64, i64, f64)> =
            sqlx::query_as("SELECT places, reward_cents, fee FROM prolific_studies WHERE study_id = $1")
                .bind(study)
                .fetch_optional(db)
                .await?;
        let (places, reward, fee) = row
            .ok_or_else(|| ServiceError::Invalid(format!("study {study} is not on Prolific yet: publish it first")))?;
        let fee = fee_of(db, study, fee).await?;
        let (approved, taken) = paid_places(db, study).await?;
        let bonus = |states: &'static str| {
            let sql = format!(
                "SELECT CAST(coalesce(sum(amount_cents), 0) AS BIGINT) FROM prolific_bonuses WHERE study_id = $1 AND state IN ({states})"
            );
            async move { sqlx::query_scalar::<_, i64>(&sql).bind(study).fetch_one(db).await }
        };
        let (paid_bonuses, all_bonuses) = (bonus("'paid'").await?, bonus("'planned', 'set_up', 'paid'").await?);
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
    let m = Money::read(db, study).await?;
    Ok((m.budget(cap(db, study).await?), m.fee))
}

/// The budget, and what a new total of places adds to it: places past those
/// bought or taken already (late submissions past the total hold some).
pub async fn raising_places(db: &AnyPool, study: StudyId, total: i64) -> Result<(Budget, u64), ServiceError> {
    let m = Money::read(db, study).await?;
    let more = money::with_fee((total.saturating_sub(m.held()).max(0).saturating_mul(m.reward.max(0))) as u64, m.fee);
    Ok((m.budget(cap(db, study).await?), more))
}
