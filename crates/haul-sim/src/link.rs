//! One direction of a simulated link.

use rand::rngs::SmallRng;
use rand::Rng;
use std::time::{Duration, Instant};

/// Bursty loss: a two-state Markov chain, evaluated once per packet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GilbertElliott {
    /// Probability of moving from the good to the bad state.
    pub good_to_bad: f64,
    /// Probability of moving from the bad to the good state.
    pub bad_to_good: f64,
    /// Loss probability in the good state.
    pub loss_good: f64,
    /// Loss probability in the bad state.
    pub loss_bad: f64,
}

/// Settings of one direction of a link. The default is an ideal link: no delay, no loss.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// Bottleneck rate in bits per second; 0 means unlimited.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Extra delay drawn uniformly from `0..jitter` per packet (order kept unless `reorder`).
    pub jitter: Duration,
    /// Drop-tail queue limit in bytes (at the bottleneck).
    pub queue_bytes: usize,
    /// Independent random loss probability.
    pub loss: f64,
    /// Bursty loss, applied in addition to `loss`.
    pub bursty: Option<GilbertElliott>,
    /// Probability that a packet is held back by `reorder_delay` and overtaken.
    pub reorder: f64,
    /// Extra delay of a reordered packet.
    pub reorder_delay: Duration,
    /// Probability that a packet is delivered twice.
    pub duplicate: f64,
    /// Probability that one byte of a packet is flipped.
    pub corrupt: f64,
}

impl Default for LinkConfig {
    fn default() -> Self {
        Self {
            rate_bps: 0,
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            queue_bytes: usize::MAX,
            loss: 0.0,
            bursty: None,
            reorder: 0.0,
            reorder_delay: Duration::from_millis(1),
            duplicate: 0.0,
            corrupt: 0.0,
        }
    }
}

impl LinkConfig {
    /// A link of `rate_bps` with a round-trip time of `rtt` (so a one-way delay of `rtt / 2`) and
    /// a drop-tail queue of one bandwidth-delay product (at least 64 KiB).
    pub fn wan(rate_bps: u64, rtt: Duration) -> Self {
        let bdp = (rate_bps as u128 * rtt.as_nanos() / 8 / 1_000_000_000) as usize;
        Self {
            rate_bps,
            delay: rtt / 2,
            queue_bytes: bdp.max(64 << 10),
            ..Self::default()
        }
    }
}

/// What happened to the packets offered to a link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets offered.
    pub offered: u64,
    /// Packets scheduled for delivery (duplicates included).
    pub delivered: u64,
    /// Packets dropped by random or bursty loss.
    pub lost: u64,
    /// Packets dropped because the queue was full.
    pub queue_drops: u64,
    /// Extra copies delivered.
    pub duplicated: u64,
    /// Packets with a flipped byte.
    pub corrupted: u64,
    /// Packets held back to be overtaken.
    pub reordered: u64,
}

/// One direction of a link, with its state.
pub(crate) struct Link {
    config: LinkConfig,
    busy_until: Instant,
    last_arrival: Instant,
    bad_state: bool,
    pub(crate) stats: LinkStats,
}

impl Link {
    pub(crate) fn new(config: LinkConfig, now: Instant) -> Self {
        Self {
            config,
            busy_until: now,
            last_arrival: now,
            bad_state: false,
            stats: LinkStats::default(),
        }
    }

    fn lost(&mut self, rng: &mut SmallRng) -> bool {
        if let Some(ge) = self.config.bursty {
            let flip = if self.bad_state {
                ge.bad_to_good
            } else {
                ge.good_to_bad
            };
            if rng.gen_bool(flip.clamp(0.0, 1.0)) {
                self.bad_state = !self.bad_state;
            }
            let p = if self.bad_state {
                ge.loss_bad
            } else {
                ge.loss_good
            };
            if rng.gen_bool(p.clamp(0.0, 1.0)) {
                return true;
            }
        }
        self.config.loss > 0.0 && rng.gen_bool(self.config.loss.clamp(0.0, 1.0))
    }

    /// Offers one datagram at `now`; returns the arrivals it produces (none, one, or two).
    pub(crate) fn transmit(
        &mut self,
        now: Instant,
        data: &[u8],
        rng: &mut SmallRng,
    ) -> Vec<(Instant, Vec<u8>)> {
        self.stats.offered += 1;
        let mut depart = now;
        if self.config.rate_bps > 0 {
            let rate = self.config.rate_bps as u128;
            let backlog = self.busy_until.saturating_duration_since(now);
            let queued = (backlog.as_nanos() * rate / 8 / 1_000_000_000) as usize;
            if queued + data.len() > self.config.queue_bytes {
                self.stats.queue_drops += 1;
                return Vec::new();
            }
            let serialise =
                Duration::from_nanos((data.len() as u128 * 8 * 1_000_000_000 / rate) as u64);
            self.busy_until = self.busy_until.max(now) + serialise;
            depart = self.busy_until;
        }
        if self.lost(rng) {
            self.stats.lost += 1;
            return Vec::new();
        }
        let mut arrival = depart + self.config.delay;
        if !self.config.jitter.is_zero() {
            arrival += self.config.jitter.mul_f64(rng.gen::<f64>());
        }
        let reordered =
            self.config.reorder > 0.0 && rng.gen_bool(self.config.reorder.clamp(0.0, 1.0));
        if reordered {
            self.stats.reordered += 1;
            arrival += self.config.reorder_delay;
        } else {
            arrival = arrival.max(self.last_arrival);
            self.last_arrival = arrival;
        }
        let mut bytes = data.to_vec();
        if self.config.corrupt > 0.0
            && !bytes.is_empty()
            && rng.gen_bool(self.config.corrupt.clamp(0.0, 1.0))
        {
            let i = rng.gen_range(0..bytes.len());
            bytes[i] ^= 1 << rng.gen_range(0..8);
            self.stats.corrupted += 1;
        }
        let mut out = Vec::with_capacity(2);
        if self.config.duplicate > 0.0 && rng.gen_bool(self.config.duplicate.clamp(0.0, 1.0)) {
            self.stats.duplicated += 1;
            out.push((arrival + Duration::from_micros(1), bytes.clone()));
        }
        out.push((arrival, bytes));
        self.stats.delivered += out.len() as u64;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn rate_and_delay_add_up() {
        let t0 = Instant::now();
        let mut link = Link::new(
            LinkConfig {
                rate_bps: 8_000_000,
                delay: Duration::from_millis(5),
                ..LinkConfig::default()
            },
            t0,
        );
        let mut rng = SmallRng::seed_from_u64(1);
        let a = link.transmit(t0, &[0; 1000], &mut rng);
        let b = link.transmit(t0, &[0; 1000], &mut rng);
        assert_eq!(a[0].0 - t0, Duration::from_millis(6));
        assert_eq!(b[0].0 - t0, Duration::from_millis(7));
    }

    #[test]
    fn queue_overflow_drops() {
        let t0 = Instant::now();
        let mut link = Link::new(
            LinkConfig {
                rate_bps: 8_000,
                queue_bytes: 3000,
                ..LinkConfig::default()
            },
            t0,
        );
        let mut rng = SmallRng::seed_from_u64(1);
        let delivered: usize = (0..5)
            .map(|_| link.transmit(t0, &[0; 1000], &mut rng).len())
            .sum();
        assert_eq!(delivered, 3);
        assert_eq!(link.stats.queue_drops, 2);
    }

    #[test]
    fn random_loss_rate_is_close_to_setting() {
        let t0 = Instant::now();
        let mut link = Link::new(
            LinkConfig {
                loss: 0.1,
                ..LinkConfig::default()
            },
            t0,
        );
        let mut rng = SmallRng::seed_from_u64(3);
        for _ in 0..100_000 {
            link.transmit(t0, &[0; 10], &mut rng);
        }
        let rate = link.stats.lost as f64 / 100_000.0;
        assert!((rate - 0.1).abs() < 0.005, "{rate}");
    }
}
