//! # haul-link
//!
//! What one direction of a network link does to each packet offered to it: a bottleneck rate
//! behind a drop-tail queue, one-way propagation delay, jitter, random and bursty
//! (Gilbert–Elliott) loss, reordering, duplication and corruption. The model is pure — it takes
//! `now` and a packet length and returns the packet's [`Fate`] — so the same link behaves the
//! same in the deterministic simulator (`haul-sim`, virtual time) and in the lab emulator
//! (`haul-lab`, real packets between network namespaces).

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

impl GilbertElliott {
    /// The long-run share of packets this chain loses.
    pub fn mean_loss(&self) -> f64 {
        let total = self.good_to_bad + self.bad_to_good;
        if total <= 0.0 {
            return self.loss_good;
        }
        let bad = self.good_to_bad / total;
        bad * self.loss_bad + (1.0 - bad) * self.loss_good
    }
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
    /// Probability that one bit of a packet is flipped.
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
        Self {
            rate_bps,
            delay: rtt / 2,
            queue_bytes: bdp_bytes(rate_bps, rtt).max(64 << 10),
            ..Self::default()
        }
    }
}

/// The bandwidth-delay product of `rate_bps` over `rtt`, in bytes.
pub fn bdp_bytes(rate_bps: u64, rtt: Duration) -> usize {
    (rate_bps as u128 * rtt.as_nanos() / 8 / 1_000_000_000) as usize
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
    /// Packets with a flipped bit.
    pub corrupted: u64,
    /// Packets held back to be overtaken.
    pub reordered: u64,
}

/// What the link does with one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Dropped by random or bursty loss.
    Lost,
    /// Dropped because the queue was full.
    QueueFull,
    /// Arrives at the far end.
    Deliver(Delivery),
}

/// How a packet that survives arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    /// When it arrives.
    pub at: Instant,
    /// Whether a second copy arrives too (1 µs later).
    pub duplicate: bool,
    /// Whether it was held back so that later packets overtake it.
    pub reordered: bool,
    /// A bit to flip: (byte index, bit index).
    pub corrupt: Option<(usize, u8)>,
}

/// One direction of a link, with its state.
#[derive(Debug, Clone)]
pub struct Link {
    config: LinkConfig,
    busy_until: Instant,
    last_arrival: Instant,
    bad_state: bool,
    stats: LinkStats,
}

impl Link {
    /// An idle link with these settings.
    pub fn new(config: LinkConfig, now: Instant) -> Self {
        Self {
            config,
            busy_until: now,
            last_arrival: now,
            bad_state: false,
            stats: LinkStats::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    /// What happened so far.
    pub fn stats(&self) -> LinkStats {
        self.stats
    }

    /// How long a packet offered at `now` waits in the bottleneck queue before it is sent.
    pub fn queue_delay(&self, now: Instant) -> Duration {
        self.busy_until.saturating_duration_since(now)
    }

    /// Bytes waiting in the bottleneck queue at `now`.
    pub fn queued_bytes(&self, now: Instant) -> usize {
        if self.config.rate_bps == 0 {
            return 0;
        }
        let backlog = self.busy_until.saturating_duration_since(now);
        (backlog.as_nanos() * self.config.rate_bps as u128 / 8 / 1_000_000_000) as usize
    }

    fn lost(&mut self, rng: &mut impl Rng) -> bool {
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

    /// Offers a packet of `len` bytes at `now` and decides its fate.
    pub fn offer(&mut self, now: Instant, len: usize, rng: &mut impl Rng) -> Fate {
        self.stats.offered += 1;
        let mut depart = now;
        if self.config.rate_bps > 0 {
            if self.queued_bytes(now) + len > self.config.queue_bytes {
                self.stats.queue_drops += 1;
                return Fate::QueueFull;
            }
            let serialise = Duration::from_nanos(
                (len as u128 * 8 * 1_000_000_000 / self.config.rate_bps as u128) as u64,
            );
            self.busy_until = self.busy_until.max(now) + serialise;
            depart = self.busy_until;
        }
        if self.lost(rng) {
            self.stats.lost += 1;
            return Fate::Lost;
        }
        let mut at = depart + self.config.delay;
        if !self.config.jitter.is_zero() {
            at += self.config.jitter.mul_f64(rng.gen::<f64>());
        }
        let reordered =
            self.config.reorder > 0.0 && rng.gen_bool(self.config.reorder.clamp(0.0, 1.0));
        if reordered {
            self.stats.reordered += 1;
            at += self.config.reorder_delay;
        } else {
            at = at.max(self.last_arrival);
            self.last_arrival = at;
        }
        let corrupt = (self.config.corrupt > 0.0
            && len > 0
            && rng.gen_bool(self.config.corrupt.clamp(0.0, 1.0)))
        .then(|| (rng.gen_range(0..len), rng.gen_range(0..8u8)));
        self.stats.corrupted += corrupt.is_some() as u64;
        let duplicate =
            self.config.duplicate > 0.0 && rng.gen_bool(self.config.duplicate.clamp(0.0, 1.0));
        self.stats.duplicated += duplicate as u64;
        self.stats.delivered += 1 + duplicate as u64;
        Fate::Deliver(Delivery {
            at,
            duplicate,
            reordered,
            corrupt,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn arrival(fate: Fate) -> Instant {
        match fate {
            Fate::Deliver(d) => d.at,
            other => panic!("not delivered: {other:?}"),
        }
    }

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
        let a = arrival(link.offer(t0, 1000, &mut rng));
        let b = arrival(link.offer(t0, 1000, &mut rng));
        assert_eq!(a - t0, Duration::from_millis(6));
        assert_eq!(b - t0, Duration::from_millis(7));
        assert_eq!(link.queued_bytes(t0), 2000);
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
        let fates: Vec<Fate> = (0..5).map(|_| link.offer(t0, 1000, &mut rng)).collect();
        assert_eq!(fates.iter().filter(|f| **f == Fate::QueueFull).count(), 2);
        assert_eq!(link.stats().queue_drops, 2);
        assert_eq!(link.stats().delivered, 3);
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
            link.offer(t0, 10, &mut rng);
        }
        let rate = link.stats().lost as f64 / 100_000.0;
        assert!((rate - 0.1).abs() < 0.005, "{rate}");
    }

    #[test]
    fn bursty_loss_matches_its_mean() {
        let ge = GilbertElliott {
            good_to_bad: 0.01,
            bad_to_good: 0.2,
            loss_good: 0.0,
            loss_bad: 0.5,
        };
        let t0 = Instant::now();
        let mut link = Link::new(
            LinkConfig {
                bursty: Some(ge),
                ..LinkConfig::default()
            },
            t0,
        );
        let mut rng = SmallRng::seed_from_u64(9);
        let n = 400_000;
        for _ in 0..n {
            link.offer(t0, 10, &mut rng);
        }
        let rate = link.stats().lost as f64 / n as f64;
        assert!(
            (rate - ge.mean_loss()).abs() < 0.003,
            "{rate} vs {}",
            ge.mean_loss()
        );
    }

    #[test]
    fn jitter_without_reordering_keeps_order() {
        let t0 = Instant::now();
        let mut link = Link::new(
            LinkConfig {
                delay: Duration::from_millis(10),
                jitter: Duration::from_millis(5),
                ..LinkConfig::default()
            },
            t0,
        );
        let mut rng = SmallRng::seed_from_u64(5);
        let mut last = t0;
        for i in 0..1000 {
            let at = arrival(link.offer(t0 + Duration::from_micros(i * 10), 100, &mut rng));
            assert!(at >= last);
            assert!(at - t0 >= Duration::from_millis(10));
            last = at;
        }
    }
}
