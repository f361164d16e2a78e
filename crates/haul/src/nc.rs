//! `haul nc`: netcat over haul — stdin to the connection, the connection to stdout.

use crate::keys::read_key_file;
use crate::units;
use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use haul_net::{CloseReason, Dialect as WireDialect, Endpoint, NetConfig, NetError, Stream};
use std::io::{self, IsTerminal, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Wire dialects `haul nc` can speak.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Dialect {
    /// The UDT4 reference library's protocol, unencrypted: talks to UDT4 peers (sendfile, UDR…).
    Udt4,
    /// haul's own: a key exchange and authenticated encryption on every packet (needs
    /// --key-file).
    Haul,
}

/// Which way the bytes go.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// stdin to the peer; when stdin ends, deliver everything, then close.
    Send,
    /// The peer to stdout, until the peer closes; stdin is not read.
    Recv,
    /// Both at once; when stdin ends, keep receiving until the peer closes.
    Duplex,
}

#[derive(Args)]
pub struct NcArgs {
    /// With --listen: [HOST:]PORT to listen on. Otherwise: HOST:PORT to connect to (with
    /// --rendezvous: the peer's address).
    #[arg(value_name = "ADDRESS")]
    address: String,
    /// Wait for one incoming connection instead of connecting.
    #[arg(long, short = 'l', conflicts_with = "rendezvous")]
    listen: bool,
    /// Rendezvous with a peer doing the same towards this side (both behind firewalls).
    #[arg(long, requires = "local_port")]
    rendezvous: bool,
    /// Local UDP port (required with --rendezvous).
    #[arg(long, value_name = "PORT")]
    local_port: Option<u16>,
    /// Direction. Default: send when connecting, receive when listening.
    #[arg(long, value_enum)]
    mode: Option<Mode>,
    /// Wire dialect. Default: haul with --key-file, udt4 (unencrypted, for UDT4 peers) without.
    #[arg(long, value_enum)]
    dialect: Option<Dialect>,
    /// Encrypt and authenticate with this pre-shared key (64 hex digits, mode 0600; make one with
    /// `haul keygen FILE`). Both ends need the same key; a peer without it cannot connect.
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// Maximum segment size in bytes, IP and UDP headers included.
    #[arg(long, default_value_t = 1500, value_parser = clap::value_parser!(u32).range(576..=65535))]
    mss: u32,
    /// Show a progress line on stderr (default: when stderr is a terminal).
    #[arg(long)]
    progress: bool,
    /// Print the connection's statistics on stderr at the end.
    #[arg(long)]
    stats: bool,
    /// How this side sends: fair, fixed (with --rate), scavenger; --min-rate/--max-rate.
    #[command(flatten)]
    policy: crate::policy::PolicyArgs,
}

pub fn run(args: NcArgs) -> Result<ExitCode> {
    let dialect = match (args.dialect, &args.key_file) {
        (None | Some(Dialect::Haul), Some(file)) => WireDialect::Haul(read_key_file(file)?),
        (Some(Dialect::Haul), None) => {
            bail!("--dialect haul needs --key-file (make a key with: haul keygen FILE)")
        }
        (Some(Dialect::Udt4), Some(_)) => {
            bail!("the udt4 dialect cannot encrypt: drop --key-file, or use --dialect haul")
        }
        (None | Some(Dialect::Udt4), None) => WireDialect::Udt4,
    };
    let mode = args
        .mode
        .unwrap_or(if args.listen { Mode::Recv } else { Mode::Send });
    let mut config = if args.listen {
        NetConfig::listener()
    } else {
        NetConfig::default()
    };
    config.connection.mss = args.mss;
    config.connection.dialect = dialect;
    config.connection.congestion = args.policy.factory()?;
    let stream = open(&args, config)?;
    let progress = args.progress || io::stderr().is_terminal();
    let monitor = stream.monitor();
    let started = Instant::now();
    let result = pump(stream, mode, progress);
    if args.stats {
        let s = monitor.stats();
        eprintln!(
            "haul nc: {:.2} s; sent {} packets ({} retransmitted, {} reported lost, {} timeouts), \
             received {} ({} lost, {} duplicate, {} NAKs sent); RTT {:?}; window {} / flow {}; period {:?}",
            started.elapsed().as_secs_f64(),
            s.packets_sent,
            s.packets_retransmitted,
            s.packets_reported_lost,
            s.timeouts,
            s.packets_received,
            s.packets_lost,
            s.packets_duplicate,
            s.naks_sent,
            s.rtt,
            s.congestion_window,
            s.flow_window,
            s.pacing_period
        );
    }
    result?;
    Ok(ExitCode::SUCCESS)
}

fn resolve(addr: &str, default_host: &str) -> Result<SocketAddr> {
    let full = if addr.parse::<u16>().is_ok() {
        format!("{default_host}:{addr}")
    } else {
        addr.to_string()
    };
    full.to_socket_addrs()
        .with_context(|| format!("`{addr}` is not HOST:PORT"))?
        .next()
        .ok_or_else(|| anyhow!("`{addr}` has no address"))
}

fn open(args: &NcArgs, config: NetConfig) -> Result<Stream> {
    if args.listen {
        let local = resolve(&args.address, "0.0.0.0")?;
        let endpoint = Endpoint::bind(local, config)
            .with_context(|| format!("cannot listen on UDP {local}"))?;
        return endpoint.accept().context("waiting for a connection");
    }
    let peer = resolve(&args.address, "127.0.0.1")?;
    if args.rendezvous {
        let port = args.local_port.unwrap_or_default();
        let local: SocketAddr = if peer.is_ipv6() {
            format!("[::]:{port}").parse()?
        } else {
            format!("0.0.0.0:{port}").parse()?
        };
        let endpoint =
            Endpoint::bind(local, config).with_context(|| format!("cannot bind UDP {local}"))?;
        return endpoint
            .rendezvous(peer)
            .map_err(|e| with_hint(e, "is the peer running a rendezvous towards this port?"));
    }
    let local = if peer.is_ipv6() {
        "[::]:0"
    } else {
        "0.0.0.0:0"
    };
    let endpoint = Endpoint::bind(local.parse()?, config).context("cannot bind a UDP socket")?;
    endpoint.connect(peer).map_err(|e| {
        with_hint(
            e,
            "is a haul or UDT4 listener there, and is UDP open on the way?",
        )
    })
}

/// A handshake failure already names the peer and the reason; add what to check.
fn with_hint(e: NetError, hint: &str) -> anyhow::Error {
    let hint = match &e {
        NetError::Connect {
            reason: CloseReason::AuthFailed,
            ..
        } => "both ends need the same --key-file",
        NetError::Connect {
            reason: CloseReason::Rejected,
            ..
        } => "a listener with --key-file refuses peers without it",
        _ => hint,
    };
    match e {
        NetError::Connect { .. } => anyhow!("{e} ({hint})"),
        other => anyhow!(other),
    }
}

/// Moves bytes as `mode` says; returns when the transfer is complete.
fn pump(stream: Stream, mode: Mode, progress: bool) -> Result<()> {
    let sent = Arc::new(AtomicU64::new(0));
    let received = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let meter = progress.then(|| {
        let (sent, received, done) = (Arc::clone(&sent), Arc::clone(&received), Arc::clone(&done));
        thread::spawn(move || show_progress(&sent, &received, &done))
    });
    let result = match mode {
        Mode::Send => send(stream, &sent, true),
        Mode::Recv => receive(stream, &received),
        Mode::Duplex => {
            let writer = stream.try_clone()?;
            let sent_by_writer = Arc::clone(&sent);
            let sender = thread::spawn(move || send(writer, &sent_by_writer, false));
            let r = receive(stream, &received);
            // The peer closed: whatever stdin still holds cannot be delivered any more.
            match sender.is_finished() {
                true => sender
                    .join()
                    .map_err(|_| anyhow!("sender thread panicked"))?
                    .and(r),
                false => r,
            }
        }
    };
    done.store(true, Ordering::Relaxed);
    if let Some(m) = meter {
        let _ = m.join();
    }
    result
}

/// stdin → stream. With `close`, deliver everything and close at the end; otherwise just wait
/// until the peer has it all.
fn send(mut stream: Stream, sent: &AtomicU64, close: bool) -> Result<()> {
    let mut stdin = io::stdin().lock();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => bail!("reading stdin: {e}"),
        };
        stream
            .write_all(&buf[..n])
            .with_context(|| format!("sending to {}", stream.peer_addr()))?;
        sent.fetch_add(n as u64, Ordering::Relaxed);
    }
    if close {
        stream
            .finish()
            .with_context(|| format!("delivering the last bytes to {}", stream.peer_addr()))
    } else {
        stream
            .wait_flushed()
            .with_context(|| format!("delivering to {}", stream.peer_addr()))
    }
}

/// stream → stdout until the peer closes.
fn receive(mut stream: Stream, received: &AtomicU64) -> Result<()> {
    let mut stdout = io::stdout().lock();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = stream
            .read(&mut buf)
            .with_context(|| format!("receiving from {}", stream.peer_addr()))?;
        if n == 0 {
            stdout.flush().context("writing stdout")?;
            return Ok(());
        }
        stdout.write_all(&buf[..n]).context("writing stdout")?;
        received.fetch_add(n as u64, Ordering::Relaxed);
    }
}

fn show_progress(sent: &AtomicU64, received: &AtomicU64, done: &AtomicBool) {
    let start = Instant::now();
    let mut last = (start, 0u64);
    while !done.load(Ordering::Relaxed) {
        thread::sleep(Duration::from_millis(500));
        let now = Instant::now();
        let (s, r) = (
            sent.load(Ordering::Relaxed),
            received.load(Ordering::Relaxed),
        );
        let rate = (s + r - last.1) as f64 * 8.0 / (now - last.0).as_secs_f64();
        eprint!(
            "\r  sent {:>10}  received {:>10}  {:>13}  {:>6.1} s ",
            units::bytes(s),
            units::bytes(r),
            units::rate(rate),
            (now - start).as_secs_f64()
        );
        last = (now, s + r);
    }
    eprintln!();
}
