//! `haul lab link` and `haul lab shell`: an emulated link between two namespaces, and commands
//! run across it.

use crate::units;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use haul_lab::compare::QueueSize;
use haul_lab::emulator::DirectionReport;
use haul_lab::{EmulatorReport, GilbertElliott, Lab, LabConfig, LinkConfig, Side};
use std::process::{Child, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The link's settings. Options marked A[/B] take one value for both directions or
/// CLIENT→SERVER/SERVER→CLIENT values, e.g. `--rate 100M/10M`.
#[derive(Args, Debug)]
pub struct LinkArgs {
    /// Bottleneck rate in bits per second, e.g. 1G, 155M [A/B]. Default: no limit.
    #[arg(long, value_name = "RATE[/RATE]")]
    rate: Option<String>,
    /// Round-trip time the link adds, half each way, e.g. 100ms.
    #[arg(long, default_value = "0ms", value_parser = units::parse_duration)]
    rtt: Duration,
    /// Random loss, e.g. 1% or 0.01 [A/B].
    #[arg(long, default_value = "0", value_name = "LOSS[/LOSS]")]
    loss: String,
    /// Drop-tail queue at the bottleneck: a multiple of the bandwidth-delay product (1bdp), a
    /// time at the link rate (50ms) or a size (256K). Never less than 64 KiB.
    #[arg(long, default_value = "1bdp", value_name = "QUEUE", value_parser = parse_queue)]
    queue: QueueSize,
    /// Extra delay drawn uniformly from 0..JITTER per packet; order is kept unless --reorder
    /// [A/B].
    #[arg(long, default_value = "0ms", value_name = "JITTER[/JITTER]")]
    jitter: String,
    /// Bursty (Gilbert–Elliott) loss on top of --loss: ENTER,LEAVE[,LOSS_IN_BURST], the
    /// per-packet chances of entering and leaving a burst and of losing a packet in one
    /// (default 100%), e.g. 0.1%,20% [A/B].
    #[arg(long, value_name = "ENTER,LEAVE[,LOSS]")]
    bursty: Option<String>,
    /// Share of packets held back 1 ms and overtaken by later ones [A/B].
    #[arg(long, default_value = "0", value_name = "SHARE[/SHARE]")]
    reorder: String,
    /// Share of packets delivered twice [A/B].
    #[arg(long, default_value = "0", value_name = "SHARE[/SHARE]")]
    duplicate: String,
    /// MTU of the lab's devices.
    #[arg(long, default_value_t = 1500, value_parser = clap::value_parser!(u32).range(576..=65535))]
    mtu: u32,
    /// Seed of the loss, jitter and reordering processes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Parses `1bdp`, `0.5bdp`, `50ms`, `256K`.
pub fn parse_queue(s: &str) -> Result<QueueSize, String> {
    let t = s.trim().to_ascii_lowercase();
    if let Some(k) = t.strip_suffix("bdp") {
        let k: f64 = if k.is_empty() { Ok(1.0) } else { k.parse() }
            .map_err(|_| format!("`{s}` is not a queue size (try 1bdp, 50ms or 256K)"))?;
        return Ok(QueueSize::Bdp(k));
    }
    if t.ends_with('s') && !t.ends_with("bs") {
        return units::parse_duration(&t).map(QueueSize::Time);
    }
    units::parse_size(&t).map(|b| QueueSize::Bytes(b as usize))
}

/// Splits `A/B` into the two directions; a single value serves both. (`bit/s` is not a split.)
fn per_direction(s: &str) -> (&str, &str) {
    match s.split_once('/') {
        Some((a, b)) if !b.starts_with('s') => (a, b),
        _ => (s, s),
    }
}

fn both<T>(s: &str, parse: impl Fn(&str) -> Result<T, String>, what: &str) -> Result<(T, T)> {
    let (a, b) = per_direction(s);
    let parse = |x: &str| {
        parse(x)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("--{what}"))
    };
    Ok((parse(a)?, parse(b)?))
}

fn parse_bursty(s: &str) -> Result<GilbertElliott, String> {
    let parts: Vec<&str> = s.split(',').collect();
    let get = |i: usize, default: f64| {
        parts
            .get(i)
            .map_or(Ok(default), |p| units::parse_fraction(p))
    };
    if !(2..=3).contains(&parts.len()) {
        return Err(format!("`{s}` is not ENTER,LEAVE[,LOSS] (try 0.1%,20%)"));
    }
    Ok(GilbertElliott {
        good_to_bad: get(0, 0.0)?,
        bad_to_good: get(1, 0.0)?,
        loss_bad: get(2, 1.0)?,
        loss_good: 0.0,
    })
}

impl LinkArgs {
    /// The lab configuration these options describe.
    pub fn config(&self) -> Result<LabConfig> {
        let rates = match &self.rate {
            Some(r) => both(r, units::parse_rate, "rate")?,
            None => (0, 0),
        };
        let loss = both(&self.loss, units::parse_fraction, "loss")?;
        let jitter = both(&self.jitter, units::parse_duration, "jitter")?;
        let reorder = both(&self.reorder, units::parse_fraction, "reorder")?;
        let duplicate = both(&self.duplicate, units::parse_fraction, "duplicate")?;
        let bursty = match &self.bursty {
            Some(b) => {
                let (f, r) = both(b, parse_bursty, "bursty")?;
                (Some(f), Some(r))
            }
            None => (None, None),
        };
        let direction = |rate: u64, loss, jitter, reorder, duplicate, bursty| LinkConfig {
            rate_bps: rate,
            delay: self.rtt / 2,
            jitter,
            queue_bytes: if rate == 0 {
                usize::MAX
            } else {
                self.queue.bytes(rate, self.rtt)
            },
            loss,
            bursty,
            reorder,
            duplicate,
            ..LinkConfig::default()
        };
        Ok(LabConfig {
            forward: direction(rates.0, loss.0, jitter.0, reorder.0, duplicate.0, bursty.0),
            reverse: direction(rates.1, loss.1, jitter.1, reorder.1, duplicate.1, bursty.1),
            mtu: self.mtu,
            seed: self.seed,
        })
    }
}

/// One line describing a direction's settings.
fn describe(link: &LinkConfig) -> String {
    let mut parts = vec![if link.rate_bps == 0 {
        "no rate limit".to_owned()
    } else {
        format!(
            "{} (queue {})",
            units::rate(link.rate_bps as f64),
            units::bytes(link.queue_bytes as u64)
        )
    }];
    parts.push(format!("{:?} one way", link.delay));
    if link.loss > 0.0 {
        parts.push(format!(
            "{} loss",
            haul_lab::plot::format_percent(link.loss)
        ));
    }
    if let Some(ge) = link.bursty {
        parts.push(format!(
            "bursty loss (mean {})",
            haul_lab::plot::format_percent(ge.mean_loss())
        ));
    }
    if !link.jitter.is_zero() {
        parts.push(format!("jitter 0–{:?}", link.jitter));
    }
    if link.reorder > 0.0 {
        parts.push(format!(
            "{} reordered",
            haul_lab::plot::format_percent(link.reorder)
        ));
    }
    if link.duplicate > 0.0 {
        parts.push(format!(
            "{} duplicated",
            haul_lab::plot::format_percent(link.duplicate)
        ));
    }
    parts.join(", ")
}

fn report_line(name: &str, d: &DirectionReport) -> String {
    format!(
        "{name}: {} packets ({}) in, {} out; lost {} segments, queue drops {}, {} super-packets cut",
        d.packets_in,
        units::bytes(d.bytes_in),
        d.packets_out,
        d.link.lost,
        d.link.queue_drops,
        d.cut
    )
}

fn print_report(report: &EmulatorReport) {
    eprintln!(
        "haul lab: {}",
        report_line("client→server", &report.forward)
    );
    eprintln!(
        "haul lab: {}",
        report_line("server→client", &report.reverse)
    );
    eprintln!(
        "haul lab: emulator CPU {:.2} s over {:.1} s ({:.0} % of a core){}{}",
        (report.forward.cpu + report.reverse.cpu).as_secs_f64(),
        report.elapsed.as_secs_f64(),
        report.cpu_share() * 100.0,
        if report.realtime() {
            ""
        } else {
            "; at normal priority (real-time not permitted here): other work on this host can delay the link"
        },
        if report.udp_offload {
            ""
        } else {
            "; UDP GSO not offloaded by this kernel"
        }
    );
}

/// `haul lab link` options.
#[derive(Args)]
pub struct LinkRunArgs {
    #[command(flatten)]
    link: LinkArgs,
    /// A shell command to run in the server namespace first (e.g. 'haul perf --server');
    /// it is stopped when the client command ends.
    #[arg(long, value_name = "CMD")]
    server: Option<String>,
    /// How long to give the --server command to start listening.
    #[arg(long, default_value = "500ms", value_parser = units::parse_duration)]
    server_wait: Duration,
    /// The command to run in the client namespace, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

/// `haul lab shell` options.
#[derive(Args)]
pub struct ShellArgs {
    #[command(flatten)]
    link: LinkArgs,
    /// Which namespace the shell starts in.
    #[arg(long, value_enum, default_value_t = ShellSide::Client)]
    side: ShellSide,
}

/// A side of the lab, on the command line.
#[derive(Clone, Copy, ValueEnum)]
enum ShellSide {
    Client,
    Server,
}

fn start(link: &LinkArgs) -> Result<Lab> {
    let config = link.config()?;
    let lab = Lab::start(&config)?;
    eprintln!(
        "haul lab: client {} ({}) ⇄ server {} ({})",
        haul_lab::CLIENT_ADDR,
        lab.namespace(Side::Client),
        haul_lab::SERVER_ADDR,
        lab.namespace(Side::Server)
    );
    eprintln!("haul lab: client→server: {}", describe(&config.forward));
    eprintln!("haul lab: server→client: {}", describe(&config.reverse));
    Ok(lab)
}

/// Signals that end the lab; `interactive` leaves Ctrl-C to the shell.
fn stop_flag(interactive: bool) -> Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    let mut signals = vec![signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP];
    if !interactive {
        signals.push(signal_hook::consts::SIGINT);
    }
    for signal in signals {
        signal_hook::flag::register(signal, Arc::clone(&flag))
            .context("installing a signal handler")?;
    }
    Ok(flag)
}

/// Waits for `child`; if a stop signal arrives first, ends it (SIGTERM, then SIGKILL).
fn wait(child: &mut Child, stop: &AtomicBool) -> Result<ExitCode> {
    let mut stop_sent: Option<Instant> = None;
    loop {
        if let Some(status) = child.try_wait()? {
            use std::os::unix::process::ExitStatusExt;
            let code = status
                .code()
                .or(status.signal().map(|s| 128 + s))
                .unwrap_or(1);
            return Ok(ExitCode::from(code.clamp(0, 255) as u8));
        }
        if stop.load(Ordering::Relaxed) {
            match stop_sent {
                None => {
                    // SAFETY: kill(2) on our own child's pid.
                    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
                    stop_sent = Some(Instant::now());
                }
                Some(at) if at.elapsed() > Duration::from_secs(2) => {
                    let _ = child.kill();
                }
                Some(_) => {}
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `haul lab link`.
pub fn run_link(args: LinkRunArgs) -> Result<ExitCode> {
    let stop = stop_flag(false)?;
    let lab = start(&args.link)?;
    let mut server = match &args.server {
        Some(cmd) => {
            let child = lab
                .command(Side::Server, "sh")
                .args(["-c", cmd])
                .spawn()
                .with_context(|| format!("cannot start the server command `{cmd}`"))?;
            std::thread::sleep(args.server_wait);
            Some(child)
        }
        None => None,
    };
    let (program, rest) = args.command.split_first().context("no command to run")?;
    let mut client = lab
        .command(Side::Client, program)
        .args(rest)
        .spawn()
        .with_context(|| format!("cannot run `{program}` in the client namespace"))?;
    let code = wait(&mut client, &stop);
    if let Some(server) = server.as_mut() {
        let _ = server.kill();
        let _ = server.wait();
    }
    print_report(&lab.stop());
    code
}

/// Runs `haul lab shell`.
pub fn run_shell(args: ShellArgs) -> Result<ExitCode> {
    let stop = stop_flag(true)?;
    let lab = start(&args.link)?;
    let (side, other, other_ns) = match args.side {
        ShellSide::Client => (
            Side::Client,
            "server",
            lab.namespace(Side::Server).to_owned(),
        ),
        ShellSide::Server => (
            Side::Server,
            "client",
            lab.namespace(Side::Client).to_owned(),
        ),
    };
    eprintln!(
        "haul lab: a shell in the {} namespace; the {other} is ${}. Run a command on the {other} side \
         with `ip netns exec {other_ns} CMD`. Exit the shell to tear the lab down.",
        if side == Side::Client { "client" } else { "server" },
        if side == Side::Client { "HAUL_LAB_SERVER" } else { "HAUL_LAB_CLIENT" },
    );
    let shell = std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into());
    let mut child = lab
        .command(side, &shell)
        .spawn()
        .with_context(|| format!("cannot start {shell}"))?;
    let code = wait(&mut child, &stop);
    print_report(&lab.stop());
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        link: LinkArgs,
    }

    fn config(args: &[&str]) -> Result<LabConfig> {
        let cli = Cli::try_parse_from(std::iter::once("lab").chain(args.iter().copied()))?;
        cli.link.config()
    }

    #[test]
    fn options_become_per_direction_links() {
        let c = config(&[
            "--rate",
            "100M/10Mbit/s",
            "--rtt",
            "100ms",
            "--loss",
            "1%/0",
            "--queue",
            "2bdp",
        ])
        .unwrap();
        assert_eq!(c.forward.rate_bps, 100_000_000);
        assert_eq!(c.reverse.rate_bps, 10_000_000);
        assert_eq!(c.forward.delay, Duration::from_millis(50));
        assert_eq!(c.forward.loss, 0.01);
        assert_eq!(c.reverse.loss, 0.0);
        assert_eq!(c.forward.queue_bytes, 2 * 1_250_000);
        let c = config(&["--rate", "1G", "--bursty", "0.1%,20%"]).unwrap();
        assert_eq!(c.reverse.rate_bps, 1_000_000_000);
        assert_eq!(c.forward.bursty.unwrap().loss_bad, 1.0);
    }

    #[test]
    fn bad_options_say_which() {
        let e = config(&["--loss", "lots"]).unwrap_err();
        assert!(format!("{e:#}").contains("--loss"), "{e:#}");
        assert!(config(&["--bursty", "1%"]).is_err());
        assert_eq!(
            parse_queue("50ms"),
            Ok(QueueSize::Time(Duration::from_millis(50)))
        );
        assert_eq!(parse_queue("256K"), Ok(QueueSize::Bytes(256 << 10)));
        assert_eq!(parse_queue("0.5bdp"), Ok(QueueSize::Bdp(0.5)));
    }
}
