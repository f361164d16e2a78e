//! The smallest sample of a sliding window of time, kept in constant space.
//!
//! Three candidates are kept: the smallest sample, and the smallest of later stretches of the
//! window. When the smallest ages out, the next candidate (a later, larger sample) takes its
//! place, so the minimum falls back to what the rest of the window saw, not to whatever the
//! expiring sample happens to be. Kathleen Nichols' windowed min-max filter, as Linux's BBR
//! keeps its bandwidth and RTT.

use std::time::{Duration, Instant};

/// A sample and when it was taken.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sample {
    value: Duration,
    at: Instant,
}

/// The smallest RTT of the last `window`, approximately: exact while the smallest sample is in
/// the window, and within a quarter of the window's age after it leaves.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WindowedMin {
    window: Duration,
    /// Best first; each later candidate is newer and no smaller.
    candidates: Option<[Sample; 3]>,
}

impl WindowedMin {
    /// An empty filter over `window`.
    pub(crate) fn new(window: Duration) -> Self {
        Self {
            window,
            candidates: None,
        }
    }

    /// The smallest sample of the window, or `None` before the first.
    pub(crate) fn get(&self) -> Option<Duration> {
        self.candidates.map(|c| c[0].value)
    }

    /// Adds `value`, taken at `now`.
    pub(crate) fn update(&mut self, now: Instant, value: Duration) {
        let fresh = Sample { value, at: now };
        let Some(c) = self.candidates.as_mut() else {
            self.candidates = Some([fresh; 3]);
            return;
        };
        if value <= c[0].value || now.saturating_duration_since(c[2].at) > self.window {
            // A new minimum, or the whole window has passed since the newest candidate.
            *c = [fresh; 3];
            return;
        }
        if value <= c[1].value {
            c[1] = fresh;
            c[2] = fresh;
        } else if value <= c[2].value {
            c[2] = fresh;
        }
        let age = now.saturating_duration_since(c[0].at);
        if age > self.window {
            // The minimum left the window: the later candidates move up.
            c[0] = c[1];
            c[1] = c[2];
            c[2] = fresh;
            if now.saturating_duration_since(c[0].at) > self.window {
                c[0] = c[1];
                c[1] = c[2];
            }
        } else if c[1].at == c[0].at && age > self.window / 4 {
            // A quarter of the window without a second candidate: start one.
            c[1] = fresh;
            c[2] = fresh;
        } else if c[2].at == c[1].at && age > self.window / 2 {
            // Half of the window without a third candidate: start one.
            c[2] = fresh;
        }
    }

    /// Forgets every sample but `value`, taken at `now`.
    #[cfg(test)]
    pub(crate) fn set(&mut self, now: Instant, value: Duration) {
        self.candidates = Some([Sample { value, at: now }; 3]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: Duration = Duration::from_secs(10);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn keeps_the_smallest_sample_of_the_window() {
        let t = Instant::now();
        let mut min = WindowedMin::new(WINDOW);
        assert_eq!(min.get(), None);
        min.update(t, ms(310));
        min.update(t + ms(100), ms(300));
        min.update(t + ms(200), ms(450));
        assert_eq!(min.get(), Some(ms(300)));
    }

    #[test]
    fn an_aged_out_minimum_falls_back_to_the_rest_of_the_window_not_to_the_newest_sample() {
        // The path's 300 ms is seen at 0 s and again at 7 s; a queue stands at 10.5 s. The
        // minimum must stay near 300 ms, where taking the newest sample would read 600.
        let t = Instant::now();
        let mut min = WindowedMin::new(WINDOW);
        min.update(t, ms(300));
        for s in 1..=14 {
            let rtt = if s == 7 { ms(302) } else { ms(590) };
            min.update(t + Duration::from_millis(750 * s), rtt);
        }
        assert_eq!(min.get(), Some(ms(302)));
        // Once the 302 ms sample has aged out too, the queue is all the window holds.
        for s in 15..=40 {
            min.update(t + Duration::from_millis(750 * s), ms(590));
        }
        assert_eq!(min.get(), Some(ms(590)));
    }

    #[test]
    fn a_window_with_nothing_smaller_restarts_at_the_newest_sample() {
        let t = Instant::now();
        let mut min = WindowedMin::new(WINDOW);
        min.update(t, ms(100));
        min.update(t + ms(30_000), ms(200));
        assert_eq!(min.get(), Some(ms(200)));
    }
}
