//! `haul advise`: what a path needs and which transport can fill it — the bandwidth-delay product,
//! the TCP buffers that cover it (and whether this host's do), and what TCP can expect from its
//! standard throughput models against what haul delivers.

use crate::units;
use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Serialize;
use std::net::{TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Connections timed when measuring the RTT; the smallest counts.
const RTT_PROBES: usize = 5;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Share of the deliverable rate haul reached in the lab at 10–100 ms with up to 1 % loss
/// (docs/LAB.md: 0.90–0.95 at 10 ms, 0.85–0.92 at 100 ms, start-up included).
const HAUL_EFFICIENCY: f64 = 0.9;
/// TCP advertises about half of its receive buffer as window (`tcp_adv_win_scale` = 1), so
/// buffers must hold twice the bandwidth-delay product.
const BUFFER_PER_BDP: f64 = 2.0;
/// √(3/2): the constant of the Mathis et al. loss-limited model of Reno.
const MATHIS_C: f64 = 1.224_744_9;
/// CUBIC's average window in its concave region (RFC 8312 §5.1: C = 0.4, β = 0.7).
const CUBIC_C: f64 = 1.054;

#[derive(Args)]
#[command(after_help = "\
Examples:
  haul advise --rate 1G --rtt 100ms --loss 1%
  haul advise backup.example.org --rate 10G        (RTT: TCP connect time to port 22)
  haul advise --rate 1G --rtt 30ms --json

What it prints: the bandwidth-delay product; the TCP buffer sizes that cover it and whether this
host's sysctls do (with the lines to set); what TCP can expect on the path from the standard
models — Reno/CUBIC limited by loss (Mathis et al.; RFC 8312), any TCP limited by its window —
and what haul delivers (the link rate less the loss, at the efficiency measured in docs/LAB.md);
then a verdict. These are models: measure the real path with `haul perf -c HOST` and
`haul perf -c HOST --tcp`.")]
pub struct AdviseArgs {
    /// Host to time the RTT to (TCP connect to --port, smallest of five); not needed with --rtt.
    #[arg(value_name = "HOST")]
    host: Option<String>,
    /// Port the RTT is timed against.
    #[arg(long, default_value_t = 22)]
    port: u16,
    /// Bottleneck rate of the path in bits per second (e.g. 1G, 155M).
    #[arg(long, value_parser = units::parse_rate)]
    rate: u64,
    /// Round-trip time (e.g. 100ms); measured when HOST is given instead.
    #[arg(long, value_parser = units::parse_duration)]
    rtt: Option<Duration>,
    /// Random packet loss on the path (e.g. 1% or 0.01).
    #[arg(long, value_parser = units::parse_fraction, default_value = "0")]
    loss: f64,
    /// Segment size in bytes (TCP's MSS; 1448 on a 1500-byte MTU with timestamps).
    #[arg(long, default_value_t = 1448)]
    mss: u32,
    /// Print the advice as JSON.
    #[arg(long)]
    json: bool,
}

/// This host's TCP settings that decide how far TCP can open its window.
#[derive(Debug, Clone, Serialize)]
struct HostTcp {
    /// `net.ipv4.tcp_rmem` and `tcp_wmem` maxima (what autotuning may reach), bytes.
    tcp_rmem_max: Option<u64>,
    tcp_wmem_max: Option<u64>,
    /// `net.core.rmem_max`/`wmem_max` (what an application may ask for), bytes.
    core_rmem_max: Option<u64>,
    core_wmem_max: Option<u64>,
    /// `net.ipv4.tcp_congestion_control` and what else the kernel offers.
    congestion_control: Option<String>,
    available: Vec<String>,
}

impl HostTcp {
    fn read() -> Self {
        let sysctl = |name: &str| {
            std::fs::read_to_string(format!("/proc/sys/{}", name.replace('.', "/")))
                .ok()
                .map(|s| s.trim().to_string())
        };
        let last = |name: &str| {
            sysctl(name).and_then(|v| v.split_whitespace().last()?.parse::<u64>().ok())
        };
        Self {
            tcp_rmem_max: last("net.ipv4.tcp_rmem"),
            tcp_wmem_max: last("net.ipv4.tcp_wmem"),
            core_rmem_max: last("net.core.rmem_max"),
            core_wmem_max: last("net.core.wmem_max"),
            congestion_control: sysctl("net.ipv4.tcp_congestion_control"),
            available: sysctl("net.ipv4.tcp_available_congestion_control")
                .map(|v| v.split_whitespace().map(String::from).collect())
                .unwrap_or_default(),
        }
    }
}

/// The path as given or measured.
#[derive(Debug, Clone, Copy, Serialize)]
struct Path {
    rate_bps: u64,
    rtt_ms: f64,
    loss: f64,
    mss: u32,
}

/// Everything `haul advise` concludes.
#[derive(Debug, Serialize)]
struct Advice {
    path: Path,
    rtt_measured_to: Option<String>,
    bdp_bytes: u64,
    buffer_needed_bytes: u64,
    host: HostTcp,
    /// Throughput TCP's window allows with this host's autotuning maxima, bit/s.
    tcp_window_limit_bps: Option<f64>,
    /// Loss-limited throughput of Reno and of CUBIC (models), bit/s (`None` without loss).
    reno_loss_limit_bps: Option<f64>,
    cubic_loss_limit_bps: Option<f64>,
    /// What CUBIC can expect here: the smallest of the link, its window and its loss limit.
    cubic_expected_bps: f64,
    /// The same with buffers of at least twice the BDP (tuned TCP).
    cubic_tuned_bps: f64,
    /// What haul delivers: the link less the loss, at its lab efficiency.
    haul_expected_bps: f64,
    verdict: String,
    sysctl_lines: Vec<String>,
}

/// Throughput of a loss-limited Reno flow (Mathis et al. 1997), bit/s.
fn reno_limit(p: &Path) -> Option<f64> {
    (p.loss > 0.0).then(|| p.mss as f64 * 8.0 / (p.rtt_ms / 1e3) * MATHIS_C / p.loss.sqrt())
}

/// Throughput of a loss-limited CUBIC flow (RFC 8312 §5.1: the larger of its cubic and
/// Reno-friendly average windows), bit/s.
fn cubic_limit(p: &Path) -> Option<f64> {
    let reno = reno_limit(p)?;
    let rtt = p.rtt_ms / 1e3;
    let window = CUBIC_C * rtt.powf(0.75) / p.loss.powf(0.75);
    Some((window * p.mss as f64 * 8.0 / rtt).max(reno))
}

fn advise(path: Path, host: HostTcp, measured_to: Option<String>) -> Advice {
    let rate = path.rate_bps as f64;
    let rtt = path.rtt_ms / 1e3;
    let bdp = (rate * rtt / 8.0).ceil() as u64;
    let needed = (bdp as f64 * BUFFER_PER_BDP) as u64;
    let window_limit = host
        .tcp_rmem_max
        .zip(host.tcp_wmem_max)
        .map(|(r, w)| r.min(w) as f64 / BUFFER_PER_BDP * 8.0 / rtt.max(1e-6));
    let reno = reno_limit(&path);
    let cubic = cubic_limit(&path);
    let deliverable = rate * (1.0 - path.loss);
    let cubic_tuned = cubic.map_or(deliverable, |c| c.min(deliverable));
    let cubic_expected = window_limit.map_or(cubic_tuned, |w| w.min(cubic_tuned));
    let haul_expected = deliverable * HAUL_EFFICIENCY;
    let mut lines = vec![];
    for (name, have) in [
        ("net.ipv4.tcp_rmem", host.tcp_rmem_max),
        ("net.ipv4.tcp_wmem", host.tcp_wmem_max),
    ] {
        if have.is_some_and(|h| h < needed) {
            lines.push(format!("sysctl -w {name}='4096 131072 {needed}'"));
        }
    }
    for (name, have) in [
        ("net.core.rmem_max", host.core_rmem_max),
        ("net.core.wmem_max", host.core_wmem_max),
    ] {
        if have.is_some_and(|h| h < needed) {
            lines.push(format!("sysctl -w {name}={needed}"));
        }
    }
    let bbr_available = host.available.iter().any(|c| c == "bbr");
    if bbr_available && host.congestion_control.as_deref() != Some("bbr") && path.loss > 0.0 {
        lines.push("sysctl -w net.ipv4.tcp_congestion_control=bbr".to_string());
    }
    let verdict = verdict(&path, cubic_tuned, haul_expected, bbr_available);
    Advice {
        path,
        rtt_measured_to: measured_to,
        bdp_bytes: bdp,
        buffer_needed_bytes: needed,
        host,
        tcp_window_limit_bps: window_limit,
        reno_loss_limit_bps: reno,
        cubic_loss_limit_bps: cubic,
        cubic_expected_bps: cubic_expected,
        cubic_tuned_bps: cubic_tuned,
        haul_expected_bps: haul_expected,
        verdict,
        sysctl_lines: lines,
    }
}

/// One sentence: which transport to use. The BBR part rests on docs/LAB.md's grids (haul and BBR
/// side by side): BBR 1.03–1.04× haul at 10 ms with ≤ 5 % loss, haul 1.05–14× BBR at 100 and
/// 300 ms with 1–5 % loss.
fn verdict(path: &Path, cubic: f64, haul: f64, bbr_available: bool) -> String {
    if cubic >= haul {
        return "tuned TCP is enough: the path is short or clean enough for CUBIC to fill it \
                with buffers of at least twice the BDP"
            .to_string();
    }
    let gain = haul / cubic;
    let bbr = if !bbr_available {
        "BBR is not available in this kernel"
    } else if path.rtt_ms < 50.0 {
        "TCP BBR with tuned buffers does about as well as haul on a path this short (measured \
         1.03–1.04× haul at 10 ms)"
    } else {
        "haul also beats TCP BBR on paths this long when they lose packets (measured 1.05–14× \
         at 100–300 ms with 1–5 % loss)"
    };
    format!(
        "use haul: about {gain:.0}× what tuned CUBIC can reach here ({} against {}); {bbr}",
        units::rate(haul),
        units::rate(cubic)
    )
}

/// Smallest TCP connect time to `host:port` over a few tries: about one round trip.
fn measure_rtt(host: &str, port: u16) -> Result<Duration> {
    let addr = (host, port)
        .to_socket_addrs()
        .with_context(|| format!("{host}: cannot resolve the host name"))?
        .next()
        .with_context(|| format!("{host}: the host name has no address"))?;
    let mut best: Option<Duration> = None;
    for _ in 0..RTT_PROBES {
        let start = Instant::now();
        TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT).with_context(|| {
            format!("{addr}: cannot time a TCP connection (give --rtt, or --port of a listening service)")
        })?;
        let took = start.elapsed();
        best = Some(best.map_or(took, |b| b.min(took)));
    }
    Ok(best.expect("at least one probe"))
}

/// Runs `haul advise`.
pub fn run(args: AdviseArgs) -> Result<ExitCode> {
    if args.rate == 0 {
        bail!("--rate must be above 0 (the path's bottleneck, e.g. --rate 1G)");
    }
    let (rtt, measured_to) = match (&args.rtt, &args.host) {
        (Some(rtt), _) => (*rtt, None),
        (None, Some(host)) => (
            measure_rtt(host, args.port)?,
            Some(format!("{host}:{}", args.port)),
        ),
        (None, None) => bail!("give the path's RTT (--rtt 100ms) or a HOST to measure it to"),
    };
    if rtt.is_zero() {
        bail!("--rtt must be above 0 (the path's round-trip time, e.g. --rtt 10ms)");
    }
    if args.loss >= 1.0 {
        bail!("--loss must be below 100 % (a path that loses everything carries nothing)");
    }
    let path = Path {
        rate_bps: args.rate,
        rtt_ms: rtt.as_secs_f64() * 1e3,
        loss: args.loss,
        mss: args.mss,
    };
    let advice = advise(path, HostTcp::read(), measured_to);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&advice)?);
    } else {
        print_advice(&advice);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_advice(a: &Advice) {
    let p = &a.path;
    let measured = a
        .rtt_measured_to
        .as_ref()
        .map_or(String::new(), |to| format!(" (measured to {to})"));
    println!(
        "path: {} with {:.1} ms RTT{measured}, {:.2} % loss, {}-byte segments",
        units::rate(p.rate_bps as f64),
        p.rtt_ms,
        p.loss * 100.0,
        p.mss
    );
    println!(
        "bandwidth-delay product: {}; TCP needs buffers of {}",
        units::bytes(a.bdp_bytes),
        units::bytes(a.buffer_needed_bytes)
    );
    let show = |v: Option<u64>| v.map_or("unknown".to_string(), units::bytes);
    let h = &a.host;
    println!(
        "this host: tcp_rmem max {}, tcp_wmem max {}, rmem_max {}, wmem_max {}; congestion control {} (available: {})",
        show(h.tcp_rmem_max),
        show(h.tcp_wmem_max),
        show(h.core_rmem_max),
        show(h.core_wmem_max),
        h.congestion_control.as_deref().unwrap_or("unknown"),
        if h.available.is_empty() { "unknown".to_string() } else { h.available.join(" ") }
    );
    println!("expected (models, not measurements):");
    if let Some(w) = a.tcp_window_limit_bps {
        println!(
            "  TCP, window-limited by this host's buffers  {}",
            units::rate(w)
        );
    }
    if let (Some(reno), Some(cubic)) = (a.reno_loss_limit_bps, a.cubic_loss_limit_bps) {
        println!(
            "  TCP Reno, loss-limited                      {}",
            units::rate(reno)
        );
        println!(
            "  TCP CUBIC, loss-limited                     {}",
            units::rate(cubic)
        );
    }
    println!(
        "  TCP CUBIC, this host's buffers              {}",
        units::rate(a.cubic_expected_bps)
    );
    println!(
        "  TCP CUBIC, buffers of twice the BDP         {}",
        units::rate(a.cubic_tuned_bps)
    );
    println!(
        "  haul                                        {}",
        units::rate(a.haul_expected_bps)
    );
    if p.rate_bps > 1_000_000_000 {
        println!(
            "  (haul's efficiency was measured up to 1 Gbit/s; faster, this machine's CPU may \
             bind first: docs/BENCHMARKS.md)"
        );
    }
    println!("verdict: {}", a.verdict);
    if !a.sysctl_lines.is_empty() {
        println!("to let TCP use the path (as root, on both hosts):");
        for line in &a.sysctl_lines {
            println!("  {line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(rate: f64, rtt_ms: f64, loss: f64) -> Path {
        Path {
            rate_bps: rate as u64,
            rtt_ms,
            loss,
            mss: 1448,
        }
    }

    fn big_buffers() -> HostTcp {
        HostTcp {
            tcp_rmem_max: Some(256 << 20),
            tcp_wmem_max: Some(256 << 20),
            core_rmem_max: Some(256 << 20),
            core_wmem_max: Some(256 << 20),
            congestion_control: Some("cubic".into()),
            available: vec!["reno".into(), "cubic".into(), "bbr".into()],
        }
    }

    #[test]
    fn the_models_match_what_the_lab_measured() {
        // docs/LAB.md: CUBIC at 1 % loss moved 1.0–2.0 Mbit/s at 100 ms and 10–12.5 at 10 ms.
        let at_100 = advise(path(1e9, 100.0, 0.01), big_buffers(), None);
        let cubic = at_100.cubic_expected_bps / 1e6;
        assert!((1.0..2.5).contains(&cubic), "{cubic}");
        let at_10 = advise(path(1e9, 10.0, 0.01), big_buffers(), None);
        let cubic = at_10.cubic_expected_bps / 1e6;
        assert!((10.0..20.0).contains(&cubic), "{cubic}");
        assert!(at_100.verdict.starts_with("use haul"), "{}", at_100.verdict);
        // 1 Gbit/s × 100 ms: 12.5 MB in flight, 25 MB of buffer.
        assert_eq!(at_100.bdp_bytes, 12_500_000);
        assert_eq!(at_100.buffer_needed_bytes, 25_000_000);
    }

    #[test]
    fn a_clean_path_with_big_buffers_needs_only_tcp() {
        let a = advise(path(1e9, 10.0, 0.0), big_buffers(), None);
        assert_eq!(a.cubic_expected_bps, 1e9);
        assert!(
            a.verdict.starts_with("tuned TCP is enough"),
            "{}",
            a.verdict
        );
        assert!(a.sysctl_lines.is_empty(), "{:?}", a.sysctl_lines);
    }

    #[test]
    fn small_buffers_limit_tcp_and_the_fix_is_printed() {
        let host = HostTcp {
            tcp_rmem_max: Some(6 << 20),
            tcp_wmem_max: Some(4 << 20),
            core_rmem_max: Some(212_992),
            core_wmem_max: Some(212_992),
            ..big_buffers()
        };
        let a = advise(path(1e9, 100.0, 0.0), host, None);
        // 4 MiB of send buffer, half of it window, per 100 ms: 168 Mbit/s.
        let limit = a.tcp_window_limit_bps.unwrap();
        assert!((limit - 167.77e6).abs() < 1e5, "{limit}");
        assert_eq!(a.cubic_expected_bps, limit);
        // Tuned, TCP fills a clean path: the verdict says so, and how.
        assert_eq!(a.cubic_tuned_bps, 1e9);
        assert!(
            a.verdict.starts_with("tuned TCP is enough"),
            "{}",
            a.verdict
        );
        assert_eq!(a.sysctl_lines.len(), 4, "{:?}", a.sysctl_lines);
        assert!(a.sysctl_lines[0].contains("net.ipv4.tcp_rmem='4096 131072 25000000'"));
    }
}
