//! The arithmetic of a link study's live dashboard (docs/crowd.md,
//! "Dashboard"): the answer rate and ETA, the cost estimate, the
//! time-per-item histogram, cumulative series, and chart geometry. Pure.
use super::spec::QualitySettings;
use crate::domain::ids::StudyId;
use serde::{Deserialize, Serialize};

/// The rate is measured over at most the last 15 minutes…
pub const RATE_WINDOW_SECS: i64 = 15 * 60;
/// …and over at least one minute, so the first answer does not make it infinite.
pub const MIN_RATE_SPAN_SECS: i64 = 60;
/// Time-per-item histogram: 1-second bins from 0 to 30 s, then one bin for the rest.
pub const HISTOGRAM_BINS: usize = 30;
/// Cumulative series keep at most this many points.
pub const MAX_POINTS: usize = 120;

/// Where the answer rate is measured: from `max(first answer, now - 15 min)`
/// to now; returns the window's start and its length in minutes (at least 1).
pub fn rate_window(first_answer_at: Option<i64>, now: i64) -> Option<(i64, f64)> {
    let start = first_answer_at?.max(now - RATE_WINDOW_SECS);
    Some((start, (now - start).max(MIN_RATE_SPAN_SECS) as f64 / 60.0))
}

/// Seconds until `remaining` answers are in at `per_minute`; None when nothing is coming in.
pub fn eta_secs(remaining: i64, per_minute: f64) -> Option<f64> {
    if remaining <= 0 {
        return Some(0.0);
    }
    (per_minute > 0.0).then(|| remaining as f64 / per_minute * 60.0)
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// What an hour of a participant's time costs, fee included.
    pub per_hour: f64,
    /// One place: `per_hour` times the median time of finished bundles.
    pub per_place: f64,
    /// Every place of the study.
    pub estimated_total: f64,
    /// The places finished so far.
    pub spent: f64,
}

/// `(hourly_wage × (1 + platform_fee)) × median bundle hours` per place: the
/// estimate pays every `finished` place (extra and discarded copies are paid
/// too) and every place still `open`; `spent` the finished ones. None before
/// any bundle is finished.
pub fn cost(q: &QualitySettings, median_bundle_secs: Option<f64>, open: i64, finished: i64) -> Option<Cost> {
    let per_hour = q.hourly_wage * (1.0 + q.platform_fee);
    let per_place = per_hour * median_bundle_secs? / 3600.0;
    let (open, finished) = (open.max(0) as f64, finished as f64);
    Some(Cost { per_hour, per_place, estimated_total: per_place * (finished + open), spent: per_place * finished })
}

/// The median of values given as `(value, count)` pairs in ascending value order.
pub fn median_of_counts(counts: &[(i64, i64)]) -> Option<f64> {
    let n: i64 = counts.iter().map(|c| c.1).sum();
    if n == 0 {
        return None;
    }
    // The values at 0-based ranks lo and hi (equal for an odd n).
    let (lo, hi) = ((n - 1) / 2, n / 2);
    let (mut seen, mut at_lo) = (0, None);
    for &(v, c) in counts {
        seen += c;
        if at_lo.is_none() && seen > lo {
            at_lo = Some(v);
        }
        if seen > hi {
            return Some((at_lo.unwrap_or(v) + v) as f64 / 2.0);
        }
    }
    None
}

/// Counts per 1-second bin of elapsed milliseconds (`(ms, count)` pairs);
/// the last bin holds everything from `HISTOGRAM_BINS` seconds on.
pub fn histogram(counts: &[(i64, i64)]) -> Vec<i64> {
    let mut bins = vec![0; HISTOGRAM_BINS + 1];
    for &(ms, c) in counts {
        bins[((ms.max(0) / 1000) as usize).min(HISTOGRAM_BINS)] += c;
    }
    bins
}

/// Cumulative counts over time from sorted event times: `(time, events so
/// far)`, thinned to at most `MAX_POINTS` (always keeping the last).
pub fn cumulative(sorted_times: &[i64]) -> Vec<(i64, i64)> {
    let n = sorted_times.len();
    let step = n.div_ceil(MAX_POINTS).max(1);
    (0..n).filter(|i| (i + 1) % step == 0 || i + 1 == n).map(|i| (sorted_times[i], i as i64 + 1)).collect()
}

/// A duration for people: "1 h 05 min", "4 min 10 s", "12 s".
pub fn duration_text(secs: f64) -> String {
    let s = secs.round() as i64;
    match s {
        s if s >= 3600 => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
        s if s >= 60 => format!("{} min {:02} s", s / 60, s % 60),
        s => format!("{s} s"),
    }
}

/// SVG polyline points for `(x, y)` data in a `width × height` box (y up),
/// scaled to `x_range` and `0..=y_max`.
pub fn polyline(points: &[(i64, i64)], x_range: (i64, i64), y_max: i64, width: f64, height: f64) -> String {
    let span = (x_range.1 - x_range.0).max(1) as f64;
    let y_max = y_max.max(1) as f64;
    points
        .iter()
        .map(|&(x, y)| {
            let px = (x - x_range.0) as f64 / span * width;
            let py = height - y as f64 / y_max * height;
            format!("{px:.1},{py:.1}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the dashboard shows (`GET /api/v1/studies/{id}/dashboard`, `hardneg study status`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dashboard {
    pub study_id: StudyId,
    /// Unix seconds the figures were taken at.
    pub now: i64,
    pub bundles: i64,
    /// Places (bundles' wanted copies): free, leased (someone working), completed (counted copies).
    pub places: i64,
    pub free: i64,
    pub leased: i64,
    pub completed: i64,
    pub participants: ParticipantCounts,
    /// Every stored answer, check items and uncounted copies included.
    pub answers: i64,
    /// Over the rate window (`rate_window`); None before the first answer.
    pub answers_per_minute: Option<f64>,
    /// Answers still needed: each bundle's missing copies times its tasks, less what active leases did.
    pub remaining_answers: i64,
    pub eta_secs: Option<f64>,
    pub median_secs_per_item: Option<f64>,
    /// Lease to last answer, over finished bundles (completed, extra, discarded).
    pub median_bundle_secs: Option<f64>,
    pub hourly_wage: f64,
    pub platform_fee: f64,
    /// None before the first finished bundle.
    pub cost: Option<Cost>,
    /// Cumulative `(unix seconds, count)`: arrivals and finished bundles.
    pub arrivals: Vec<(i64, i64)>,
    pub completions: Vec<(i64, i64)>,
    /// Answers per second of time per item: bins 0–1 s … 29–30 s, then 30 s and more.
    pub time_per_item: Vec<i64>,
    /// With `[assignment.adaptive]`: answers spent against a fixed overlap of `max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<crate::domain::adaptive::Savings>,
}

/// Participants by how their lease stands.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ParticipantCounts {
    /// Everyone who arrived.
    pub started: i64,
    pub working: i64,
    pub completed: i64,
    /// Finished after their place was reclaimed.
    pub extra: i64,
    pub timed_out: i64,
    pub returned: i64,
    /// By attention checks (with a lease) or the comprehension check (before one).
    pub screened_out: i64,
    pub discarded: i64,
    /// Of `completed`: places adaptive overlap ended early because the
    /// participant's answers carried no information (paid as promised).
    #[serde(default)]
    pub ended_uninformative: i64,
}

impl ParticipantCounts {
    /// Adds `n` participants in `state` (a lease state, or `screened_out` /
    /// `full_after_comprehension` / `arriving` without a lease).
    pub fn add(&mut self, state: &str, n: i64) {
        self.started += n;
        match state {
            "active" => self.working += n,
            "completed" => self.completed += n,
            "extra" => self.extra += n,
            "timed_out" => self.timed_out += n,
            "returned" => self.returned += n,
            "screened_out" => self.screened_out += n,
            "discarded" => self.discarded += n,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_window_is_the_last_15_minutes_at_least_a_minute() {
        assert_eq!(rate_window(None, 1000), None);
        assert_eq!(rate_window(Some(0), 3000), Some((3000 - 900, 15.0)));
        assert_eq!(rate_window(Some(2700), 3000), Some((2700, 5.0)));
        assert_eq!(rate_window(Some(2990), 3000), Some((2990, 1.0)));
    }

    #[test]
    fn eta_is_remaining_over_rate() {
        assert_eq!(eta_secs(300, 10.0), Some(1800.0));
        assert_eq!(eta_secs(0, 0.0), Some(0.0));
        assert_eq!(eta_secs(-3, 5.0), Some(0.0));
        assert_eq!(eta_secs(10, 0.0), None);
    }

    #[test]
    fn cost_is_wage_with_fee_times_median_bundle_time_times_places() {
        let q = QualitySettings { hourly_wage: 12.0, platform_fee: 0.5, ..QualitySettings::default() };
        // 18 $/h, 20 minutes a bundle: 6 $ a place; 7 places open, 3 finished.
        let c = cost(&q, Some(1200.0), 7, 3).unwrap();
        assert_eq!(c, Cost { per_hour: 18.0, per_place: 6.0, estimated_total: 60.0, spent: 18.0 });
        assert_eq!(cost(&q, None, 10, 0), None);
        // At the end, extra and discarded copies were paid too: the estimate is never below what is owed.
        let end = cost(&q, Some(1200.0), 0, 12).unwrap();
        assert_eq!((end.estimated_total, end.spent), (72.0, 72.0));
    }

    #[test]
    fn medians_of_counted_values() {
        assert_eq!(median_of_counts(&[]), None);
        assert_eq!(median_of_counts(&[(5, 1)]), Some(5.0));
        assert_eq!(median_of_counts(&[(1, 1), (2, 1), (9, 1)]), Some(2.0));
        assert_eq!(median_of_counts(&[(1, 2), (3, 2)]), Some(2.0));
        assert_eq!(median_of_counts(&[(1, 1), (4, 3)]), Some(4.0));
        assert_eq!(median_of_counts(&[(1, 3), (4, 1)]), Some(1.0));
        assert_eq!(median_of_counts(&[(0, 0), (7, 2)]), Some(7.0));
        // Agrees with the sorted list's median.
        let values = [3, 8, 8, 1, 20, 3, 3, 7];
        let mut sorted: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        let want = super::super::flags::median(&mut sorted);
        let mut counts: Vec<(i64, i64)> = Vec::new();
        for v in [1, 3, 7, 8, 20] {
            counts.push((v, values.iter().filter(|&&x| x == v).count() as i64));
        }
        assert_eq!(median_of_counts(&counts), want);
    }

    #[test]
    fn histogram_bins_seconds_and_the_rest() {
        let h = histogram(&[(0, 2), (999, 1), (1000, 4), (29_999, 1), (30_000, 2), (600_000, 1), (-5, 1)]);
        assert_eq!(h.len(), 31);
        assert_eq!((h[0], h[1], h[29], h[30]), (4, 4, 1, 3));
        assert_eq!(h.iter().sum::<i64>(), 12);
    }

    #[test]
    fn cumulative_series_are_thinned_but_end_at_the_total() {
        assert!(cumulative(&[]).is_empty());
        assert_eq!(cumulative(&[5, 9, 9]), [(5, 1), (9, 2), (9, 3)]);
        let many: Vec<i64> = (0..1000).collect();
        let c = cumulative(&many);
        assert!(c.len() <= MAX_POINTS, "{}", c.len());
        assert_eq!(*c.last().unwrap(), (999, 1000));
        assert!(c.windows(2).all(|w| w[0].1 < w[1].1 && w[0].0 <= w[1].0));
    }

    #[test]
    fn participants_are_counted_by_state_and_all_started() {
        let mut c = ParticipantCounts::default();
        for (s, n) in [("active", 2), ("completed", 3), ("screened_out", 1), ("arriving", 4), ("discarded", 1)] {
            c.add(s, n);
        }
        assert_eq!((c.started, c.working, c.completed, c.screened_out, c.discarded), (11, 2, 3, 1, 1));
        assert_eq!((c.extra, c.timed_out, c.returned), (0, 0, 0));
    }

    #[test]
    fn durations_read_as_hours_minutes_seconds() {
        assert_eq!(duration_text(12.4), "12 s");
        assert_eq!(duration_text(250.0), "4 min 10 s");
        assert_eq!(duration_text(3900.0), "1 h 05 min");
    }

    #[test]
    fn polylines_scale_into_the_box() {
        assert_eq!(
            polyline(&[(10, 0), (20, 5), (30, 10)], (10, 30), 10, 200.0, 100.0),
            "0.0,100.0 100.0,50.0 200.0,0.0"
        );
        assert_eq!(polyline(&[(7, 0)], (7, 7), 0, 10.0, 10.0), "0.0,10.0");
    }
}
