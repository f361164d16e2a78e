//! The UDT4 reference rate control (DAIMD), faithfully: formulas from `WIRE.md`.

use super::{
    AckSample, CcInit, CongestionControl, CongestionControlFactory, LossSample, PathEstimate,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

/// Rate-control interval (SYN), microseconds.
const RC_INTERVAL_US: f64 = 10_000.0;
/// Smallest rate increase per interval, packets.
const MIN_INC: f64 = 0.01;
/// At most this many decreases in one congestion period.
const MAX_DECREASES: u32 = 5;

/// UDT4's DAIMD controller: slow start to the flow window, then additive increase sized by the
/// spare capacity, and a multiplicative (×8/9) decrease per congestion period.
#[derive(Debug)]
pub struct Udt4Daimd {
    mss: f64,
    last_rc_time: Instant,
    slow_start: bool,
    last_ack: u64,
    loss_since_rc: bool,
    last_dec_seq: u64,
    last_dec_period: f64,
    nak_count: u32,
    dec_random: u32,
    avg_nak_num: u32,
    dec_count: u32,
    cwnd: f64,
    max_cwnd: f64,
    period_us: f64,
}

impl Udt4Daimd {
    /// A controller in its initial state: cwnd 16, period 1 µs, slow start.
    pub fn new(init: &CcInit) -> Self {
        Self {
            mss: init.mss as f64,
            last_rc_time: init.now,
            slow_start: true,
            last_ack: init.isn,
            loss_since_rc: false,
            last_dec_seq: init.isn.saturating_sub(1),
            last_dec_period: 1.0,
            nak_count: 0,
            dec_random: 1,
            avg_nak_num: 0,
            dec_count: 0,
            cwnd: 16.0,
            max_cwnd: init.peer_flow_window.max(2) as f64,
            period_us: 1.0,
        }
    }

    /// Leaves slow start, setting the period from the receive rate (or the window, if none yet).
    fn end_slow_start(&mut self, recv_rate: u32, rtt: Duration) {
        self.slow_start = false;
        self.period_us = if recv_rate > 0 {
            1e6 / recv_rate as f64
        } else {
            (rtt.as_micros() as f64 + RC_INTERVAL_US) / self.cwnd
        };
    }
}

impl CongestionControl for Udt4Daimd {
    fn name(&self) -> &'static str {
        "udt4-daimd"
    }

    fn on_ack(&mut self, now: Instant, ack: &AckSample) {
        // The reference ignores an ACK that acknowledges nothing new.
        if ack.newly_acked == 0 {
            return;
        }
        if now.saturating_duration_since(self.last_rc_time).as_micros() < RC_INTERVAL_US as u128 {
            return;
        }
        self.last_rc_time = now;
        let rtt_us = ack.path.rtt.as_micros() as f64;
        if self.slow_start {
            self.cwnd += ack.ack_seq.saturating_sub(self.last_ack) as f64;
            self.last_ack = ack.ack_seq;
            if self.cwnd > self.max_cwnd {
                self.end_slow_start(ack.path.recv_rate, ack.path.rtt);
            }
            return;
        }
        self.cwnd = ack.path.recv_rate as f64 / 1e6 * (rtt_us + RC_INTERVAL_US) + 16.0;
        if self.loss_since_rc {
            self.loss_since_rc = false;
            return;
        }
        let capacity = ack.path.capacity as f64;
        let mut spare = (capacity - 1e6 / self.period_us).trunc();
        if self.period_us > self.last_dec_period && (capacity / 9.0).trunc() < spare {
            spare = (capacity / 9.0).trunc();
        }
        let inc = if spare <= 0.0 {
            MIN_INC
        } else {
            let inc = 10f64.powf((spare * self.mss * 8.0).log10().ceil()) * 1.5e-6 / self.mss;
            inc.max(MIN_INC)
        };
        self.period_us =
            (self.period_us * RC_INTERVAL_US) / (self.period_us * inc + RC_INTERVAL_US);
    }

    fn on_loss(&mut self, _now: Instant, loss: &LossSample) {
        if self.slow_start {
            self.end_slow_start(loss.path.recv_rate, loss.path.rtt);
            if loss.path.recv_rate > 0 {
                return;
            }
        }
        self.loss_since_rc = true;
        if loss.first_lost > self.last_dec_seq {
            self.last_dec_period = self.period_us;
            self.period_us = (self.period_us * 1.125).ceil();
            self.avg_nak_num =
                (self.avg_nak_num as f64 * 0.875 + self.nak_count as f64 * 0.125).ceil() as u32;
            self.nak_count = 1;
            self.dec_count = 1;
            self.last_dec_seq = loss.path.largest_sent;
            // The reference seeds rand() with the decrease point to desynchronise flows.
            let mut rng = SmallRng::seed_from_u64(self.last_dec_seq);
            let r: f64 = rng.gen();
            self.dec_random = ((self.avg_nak_num as f64 * r).ceil() as u32).max(1);
        } else {
            let decrease_allowed = self.dec_count < MAX_DECREASES;
            self.dec_count += 1;
            if decrease_allowed {
                self.nak_count += 1;
                if self.nak_count % self.dec_random == 0 {
                    self.period_us = (self.period_us * 1.125).ceil();
                    self.last_dec_seq = loss.path.largest_sent;
                }
            }
        }
    }

    fn on_timeout(&mut self, _now: Instant, path: &PathEstimate) {
        // The reference only ends slow start here.
        if self.slow_start {
            self.end_slow_start(path.recv_rate, path.rtt);
        }
    }

    fn pacing_period(&self) -> Duration {
        Duration::from_nanos((self.period_us * 1000.0) as u64)
    }

    fn window(&self) -> u32 {
        self.cwnd.clamp(2.0, u32::MAX as f64) as u32
    }
}

/// Builds [`Udt4Daimd`] controllers.
#[derive(Debug, Clone, Copy, Default)]
pub struct Udt4DaimdFactory;

impl CongestionControlFactory for Udt4DaimdFactory {
    fn build(&self, init: &CcInit) -> Box<dyn CongestionControl> {
        Box::new(Udt4Daimd::new(init))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init(now: Instant) -> CcInit {
        CcInit {
            now,
            mss: 1500,
            isn: 1000,
            peer_flow_window: 100,
        }
    }

    fn path(recv_rate: u32, largest_sent: u64) -> PathEstimate {
        PathEstimate {
            rtt: Duration::from_millis(10),
            rtt_var: Duration::from_millis(1),
            recv_rate,
            capacity: 20_000,
            largest_sent,
            retransmitted: 0,
        }
    }

    fn ack(ack_seq: u64) -> AckSample {
        AckSample {
            ack_seq,
            newly_acked: 1,
            delivery_rate: None,
            link_capacity: None,
            rtt_sample: None,
            reported_rtt: Duration::from_millis(10),
            path: path(10_000, ack_seq),
        }
    }

    #[test]
    fn slow_start_grows_window_then_hands_over_to_receive_rate() {
        let t0 = Instant::now();
        let mut cc = Udt4Daimd::new(&init(t0));
        assert_eq!(cc.window(), 16);
        cc.on_ack(t0 + Duration::from_millis(11), &ack(1050));
        assert_eq!(cc.window(), 66);
        assert!(cc.slow_start);
        cc.on_ack(t0 + Duration::from_millis(22), &ack(1100));
        assert!(!cc.slow_start);
        assert_eq!(cc.pacing_period(), Duration::from_micros(100));
    }

    #[test]
    fn acks_within_one_interval_are_ignored() {
        let t0 = Instant::now();
        let mut cc = Udt4Daimd::new(&init(t0));
        cc.on_ack(t0 + Duration::from_millis(5), &ack(1050));
        assert_eq!(cc.window(), 16);
    }

    #[test]
    fn loss_in_slow_start_uses_the_receive_rate_and_new_period_cuts_by_eighth() {
        let t0 = Instant::now();
        let mut cc = Udt4Daimd::new(&init(t0));
        let loss = LossSample {
            first_lost: 1010,
            lost: 1,
            longest_gap: 1,
            rtt_sample: None,
            path: path(16, 1020),
        };
        cc.on_loss(t0, &loss);
        // The known flaw: one packet per 62.5 ms.
        assert_eq!(cc.pacing_period(), Duration::from_micros(62_500));
        let later = LossSample {
            first_lost: 1030,
            lost: 1,
            longest_gap: 1,
            rtt_sample: None,
            path: path(16, 1040),
        };
        cc.on_loss(t0, &later);
        assert_eq!(cc.pacing_period(), Duration::from_nanos(70_313_000));
    }

    #[test]
    fn increase_follows_the_spare_capacity_formula() {
        let t0 = Instant::now();
        let mut cc = Udt4Daimd::new(&init(t0));
        cc.slow_start = false;
        cc.period_us = 100.0; // 10 000 pkt/s; capacity 20 000 → B = 10 000 → capped at 20000/9
        cc.last_dec_period = 50.0;
        cc.on_ack(t0 + Duration::from_millis(11), &ack(2000));
        // B = 2222; B·MSS·8 = 26.7e6 → 10^8 · 1.5e-6 / 1500 = 0.1
        let expected = (100.0 * 10_000.0) / (100.0 * 0.1 + 10_000.0);
        assert!((cc.period_us - expected).abs() < 1e-9);
    }
}
