//! Check items inside bundles (docs/crowd.md): gold items with a known right
//! answer and instructional attention checks, the spec fields that ask for
//! them, and where they go in a participant's queue. A check item is a task
//! like any other; only its marks (`tasks.check_kind`, `check_answer`) differ.
use super::comprehension::Question;
use super::field::FieldError;
use super::ids::{check_code, DEFAULT_COMPLETION_URL};
use crate::domain::assignment::PlannedTask;
use crate::domain::rng::{mix, shuffle};
use serde::{Deserialize, Serialize};

/// A gold item in the spec: an instance key and the stored value that is
/// right; no answer: the dataset's known truth (demo data), looked up at creation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoldSpec {
    pub key: String,
    #[serde(default)]
    pub answer: Option<String>,
}

pub const DEFAULT_MAX_FAILED_CHECKS: u32 = 2;
/// More attention checks than this per bundle only annoy honest people.
pub const MAX_ATTENTION_CHECKS: usize = 10;

/// The checks of a link study, as stored with its settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckSettings {
    pub gold: Vec<GoldSpec>,
    /// Instructional attention checks per bundle.
    pub attention_checks: usize,
    /// Failed attention checks that end a participant.
    pub max_failed_checks: u32,
    /// None in the spec: generated at creation when the study can screen out.
    pub screen_out_code: Option<String>,
    /// With `{code}` where the code goes.
    pub screen_out_url: String,
    pub comprehension: Vec<Question>,
}

impl Default for CheckSettings {
    fn default() -> Self {
        CheckSettings {
            gold: Vec::new(),
            attention_checks: 0,
            max_failed_checks: DEFAULT_MAX_FAILED_CHECKS,
            screen_out_code: None,
            screen_out_url: DEFAULT_COMPLETION_URL.to_string(),
            comprehension: Vec::new(),
        }
    }
}

impl CheckSettings {
    /// Whether a participant can be screened out (and so needs a screen-out code).
    pub fn screens_out(&self) -> bool {
        self.attention_checks > 0 || !self.comprehension.is_empty()
    }
}

/// The check fields of `[link]`, as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckFields {
    pub gold: Vec<GoldSpec>,
    pub attention_checks: Option<usize>,
    pub max_failed_checks: Option<u32>,
    pub screen_out_code: Option<String>,
    pub screen_out_url: Option<String>,
    pub comprehension: Vec<Question>,
}

fn field(field: &'static str, message: impl Into<String>) -> FieldError {
    FieldError { field, message: message.into() }
}

/// Why a kind whose answers are orders (no fixed values) takes no practice or gold items.
pub const ORDERS_UNCHECKED: &str =
    "this kind's answers are orders of the item's options, not one of fixed values, so no answer can be given to check them against";

/// Checks the fields against the kind's stored `values` and the study's completion code.
pub fn parse_checks(
    f: CheckFields,
    values: &[&str],
    completion_code: Option<&str>,
) -> Result<CheckSettings, FieldError> {
    if values.is_empty() && !f.gold.is_empty() {
        return Err(field("link.gold", ORDERS_UNCHECKED));
    }
    let mut keys = std::collections::HashSet::new();
    for (i, g) in f.gold.iter().enumerate() {
        let at = |m: String| field("link.gold", format!("item {} ({}): {m}", i + 1, g.key));
        if g.key.trim().is_empty() {
            return Err(field("link.gold", format!("item {}: key is empty", i + 1)));
        }
        if !keys.insert(g.key.as_str()) {
            return Err(at("listed twice".into()));
        }
        if let Some(a) = g.answer.as_deref().filter(|a| !values.contains(a)) {
            return Err(at(format!(
                "answer {a:?} is not one of {}: gold items ask the kind's first question",
                values.join(", ")
            )));
        }
    }
    let attention_checks = f.attention_checks.unwrap_or(0);
    if attention_checks > MAX_ATTENTION_CHECKS {
        return Err(field("link.attention_checks", format!("at most {MAX_ATTENTION_CHECKS} per bundle")));
    }
    let max_failed_checks = f.max_failed_checks.unwrap_or(DEFAULT_MAX_FAILED_CHECKS);
    if max_failed_checks == 0 {
        return Err(field("link.max_failed_checks", "must be at least 1"));
    }
    if attention_checks > 0 && max_failed_checks as usize > attention_checks {
        return Err(field(
            "link.max_failed_checks",
            format!("is {max_failed_checks}, but a bundle has only {attention_checks} attention checks: no one could fail that many"),
        ));
    }
    if let Some(c) = &f.screen_out_code {
        check_code(c).map_err(|e| field("link.screen_out_code", e))?;
        if Some(c.as_str()) == completion_code {
            return Err(field("link.screen_out_code", "must differ from completion_code"));
        }
    }
    let screen_out_url = f.screen_out_url.unwrap_or_else(|| DEFAULT_COMPLETION_URL.to_string());
    if !(screen_out_url.starts_with("https://") || screen_out_url.starts_with("http://")) {
        return Err(field("link.screen_out_url", "must be an http:// or https:// URL"));
    }
    super::comprehension::check_questions(&f.comprehension)?;
    Ok(CheckSettings {
        gold: f.gold,
        attention_checks,
        max_failed_checks,
        screen_out_code: f.screen_out_code,
        screen_out_url,
        comprehension: f.comprehension,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    Gold,
    Attention,
}

impl CheckKind {
    /// As stored in `tasks.check_kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckKind::Gold => "gold",
            CheckKind::Attention => "attention",
        }
    }
}

/// One check item of a participant's queue: the instance, its kind and the stored value that passes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckItem {
    pub instance: i64,
    pub kind: CheckKind,
    pub answer: String,
}

/// The check items of one participant: every gold item that is not a real
/// item of its `bundle`, then `attention` items drawn (seeded by study and
/// participant) from the study's other `items` (neither in the bundle nor
/// gold), each asking for a seeded one of the kind's `targets`. Fewer
/// attention checks when too few items are left (creation refuses that).
pub fn choose_checks(
    seed: u64,
    participant: i64,
    gold: &[(i64, String)],
    attention: usize,
    targets: &[&str],
    items: &[i64],
    bundle: &[i64],
) -> Vec<CheckItem> {
    let mut checks: Vec<CheckItem> = gold
        .iter()
        .filter(|(i, _)| !bundle.contains(i))
        .map(|(i, a)| CheckItem { instance: *i, kind: CheckKind::Gold, answer: a.clone() })
        .collect();
    if attention == 0 || targets.is_empty() {
        return checks;
    }
    let mut pool: Vec<i64> =
        items.iter().copied().filter(|i| !bundle.contains(i) && !gold.iter().any(|(g, _)| g == i)).collect();
    pool.sort_unstable();
    pool.dedup();
    shuffle(&mut pool, mix(&[seed, participant as u64, 0x4154_544e]));
    for (k, instance) in pool.into_iter().take(attention).enumerate() {
        let target = targets[(mix(&[seed, participant as u64, 0x5441_5247, k as u64]) % targets.len() as u64) as usize];
        checks.push(CheckItem { instance, kind: CheckKind::Attention, answer: target.to_string() });
    }
    checks
}

/// The queue with the checks at seeded positions (never first, so the
/// participant meets a real item before any check), each asking the first
/// question of `first_part` (the queries of the kind's first part). Real
/// tasks keep their order; positions run 0..n. A check goes between items,
/// never between two questions of one item asked one after the other
/// (A/B/Tie's commonsense and grammar), and within the first part, whose
/// question it asks (the human baseline's text-to-image part has none).
pub fn place_checks(
    seed: u64,
    participant: i64,
    queue: Vec<PlannedTask>,
    checks: Vec<CheckItem>,
    first_part: &[u8],
) -> Vec<(PlannedTask, Option<CheckItem>)> {
    let query = first_part[0];
    let in_first = |t: &PlannedTask| first_part.contains(&t.query);
    let mut units: Vec<Vec<PlannedTask>> = Vec::new();
    for task in queue {
        match units.last_mut() {
            // One item's questions asked together, not across the parts' border.
            Some(unit) if unit[0].item == task.item && in_first(&unit[0]) == in_first(&task) => unit.push(task),
            _ => units.push(vec![task]),
        }
    }
    let n = units.len() + checks.len();
    let first = usize::from(!units.is_empty());
    let lead = units.iter().take_while(|u| in_first(&u[0])).count();
    let mut slots: Vec<usize> = (first..lead + checks.len()).collect();
    shuffle(&mut slots, mix(&[seed, participant as u64, 0x504c_4143]));
    let mut at: Vec<usize> = slots.into_iter().take(checks.len()).collect();
    at.sort_unstable();
    let mut checks = checks.into_iter().enumerate();
    let mut real = units.into_iter();
    let mut out = Vec::with_capacity(n);
    for slot in 0..n {
        if at.binary_search(&slot).is_ok() {
            let (k, c) = checks.next().expect("one check per chosen slot");
            let task_seed = mix(&[seed, participant as u64, 0x4348_4b53, k as u64]) >> 1;
            out.push((PlannedTask { item: c.instance, position: out.len() as i64, seed: task_seed, query }, Some(c)));
        } else {
            for task in real.next().expect("the other slots are the real items'") {
                out.push((PlannedTask { position: out.len() as i64, ..task }, None));
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "checks_tests.rs"]
mod tests;
