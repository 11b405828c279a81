//! Which instances a stage of a dataset holds: the export's rows and the
//! audit's pairs both start here (beside both, so the audit, which the
//! export's card runs, does not reach back into the export).
use crate::domain::category::Category;
use crate::domain::export::Stage;
use crate::error::ServiceError;
use crate::studies::outcomes::ItemOutcome;
use crate::studies::pipeline::Pipeline;
use sqlx::AnyPool;

/// Refuses a stage the dataset's pipeline has not reached.
pub(crate) fn check_stage(p: &Pipeline, dataset: &str, stage: Stage) -> Result<(), ServiceError> {
    let need = |ok: bool, step: &str| {
        if ok {
            Ok(())
        } else {
            Err(ServiceError::Invalid(format!(
                "dataset {dataset:?} has no {step} study; stage {} needs one",
                stage.as_str()
            )))
        }
    };
    match stage {
        Stage::Candidates => Ok(()),
        Stage::Step3 => need(p.step3.is_some(), "Step 3"),
        Stage::Final => {
            need(p.step3.is_some(), "Step 3")?;
            need(p.step4.is_some(), "Step 4 (ambiguity)")
        }
    }
}

/// The exported instances with their categories, in id order (call
/// [`check_stage`] first).
pub(crate) async fn included(db: &AnyPool, p: &Pipeline, stage: Stage) -> Result<Vec<(i64, Category)>, ServiceError> {
    match stage {
        Stage::Candidates => {
            let rows: Vec<crate::studies::meta::ItemRow> = crate::store::pages::all_rows(
                db,
                "SELECT json_group_array(json_array(id, neg_type, subtype)) FROM (
                   SELECT id, neg_type, subtype FROM instances WHERE dataset_id = $1 ORDER BY id) AS r",
                p.dataset_id.get(),
            )
            .await?;
            Ok(rows.into_iter().map(|r| (r.0.id, r.0.subset)).collect())
        }
        Stage::Step3 | Stage::Final => {
            let (meta3, s3) = p.step3.as_ref().expect("checked by the caller");
            let mut s4 = Outcomes::new(p.step4.as_ref().map(|(_, o)| o.as_slice()));
            let kind4 = p.step4.as_ref().map(|(m, _)| m.kind);
            Ok(s3
                .iter()
                .filter(|o| {
                    let v4 = kind4.and_then(|k| s4.get(o.instance_id)?.verdict(k));
                    stage.keeps(o.verdict(meta3.kind), v4)
                })
                .map(|o| (o.instance_id, o.category))
                .collect())
        }
    }
}

/// A study's outcomes (sorted by instance id) looked up in increasing id order.
pub(super) struct Outcomes<'a> {
    items: &'a [ItemOutcome],
    pos: usize,
}

impl<'a> Outcomes<'a> {
    pub(super) fn new(items: Option<&'a [ItemOutcome]>) -> Self {
        Outcomes { items: items.unwrap_or(&[]), pos: 0 }
    }

    pub(super) fn get(&mut self, id: i64) -> Option<&'a ItemOutcome> {
        self.get_at(id).map(|(_, o)| o)
    }

    /// The outcome with its position (where its votes are).
    pub(super) fn get_at(&mut self, id: i64) -> Option<(usize, &'a ItemOutcome)> {
        while self.items.get(self.pos).is_some_and(|o| o.instance_id < id) {
            self.pos += 1;
        }
        self.items.get(self.pos).filter(|o| o.instance_id == id).map(|o| (self.pos, o))
    }
}
