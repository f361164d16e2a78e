//! A stand-in for one TCP CUBIC flow in the simulator: RFC 9438's window growth with Linux's
//! constants (C = 0.4, β = 0.7, fast convergence, the Reno-friendly region), slow start, one
//! multiplicative decrease per round trip of losses.
//!
//! It is a model, not TCP: the window is sent as a rate (window ÷ smoothed RTT, the RTT that
//! the queue inflates, as ACK clocking does) and, since the cumulative ACK of the UDT4 dialect
//! stalls behind every hole where TCP's SACK does not, up to twice the window may be in flight.
//! On a drop-tail bottleneck it keeps what CUBIC keeps there: a queue that grows until it
//! overflows, then a cut to 0.7.

use haul_proto::cc::{
    AckSample, CcInit, CongestionControl, CongestionControlFactory, LossSample, PathEstimate,
};
use std::time::{Duration, Instant};

/// The cubic's scale, packets per second³.
const C: f64 = 0.4;
/// The window kept at a loss.
const BETA: f64 = 0.7;
/// Linux's initial window, packets.
const INITIAL_WINDOW: f64 = 10.0;

/// One CUBIC flow (see the module documentation).
#[derive(Debug)]
pub struct Cubic {
    cwnd: f64,
    ssthresh: f64,
    /// The window at the last loss (after fast convergence).
    w_max: f64,
    /// When the current growth epoch began (the last loss).
    epoch: Option<Instant>,
    /// Seconds from the epoch to regaining `w_max`.
    k: f64,
    /// Losses reported before this belong to the congestion event already answered.
    recovery_until: Option<Instant>,
    srtt: Duration,
    min_rtt: Duration,
}

impl Cubic {
    fn new() -> Self {
        Self {
            cwnd: INITIAL_WINDOW,
            ssthresh: f64::INFINITY,
            w_max: 0.0,
            epoch: None,
            k: 0.0,
            recovery_until: None,
            srtt: Duration::from_millis(100),
            min_rtt: Duration::MAX,
        }
    }

    fn track(&mut self, path: &PathEstimate) {
        if !path.rtt.is_zero() {
            self.srtt = path.rtt;
        }
    }

    /// A congestion event: at most one per round trip.
    fn congestion(&mut self, now: Instant) {
        if self.recovery_until.is_some_and(|until| now < until) {
            return;
        }
        self.w_max = if self.cwnd < self.w_max {
            self.cwnd * (1.0 + BETA) / 2.0
        } else {
            self.cwnd
        };
        self.cwnd = (self.cwnd * BETA).max(2.0);
        self.ssthresh = self.cwnd;
        self.k = (self.w_max * (1.0 - BETA) / C).cbrt();
        self.epoch = Some(now);
        self.recovery_until = Some(now + self.srtt);
    }

    /// The window CUBIC aims at now: the cubic, or Reno's line where that is higher.
    fn target(&self, now: Instant, epoch: Instant) -> f64 {
        let rtt = self.min_rtt.min(self.srtt).as_secs_f64();
        let t = (now - epoch).as_secs_f64() + rtt;
        let cubic = self.w_max + C * (t - self.k).powi(3);
        let reno =
            self.w_max * BETA + 3.0 * (1.0 - BETA) / (1.0 + BETA) * t / self.srtt.as_secs_f64();
        cubic.max(reno).min(1.5 * self.cwnd)
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic-model"
    }

    fn on_ack(&mut self, now: Instant, ack: &AckSample) {
        self.track(&ack.path);
        if let Some(rtt) = ack.rtt_sample {
            self.min_rtt = self.min_rtt.min(rtt);
        }
        let acked = ack.newly_acked as f64;
        if self.cwnd < self.ssthresh {
            self.cwnd += acked;
            return;
        }
        let epoch = *self.epoch.get_or_insert(now);
        let target = self.target(now, epoch);
        if target > self.cwnd {
            self.cwnd += acked * (target - self.cwnd) / self.cwnd;
        }
    }

    fn on_loss(&mut self, now: Instant, loss: &LossSample) {
        self.track(&loss.path);
        if loss.lost > 0 {
            self.congestion(now);
        }
    }

    fn on_timeout(&mut self, now: Instant, path: &PathEstimate) {
        self.track(path);
        self.congestion(now);
    }

    fn pacing_period(&self) -> Duration {
        self.srtt.div_f64(self.cwnd.max(1.0))
    }

    fn window(&self) -> u32 {
        (2.0 * self.cwnd + INITIAL_WINDOW) as u32
    }
}

/// Builds [`Cubic`] flows.
#[derive(Debug, Clone, Copy)]
pub struct CubicFactory;

impl CongestionControlFactory for CubicFactory {
    fn build(&self, _init: &CcInit) -> Box<dyn CongestionControl> {
        Box::new(Cubic::new())
    }
}
