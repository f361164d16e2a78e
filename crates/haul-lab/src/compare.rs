//! The transport shoot-out: for every cell of a grid (rate × RTT × loss) and every transport
//! (haul, TCP CUBIC, TCP BBR, the UDT4 reference), build a fresh lab, run one timed transfer
//! from the client to the server, and record the receiver's goodput and the emulator's CPU use.

use crate::{Lab, LabConfig, LabError, LinkConfig, Side, SERVER_ADDR};
use serde::Serialize;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A transport to compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// haul (`haul perf`), in the plain `udt4` dialect.
    Haul,
    /// haul in its encrypted `haul` dialect, as `haul copy` uses it (`haul perf --key-file`).
    #[serde(rename = "haul-enc")]
    HaulEncrypted,
    /// Kernel TCP with CUBIC.
    Cubic,
    /// Kernel TCP with BBR.
    Bbr,
    /// The UDT4 reference library (Debian's libudt).
    Udt4,
}

impl Transport {
    /// Every transport, in table order.
    pub const ALL: [Transport; 5] = [
        Self::Haul,
        Self::Cubic,
        Self::Bbr,
        Self::Udt4,
        Self::HaulEncrypted,
    ];

    /// The name used in tables and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Haul => "haul",
            Self::HaulEncrypted => "haul-enc",
            Self::Cubic => "cubic",
            Self::Bbr => "bbr",
            Self::Udt4 => "udt4",
        }
    }

    /// Parses a name from [`Transport::name`].
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == s.trim())
    }

    /// Payload bytes per 1500-byte packet: TCP with timestamps carries 1448; haul and UDT4 carry
    /// 1456 (16-byte UDT header, 8 UDP, 20 IP), encrypted haul 1432 (packet number and tag).
    fn payload_fraction(self) -> f64 {
        match self {
            Self::Cubic | Self::Bbr => 1448.0 / 1500.0,
            Self::Haul | Self::Udt4 => 1456.0 / 1500.0,
            Self::HaulEncrypted => 1432.0 / 1500.0,
        }
    }
}

/// How big the bottleneck queue is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QueueSize {
    /// A multiple of the bandwidth-delay product.
    Bdp(f64),
    /// This long at the link rate.
    Time(Duration),
    /// This many bytes.
    Bytes(usize),
}

impl QueueSize {
    /// Bytes for a link of `rate_bps` and `rtt`; never below 64 KiB (one super-packet).
    pub fn bytes(self, rate_bps: u64, rtt: Duration) -> usize {
        let bytes = match self {
            Self::Bdp(k) => (crate::bdp_bytes(rate_bps, rtt) as f64 * k) as usize,
            Self::Time(t) => crate::bdp_bytes(rate_bps, t),
            Self::Bytes(b) => b,
        };
        bytes.max(64 << 10)
    }
}

/// The grid to run.
#[derive(Debug, Clone)]
pub struct Grid {
    /// Link rates, bits per second.
    pub rates: Vec<u64>,
    /// Round-trip times added by the link.
    pub rtts: Vec<Duration>,
    /// Random loss rates, both directions.
    pub losses: Vec<f64>,
    /// Transports to run in each cell.
    pub transports: Vec<Transport>,
    /// Length of each transfer's measured part.
    pub duration: Duration,
    /// Seconds at the start of each transfer left out of its goodput (start-up); the transfer
    /// runs this much longer. haul and TCP only: the UDT4 peer measures whole transfers.
    pub omit: u32,
    /// Bottleneck queue.
    pub queue: QueueSize,
    /// Transfers per transport and cell (at least 1), the transports taking turns.
    pub repeat: usize,
}

impl Grid {
    /// How many transfers the grid runs.
    pub fn runs(&self) -> usize {
        self.rates.len()
            * self.rtts.len()
            * self.losses.len()
            * self.transports.len()
            * self.repeat.max(1)
    }
}

/// The programs a comparison runs.
#[derive(Debug, Clone)]
pub struct Tools {
    /// The `haul` binary.
    pub haul: PathBuf,
    /// `iperf3`, for TCP (else `haul perf --tcp`).
    pub iperf3: Option<PathBuf>,
    /// The UDT4 reference peer, when it could be built.
    pub udt_peer: Result<PathBuf, String>,
}

impl Tools {
    /// Finds `iperf3` on the PATH and builds the UDT4 peer (once, cached in the temp directory)
    /// where g++ and Debian's libudt-dev are installed.
    pub fn detect(haul: PathBuf) -> Self {
        Self {
            haul,
            iperf3: find_on_path("iperf3"),
            udt_peer: build_udt_peer(),
        }
    }
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
    })
}

const UDT_PEER_SOURCE: &str = include_str!("../../../interop/udt_peer.cpp");

fn build_udt_peer() -> Result<PathBuf, String> {
    use std::hash::{Hash, Hasher};
    if !Path::new("/usr/include/udt/udt.h").exists() {
        return Err("the UDT4 reference needs Debian's libudt-dev".into());
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    UDT_PEER_SOURCE.hash(&mut hasher);
    let dir = std::env::temp_dir().join(format!("haul-udt-peer-{:016x}", hasher.finish()));
    let binary = dir.join("udt_peer");
    if binary.exists() {
        return Ok(binary);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let source = dir.join("udt_peer.cpp");
    std::fs::write(&source, UDT_PEER_SOURCE).map_err(|e| format!("{}: {e}", source.display()))?;
    let out = Command::new("g++")
        .args(["-O2", "-std=c++17", "-o"])
        .arg(&binary)
        .arg(&source)
        .args(["-ludt", "-lpthread"])
        .output()
        .map_err(|e| format!("g++: {e} (install g++)"))?;
    if !out.status.success() {
        return Err(format!(
            "building the UDT4 peer failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(binary)
}

/// One transfer's result.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// Which transport.
    pub transport: Transport,
    /// Which of the cell's repeated transfers (1-based).
    pub run: usize,
    /// Link rate, bits per second.
    pub rate_bps: u64,
    /// Added round-trip time, milliseconds.
    pub rtt_ms: f64,
    /// Random loss rate per direction.
    pub loss: f64,
    /// Receiver goodput, bits per second (0 when the run failed).
    pub goodput_bps: f64,
    /// Goodput ÷ (rate × payload fraction × (1 − loss)): the share of what the link can deliver.
    pub efficiency: f64,
    /// Retransmissions the sender reported, where it reports them.
    pub retransmits: Option<u64>,
    /// Start-up: seconds from the receiver's start (the connection is up) until the receiver's
    /// goodput over the last round trip (whole [`STARTUP_INTERVAL`]s, at least one) first
    /// reached [`STARTUP_SHARE`] of what the link can deliver; `None` where the transport gives
    /// no intervals (UDT4) or it never did.
    pub startup_s: Option<f64>,
    /// Start-up timed as [`RunResult::startup_s`] on what arrived at the receiver instead of
    /// what it read: when the link carried the share (haul only). Under loss in-order delivery
    /// waits a round trip or three whenever a retransmission is lost too, and comes in bursts.
    pub link_startup_s: Option<f64>,
    /// The sender's smoothed RTT in the steady state (the mean of its samples every
    /// [`STARTUP_INTERVAL`] after the omitted seconds), milliseconds; `None` where the
    /// transport reports no RTT (UDT4).
    pub steady_rtt_ms: Option<f64>,
    /// How much longer the steady-state RTT is than the link's: `steady_rtt_ms ÷ rtt_ms − 1`
    /// (issue 6: at most 0.1 with a 1-BDP queue). It includes the emulator's own delay.
    pub rtt_inflation: Option<f64>,
    /// The emulator's CPU use, in cores, during the run.
    pub emulator_cpu: f64,
    /// Why the run failed or was skipped.
    pub error: Option<String>,
}

/// Runs the grid; `on_result` sees each result as it comes (for progress).
pub fn run(
    grid: &Grid,
    tools: &Tools,
    mut on_result: impl FnMut(usize, &RunResult),
) -> Result<Vec<RunResult>, LabError> {
    let mut results = Vec::with_capacity(grid.runs());
    for &rate in &grid.rates {
        for &rtt in &grid.rtts {
            for &loss in &grid.losses {
                // Side by side: every transport once, then again, so that a disturbance on
                // this shared machine hits one run of each rather than all runs of one.
                for run in 1..=grid.repeat.max(1) {
                    for &transport in &grid.transports {
                        let link = LinkConfig {
                            loss,
                            ..LinkConfig {
                                queue_bytes: grid.queue.bytes(rate, rtt),
                                ..LinkConfig::wan(rate, rtt)
                            }
                        };
                        let mut config = LabConfig::symmetric(link);
                        config.seed = results.len() as u64 + 1;
                        let mut result = run_one(&config, transport, grid, tools)?;
                        result.run = run;
                        results.push(result);
                        on_result(results.len(), &results[results.len() - 1]);
                    }
                }
            }
        }
    }
    Ok(results)
}

/// What a transfer measured.
struct Measured {
    goodput_bps: f64,
    retransmits: Option<u64>,
    /// The receiver's goodput per interval: (seconds, bits per second), omitted ones included.
    received: Vec<(f64, f64)>,
    /// The same of what arrived, read or not (haul only; empty elsewhere).
    arrived: Vec<(f64, f64)>,
    /// The sender's smoothed RTT, seconds, sampled at the end of each interval after the
    /// omitted seconds.
    sender_rtts: Vec<f64>,
}

/// The mean of the samples; `None` when there are none.
fn mean(samples: &[f64]) -> Option<f64> {
    (!samples.is_empty()).then(|| samples.iter().sum::<f64>() / samples.len() as f64)
}

/// The receiving side reports its goodput this often, for the start-up time.
pub const STARTUP_INTERVAL: f64 = 0.1;
/// Start-up ends when the goodput over a round trip reaches this share of what the link can
/// deliver (issue 6: 90 % of the link within 1 s + 5 RTT).
pub const STARTUP_SHARE: f64 = 0.9;

/// Seconds from the first interval's start to the end of the first span of at least `window`
/// seconds (whole intervals, the latest ones) whose goodput reaches `share` of `deliverable`
/// bits per second. The window is a round trip (at least one interval), as in the simulator's
/// start-up test: in-order delivery comes in bursts when a hole fills, and one interval of such
/// a burst can exceed the link long before the link is full.
fn startup(received: &[(f64, f64)], deliverable: f64, share: f64, window: f64) -> Option<f64> {
    let mut elapsed = 0.0;
    (0..received.len()).find_map(|last| {
        elapsed += received[last].0;
        let (mut seconds, mut bits) = (0.0, 0.0);
        for &(s, bps) in received[..=last].iter().rev() {
            seconds += s;
            bits += s * bps;
            if seconds >= window - 1e-9 {
                return (bits >= share * deliverable * seconds).then_some(elapsed);
            }
        }
        None
    })
}

fn run_one(
    config: &LabConfig,
    transport: Transport,
    grid: &Grid,
    tools: &Tools,
) -> Result<RunResult, LabError> {
    let lab = Lab::start(config)?;
    let measured = measure(&lab, transport, grid.duration, grid.omit, tools);
    let report = lab.stop();
    if !report.realtime() {
        static WARNED: std::sync::Once = std::sync::Once::new();
        WARNED.call_once(|| {
            tracing::warn!(
                "the emulator ran at normal priority (real-time not permitted here): other work \
                 on this host can delay the link, which reads as a queue"
            )
        });
    }
    let link = &config.forward;
    let deliverable = link.rate_bps as f64 * transport.payload_fraction() * (1.0 - link.loss);
    let rtt = (link.delay * 2).as_secs_f64();
    let window = rtt.max(STARTUP_INTERVAL);
    let startup_on =
        |received: &[(f64, f64)]| startup(received, deliverable, STARTUP_SHARE, window);
    let (goodput_bps, retransmits, startup_s, link_startup_s, steady_rtt, error) = match measured {
        Ok(m) => (
            m.goodput_bps,
            m.retransmits,
            startup_on(&m.received),
            startup_on(&m.arrived),
            mean(&m.sender_rtts),
            None,
        ),
        Err(e) => (0.0, None, None, None, None, Some(e)),
    };
    Ok(RunResult {
        transport,
        run: 1,
        rate_bps: link.rate_bps,
        rtt_ms: rtt * 1e3,
        loss: link.loss,
        goodput_bps,
        efficiency: goodput_bps / deliverable.max(1.0),
        retransmits,
        startup_s,
        link_startup_s,
        steady_rtt_ms: steady_rtt.map(|s| s * 1e3),
        rtt_inflation: steady_rtt.filter(|_| rtt > 0.0).map(|s| s / rtt - 1.0),
        emulator_cpu: report.cpu_share(),
        error,
    })
}

/// Waits this long for a server to start listening.
const SERVER_START: Duration = Duration::from_millis(500);
/// Extra time a transfer may take beyond its length before it is killed: the senders close
/// with data still buffered (the UDT4 reference up to ~5 MB, see interop/udt_peer.cpp), and a
/// sender whose rate collapsed drains it slowly. 30 s was too little for the reference pair
/// at 100 Mbit/s, 10 ms, 1 % on a day the hypervisor stole a third of the CPU.
const GRACE: Duration = Duration::from_secs(60);

fn measure(
    lab: &Lab,
    transport: Transport,
    duration: Duration,
    omit: u32,
    tools: &Tools,
) -> Result<Measured, String> {
    let secs = format!("{:.1}", duration.as_secs_f64());
    let omitted = omit.to_string();
    let server = SERVER_ADDR.to_string();
    // The whole transfer, omitted seconds included.
    let length = duration + Duration::from_secs(omit.into());
    match transport {
        Transport::Haul => haul_perf(
            lab,
            tools,
            length,
            &[],
            &["--time", &secs, "--omit", &omitted],
        ),
        Transport::HaulEncrypted => {
            let key = KeyFile::new(&tools.haul)?;
            let key_file = ["--key-file", key.path()];
            let options = [&["--time", &secs, "--omit", &omitted][..], &key_file].concat();
            haul_perf(lab, tools, length, &key_file, &options)
        }
        Transport::Cubic | Transport::Bbr => {
            let cc = transport.name();
            if let Some(iperf3) = &tools.iperf3 {
                let every = STARTUP_INTERVAL.to_string();
                let (json, server_json) = client_server(
                    lab.command(Side::Server, iperf3)
                        .args(["-s", "-1", "-J", "-i", &every]),
                    lab.command(Side::Client, iperf3).args([
                        "-J", "-i", &every, "-t", &secs, "-O", &omitted, "-C", cc, "-c", &server,
                    ]),
                    length,
                )?;
                let v: serde_json::Value = serde_json::from_str(&json)
                    .map_err(|e| format!("iperf3 printed no JSON ({e})"))?;
                if let Some(error) = v["error"].as_str() {
                    return Err(format!("iperf3: {error}"));
                }
                let server: serde_json::Value =
                    serde_json::from_str(&server_json).unwrap_or_default();
                Ok(Measured {
                    goodput_bps: v["end"]["sum_received"]["bits_per_second"]
                        .as_f64()
                        .ok_or("iperf3 reported no receiver rate")?,
                    retransmits: v["end"]["sum_sent"]["retransmits"].as_u64(),
                    received: intervals(&server, |i| &i["sum"]),
                    arrived: Vec::new(),
                    sender_rtts: steady_rtts(&v, iperf3_rtt),
                })
            } else {
                haul_perf(
                    lab,
                    tools,
                    length,
                    &[],
                    &["--time", &secs, "--omit", &omitted, "--tcp", "--tcp-cc", cc],
                )
            }
        }
        Transport::Udt4 if omit > 0 => {
            Err("the UDT4 peer measures whole transfers: run udt4 without --omit".to_string())
        }
        Transport::Udt4 => {
            let peer = tools.udt_peer.as_ref().map_err(Clone::clone)?;
            let (_, out) = client_server(
                lab.command(Side::Server, peer).args(["perf-recv", "9100"]),
                lab.command(Side::Client, peer)
                    .args(["perf-send", &server, "9100", &secs]),
                duration,
            )?;
            // The server prints "ready", then "BYTES SECONDS" when the sender has closed.
            let last = out.lines().last().unwrap_or("");
            let mut fields = last.split_whitespace().map(str::parse::<f64>);
            match (fields.next(), fields.next()) {
                (Some(Ok(bytes)), Some(Ok(seconds))) if seconds > 0.0 => Ok(Measured {
                    goodput_bps: bytes * 8.0 / seconds,
                    retransmits: None,
                    received: Vec::new(),
                    arrived: Vec::new(),
                    sender_rtts: Vec::new(),
                }),
                _ => Err(format!("the UDT4 peer printed `{}`", out.trim())),
            }
        }
    }
}

/// One `haul perf` test from client to server, `length` long in all; `server_options` go to
/// the server, `options` to the client.
fn haul_perf(
    lab: &Lab,
    tools: &Tools,
    length: Duration,
    server_options: &[&str],
    options: &[&str],
) -> Result<Measured, String> {
    let server = SERVER_ADDR.to_string();
    let every = STARTUP_INTERVAL.to_string();
    let (json, server_json) = client_server(
        lab.command(Side::Server, &tools.haul)
            .args([
                "perf",
                "--server",
                "--one-off",
                "--json",
                "--interval",
                &every,
            ])
            .args(server_options),
        lab.command(Side::Client, &tools.haul)
            .args(["perf", "--json", "--interval", &every, "--client", &server])
            .args(options),
        length,
    )?;
    let v: serde_json::Value =
        serde_json::from_str(&json).map_err(|e| format!("haul perf printed no JSON ({e})"))?;
    let server: serde_json::Value = serde_json::from_str(&server_json).unwrap_or_default();
    Ok(Measured {
        goodput_bps: v["bits_per_second"]
            .as_f64()
            .ok_or("haul perf reported no rate")?,
        retransmits: v["sender"]["retransmits"].as_u64(),
        received: intervals(&server, |i| i),
        arrived: arrivals(&server),
        sender_rtts: steady_rtts(&v, haul_perf_rtt),
    })
}

/// A pre-shared key for one encrypted run, made by `haul keygen` in a private directory of the
/// temporary directory (both namespaces share the file system), removed when dropped.
struct KeyFile {
    dir: std::path::PathBuf,
    /// The key file, inside `dir` (UTF-8: it goes on command lines).
    path: String,
}

impl KeyFile {
    fn new(haul: &std::path::Path) -> Result<Self, String> {
        use std::os::unix::fs::DirBuilderExt;
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!("haul-lab-key-{}-{n}-{nanos}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        let Some(path) = dir.join("key").to_str().map(str::to_owned) else {
            return Err(format!(
                "the temporary directory {} is not UTF-8: haul-enc cannot name its key file \
                 (set TMPDIR)",
                dir.display()
            ));
        };
        // mkdir refuses a name that exists, a planted symlink included, and the directory is
        // ours alone: nobody can swap the key for another file. keygen creates it exclusively.
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let key = Self { path, dir };
        let out = std::process::Command::new(haul)
            .arg("keygen")
            .arg(&key.path)
            .output()
            .map_err(|e| format!("running `haul keygen`: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`haul keygen` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(key)
    }

    fn path(&self) -> &str {
        &self.path
    }
}

impl Drop for KeyFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether an iperf3 interval was omitted, and its (first) stream's RTT in microseconds.
fn iperf3_rtt(interval: &serde_json::Value) -> (Option<bool>, Option<f64>) {
    (
        interval["sum"]["omitted"].as_bool(),
        interval["streams"][0]["rtt"].as_f64(),
    )
}

/// Whether a `haul perf` interval was omitted, and its RTT in microseconds.
fn haul_perf_rtt(interval: &serde_json::Value) -> (Option<bool>, Option<f64>) {
    (interval["omitted"].as_bool(), interval["rtt_us"].as_f64())
}

/// The sender's RTT samples in seconds from the intervals of its JSON report (`haul perf`'s or
/// iperf3's), leaving out the omitted intervals and those without a sample; `sample` finds an
/// interval's (omitted, RTT in microseconds).
fn steady_rtts(
    report: &serde_json::Value,
    sample: impl Fn(&serde_json::Value) -> (Option<bool>, Option<f64>),
) -> Vec<f64> {
    let Some(list) = report["intervals"].as_array() else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|i| match sample(i) {
            (Some(false), Some(us)) if us > 0.0 => Some(us / 1e6),
            _ => None,
        })
        .collect()
}

/// (seconds, bits per second) of each interval in a JSON report (`haul perf`'s or iperf3's,
/// whose figures sit where `figures` finds them in each interval).
fn intervals(
    report: &serde_json::Value,
    figures: impl Fn(&serde_json::Value) -> &serde_json::Value,
) -> Vec<(f64, f64)> {
    series(report, figures, |i, _| i["bits_per_second"].as_f64())
}

/// (seconds, bits per second) of what arrived in each interval of a `haul perf` receiver's
/// JSON report (`arrived_bytes`); empty when it has none.
fn arrivals(report: &serde_json::Value) -> Vec<(f64, f64)> {
    series(
        report,
        |i| i,
        |i, seconds| Some(i["arrived_bytes"].as_u64()? as f64 * 8.0 / seconds.max(1e-9)),
    )
}

/// (seconds, `rate` of the figures and the seconds) of each interval of a JSON report, up to
/// the first without them (a gap would shift every later interval's time).
fn series(
    report: &serde_json::Value,
    figures: impl Fn(&serde_json::Value) -> &serde_json::Value,
    rate: impl Fn(&serde_json::Value, f64) -> Option<f64>,
) -> Vec<(f64, f64)> {
    let Some(list) = report["intervals"].as_array() else {
        return Vec::new();
    };
    list.iter()
        .map(figures)
        .map_while(|i| {
            let seconds = i["end"].as_f64()? - i["start"].as_f64()?;
            Some((seconds, rate(i, seconds)?))
        })
        .collect()
}

/// Starts `server`, then runs `client` to completion; returns the client's stdout and the
/// server's. Both are killed if they overrun.
fn client_server(
    server: &mut Command,
    client: &mut Command,
    duration: Duration,
) -> Result<(String, String), String> {
    let server = spawn(server)?;
    std::thread::sleep(SERVER_START);
    let deadline = Instant::now() + duration + GRACE;
    let client = spawn(client).and_then(|c| finish(c, deadline));
    let server = finish(server, deadline);
    match (client, server) {
        (Ok(c), Ok(s)) => Ok((c, s)),
        (Err(e), _) | (_, Err(e)) => Err(e),
    }
}

/// A child whose output is collected by threads, so a full pipe never stalls it.
struct Running {
    child: std::process::Child,
    name: String,
    stdout: std::thread::JoinHandle<String>,
    stderr: std::thread::JoinHandle<String>,
}

fn collect(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut s);
        }
        s
    })
}

fn spawn(command: &mut Command) -> Result<Running, String> {
    // Commands run as `ip netns exec NAMESPACE PROGRAM ARGS…`.
    let name = command
        .get_args()
        .nth(3)
        .map(|p| {
            Path::new(p)
                .file_name()
                .unwrap_or(p)
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_default();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {name}: {e}"))?;
    let stdout = collect(child.stdout.take());
    let stderr = collect(child.stderr.take());
    Ok(Running {
        child,
        name,
        stdout,
        stderr,
    })
}

/// Waits for the child until `deadline` (then kills it); its stdout, or why it failed.
fn finish(mut running: Running, deadline: Instant) -> Result<String, String> {
    let status = loop {
        match running.child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = running.child.kill();
                let _ = running.child.wait();
                break None;
            }
        }
    };
    let stdout = running.stdout.join().unwrap_or_default();
    let stderr = running.stderr.join().unwrap_or_default();
    let complaint = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_owned();
    match status {
        Some(s) if s.success() => Ok(stdout),
        Some(s) => Err(format!("{} exited with {s}: {complaint}", running.name)),
        None => Err(format!(
            "{} did not finish in time (killed): {complaint}",
            running.name
        )),
    }
}

/// The results as CSV, one line per transfer.
pub fn csv(results: &[RunResult]) -> String {
    let mut out = String::from(
        "transport,run,rate_mbit,rtt_ms,loss,goodput_mbit,efficiency,retransmits,startup_s,link_startup_s,steady_rtt_ms,rtt_inflation,emulator_cpu,error\n",
    );
    for r in results {
        out += &format!(
            "{},{},{},{},{},{:.2},{:.4},{},{},{},{},{},{:.3},{}\n",
            r.transport.name(),
            r.run,
            r.rate_bps as f64 / 1e6,
            r.rtt_ms,
            r.loss,
            r.goodput_bps / 1e6,
            r.efficiency,
            r.retransmits.map(|n| n.to_string()).unwrap_or_default(),
            r.startup_s.map(|s| format!("{s:.2}")).unwrap_or_default(),
            r.link_startup_s
                .map(|s| format!("{s:.2}"))
                .unwrap_or_default(),
            r.steady_rtt_ms
                .map(|s| format!("{s:.2}"))
                .unwrap_or_default(),
            r.rtt_inflation
                .map(|s| format!("{s:.4}"))
                .unwrap_or_default(),
            r.emulator_cpu,
            r.error.as_deref().unwrap_or("").replace([',', '\n'], ";"),
        );
    }
    out
}

/// One result per transport and cell: the run with the median goodput among those that
/// succeeded (the lower of the two middle runs for an even count: always a measured run, never
/// an average), or the first run where none did. Order of first appearance.
pub fn medians(results: &[RunResult]) -> Vec<RunResult> {
    let same = |a: &RunResult, b: &RunResult| {
        a.transport == b.transport
            && a.rate_bps == b.rate_bps
            && a.rtt_ms == b.rtt_ms
            && a.loss == b.loss
    };
    let mut out: Vec<RunResult> = Vec::new();
    for r in results {
        if out.iter().any(|o| same(o, r)) {
            continue;
        }
        let cell: Vec<&RunResult> = results.iter().filter(|o| same(o, r)).collect();
        let mut ok: Vec<&RunResult> = cell.iter().copied().filter(|o| o.error.is_none()).collect();
        ok.sort_by(|a, b| a.goodput_bps.total_cmp(&b.goodput_bps));
        let pick = if ok.is_empty() {
            cell[0]
        } else {
            ok[(ok.len() - 1) / 2]
        };
        out.push(pick.clone());
    }
    out
}

/// "Which transport wins": per loss rate, a Markdown table of link rate × RTT naming the
/// transport with the highest goodput, its goodput, and its lead over the runner-up.
pub fn wins_table(results: &[RunResult]) -> String {
    let mut losses: Vec<f64> = Vec::new();
    let mut rates: Vec<u64> = Vec::new();
    let mut rtts: Vec<f64> = Vec::new();
    for r in results {
        if !losses.contains(&r.loss) {
            losses.push(r.loss);
        }
        if !rates.contains(&r.rate_bps) {
            rates.push(r.rate_bps);
        }
        if !rtts.contains(&r.rtt_ms) {
            rtts.push(r.rtt_ms);
        }
    }
    let mut out = String::new();
    for loss in losses {
        out += &format!(
            "\nRandom loss {} (goodput in Mbit/s; lead over the runner-up)\n\n| link |",
            crate::plot::format_percent(loss)
        );
        for rtt in &rtts {
            out += &format!(" {rtt} ms |");
        }
        out += "\n|---|";
        out += &"---|".repeat(rtts.len());
        out += "\n";
        for rate in &rates {
            out += &format!("| {} Mbit/s |", *rate as f64 / 1e6);
            for rtt in &rtts {
                let mut cell: Vec<&RunResult> = results
                    .iter()
                    .filter(|r| r.loss == loss && r.rate_bps == *rate && r.rtt_ms == *rtt)
                    .filter(|r| r.error.is_none())
                    .collect();
                cell.sort_by(|a, b| b.goodput_bps.total_cmp(&a.goodput_bps));
                out += &match cell.as_slice() {
                    [] => " – |".to_owned(),
                    [only] => format!(" {} {:.1} |", only.transport.name(), only.goodput_bps / 1e6),
                    [first, second, ..] => format!(
                        " {} {:.1} ({:.2}× {}) |",
                        first.transport.name(),
                        first.goodput_bps / 1e6,
                        first.goodput_bps / second.goodput_bps.max(1.0),
                        second.transport.name()
                    ),
                };
            }
            out += "\n";
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(transport: Transport, run: usize, mbit: f64, error: Option<&str>) -> RunResult {
        RunResult {
            transport,
            run,
            rate_bps: 100_000_000,
            rtt_ms: 10.0,
            loss: 0.0,
            goodput_bps: mbit * 1e6,
            efficiency: mbit / 100.0,
            retransmits: None,
            startup_s: None,
            link_startup_s: None,
            steady_rtt_ms: None,
            rtt_inflation: None,
            emulator_cpu: 0.1,
            error: error.map(str::to_owned),
        }
    }

    #[test]
    fn medians_pick_a_measured_run_per_transport_and_skip_failures() {
        let results = [
            result(Transport::Haul, 1, 90.0, None),
            result(Transport::Bbr, 1, 0.0, Some("killed")),
            result(Transport::Haul, 2, 30.0, None),
            result(Transport::Bbr, 2, 95.0, None),
            result(Transport::Haul, 3, 80.0, None),
            result(Transport::Bbr, 3, 93.0, None),
        ];
        let picked = medians(&results);
        assert_eq!(picked.len(), 2);
        assert_eq!((picked[0].transport, picked[0].run), (Transport::Haul, 3));
        // Two successful runs: the lower middle one, not an average.
        assert_eq!((picked[1].transport, picked[1].run), (Transport::Bbr, 3));
        let failed = [result(Transport::Cubic, 1, 0.0, Some("no iperf3"))];
        assert_eq!(medians(&failed)[0].error.as_deref(), Some("no iperf3"));
    }

    #[test]
    fn startup_ends_with_the_first_round_trip_at_the_share_counting_every_interval() {
        // iperf3 restarts its clock after the omitted intervals: the durations are summed.
        let received = [(0.1, 10e6), (0.1, 85e6), (0.1, 95e6), (0.1, 96e6)];
        let at = startup(&received, 100e6, 0.9, 0.1).unwrap();
        assert!((at - 0.3).abs() < 1e-9, "{at}");
        assert_eq!(startup(&received[..2], 100e6, 0.9, 0.1), None);
        // Over a 0.3 s round trip a burst of 0.1 s (a hole filled) is not a full link.
        let bursty = [
            (0.1, 0.0),
            (0.1, 150e6),
            (0.1, 0.0),
            (0.1, 95e6),
            (0.1, 95e6),
            (0.1, 95e6),
        ];
        let at = startup(&bursty, 100e6, 0.9, 0.3).unwrap();
        assert!((at - 0.6).abs() < 1e-9, "{at}");
        assert!((startup(&bursty, 100e6, 0.9, 0.1).unwrap() - 0.2).abs() < 1e-9);
        let iperf = serde_json::json!({"intervals": [
            {"sum": {"start": 0.0, "end": 0.1, "bits_per_second": 1e6}},
            {"sum": {"start": 0.0, "end": 0.1, "bits_per_second": 2e6}},
        ]});
        assert_eq!(
            intervals(&iperf, |i| &i["sum"]),
            vec![(0.1, 1e6), (0.1, 2e6)]
        );
        assert!(intervals(&serde_json::Value::Null, |i| i).is_empty());
    }

    #[test]
    fn steady_rtts_leave_out_omitted_intervals_and_missing_samples() {
        let iperf = serde_json::json!({"intervals": [
            {"sum": {"omitted": true}, "streams": [{"rtt": 90_000}]},
            {"sum": {"omitted": false}, "streams": [{"rtt": 11_000}]},
            {"sum": {"omitted": false}, "streams": [{"rtt": 13_000}]},
            {"sum": {"omitted": false}, "streams": []},
        ]});
        assert_eq!(steady_rtts(&iperf, iperf3_rtt), vec![0.011, 0.013]);
        let haul = serde_json::json!({"intervals": [
            {"omitted": true, "rtt_us": 50_000},
            {"omitted": false, "rtt_us": 0},
            {"omitted": false, "rtt_us": 12_000},
        ]});
        assert_eq!(steady_rtts(&haul, haul_perf_rtt), vec![0.012]);
        assert!(steady_rtts(&serde_json::Value::Null, haul_perf_rtt).is_empty());
        assert_eq!(mean(&[0.011, 0.013]), Some(0.012));
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn arrivals_are_read_from_a_haul_receiver_s_intervals_and_time_start_up_on_the_link() {
        // In-order delivery waits behind a lost retransmission, then releases it all at once;
        // what arrived shows the link full from the second interval.
        let report = serde_json::json!({"intervals": [
            {"start": 0.0, "end": 0.1, "bits_per_second": 20e6, "arrived_bytes": 250_000},
            {"start": 0.1, "end": 0.2, "bits_per_second": 0.0, "arrived_bytes": 1_187_500},
            {"start": 0.2, "end": 0.3, "bits_per_second": 0.0, "arrived_bytes": 1_187_500},
            {"start": 0.3, "end": 0.4, "bits_per_second": 190e6, "arrived_bytes": 1_187_500},
        ]});
        let arrived = arrivals(&report);
        assert_eq!(arrived.len(), 4);
        assert!((arrived[1].1 - 95e6).abs() < 1.0, "{arrived:?}");
        let read = intervals(&report, |i| i);
        let at = |received: &[(f64, f64)]| startup(received, 100e6, 0.9, 0.2).unwrap();
        assert!((at(&arrived) - 0.3).abs() < 1e-9);
        assert!((at(&read) - 0.4).abs() < 1e-9);
        // TCP's intervals and a sender's have no arrivals.
        let tcp =
            serde_json::json!({"intervals": [{"start": 0.0, "end": 0.1, "bits_per_second": 1e6}]});
        assert!(arrivals(&tcp).is_empty());
    }
}
