//! The link emulator: one thread per direction reads packets from one TUN device, puts them
//! through the `haul-link` model and writes them into the other device when they are due.
//!
//! Super-packets (TCP TSO, UDP GSO) are judged segment by segment — every segment is queued,
//! paced and may be lost on its own — but travel as whole as they can: a run of consecutive
//! segments that all survive and arrive within [`COALESCE`] of each other is written as one
//! super-packet, so the emulator moves tens of kilobytes per system call.

use crate::packet::{SuperPacket, VNET_HDR_LEN};
use crate::tun::Tun;
use haul_link::{Fate, Link, LinkConfig, LinkStats};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Segments arriving within this span of the first one of a run travel together.
pub const COALESCE: Duration = Duration::from_micros(200);
/// Longest a direction sleeps before it looks at the stop flag again.
const IDLE: Duration = Duration::from_millis(20);
/// Real-time priority (`SCHED_FIFO`) of the direction threads, where the process may set it
/// (`CAP_SYS_NICE`, and a cgroup with a real-time budget: some refuse root). Other work on the host must not delay the emulated link: beside
/// two CPU hogs a direction thread at normal priority was held for milliseconds, which haul read
/// as a queue at 10 ms (haul 73.6–89.6 Mbit/s on a clean 100 Mbit/s link; 94.5–95.5 with the
/// threads at this priority; docs/journal/congestion.md, "Answers that say how long they
/// waited"). The threads sleep between packets, and the kernel's real-time throttling bounds
/// them even so.
const REALTIME_PRIORITY: i32 = 10;
/// Largest packet a TUN device hands over: 64 KiB of IP packet plus the vnet header.
const MAX_PACKET: usize = 65536 + VNET_HDR_LEN;

/// What one direction did, when it stopped.
#[derive(Debug, Clone, Copy, Default)]
pub struct DirectionReport {
    /// The link model's view, per segment.
    pub link: LinkStats,
    /// Packets read from the input device.
    pub packets_in: u64,
    /// IP bytes read.
    pub bytes_in: u64,
    /// Packets written.
    pub packets_out: u64,
    /// IP bytes written.
    pub bytes_out: u64,
    /// Super-packets that had to be cut (a segment lost, or spread out by the rate).
    pub cut: u64,
    /// Packets the output device refused.
    pub write_errors: u64,
    /// CPU time of this direction's thread.
    pub cpu: Duration,
    /// Whether the thread ran at real-time priority (`SCHED_FIFO`), so that other work on the
    /// host did not delay it.
    pub realtime: bool,
}

/// What the emulator did, both directions.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmulatorReport {
    /// Client to server.
    pub forward: DirectionReport,
    /// Server to client.
    pub reverse: DirectionReport,
    /// How long it ran.
    pub elapsed: Duration,
    /// Whether UDP GSO super-packets passed the devices whole.
    pub udp_offload: bool,
}

impl EmulatorReport {
    /// Whether both threads ran at real-time priority, so that other work on the host did
    /// not delay the link.
    pub fn realtime(&self) -> bool {
        self.forward.realtime && self.reverse.realtime
    }

    /// CPU seconds of both threads per second of running.
    pub fn cpu_share(&self) -> f64 {
        (self.forward.cpu + self.reverse.cpu).as_secs_f64() / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The running emulator; stop it with [`Emulator::stop`] (dropping it stops it too).
pub struct Emulator {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<DirectionReport>>,
    started: Instant,
    udp_offload: bool,
}

impl Emulator {
    /// Starts moving packets: `client` → `server` through `forward`, back through `reverse`.
    pub fn start(
        client: Tun,
        server: Tun,
        forward: LinkConfig,
        reverse: LinkConfig,
        seed: u64,
    ) -> Self {
        let udp_offload = client.udp_offload() && server.udp_offload();
        let (client, server) = (Arc::new(client), Arc::new(server));
        let stop = Arc::new(AtomicBool::new(false));
        let now = Instant::now();
        let plan = [
            (client.clone(), server.clone(), forward, seed),
            (server, client, reverse, seed ^ 0x9e37_79b9_7f4a_7c15),
        ];
        let threads = plan
            .into_iter()
            .map(|(input, output, config, seed)| {
                let direction = Direction {
                    input,
                    output,
                    link: Link::new(config, now),
                    rng: SmallRng::seed_from_u64(seed),
                    line: VecDeque::new(),
                    scratch: vec![0; MAX_PACKET],
                    report: DirectionReport::default(),
                };
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || direction.run(&stop))
            })
            .collect();
        Self {
            stop,
            threads,
            started: now,
            udp_offload,
        }
    }

    /// Stops both directions (packets still in flight are dropped) and reports.
    pub fn stop(mut self) -> EmulatorReport {
        self.halt()
    }

    fn halt(&mut self) -> EmulatorReport {
        self.stop.store(true, Relaxed);
        let mut reports = self.threads.drain(..).map(|t| t.join().unwrap_or_default());
        EmulatorReport {
            forward: reports.next().unwrap_or_default(),
            reverse: reports.next().unwrap_or_default(),
            elapsed: self.started.elapsed(),
            udp_offload: self.udp_offload,
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.halt();
    }
}

/// A run of consecutive surviving segments of one super-packet.
#[derive(Clone, Copy)]
struct Run {
    first: usize,
    count: usize,
    first_at: Instant,
    last_at: Instant,
}

/// One direction: input device → link model → delay line → output device.
struct Direction {
    input: Arc<Tun>,
    output: Arc<Tun>,
    link: Link,
    rng: SmallRng,
    /// Packets in flight, in arrival order.
    line: VecDeque<(Instant, Vec<u8>)>,
    scratch: Vec<u8>,
    report: DirectionReport,
}

impl Direction {
    fn run(mut self, stop: &AtomicBool) -> DirectionReport {
        // Timers this thread sets should fire when asked, not up to 50 µs later.
        // SAFETY: PR_SET_TIMERSLACK takes one integer argument.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        self.report.realtime = run_in_real_time();
        while !stop.load(Relaxed) {
            let now = Instant::now();
            self.deliver_due(now);
            let wait = self
                .line
                .front()
                .map_or(IDLE, |(at, _)| at.saturating_duration_since(now).min(IDLE));
            if !wait.is_zero() {
                self.input.wait_readable(wait);
            }
            for _ in 0..256 {
                match self.input.recv(&mut self.scratch) {
                    Ok(Some(n)) => self.offer(Instant::now(), n),
                    Ok(None) => break,
                    Err(e) => {
                        tracing::warn!("reading {}: {e}", self.input.name());
                        break;
                    }
                }
            }
        }
        self.report.link = self.link.stats();
        self.report.cpu = thread_cpu();
        self.report
    }

    fn deliver_due(&mut self, now: Instant) {
        while self.line.front().is_some_and(|(at, _)| *at <= now) {
            let Some((_, packet)) = self.line.pop_front() else {
                break;
            };
            match self.output.send(&packet) {
                Ok(()) => {
                    let bytes = (packet.len() - VNET_HDR_LEN) as u64;
                    self.report.packets_out += 1;
                    self.report.bytes_out += bytes;
                }
                Err(e) => {
                    self.report.write_errors += 1;
                    tracing::debug!("writing to {}: {e}", self.output.name());
                }
            }
        }
    }

    fn schedule(&mut self, at: Instant, packet: Vec<u8>) {
        if self.line.back().is_none_or(|(last, _)| *last <= at) {
            self.line.push_back((at, packet));
        } else {
            let index = self.line.partition_point(|(t, _)| *t <= at);
            self.line.insert(index, (at, packet));
        }
    }

    /// Judges the packet of `len` bytes in the scratch buffer and schedules what survives.
    fn offer(&mut self, now: Instant, len: usize) {
        if len <= VNET_HDR_LEN {
            return;
        }
        let bytes = (len - VNET_HDR_LEN) as u64;
        self.report.packets_in += 1;
        self.report.bytes_in += bytes;
        let scratch = std::mem::take(&mut self.scratch);
        match SuperPacket::parse(&scratch[..len]) {
            Ok(Some(sp)) if sp.segments() > 1 => self.offer_segments(now, &scratch[..len], sp),
            parsed => {
                if let Err(e) = parsed {
                    tracing::debug!("forwarding a packet whole: {e}");
                }
                if let Fate::Deliver(d) = self.link.offer(now, len - VNET_HDR_LEN, &mut self.rng) {
                    if d.duplicate {
                        self.schedule(d.at + Duration::from_micros(1), scratch[..len].to_vec());
                    }
                    self.schedule(d.at, scratch[..len].to_vec());
                }
            }
        }
        self.scratch = scratch;
    }

    fn offer_segments(&mut self, now: Instant, packet: &[u8], sp: SuperPacket) {
        let mut run: Option<Run> = None;
        for i in 0..sp.segments() {
            let fate = self.link.offer(now, sp.segment_wire_len(i), &mut self.rng);
            match fate {
                Fate::Deliver(d) if !d.duplicate && !d.reordered => {
                    if let Some(r) = run.as_mut() {
                        if d.at.saturating_duration_since(r.first_at) <= COALESCE {
                            r.count += 1;
                            r.last_at = d.at;
                            continue;
                        }
                    }
                    self.flush(packet, &sp, run.take());
                    run = Some(Run {
                        first: i,
                        count: 1,
                        first_at: d.at,
                        last_at: d.at,
                    });
                }
                Fate::Deliver(d) => {
                    self.flush(packet, &sp, run.take());
                    let single = Run {
                        first: i,
                        count: 1,
                        first_at: d.at,
                        last_at: d.at,
                    };
                    if d.duplicate {
                        self.flush(packet, &sp, Some(single));
                    }
                    self.flush(packet, &sp, Some(single));
                }
                Fate::Lost | Fate::QueueFull => self.flush(packet, &sp, run.take()),
            }
        }
        if !run.is_some_and(|r| r.first == 0 && r.count == sp.segments()) {
            self.report.cut += 1;
        }
        self.flush(packet, &sp, run);
    }

    /// Schedules a run as a packet of its own (the original bytes when it is the whole packet).
    fn flush(&mut self, packet: &[u8], sp: &SuperPacket, run: Option<Run>) {
        let Some(run) = run else { return };
        if run.first == 0 && run.count == sp.segments() {
            self.schedule(run.last_at, packet.to_vec());
            return;
        }
        let mut bytes = Vec::new();
        sp.write_run(packet, run.first, run.count, &mut bytes);
        self.schedule(run.last_at, bytes);
    }
}

/// Puts the calling thread at [`REALTIME_PRIORITY`]; false where the process may not.
fn run_in_real_time() -> bool {
    let param = libc::sched_param {
        sched_priority: REALTIME_PRIORITY,
    };
    // SAFETY: on Linux pid 0 names the calling thread; `param` is a valid sched_param.
    let set = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } == 0;
    if !set {
        tracing::debug!(
            "emulator thread at normal priority: {}",
            std::io::Error::last_os_error()
        );
    }
    set
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
