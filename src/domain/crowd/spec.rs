//! The `[link]` table of a study spec (`access = "link"`), parsed into
//! [`LinkSettings`] with errors that name the field.
use super::checks::{parse_checks, CheckFields, CheckSettings, GoldSpec, ORDERS_UNCHECKED};
use super::comprehension::Question;
use super::ids::{check_code, DEFAULT_COMPLETION_URL};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub bundle_size: Option<usize>,
    pub copies: Option<i64>,
    pub paired_bundles: Option<usize>,
    /// Rule `stratified_sample`: how many samples (bundles) to make.
    pub samples: Option<usize>,
    pub time_limit_minutes: Option<u32>,
    pub consent: Option<String>,
    pub completion_code: Option<String>,
    pub completion_url: Option<String>,
    pub full_code: Option<String>,
    #[serde(default)]
    pub allow_anonymous: bool,
    #[serde(default)]
    pub practice: Vec<PracticeSpec>,
    pub min_seconds_per_item: Option<f64>,
    pub straight_line_run: Option<usize>,
    pub hourly_wage: Option<f64>,
    pub platform_fee: Option<f64>,
    #[serde(default)]
    pub gold: Vec<GoldSpec>,
    pub attention_checks: Option<usize>,
    pub max_failed_checks: Option<u32>,
    pub screen_out_code: Option<String>,
    pub screen_out_url: Option<String>,
    #[serde(default)]
    pub comprehension: Vec<Question>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PracticeSpec {
    /// The instance's key in the study's dataset.
    pub key: String,
    /// The stored value that is right (e.g. a candidate slot, or "none").
    pub answer: String,
}

/// A link study's settings, as stored with the study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkSettings {
    pub bundle_size: usize,
    pub copies: i64,
    pub paired_bundles: usize,
    /// Rule `stratified_sample`: the bundles are this many per-place samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<usize>,
    pub time_limit_minutes: u32,
    pub consent: String,
    /// None: generated when the study is created.
    pub completion_code: Option<String>,
    /// With `{code}` where the code goes.
    pub completion_url: String,
    pub full_code: Option<String>,
    pub allow_anonymous: bool,
    pub practice: Vec<PracticeSpec>,
    /// Quality and cost (docs/crowd.md); defaults fill settings stored before them.
    #[serde(flatten)]
    pub quality: QualitySettings,
    /// Gold items, attention checks, screening out, the comprehension check;
    /// absent from settings stored before they existed.
    #[serde(default)]
    pub checks: CheckSettings,
}

/// What flags a participant and what a place costs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QualitySettings {
    /// "Too fast": a median time per item under this many seconds.
    pub min_seconds_per_item: f64,
    /// Straight-lining: this many answers in a row at the same on-screen position or with the same option.
    pub straight_line_run: usize,
    /// US$ per hour paid to participants.
    pub hourly_wage: f64,
    /// The platform's fee as a fraction of the reward (Prolific: about 0.333).
    pub platform_fee: f64,
}

impl Default for QualitySettings {
    fn default() -> Self {
        QualitySettings { min_seconds_per_item: 1.0, straight_line_run: 10, hourly_wage: 12.0, platform_fee: 0.0 }
    }
}

impl LinkSettings {
    /// What a valid spec allows but a researcher most likely did not mean;
    /// `study create` prints these.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.checks.comprehension.is_empty() && self.full_code.is_none() {
            out.push(
                "link.full_code is not set, but the study has a comprehension check: someone who passes it \
                 after every place was taken is told the study is full and leaves with no code for the time \
                 spent; set full_code (docs/crowd.md, section 7)"
                    .to_string(),
            );
        }
        out
    }
}

pub const DEFAULT_TIME_LIMIT_MINUTES: u32 = 60;
/// Prolific's longest allowed time is well under a week; a day is plenty.
pub const MAX_TIME_LIMIT_MINUTES: u32 = 24 * 60;
/// People per bundle: far beyond any protocol's overlap, far below what
/// would let a join link admit without bound.
pub const MAX_COPIES: i64 = 100;

pub use super::field::FieldError;

type SpecError = FieldError;

fn field(field: &'static str, message: impl Into<String>) -> SpecError {
    FieldError { field, message: message.into() }
}

/// `access` and `[link]` together: None for account studies.
pub fn parse_access(
    access: Option<&str>,
    link: Option<LinkSpec>,
    values: &[&str],
) -> Result<Option<LinkSettings>, SpecError> {
    match (access.unwrap_or("accounts"), link) {
        ("accounts", None) => Ok(None),
        ("accounts", Some(_)) => Err(field("link", "belongs to access = \"link\" studies")),
        ("link", None) => Err(field("link", "access = \"link\" needs a [link] table with bundle_size and consent")),
        ("link", Some(l)) => parse_link(l, values).map(Some),
        (other, _) => Err(field("access", format!("unknown access {other:?}; known: accounts, link"))),
    }
}

fn parse_link(l: LinkSpec, values: &[&str]) -> Result<LinkSettings, SpecError> {
    let bundle_size = match l.bundle_size {
        None => return Err(field("link.bundle_size", "missing: how many items one participant answers")),
        Some(0) => return Err(field("link.bundle_size", "must be at least 1")),
        Some(n) => n,
    };
    let quality = parse_quality(&l)?;
    let copies = l.copies.unwrap_or(1);
    if !(1..=MAX_COPIES).contains(&copies) {
        return Err(field("link.copies", format!("must be from 1 to {MAX_COPIES}")));
    }
    let time_limit_minutes = l.time_limit_minutes.unwrap_or(DEFAULT_TIME_LIMIT_MINUTES);
    if !(1..=MAX_TIME_LIMIT_MINUTES).contains(&time_limit_minutes) {
        return Err(field("link.time_limit_minutes", format!("must be 1 to {MAX_TIME_LIMIT_MINUTES}")));
    }
    let consent = l.consent.map(|c| c.trim().to_string()).filter(|c| !c.is_empty());
    let consent = consent.ok_or_else(|| field("link.consent", "missing: the consent text participants accept"))?;
    use crate::domain::names::{plain_text, MAX_TEXT_CHARS};
    plain_text(&consent, MAX_TEXT_CHARS, true).map_err(|m| field("link.consent", m))?;
    for (name, code) in [("link.completion_code", &l.completion_code), ("link.full_code", &l.full_code)] {
        if let Some(c) = code {
            check_code(c).map_err(|e| field(name, e))?;
        }
    }
    if l.completion_code.is_some() && l.completion_code == l.full_code {
        return Err(field("link.full_code", "must differ from completion_code"));
    }
    let completion_url = l.completion_url.unwrap_or_else(|| DEFAULT_COMPLETION_URL.to_string());
    if !(completion_url.starts_with("https://") || completion_url.starts_with("http://")) {
        return Err(field("link.completion_url", "must be an http:// or https:// URL"));
    }
    if values.is_empty() && !l.practice.is_empty() {
        return Err(field("link.practice", ORDERS_UNCHECKED));
    }
    for (i, p) in l.practice.iter().enumerate() {
        if p.key.trim().is_empty() {
            return Err(field("link.practice", format!("item {}: key is empty", i + 1)));
        }
        if !values.contains(&p.answer.as_str()) {
            return Err(field(
                "link.practice",
                format!(
                    "item {} ({}): answer {:?} is not one of {}: practice items ask the kind's first question",
                    i + 1,
                    p.key,
                    p.answer,
                    values.join(", ")
                ),
            ));
        }
    }
    let checks = parse_checks(
        CheckFields {
            gold: l.gold,
            attention_checks: l.attention_checks,
            max_failed_checks: l.max_failed_checks,
            screen_out_code: l.screen_out_code,
            screen_out_url: l.screen_out_url,
            comprehension: l.comprehension,
        },
        values,
        l.completion_code.as_deref(),
    )?;
    Ok(LinkSettings {
        checks,
        bundle_size,
        copies,
        paired_bundles: l.paired_bundles.unwrap_or(0),
        samples: match l.samples {
            Some(0) => return Err(field("link.samples", "must be at least 1")),
            n => n,
        },
        time_limit_minutes,
        consent,
        completion_code: l.completion_code,
        completion_url,
        full_code: l.full_code,
        allow_anonymous: l.allow_anonymous,
        practice: l.practice,
        quality,
    })
}

fn parse_quality(l: &LinkSpec) -> Result<QualitySettings, SpecError> {
    let d = QualitySettings::default();
    let number = |name: &'static str, v: Option<f64>, default: f64, ok: &dyn Fn(f64) -> bool, rule: &str| {
        let v = v.unwrap_or(default);
        if v.is_finite() && ok(v) {
            Ok(v)
        } else {
            Err(field(name, format!("must be {rule}, got {v}")))
        }
    };
    let min_seconds_per_item = number(
        "link.min_seconds_per_item",
        l.min_seconds_per_item,
        d.min_seconds_per_item,
        &|v| v >= 0.0,
        "0 or more",
    )?;
    let hourly_wage = number("link.hourly_wage", l.hourly_wage, d.hourly_wage, &|v| v > 0.0, "above 0 (US$ per hour)")?;
    let platform_fee = number(
        "link.platform_fee",
        l.platform_fee,
        d.platform_fee,
        &|v| (0.0..=1.0).contains(&v),
        "a fraction from 0 to 1 (0.333 for a 33.3% fee)",
    )?;
    let straight_line_run = l.straight_line_run.unwrap_or(d.straight_line_run);
    if straight_line_run < 2 {
        return Err(field("link.straight_line_run", format!("must be at least 2, got {straight_line_run}")));
    }
    Ok(QualitySettings { min_seconds_per_item, straight_line_run, hourly_wage, platform_fee })
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
