//! The receiver's link-capacity reports over the last second and a half, and the median the
//! controller believes.

use super::constants::{CAPACITY_REPORTS, CAPACITY_REPORT_EVERY};
use std::time::Instant;

/// Believed capacity reports in packets per second, at most one per [`CAPACITY_REPORT_EVERY`],
/// the last [`CAPACITY_REPORTS`] of them in a ring.
#[derive(Debug, Clone, Default)]
pub(super) struct CapacityReports {
    recent: [f64; CAPACITY_REPORTS],
    len: usize,
    next: usize,
    last_kept: Option<Instant>,
    /// The median of the reports kept, updated as one is kept.
    median: f64,
}

impl CapacityReports {
    /// Keeps `report` if none was kept within [`CAPACITY_REPORT_EVERY`] of `now` (forgetting
    /// the oldest once the ring is full), and returns the median of those kept.
    pub(super) fn push(&mut self, now: Instant, report: f64) -> f64 {
        let due = self
            .last_kept
            .is_none_or(|at| now.saturating_duration_since(at) >= CAPACITY_REPORT_EVERY);
        if due {
            self.recent[self.next] = report;
            self.next = (self.next + 1) % CAPACITY_REPORTS;
            self.len = (self.len + 1).min(CAPACITY_REPORTS);
            self.last_kept = Some(now);
            self.median = self.median_of_kept();
        }
        self.median
    }

    /// The median of the reports kept (the upper one of the middle two for an even count).
    fn median_of_kept(&self) -> f64 {
        let mut sorted = self.recent;
        let kept = &mut sorted[..self.len];
        kept.sort_unstable_by(f64::total_cmp);
        kept[self.len / 2]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_what_is_kept() {
        let (mut reports, t) = (CapacityReports::default(), Instant::now());
        assert_eq!(reports.push(t, 90.0), 90.0);
        assert_eq!(reports.push(t + CAPACITY_REPORT_EVERY, 70.0), 90.0);
        assert_eq!(reports.push(t + 2 * CAPACITY_REPORT_EVERY, 80.0), 80.0);
    }

    #[test]
    fn reports_in_between_are_not_kept() {
        let (mut reports, t) = (CapacityReports::default(), Instant::now());
        reports.push(t, 1_000.0);
        let soon = t + CAPACITY_REPORT_EVERY / 2;
        for _ in 0..CAPACITY_REPORTS {
            assert_eq!(reports.push(soon, 5_000.0), 1_000.0);
        }
    }

    #[test]
    fn a_full_ring_forgets_the_oldest() {
        let (mut reports, mut t) = (CapacityReports::default(), Instant::now());
        for _ in 0..CAPACITY_REPORTS {
            reports.push(t, 1_000.0);
            t += CAPACITY_REPORT_EVERY;
        }
        for _ in 0..CAPACITY_REPORTS / 2 {
            assert_eq!(reports.push(t, 2_000.0), 1_000.0);
            t += CAPACITY_REPORT_EVERY;
        }
        assert_eq!(reports.push(t, 2_000.0), 2_000.0);
    }
}
