//! Interval lines while a test runs, and the summary both ends print.

use super::control::{Params, SideReport, Transport};
use super::data::{Probe, Snapshot};
use super::Measured;
use crate::sys::cpu_seconds;
use crate::units;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// One interval of a test (a second unless `--interval` says otherwise), as this side saw it.
#[derive(Debug, Clone, Serialize)]
pub struct Interval {
    /// Seconds since the start, at the beginning of the interval.
    pub start: f64,
    /// Seconds since the start, at the end.
    pub end: f64,
    /// Bytes moved in the interval.
    pub bytes: u64,
    /// Bits per second over the interval.
    pub bits_per_second: f64,
    /// Payload bytes that arrived in the interval on a haul receiver, read or held behind a
    /// lost packet: what crossed the link. Under loss in-order delivery comes in bursts, a
    /// round trip or three apart, and `bytes` with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrived_bytes: Option<u64>,
    /// Retransmissions in the interval (sender side).
    pub retransmits: u64,
    /// RTT at the end of the interval, microseconds (first connection).
    pub rtt_us: u64,
    /// Congestion window at the end (sum over connections): packets (haul), segments (TCP).
    pub window: u64,
    /// haul's pacing rate (sum), bits per second.
    pub pacing_bps: f64,
    /// Within the first `--omit` seconds, left out of the summary.
    pub omitted: bool,
}

/// Where the summary starts counting: the first interval boundary at or after the `--omit`
/// seconds (the test's start without them).
#[derive(Debug, Clone)]
pub struct Mark {
    /// When.
    pub at: Instant,
    /// Bytes moved before it, by each connection (see [`counted_at_mark`]).
    pub streams: Vec<u64>,
    /// Retransmissions before it.
    pub retransmits: u64,
    /// CPU seconds this process had used by then.
    pub cpu_seconds: f64,
}

/// Bytes moved so far by each connection of a test, shared by its data threads and the reporter.
pub struct Counters(Vec<AtomicU64>);

impl Counters {
    /// Counters at zero for `n` connections.
    pub fn new(n: usize) -> Self {
        Self((0..n).map(|_| AtomicU64::new(0)).collect())
    }

    /// Counts `n` bytes moved by connection `i`.
    pub fn add(&self, i: usize, n: u64) {
        self.0[i].fetch_add(n, Ordering::Relaxed);
    }

    /// Each connection's bytes so far.
    pub fn each(&self) -> Vec<u64> {
        self.0.iter().map(|c| c.load(Ordering::Relaxed)).collect()
    }

    /// All connections' bytes so far.
    pub fn total(&self) -> u64 {
        self.0.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }
}

/// Prints an interval line each interval from the shared byte counters and the probes.
pub struct Reporter {
    handle: JoinHandle<Seen>,
}

/// What the reporter saw, when the test is over.
#[derive(Default)]
pub struct Seen {
    /// One per interval.
    pub intervals: Vec<Interval>,
    /// The last figures of the connections.
    pub last: Snapshot,
    /// The end of the omitted seconds; `None` when the test ended before it.
    pub mark: Option<Mark>,
    /// The end of a timed test's measured seconds, counted as the mark is; `None` when the
    /// test ended before it, or was not timed.
    pub span_end: Option<Mark>,
}

/// Which part of a test the summary measures.
pub struct Span {
    /// Left out at the start (`--omit`).
    pub omit: Duration,
    /// How long the measured part lasts, in a timed test (`--time`; `None` with `--bytes`).
    pub length: Option<Duration>,
}

/// Each connection's bytes at either end of the measured seconds: what it had read, or on a
/// haul receiver what had arrived, read or not. Under loss a haul receiver holds what arrived
/// behind a hole until the hole's retransmission comes, a round trip or three later; counted
/// when read, the bytes held at the mark crossed the link before it but counted after it (four
/// flows sharing 100 Mbit/s at 300 ms read up to 111 Mbit/s between them, one flow at 5 % loss
/// 102 Mbit/s), and the holes left when the sender stops stretch the test's last second.
fn counted_at_mark(read: &[u64], arrived: impl IntoIterator<Item = Option<u64>>) -> Vec<u64> {
    let arrived = arrived.into_iter().map(|a| a.unwrap_or(0));
    read.iter().zip(arrived).map(|(&r, a)| r.max(a)).collect()
}

/// The connections' figures together: the first one's RTT, the sums of the rest (what arrived
/// only when every connection knows it).
fn total(snapshots: impl IntoIterator<Item = Snapshot>) -> Snapshot {
    let none = Snapshot {
        arrived: Some(0),
        ..Snapshot::default()
    };
    snapshots.into_iter().fold(none, |acc, s| Snapshot {
        rtt_us: if acc.rtt_us == 0 {
            s.rtt_us
        } else {
            acc.rtt_us
        },
        retransmits: acc.retransmits + s.retransmits,
        window: acc.window + s.window,
        pacing_bps: acc.pacing_bps + s.pacing_bps,
        arrived: acc.arrived.zip(s.arrived).map(|(a, b)| a + b),
    })
}

impl Reporter {
    /// Starts the reporting thread for a test that started at `start`, an interval each
    /// `every`; the summary leaves out the first `omit`.
    pub fn start(
        probes: Vec<Probe>,
        bytes: Arc<Counters>,
        done: Arc<AtomicBool>,
        start: Instant,
        every: Duration,
        span: Span,
        print: bool,
    ) -> Self {
        let omit = span.omit;
        let start_cpu = cpu_seconds();
        let handle = thread::spawn(move || {
            let mut mark = omit.is_zero().then_some(Mark {
                at: start,
                streams: vec![0; probes.len()],
                retransmits: 0,
                cpu_seconds: start_cpu,
            });
            let mut span_end = None;
            let mut intervals = Vec::new();
            let mut last = (0.0f64, 0u64, 0u64);
            let mut last_arrived = total(probes.iter().map(Probe::snapshot)).arrived;
            if print {
                eprintln!("  interval (s)     transfer        bitrate   retr       rtt     cwnd");
            }
            let mut tick = start;
            // A connection's counters vanish with it, so the final figures are the last ones
            // seen alive, sampled every 20 ms.
            let mut latest = Snapshot::default();
            while !done.load(Ordering::Relaxed) {
                tick += every;
                while Instant::now() < tick {
                    if done.load(Ordering::Relaxed) {
                        break;
                    }
                    let now = total(probes.iter().map(Probe::snapshot));
                    if now.retransmits >= latest.retransmits && now.rtt_us > 0 {
                        latest = now;
                    }
                    thread::sleep(
                        Duration::from_millis(20)
                            .min(tick.saturating_duration_since(Instant::now())),
                    );
                }
                // A test that ends within the omitted seconds has no mark.
                let reached = Instant::now() >= tick;
                let now = (Instant::now() - start).as_secs_f64();
                let moved = bytes.total();
                // One read of each connection a tick: the interval's figures and the mark's.
                let each: Vec<Snapshot> = probes.iter().map(Probe::snapshot).collect();
                let snap = total(each.iter().copied());
                let arrived_now = snap.arrived;
                let secs = (now - last.0).max(1e-9);
                let iv = Interval {
                    start: last.0,
                    end: now,
                    bytes: moved - last.1,
                    bits_per_second: (moved - last.1) as f64 * 8.0 / secs,
                    arrived_bytes: arrived_now
                        .zip(last_arrived)
                        .map(|(now, then)| now.saturating_sub(then)),
                    retransmits: snap.retransmits.saturating_sub(last.2),
                    rtt_us: snap.rtt_us,
                    window: snap.window,
                    pacing_bps: snap.pacing_bps,
                    omitted: mark.is_none(),
                };
                let mark_here = || Mark {
                    at: start + Duration::from_secs_f64(now),
                    streams: counted_at_mark(&bytes.each(), each.iter().map(|s| s.arrived)),
                    retransmits: snap.retransmits,
                    cpu_seconds: cpu_seconds(),
                };
                if reached && mark.is_none() && tick >= start + omit {
                    mark = Some(mark_here());
                } else if reached
                    && mark.is_some()
                    && span_end.is_none()
                    && span
                        .length
                        .is_some_and(|length| tick >= start + omit + length)
                {
                    span_end = Some(mark_here());
                }
                if print && iv.end - iv.start > every.as_secs_f64() / 20.0 {
                    eprintln!(
                        "  {:>5.2}-{:<5.2}  {:>12}  {:>13}  {:>5}  {:>8}  {:>7}{}",
                        iv.start,
                        iv.end,
                        units::bytes(iv.bytes),
                        units::rate(iv.bits_per_second),
                        iv.retransmits,
                        format!("{:.2} ms", iv.rtt_us as f64 / 1000.0),
                        iv.window,
                        if iv.omitted { "  (omitted)" } else { "" }
                    );
                }
                last = (now, moved, snap.retransmits);
                last_arrived = arrived_now;
                intervals.push(iv);
            }
            let last = total(probes.iter().map(Probe::snapshot));
            Seen {
                intervals,
                last: if last.rtt_us > 0 { last } else { latest },
                mark,
                span_end,
            }
        });
        Self { handle }
    }

    /// Stops the thread; returns what it saw.
    pub fn finish(self) -> Seen {
        self.handle.join().unwrap_or_default()
    }
}

/// Both sides' results, as both ends print them.
#[derive(Serialize)]
pub struct Summary {
    transport: &'static str,
    tcp_cc: Option<String>,
    parallel: u32,
    /// Seconds at the start the summary leaves out.
    omit_seconds: u32,
    /// This side's role.
    role: &'static str,
    /// Client: seconds to open the data connections, one after another (TCP's handshake takes
    /// a round trip, haul's one in its `haul` dialect and two in `udt4`'s); `null` on the server.
    connect_seconds: Option<f64>,
    sender: SideReport,
    receiver: SideReport,
    /// Receiver's bytes over the receiver's time.
    bits_per_second: f64,
    /// CPU seconds per GB (10^9 bytes) moved, each side.
    sender_cpu_seconds_per_gb: f64,
    receiver_cpu_seconds_per_gb: f64,
    /// Jain's fairness index of the receiver's connections (1: equal shares, 1/n: one took
    /// all), when there are several.
    jain_index: Option<f64>,
    intervals: Vec<Interval>,
}

impl Summary {
    /// Combines this side's measurement with the peer's report.
    pub fn new(params: &Params, sending: bool, mine: Measured, theirs: SideReport) -> Self {
        let (sender, receiver) = if sending {
            (mine.side, theirs)
        } else {
            (theirs, mine.side)
        };
        let gb = receiver.bytes as f64 / 1e9;
        let per_gb = |cpu: f64| if gb > 0.0 { cpu / gb } else { 0.0 };
        Self {
            transport: match params.transport {
                Transport::Haul => "haul",
                Transport::Tcp => "tcp",
            },
            tcp_cc: params.tcp_cc.clone(),
            parallel: params.parallel,
            omit_seconds: params.omit,
            role: if sending { "sender" } else { "receiver" },
            connect_seconds: None,
            bits_per_second: receiver.bytes as f64 * 8.0 / receiver.seconds.max(1e-9),
            sender_cpu_seconds_per_gb: per_gb(sender.cpu_seconds),
            receiver_cpu_seconds_per_gb: per_gb(receiver.cpu_seconds),
            // Only from a report of as many connections as the test has: an older peer sends
            // none, and a peer's report is not trusted to size anything.
            jain_index: (params.parallel > 1 && receiver.streams.len() == params.parallel as usize)
                .then(|| jain(&receiver.streams))
                .flatten(),
            sender,
            receiver,
            intervals: mine.intervals,
        }
    }

    /// Adds how long the client took to open its data connections.
    pub fn with_connect_time(self, took: Duration) -> Self {
        Self {
            connect_seconds: Some(took.as_secs_f64()),
            ..self
        }
    }

    /// Prints the summary (text on stdout, or one JSON document).
    pub fn print(&self, json: bool) {
        if json {
            println!("{}", serde_json::to_string(self).unwrap_or_default());
            return;
        }
        let t = match (self.transport, &self.tcp_cc) {
            ("tcp", Some(cc)) => format!("tcp/{cc}"),
            (t, _) => t.to_string(),
        };
        println!("- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -");
        if let Some(s) = self.connect_seconds {
            println!("connected in {:.1} ms", s * 1e3);
        }
        for (name, side) in [("sender", &self.sender), ("receiver", &self.receiver)] {
            println!(
                "{t:<10} {name:<8} {:>7.2} s  {:>12}  {:>13}  retr {:>6}  CPU {:>6.2} s ({:.2} s/GB)",
                side.seconds,
                units::bytes(side.bytes),
                units::rate(side.bytes as f64 * 8.0 / side.seconds.max(1e-9)),
                side.retransmits,
                side.cpu_seconds,
                if self.receiver.bytes > 0 { side.cpu_seconds / (self.receiver.bytes as f64 / 1e9) } else { 0.0 },
            );
        }
        if let Some(j) = self.jain_index {
            let seconds = self.receiver.seconds.max(1e-9);
            for (i, bytes) in self.receiver.streams.iter().enumerate() {
                println!(
                    "  connection {:<3} receiver {:>12}  {:>13}",
                    i + 1,
                    units::bytes(*bytes),
                    units::rate(*bytes as f64 * 8.0 / seconds)
                );
            }
            println!(
                "Jain's fairness index over the {} connections: {j:.3}",
                self.receiver.streams.len()
            );
        }
    }
}

/// Jain's fairness index of what each connection moved: (Σx)² ÷ (n × Σx²); `None` when none
/// moved anything.
fn jain(each: &[u64]) -> Option<f64> {
    let sum: f64 = each.iter().map(|&b| b as f64).sum();
    let squares: f64 = each.iter().map(|&b| (b as f64).powi(2)).sum();
    (squares > 0.0).then(|| sum * sum / (each.len() as f64 * squares))
}

#[cfg(test)]
mod tests {
    use super::{counted_at_mark, jain};

    #[test]
    fn a_haul_receiver_counts_at_the_mark_what_had_arrived_tcp_what_was_read() {
        // A haul receiver holding 5 bytes behind a hole; TCP, or a sender.
        let read = [10, 20];
        let arrived = [Some(15), None];
        assert_eq!(counted_at_mark(&read, arrived), [15, 20]);
    }

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_for_one_taking_all() {
        assert_eq!(jain(&[5, 5, 5, 5]), Some(1.0));
        assert_eq!(jain(&[8, 0, 0, 0]), Some(0.25));
        assert!((jain(&[3, 1]).unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(jain(&[0, 0]), None);
    }
}
