//! Receiver- and sender-side estimates, with the reference's formulas and start values.

use crate::cc::{FIRST_TRAINS, STARTING_CAPACITY};
use crate::seq::SeqNo;
use std::cmp::Ordering;
use std::time::{Duration, Instant};

/// Smoothed RTT and RTT variance in microseconds (`RTT = (7·RTT + s)/8`, `Var = (3·Var + |s − RTT|)/4`).
///
/// The reference's start values (100 ms, 50 ms) hold until the first sample, which then replaces
/// the RTT (`RTT = s`); the variance keeps its start value and decays by a quarter per sample.
/// Averaging the first sample into 100 ms took twenty samples to approach a 10 ms path, and the
/// re-report timer built on the estimate (RTT + 4·Var) waited 300 ms for a lost retransmission
/// while start-up stood still. Seeding the variance too (`Var = s/2`, as TCP does) starved one
/// of four flows sharing a 10 ms bottleneck in two of six simulated seeds; this did not.
#[derive(Debug, Clone, Copy)]
pub struct RttEstimator {
    rtt_us: u32,
    var_us: u32,
    measured: bool,
    /// The last sample folded in (or the adopted estimate).
    latest_us: u32,
}

/// The sender's own retransmission timeout, from the time between sending a packet and the ACK
/// that covers it (never from retransmitted packets). Like TCP's: the first sample sets the
/// estimate, and until there is one the timeout is 1 s.
#[derive(Debug, Clone, Copy, Default)]
pub struct RtoEstimator {
    smoothed: RttEstimator,
}

impl RtoEstimator {
    const INITIAL: Duration = Duration::from_secs(1);

    /// Folds in one sample (the first sets the variance to half of it, as TCP does).
    pub fn update(&mut self, sample: Duration) {
        let us = sample.as_micros().min(u32::MAX as u128) as u32;
        if !self.smoothed.measured {
            self.smoothed.var_us = us / 2;
        }
        self.smoothed.update(us);
    }

    /// The smoothed RTT, once there is a sample.
    pub fn rtt(&self) -> Option<Duration> {
        self.smoothed.measured.then(|| self.smoothed.rtt())
    }

    /// RTT + 4·RTTVar, or 1 s before the first sample.
    pub fn rto(&self) -> Duration {
        if self.smoothed.measured {
            self.smoothed.rto()
        } else {
            Self::INITIAL
        }
    }
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self {
            rtt_us: 100_000,
            var_us: 50_000,
            measured: false,
            latest_us: 100_000,
        }
    }
}

impl RttEstimator {
    /// Folds in one sample.
    pub fn update(&mut self, sample_us: u32) {
        self.latest_us = sample_us;
        if !self.measured {
            self.measured = true;
            self.rtt_us = sample_us;
            return;
        }
        let diff = (sample_us as i64 - self.rtt_us as i64).unsigned_abs();
        self.var_us = ((self.var_us as u64 * 3 + diff) >> 2) as u32;
        self.rtt_us = ((self.rtt_us as u64 * 7 + sample_us as u64) >> 3) as u32;
    }

    /// Takes the peer's own estimate as it reported it (it already smoothed its samples; averaging
    /// them again only adds lag, and holds the peer's start value of 100 ms for dozens of reports).
    pub fn adopt(&mut self, rtt_us: u32, var_us: u32) {
        *self = Self {
            rtt_us,
            var_us,
            measured: true,
            latest_us: rtt_us,
        };
    }

    /// The smoothed RTT, or the last sample if it is smaller, microseconds.
    pub fn current_us(&self) -> u32 {
        self.rtt_us.min(self.latest_us)
    }

    /// Smoothed variance, microseconds.
    pub fn var_us(&self) -> u32 {
        self.var_us
    }

    /// Smoothed RTT.
    pub fn rtt(&self) -> Duration {
        Duration::from_micros(self.rtt_us as u64)
    }

    /// Smoothed variance.
    pub fn var(&self) -> Duration {
        Duration::from_micros(self.var_us as u64)
    }

    /// RTT + 4·RTTVar: how long to wait before repeating a report.
    pub fn rto(&self) -> Duration {
        Duration::from_micros(self.rtt_us as u64 + 4 * self.var_us as u64)
    }
}

/// When the newest first-sent packet to arrive left its sender, on this side's clock and shifted
/// by the path's least one-way delay: its arrival less the queue it met. A packet's timestamp
/// (the sender's clock) against its arrival (ours) is the one-way delay plus the clocks' offset;
/// the smallest difference seen stands for the least delay, and what a packet took beyond it
/// was queue. A sender resends before it sends new data, so once a packet sent after a repair
/// has arrived, the repair should have too.
#[derive(Debug, Clone, Copy)]
pub struct SendClock {
    /// This side's clock's start: its timestamps count microseconds from it.
    epoch: Instant,
    /// The last arrival's time and its microseconds since `epoch`: the packets of one batch
    /// share an arrival time, and one clock reading serves them all.
    last_arrival: (Instant, u64),
    /// The smallest arrival-less-timestamp difference, microseconds.
    floor_us: Option<i64>,
    /// The newest first-sent packet's departure, microseconds since `epoch`.
    newest_us: Option<u64>,
}

impl SendClock {
    /// A clock with no arrivals, on this side's clock that started at `epoch`.
    pub fn new(epoch: Instant) -> Self {
        Self {
            epoch,
            last_arrival: (epoch, 0),
            floor_us: None,
            newest_us: None,
        }
    }

    /// Notes a packet that arrived at `now` with the sender's `timestamp`; `first_sent` says
    /// whether it came beyond everything that arrived before (new data, not a repair).
    pub fn on_arrival(&mut self, now: Instant, timestamp: u32, first_sent: bool) {
        if now != self.last_arrival.0 {
            let since_epoch = now.saturating_duration_since(self.epoch).as_micros();
            self.last_arrival = (now, since_epoch as u64);
        }
        let now_us = self.last_arrival.1;
        // Both clocks count 32-bit microseconds from their side's start: the difference wraps,
        // and read as signed it holds while the two starts are within half an hour.
        let delay = i64::from((now_us as u32).wrapping_sub(timestamp) as i32);
        let floor = self.floor_us.map_or(delay, |f| f.min(delay));
        self.floor_us = Some(floor);
        if first_sent {
            let sent = now_us.saturating_sub(delay.abs_diff(floor));
            self.newest_us = Some(self.newest_us.map_or(sent, |n| n.max(sent)));
        }
    }

    /// The newest first-sent packet's departure, shifted by the least one-way delay.
    pub fn newest_sent(&self) -> Option<Instant> {
        self.epoch
            .checked_add(Duration::from_micros(self.newest_us?))
    }
}

/// A 7/8 moving average updated only by positive values.
#[derive(Debug, Clone, Copy)]
pub struct SmoothedRate(u32);

impl SmoothedRate {
    /// Starts at `initial`.
    pub fn new(initial: u32) -> Self {
        Self(initial)
    }

    /// Folds in `sample` unless it is zero.
    pub fn update(&mut self, sample: u32) {
        if sample > 0 {
            self.0 = ((self.0 as u64 * 7 + sample as u64) >> 3) as u32;
        }
    }

    /// The current value.
    pub fn get(&self) -> u32 {
        self.0
    }
}

const PROBE_WINDOW: usize = 64;
/// Packet pairs the capacity is computed from before the window holds 64 of them. The
/// reference starts its window full of 1 000 packets per second and reports that default until
/// half the window is real (33 pairs, 528 packets: four round trips into a start-up from 32
/// packets); haul reports the median of the pairs it has seen once it has this many, so that a
/// sender can use the capacity in start-up: a first flight of 128 packets carries eight pairs.
/// Four or six (a jump after the first flight even when loss breaks a pair) met every start-up
/// cell of the simulator, but a flow that filled the pipe a few hundred milliseconds sooner read
/// 0.94 instead of 0.96 on the in-order efficiency of 100 Mbit/s, 600 ms, 1 % (the span measured
/// starts at 4 s, after more of start-up's holes were repaired) — and a median of eight is the
/// sturdier reading on a real path.
const FIRST_PROBES: usize = 8;

/// Trains a receiver keeps for its capacity estimate: the most recent ones, enough for a
/// median that one train delayed in a receiver's scheduling does not move.
const TRAIN_WINDOW: usize = 16;

/// Packets a train may miss between two of its arrivals and go on. A lost packet is counted
/// as having taken its time on the bottleneck (lost after it, as on a lossy link); a drop in
/// the bottleneck's queue instead makes the train read high by the share it lost. Two, so
/// that random loss rarely ends a train: at 5 % three losses in a row come once in 8 000
/// packets.
const TRAIN_LOSS_GAP: u32 = 2;
/// A train that lost more than this share of its packets met a full queue and says nothing.
/// Drop-tail drops what finds no room, so a train that reaches a queue others keep full loses
/// every other packet or more, and counting those as having taken their time reads the link
/// high by as much: a newcomer's start-up trains into four flows' full queue at 300 ms read
/// 16 983 packets per second of 8 491, and the flow, taking itself for a small share of a link
/// twice as fast, drained and gave back too little for 15 s (the simulator, seed 30). Random
/// loss up to 10 % seldom takes a fifth of a train.
const TRAIN_MAX_LOSS: f64 = 0.2;

/// Link capacity from trains: runs of packets that the sender stamped with one time (a GSO
/// batch, a start-up probe train) and so sent back to back, in sequence but for at most
/// [`TRAIN_LOSS_GAP`] lost at a time; the bottleneck spaces them by its transmission time.
/// Unlike a pair's gap, a train's spread survives arrivals that come in groups — the lab
/// emulator's coalescing, GRO, interrupt coalescing — once it spans two groups or more. (The
/// UDP driver stamps each message with the kernel's receive time, so a `recvmmsg` batch is
/// not one group.) A group is stamped once its last packet is in (or later, by a timer): the
/// packets of the middle groups arrived between the first group's stamp and the stamp before
/// the last, whichever stamping. With two groups only, the second's packets are counted up to
/// its stamp, which reads low where the group goes on past the train's end: the lab
/// emulator's runs of 200 µs do, and a timer's tick (interrupt coalescing) counts the group
/// over a whole tick however early the train ended. A train that arrives as one group says
/// nothing.
///
/// So the trains of three groups or more give the capacity once there are enough of them.
/// Behind 200 µs ticks at 1 Gbit/s and 5 % loss, two-group trains read 5 000–80 000 packets/s
/// of 83 000 and three-group trains 85 000. Ending a train at every loss left most trains two
/// groups long: a unit test of the emulator's grouping read 22 000, and the lab's sender (its
/// arrivals timed by the kernel) 54 000–85 000, against 73 000–90 000 once trains crossed
/// losses.
#[derive(Debug, Clone, Default)]
struct TrainGauge {
    /// Nanoseconds per packet, the last [`TRAIN_WINDOW`] trains.
    samples: SampleRing,
    /// The same, of the trains that spanned three arrival groups or more.
    spanning: SampleRing,
    current: Option<Train>,
}

/// The last [`TRAIN_WINDOW`] samples of nanoseconds per packet.
#[derive(Debug, Clone, Copy, Default)]
struct SampleRing {
    samples: [u32; TRAIN_WINDOW],
    seen: usize,
}

impl SampleRing {
    fn push(&mut self, per_packet: u32) {
        self.samples[self.seen % TRAIN_WINDOW] = per_packet;
        self.seen = self.seen.saturating_add(1);
    }

    /// Packets per second: the median, once [`FIRST_TRAINS`] samples were seen.
    fn rate(&self) -> Option<u32> {
        if self.seen < FIRST_TRAINS {
            return None;
        }
        let mut samples = self.samples;
        let samples = &mut samples[..self.seen.min(TRAIN_WINDOW)];
        let middle = samples.len() / 2;
        let median = *samples.select_nth_unstable(middle).1;
        Some((1_000_000_000 / u64::from(median)).min(u64::from(u32::MAX)) as u32)
    }
}

/// The train being received. Its packets are counted by sequence number, lost ones included.
#[derive(Debug, Clone, Copy)]
struct Train {
    /// Wire sequence numbers of its first and last packets, and the sender's time stamp of
    /// them all.
    first_seq: u32,
    last_seq: u32,
    sent_us: u32,
    /// Arrival groups (packets stamped with one time) so far, and packets.
    groups: u32,
    arrived: u32,
    first_at: Instant,
    /// Wire sequence numbers of the last packet of the first group and of the group before
    /// the last one.
    first_group_end: u32,
    previous_group_end: u32,
    /// The stamp of the group before the last one, and of the last one.
    previous_at: Instant,
    last_at: Instant,
}

impl Train {
    /// Nanoseconds per packet, once it spans two arrival groups.
    fn per_packet(&self) -> Option<u32> {
        let (end, spread) = match self.groups {
            0 | 1 => return None,
            2 => (self.last_seq, self.last_at - self.first_at),
            _ => (self.previous_group_end, self.previous_at - self.first_at),
        };
        let packets = end.wrapping_sub(self.first_group_end) & SeqNo::MAX;
        let per_packet = spread.as_nanos() / u128::from(packets.max(1));
        Some(per_packet.clamp(1, u32::MAX as u128) as u32)
    }
}

impl TrainGauge {
    fn on_arrival(&mut self, now: Instant, seq: u32, sent_us: u32) {
        if let Some(t) = self.current.as_mut() {
            let missing = seq.wrapping_sub(t.last_seq.wrapping_add(1)) & SeqNo::MAX;
            if sent_us == t.sent_us && missing <= TRAIN_LOSS_GAP {
                match now.cmp(&t.last_at) {
                    Ordering::Equal => {
                        if t.groups == 1 {
                            t.first_group_end = seq;
                        }
                    }
                    Ordering::Greater => {
                        t.groups += 1;
                        t.previous_group_end = t.last_seq;
                        t.previous_at = t.last_at;
                        t.last_at = now;
                    }
                    Ordering::Less => return self.restart(now, seq, sent_us),
                }
                t.last_seq = seq;
                t.arrived += 1;
                return;
            }
        }
        self.restart(now, seq, sent_us);
    }

    /// Closes the current train and starts one with this packet.
    fn restart(&mut self, now: Instant, seq: u32, sent_us: u32) {
        if let Some(done) = self.current.take() {
            self.close(done);
        }
        self.current = Some(Train {
            first_seq: seq,
            last_seq: seq,
            sent_us,
            groups: 1,
            arrived: 1,
            first_at: now,
            first_group_end: seq,
            previous_group_end: seq,
            previous_at: now,
            last_at: now,
        });
    }

    /// Counts a finished train if it spans two arrival groups or more and did not meet a full
    /// queue (see [`TRAIN_MAX_LOSS`]).
    fn close(&mut self, t: Train) {
        let span = (t.last_seq.wrapping_sub(t.first_seq) & SeqNo::MAX) + 1;
        if f64::from(span.saturating_sub(t.arrived)) > TRAIN_MAX_LOSS * f64::from(span) {
            return;
        }
        if let Some(per_packet) = t.per_packet() {
            self.samples.push(per_packet);
            if t.groups >= 3 {
                self.spanning.push(per_packet);
            }
        }
    }

    /// Packets per second: the median of the recent trains of three groups or more once
    /// [`FIRST_TRAINS`] of them were seen, else of all recent trains once as many were seen.
    fn capacity(&self) -> Option<u32> {
        self.spanning.rate().or_else(|| self.samples.rate())
    }
}

/// The receiver's record of packet arrivals: receive rate and link capacity (packet trains, or
/// pairs from a sender that sends no trains).
///
/// The reference estimates the receive rate from the median-filtered inter-arrival times of the
/// last 16 packets. Arrivals that come in batches — UDP GRO and `recvmmsg` here, interrupt
/// coalescing on real paths — make most of those intervals zero or tiny and the filter then
/// keeps only the gaps *between* batches, which underestimates the rate by the batch size (a
/// 100 Mbit/s link read as ~55 Mbit/s in the lab). So the rate reported is the packets counted
/// since the last report over the time since it: the receiver's delivery rate over one ACK
/// interval, whatever the batching.
#[derive(Debug, Clone)]
pub struct ArrivalWindow {
    trains: TrainGauge,
    probes: [u32; PROBE_WINDOW],
    next_probe: usize,
    /// Pairs measured so far (the window fills from the front until it wraps).
    probes_seen: usize,
    probe_start: Option<Instant>,
    counted: u64,
    counting_since: Option<Instant>,
    /// When the last rate was reported, and whether packets arrived in its window.
    last_report: Option<(Instant, bool)>,
}

impl Default for ArrivalWindow {
    fn default() -> Self {
        Self {
            trains: TrainGauge::default(),
            probes: [1_000_000 / STARTING_CAPACITY; PROBE_WINDOW],
            next_probe: 0,
            probes_seen: 0,
            probe_start: None,
            counted: 0,
            counting_since: None,
            last_report: None,
        }
    }
}

impl ArrivalWindow {
    /// Records a data packet's arrival: its wire sequence number and the sender's time stamp.
    pub fn on_arrival(&mut self, now: Instant, seq: u32, sent_us: u32) {
        self.counted += 1;
        self.counting_since.get_or_insert(now);
        self.trains.on_arrival(now, seq, sent_us);
        match seq & 0xF {
            0 => self.probe_start = Some(now),
            1 => {
                if let Some(start) = self.probe_start.take() {
                    self.probes[self.next_probe] = micros_between(start, now);
                    self.next_probe = (self.next_probe + 1) % PROBE_WINDOW;
                    self.probes_seen = self.probes_seen.saturating_add(1);
                }
            }
            _ => {}
        }
    }

    /// Packets per second for a full ACK sent at `now`, and restarts the count: the packets
    /// counted since the last report over the time since that report while packets keep coming
    /// (windows that tile count every packet once over the time it took), or since the first of
    /// them after a quiet window. 0 when fewer than two packets arrived.
    ///
    /// Measuring from the first arrival instead reads N packets over N − ½ gaps on average: a
    /// bias of +½ packet per report (+0.6 % at 100 Mbit/s with 10 ms reports), enough for the
    /// controller's max filter to pace above the link and keep a queue.
    pub fn report_rate(&mut self, now: Instant) -> u32 {
        let counted = std::mem::take(&mut self.counted);
        let first = self.counting_since.take();
        let start = match (self.last_report, first) {
            (Some((previous, true)), Some(first)) => Some(previous.min(first)),
            (_, first) => first,
        };
        self.last_report = Some((now, counted > 0));
        match start {
            Some(t) if now > t && counted > 1 => {
                (counted as f64 / now.duration_since(t).as_secs_f64()).min(u32::MAX as f64) as u32
            }
            _ => 0,
        }
    }

    /// Link capacity in packets per second: from trains once there are [`FIRST_TRAINS`] of
    /// them (see [`TrainGauge`]). Otherwise, as the reference does, the mean of the packet-pair
    /// gaps within a factor of eight of their median — over the pairs seen once there are
    /// [`FIRST_PROBES`] of them, otherwise over the whole window (the reference's defaults
    /// until then).
    pub fn capacity(&self) -> u32 {
        if let Some(capacity) = self.trains.capacity() {
            return capacity;
        }
        let seen = if (FIRST_PROBES..PROBE_WINDOW).contains(&self.probes_seen) {
            self.probes_seen
        } else {
            PROBE_WINDOW
        };
        let mut gaps = self.probes;
        let gaps = &mut gaps[..seen];
        let median = *gaps.select_nth_unstable(seen / 2).1;
        let (upper, lower) = (median.saturating_mul(8), median / 8);
        let (count, sum) = gaps
            .iter()
            .filter(|&&v| v < upper && v > lower)
            .fold((1u64, median as u64), |(c, s), &v| (c + 1, s + v as u64));
        per_second(sum / count)
    }
}

fn micros_between(earlier: Instant, later: Instant) -> u32 {
    later
        .saturating_duration_since(earlier)
        .as_micros()
        .min(u32::MAX as u128) as u32
}

fn per_second(mean_us: u64) -> u32 {
    (1_000_000 / mean_us.max(1)).min(u32::MAX as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_values_match_the_reference() {
        let mut w = ArrivalWindow::default();
        assert_eq!(w.report_rate(Instant::now()), 0);
        assert_eq!(w.capacity(), 1000);
        let r = RttEstimator::default();
        assert_eq!((r.rtt(), r.var_us()), (Duration::from_millis(100), 50_000));
    }

    #[test]
    fn the_current_rtt_drops_with_a_queue_at_once_and_rises_smoothed() {
        let mut r = RttEstimator::default();
        r.update(10_000);
        // A probe's queue: samples of 15 ms raise the report by an eighth of the step each.
        r.update(15_000);
        assert_eq!(r.current_us(), 10_625);
        r.update(15_000);
        // The queue is gone: the report follows the sample, the estimate still remembers.
        r.update(10_000);
        assert_eq!(r.current_us(), 10_000);
        assert!(r.rtt() > Duration::from_millis(11), "{:?}", r.rtt());
    }

    #[test]
    fn steady_arrivals_give_their_rate() {
        let mut w = ArrivalWindow::default();
        let t0 = Instant::now();
        for i in 0..100u32 {
            w.on_arrival(t0 + Duration::from_micros(100 * i as u64), i, 100 * i);
        }
        assert_eq!(w.report_rate(t0 + Duration::from_millis(10)), 10_000);
    }

    #[test]
    fn capacity_comes_from_the_pairs_seen_once_there_are_enough() {
        let mut w = ArrivalWindow::default();
        let t0 = Instant::now();
        // Pairs 100 µs apart (10 000 packets per second), one every 16 packets.
        let pair = |w: &mut ArrivalWindow, n: u64| {
            let at = t0 + Duration::from_millis(n);
            // A sender of the reference's kind: each packet has a time stamp of its own.
            let sent = 1_000 * n as u32;
            w.on_arrival(at, 0, sent);
            w.on_arrival(at + Duration::from_micros(100), 1, sent + 1);
        };
        for n in 0..FIRST_PROBES as u64 - 1 {
            pair(&mut w, n);
        }
        assert_eq!(w.capacity(), 1000, "the reference's default until then");
        pair(&mut w, FIRST_PROBES as u64 - 1);
        assert_eq!(w.capacity(), 10_000);
        for n in FIRST_PROBES as u64..200 {
            pair(&mut w, n);
        }
        assert_eq!(w.capacity(), 10_000, "the whole window once it wrapped");
    }

    /// Trains of 32 packets sent back to back every millisecond into a bottleneck that spaces
    /// them `gap` apart, their arrivals stamped by `stamp`; the capacity the receiver reports.
    fn capacity_of_trains(gap: Duration, stamp: impl Fn(Duration) -> Duration) -> u32 {
        let mut w = ArrivalWindow::default();
        let t0 = Instant::now();
        let mut seq = 0;
        for train in 0..20u32 {
            let start = Duration::from_millis(u64::from(train)) + Duration::from_micros(37);
            for k in 0..32 {
                w.on_arrival(t0 + stamp(start + gap * k), seq, 1_000 * train);
                seq += 1;
            }
        }
        w.capacity()
    }

    #[test]
    fn trains_give_the_capacity_whatever_the_arrivals_are_grouped_by() {
        let gap = Duration::from_micros(12); // 1 Gbit/s of 1 500-byte packets
        let truth = 1_000_000_000 / gap.as_nanos() as u32;
        let within = |capacity: u32, tolerance: f64| {
            (f64::from(capacity) / f64::from(truth) - 1.0).abs() <= tolerance
        };
        let one_by_one = capacity_of_trains(gap, |t| t);
        assert_eq!(one_by_one, truth);
        // The lab emulator: what reaches it within 200 µs of a run's first packet is written
        // as one, when the last of it is due.
        let emulated = capacity_of_trains(gap, |t| {
            let (start, at) = (Duration::from_micros(37), t.as_nanos() as u64);
            let train = (at / 1_000_000) * 1_000_000 + start.as_nanos() as u64;
            let k = (at - train) / 12_000;
            let run_end = ((k / 17) * 17 + 16).min(31);
            Duration::from_nanos(train + run_end * 12_000)
        });
        assert!(within(emulated, 0.02), "{emulated} against {truth}");
        // An interrupt timer: everything in by each 200 µs tick is read at the tick.
        let ticked = capacity_of_trains(gap, |t| {
            let tick = 200_000;
            Duration::from_nanos((t.as_nanos() as u64).div_ceil(tick) * tick)
        });
        assert!(within(ticked, 0.15), "{ticked} against {truth}");
        // Pairs alone read such arrivals as together: the reference's capacity, unresolved.
        let mut w = ArrivalWindow::default();
        let t0 = Instant::now();
        for n in 0..64u32 {
            let at = t0 + Duration::from_micros(200 * u64::from(n));
            w.on_arrival(at, 16 * n, 2 * n);
            w.on_arrival(at, 16 * n + 1, 2 * n + 1);
        }
        assert_eq!(w.capacity(), 1_000_000);
    }

    #[test]
    fn trains_with_losses_behind_the_lab_emulator_give_the_capacity() {
        // 1 Gbit/s of 1 500-byte packets, trains of 32 every millisecond, one packet in 12 lost
        // after the bottleneck. The emulator writes what survives within 200 µs of a run's
        // first packet as one group, stamped when its last packet is due. A train cut at each
        // loss spans two groups at most, its second group stamped at the end of a run that goes
        // on past the train's end, and reads low.
        let gap = Duration::from_micros(12);
        let truth = 1_000_000_000 / gap.as_nanos() as u32;
        let mut due = Vec::new();
        for train in 0..40u32 {
            let start = Duration::from_millis(u64::from(train))
                + Duration::from_micros(u64::from(37 + 53 * train) % 200);
            for k in 0..32 {
                let seq = 32 * train + k;
                if seq % 12 != 5 {
                    due.push((start + gap * k, seq, train));
                }
            }
        }
        let mut w = ArrivalWindow::default();
        let t0 = Instant::now();
        let mut run_start = 0;
        while run_start < due.len() {
            let first_at = due[run_start].0;
            let run_end = due[run_start..]
                .iter()
                .position(|&(at, ..)| at - first_at > Duration::from_micros(200))
                .map_or(due.len(), |n| run_start + n);
            let stamp = t0 + due[run_end - 1].0;
            for &(_, seq, sent) in &due[run_start..run_end] {
                w.on_arrival(stamp, seq, sent);
            }
            run_start = run_end;
        }
        let within = f64::from(w.capacity()) / f64::from(truth);
        assert!(
            (0.97..=1.03).contains(&within),
            "{} against {truth}",
            w.capacity()
        );
    }

    #[test]
    fn trains_cut_short_by_loss_behind_an_interrupt_timer_give_the_capacity() {
        // 1 Gbit/s of 1 500-byte packets, read at 200 µs ticks; short trains of 6 to 32
        // packets, each with a time stamp of its own. Those spanning two ticks count their
        // second group over a whole tick and read low; those spanning three read a middle group
        // that filled it.
        let gap = Duration::from_micros(12);
        let truth = 1_000_000_000 / gap.as_nanos() as u32;
        let mut w = ArrivalWindow::default();
        let t0 = Instant::now();
        let mut seq = 0;
        for train in 0..40u32 {
            let offset = Duration::from_micros(u64::from(37 + 53 * train) % 200);
            let start = Duration::from_millis(u64::from(train)) + offset;
            for k in 0..6 + (train * 7) % 27 {
                let at = (start + gap * k).as_nanos() as u64;
                w.on_arrival(
                    t0 + Duration::from_nanos(at.div_ceil(200_000) * 200_000),
                    seq,
                    train,
                );
                seq += 1;
            }
            seq += 1;
        }
        let within = f64::from(w.capacity()) / f64::from(truth);
        assert!(
            (0.95..=1.05).contains(&within),
            "{} against {truth}",
            w.capacity()
        );
        assert!(
            w.trains.samples.rate().unwrap() < truth * 3 / 4,
            "all trains read low"
        );
    }

    #[test]
    fn paced_packets_and_single_groups_make_no_trains() {
        let mut w = ArrivalWindow::default();
        let t0 = Instant::now();
        // Each packet with its own time stamp: no train, the pairs' default stands.
        for i in 0..100u32 {
            w.on_arrival(t0 + Duration::from_micros(50 * u64::from(i)), 100 + i, i);
        }
        // Trains that arrive whole, in one group: nothing measured.
        for train in 0..10u32 {
            let at = t0 + Duration::from_millis(10 + u64::from(train));
            for k in 0..8 {
                w.on_arrival(at, 1_000 + 8 * train + k, 500 + train);
            }
        }
        assert_eq!(w.trains.samples.seen, 0);
        // A train that lost a packet after the bottleneck goes on, the lost one counted as
        // having taken its time there: 10 µs a packet.
        let train = |w: &mut ArrivalWindow, base: u32, seqs: &[u32], sent: u32| {
            for &seq in seqs {
                let at = Duration::from_millis(u64::from(base))
                    + Duration::from_micros(10 * u64::from(seq));
                w.on_arrival(t0 + at, base + seq, sent);
            }
        };
        train(&mut w, 50, &[0, 1, 2, 4, 5, 6], 900);
        train(&mut w, 60, &[0], 901);
        assert_eq!(w.trains.samples.seen, 1);
        assert_eq!(w.trains.spanning.samples[0], 10_000);
        // More than TRAIN_LOSS_GAP lost in a row end it: two trains.
        train(&mut w, 70, &[0, 1, 2, 6, 7, 8], 902);
        train(&mut w, 80, &[0], 903);
        assert_eq!(w.trains.samples.seen, 3);
        // Every other packet lost (drop-tail at a full queue): more than TRAIN_MAX_LOSS, so the
        // train, which would read the link twice as fast, is not counted.
        train(&mut w, 90, &[0, 2, 4, 6, 8, 10], 904);
        train(&mut w, 100, &[0], 905);
        assert_eq!(w.trains.samples.seen, 3);
        // Two lost of eleven is within it.
        train(&mut w, 110, &[0, 1, 2, 3, 5, 6, 7, 8, 10], 906);
        train(&mut w, 120, &[0], 907);
        assert_eq!(w.trains.samples.seen, 4);
    }

    #[test]
    fn partly_batched_arrivals_give_their_rate() {
        // Pairs every 200 µs (what GRO and the lab's coalescing produce): 10 000 packets/s,
        // which the reference's median filter reads as 5 000.
        let mut w = ArrivalWindow::default();
        let t0 = Instant::now();
        for pair in 0..50u64 {
            for i in 0..2 {
                w.on_arrival(
                    t0 + Duration::from_micros(200 * pair),
                    i,
                    (200 * pair) as u32 + i,
                );
            }
        }
        assert_eq!(w.report_rate(t0 + Duration::from_millis(10)), 10_000);
    }

    #[test]
    fn back_to_back_reports_count_each_gap_once() {
        let mut w = ArrivalWindow::default();
        let t0 = Instant::now();
        let mut rates = Vec::new();
        // One packet every 100 µs for 50 ms, reported every 10 ms (between arrivals).
        for i in 0..500u64 {
            let at = t0 + Duration::from_micros(100 * i);
            if i > 0 && i % 100 == 0 {
                rates.push(w.report_rate(at - Duration::from_micros(50)));
            }
            w.on_arrival(at, i as u32, 100 * i as u32);
        }
        // The first window starts at its first packet; the others tile: exactly 10 000.
        assert!(rates[0] >= 10_000 && rates[0] < 10_060, "{rates:?}");
        assert_eq!(&rates[1..], &[10_000, 10_000, 10_000]);
    }

    #[test]
    fn rto_starts_at_one_second_then_follows_samples() {
        let mut r = RtoEstimator::default();
        assert_eq!(r.rto(), Duration::from_secs(1));
        r.update(Duration::from_millis(300));
        assert_eq!(r.rto(), Duration::from_millis(300 + 4 * 150));
    }

    #[test]
    fn the_send_clock_takes_the_queue_out_of_an_arrival() {
        let t0 = Instant::now();
        let mut c = SendClock::new(t0);
        // The peer's clock starts 5 s after ours; packets take 20 ms, and a queue.
        let arrive = |c: &mut SendClock, sent_ms: u64, queue_ms: u64, first: bool| {
            let at = t0 + Duration::from_millis(5_000 + sent_ms + 20 + queue_ms);
            c.on_arrival(at, (sent_ms * 1000) as u32, first);
        };
        assert_eq!(c.newest_sent(), None);
        arrive(&mut c, 0, 0, true);
        let ms = |n: u64| Some(t0 + Duration::from_millis(5_000 + n));
        assert_eq!(c.newest_sent(), ms(20));
        // Sent at 100 ms behind 30 ms of queue: it left 100 ms after the first.
        arrive(&mut c, 100, 30, true);
        assert_eq!(c.newest_sent(), ms(120));
        // A repair sent later says nothing of what else was sent; an older packet moves nothing.
        arrive(&mut c, 200, 0, false);
        arrive(&mut c, 50, 0, true);
        assert_eq!(c.newest_sent(), ms(120));
    }

    #[test]
    fn the_send_clock_reads_across_the_wrap_of_32_bit_timestamps() {
        let t0 = Instant::now();
        let mut c = SendClock::new(t0);
        let base = u32::MAX - 500;
        let at = |us: u64| t0 + Duration::from_micros(us);
        c.on_arrival(at(1_000), base, true);
        // 1 000 µs later on both clocks, with no queue: the sender's clock wrapped.
        c.on_arrival(at(2_000), base.wrapping_add(1_000), true);
        assert_eq!(c.newest_sent(), Some(at(2_000)));
    }

    #[test]
    fn batched_arrivals_are_counted_over_time() {
        let mut w = ArrivalWindow::default();
        let t0 = Instant::now();
        // 40 packets at a time, every 2 ms: 20 000 packets per second.
        for batch in 0..20u64 {
            let at = t0 + Duration::from_millis(2 * batch);
            for i in 0..40 {
                w.on_arrival(at, i, 2_000 * batch as u32 + i);
            }
        }
        let rate = w.report_rate(t0 + Duration::from_millis(40));
        assert!((19_000..=21_000).contains(&rate), "{rate}");
        assert_eq!(
            w.report_rate(t0 + Duration::from_millis(50)),
            0,
            "count restarts"
        );
    }

    #[test]
    fn a_reported_estimate_is_adopted_as_is() {
        let mut r = RttEstimator::default();
        r.adopt(100_000, 50_000);
        r.adopt(10_000, 1_000);
        assert_eq!((r.rtt_us, r.var_us()), (10_000, 1_000));
    }

    #[test]
    fn rtt_smoothing() {
        let mut r = RttEstimator::default();
        r.update(20_000);
        assert_eq!(
            (r.rtt_us, r.var_us()),
            (20_000, 50_000),
            "the first sample sets the RTT"
        );
        r.update(28_000);
        assert_eq!(r.rtt_us, (20_000 * 7 + 28_000) / 8);
        assert_eq!(r.var_us(), (50_000 * 3 + 8_000) / 4);
    }
}
