//! The `[prolific]` table of a link study's spec (docs/study-spec.md),
//! parsed into [`ProlificSettings`] with errors that name the field.
use super::money::{maximum_allowed, parse_money, MAX_HOURLY_RATE, MAX_MINUTES};
use crate::domain::crowd::field::FieldError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProlificSpec {
    pub workspace: Option<String>,
    pub project: Option<String>,
    /// The public title; default: the study's name.
    pub title: Option<String>,
    /// What participants read before taking part; default: the consent text.
    pub description: Option<String>,
    /// The expected time of one place, in minutes (required).
    pub estimated_minutes: Option<f64>,
    /// Money per hour; default: `link.hourly_wage`.
    pub hourly_rate: Option<f64>,
    /// Places beyond the copies wanted; default: 10 %, at least 3.
    pub extra_places: Option<u64>,
    pub maximum_allowed_minutes: Option<u32>,
    /// desktop, tablet, mobile; default: all three.
    pub devices: Option<Vec<String>>,
    /// `completed` code approves automatically instead of manual review.
    #[serde(default)]
    pub auto_approve: bool,
    /// The most the study may cost (rewards, fees and bonuses), e.g. "250.00".
    pub budget_cap: Option<String>,
    /// Increase places within the cap by itself, instead of proposing it.
    #[serde(default)]
    pub auto_increase: bool,
    /// The participant group finishers join; default: `hardneg-<dataset>`.
    pub group: Option<String>,
    /// Groups whose members may not take part (their names).
    #[serde(default)]
    pub block_groups: Vec<String>,
    /// A rejection message per flag (at least 100 characters each).
    #[serde(default)]
    pub rejection_messages: BTreeMap<String, String>,
}

pub const DEVICES: [&str; 3] = ["desktop", "tablet", "mobile"];
pub const MIN_REJECTION_MESSAGE: usize = 100;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProlificSettings {
    pub workspace: Option<String>,
    pub project: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub estimated_minutes: f64,
    pub hourly_rate: Option<f64>,
    pub extra_places: Option<u64>,
    pub maximum_allowed_minutes: u32,
    pub devices: Vec<String>,
    pub auto_approve: bool,
    /// Cents.
    pub budget_cap: Option<u64>,
    pub auto_increase: bool,
    pub group: Option<String>,
    pub block_groups: Vec<String>,
    pub rejection_messages: BTreeMap<String, String>,
}

fn field(name: &'static str, message: impl Into<String>) -> FieldError {
    FieldError { field: name, message: message.into() }
}

/// A study's `[prolific]` table: only link studies (`link_time_limit`
/// their time limit) may have one.
pub fn of_study(p: Option<ProlificSpec>, link_time_limit: Option<u32>) -> Result<Option<ProlificSettings>, FieldError> {
    match (p, link_time_limit) {
        (None, _) => Ok(None),
        (Some(_), None) => {
            Err(FieldError { field: "prolific", message: "belongs to access = \"link\" studies".into() })
        }
        (Some(p), Some(limit)) => parse(p, limit).map(Some),
    }
}

/// The table for a link study whose places are held `time_limit_minutes`.
pub fn parse(p: ProlificSpec, time_limit_minutes: u32) -> Result<ProlificSettings, FieldError> {
    let estimated_minutes = p
        .estimated_minutes
        .ok_or_else(|| field("prolific.estimated_minutes", "missing: the minutes one place takes"))?;
    if !(estimated_minutes.is_finite() && estimated_minutes > 0.0 && estimated_minutes <= MAX_MINUTES) {
        return Err(field(
            "prolific.estimated_minutes",
            format!("must be above 0 and at most {MAX_MINUTES}, got {estimated_minutes}"),
        ));
    }
    // Whole minutes, as the draft sends them: the reward and Prolific's least
    // maximum time are computed on the minutes Prolific shows, not on 2.5.
    let estimated_minutes = estimated_minutes.ceil();
    if let Some(h) = p.hourly_rate.filter(|h| !(h.is_finite() && *h > 0.0 && *h <= MAX_HOURLY_RATE)) {
        return Err(field("prolific.hourly_rate", format!("must be above 0 and at most {MAX_HOURLY_RATE}, got {h}")));
    }
    let maximum_allowed_minutes = maximum_allowed(time_limit_minutes, estimated_minutes, p.maximum_allowed_minutes)
        .map_err(|e| field("prolific.maximum_allowed_minutes", e))?;
    let devices = p.devices.unwrap_or_else(|| DEVICES.iter().map(|d| d.to_string()).collect());
    if devices.is_empty() {
        return Err(field("prolific.devices", "name at least one of desktop, tablet, mobile"));
    }
    if let Some(d) = devices.iter().find(|d| !DEVICES.contains(&d.as_str())) {
        return Err(field("prolific.devices", format!("unknown device {d:?}; known: desktop, tablet, mobile")));
    }
    let budget_cap =
        p.budget_cap.as_deref().map(parse_money).transpose().map_err(|e| field("prolific.budget_cap", e))?;
    if p.auto_increase && budget_cap.is_none() {
        return Err(field("prolific.auto_increase", "needs a budget_cap: places are never bought without a cap"));
    }
    for (name, text) in
        [("prolific.group", &p.group), ("prolific.workspace", &p.workspace), ("prolific.project", &p.project)]
    {
        if text.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(field(name, "must not be empty"));
        }
    }
    for (flag, message) in &p.rejection_messages {
        if !super::decide::FLAGS.contains(&flag.as_str()) {
            return Err(field(
                "prolific.rejection_messages",
                format!("unknown flag {flag:?}; known: {}", super::decide::FLAGS.join(", ")),
            ));
        }
        let n = message.trim().chars().count();
        if n < MIN_REJECTION_MESSAGE {
            return Err(field(
                "prolific.rejection_messages",
                format!(
                    "{flag}: {n} character{}; Prolific needs at least {MIN_REJECTION_MESSAGE}",
                    if n == 1 { "" } else { "s" }
                ),
            ));
        }
    }
    Ok(ProlificSettings {
        workspace: p.workspace,
        project: p.project,
        title: p.title,
        description: p.description,
        estimated_minutes,
        hourly_rate: p.hourly_rate,
        extra_places: p.extra_places,
        maximum_allowed_minutes,
        devices,
        auto_approve: p.auto_approve,
        budget_cap,
        auto_increase: p.auto_increase,
        group: p.group,
        block_groups: p.block_groups,
        rejection_messages: p.rejection_messages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> ProlificSpec {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn defaults_and_everything_given() {
        let s = parse(spec("estimated_minutes = 20"), 60).unwrap();
        assert_eq!((s.estimated_minutes, s.maximum_allowed_minutes), (20.0, 60));
        // 2.5 is sent as 3: Prolific's least for 3 is 2 + 6 + 2√3 = 11.46, so 12.
        let s = parse(spec("estimated_minutes = 2.5"), 5).unwrap();
        assert_eq!((s.estimated_minutes, s.maximum_allowed_minutes), (3.0, 12));
        assert_eq!(s.devices, ["desktop", "tablet", "mobile"]);
        assert!(!s.auto_approve && !s.auto_increase && s.budget_cap.is_none() && s.block_groups.is_empty());
        let long = "x".repeat(100);
        let s = parse(
            spec(&format!(
                "workspace = \"w1\"\nproject = \"p1\"\nestimated_minutes = 10\nhourly_rate = 9.5\nextra_places = 2\n\
                 maximum_allowed_minutes = 45\ndevices = [\"desktop\"]\nauto_approve = true\nbudget_cap = \"120.50\"\n\
                 auto_increase = true\ngroup = \"bivlc\"\nblock_groups = [\"step3\"]\n\
                 [rejection_messages]\nfailed_check = \"{long}\""
            )),
            30,
        )
        .unwrap();
        assert_eq!((s.maximum_allowed_minutes, s.budget_cap, s.extra_places), (45, Some(12050), Some(2)));
        assert_eq!(s.rejection_messages["failed_check"].len(), 100);
        assert_eq!(s.devices, ["desktop"]);
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            ("", 60, "field `prolific.estimated_minutes`: missing"),
            ("estimated_minutes = 0", 60, "field `prolific.estimated_minutes`"),
            ("estimated_minutes = 5\nhourly_rate = -1", 60, "field `prolific.hourly_rate`"),
            (
                "estimated_minutes = 5\nhourly_rate = 1e30",
                60,
                "field `prolific.hourly_rate`: must be above 0 and at most 1000",
            ),
            ("estimated_minutes = 1e300", 60, "field `prolific.estimated_minutes`: must be above 0 and at most 1440"),
            ("estimated_minutes = 5\nmaximum_allowed_minutes = 30", 60, "field `prolific.maximum_allowed_minutes`"),
            ("estimated_minutes = 5\ndevices = []", 60, "field `prolific.devices`"),
            ("estimated_minutes = 5\ndevices = [\"watch\"]", 60, "field `prolific.devices`: unknown device"),
            ("estimated_minutes = 5\nbudget_cap = \"lots\"", 60, "field `prolific.budget_cap`"),
            ("estimated_minutes = 5\nauto_increase = true", 60, "field `prolific.auto_increase`"),
            ("estimated_minutes = 5\ngroup = \" \"", 60, "field `prolific.group`"),
            (
                "estimated_minutes = 5\n[rejection_messages]\nfailed_check = \"too short\"",
                60,
                "field `prolific.rejection_messages`: failed_check: 9 characters",
            ),
            (
                "estimated_minutes = 5\n[rejection_messages]\nrude = \"x\"",
                60,
                "field `prolific.rejection_messages`: unknown",
            ),
        ];
        for (text, limit, want) in cases {
            let got = parse(spec(text), limit).unwrap_err().to_string();
            assert!(got.starts_with(want), "{got:?} should start with {want:?}");
        }
        assert!(toml::from_str::<ProlificSpec>("estimated_minutes = 1\nplaces = 3").is_err(), "unknown fields refused");
    }
}
