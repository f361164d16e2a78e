//! A user-set target rate, paced evenly, with no reaction to loss.

use super::{
    AckSample, CcInit, CongestionControl, CongestionControlFactory, LossSample, PathEstimate,
};
use std::time::{Duration, Instant};

/// Sends at a fixed rate whatever happens (like Aspera's "fixed" policy).
#[derive(Debug, Clone)]
pub struct FixedRate {
    period: Duration,
}

impl FixedRate {
    /// A controller pacing `mss`-byte packets at `bits_per_second` (IP-level).
    pub fn new(bits_per_second: u64, mss: u32) -> Self {
        let nanos = (mss as u128 * 8 * 1_000_000_000) / bits_per_second.max(1) as u128;
        Self {
            period: Duration::from_nanos(nanos.max(1) as u64),
        }
    }
}

impl CongestionControl for FixedRate {
    fn name(&self) -> &'static str {
        "fixed"
    }

    fn on_ack(&mut self, _now: Instant, _ack: &AckSample) {}

    fn on_loss(&mut self, _now: Instant, _loss: &LossSample) {}

    fn on_timeout(&mut self, _now: Instant, _path: &PathEstimate) {}

    fn pacing_period(&self) -> Duration {
        self.period
    }

    fn window(&self) -> u32 {
        u32::MAX
    }
}

/// Builds [`FixedRate`] controllers.
#[derive(Debug, Clone, Copy)]
pub struct FixedRateFactory {
    /// Target rate in bits per second, IP headers included.
    pub bits_per_second: u64,
}

impl CongestionControlFactory for FixedRateFactory {
    fn build(&self, init: &CcInit) -> Box<dyn CongestionControl> {
        Box::new(FixedRate::new(self.bits_per_second, init.mss))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn period_matches_rate() {
        let cc = FixedRate::new(1_000_000_000, 1500);
        assert_eq!(cc.pacing_period(), Duration::from_nanos(12_000));
    }
}
