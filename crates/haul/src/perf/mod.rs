//! `haul perf`: measure a path the way iperf3 and ttcp do, with haul or kernel TCP.

mod control;
mod data;
mod report;

use crate::sys::cpu_seconds;
use crate::units;
use anyhow::{anyhow, bail, Context, Result};
use clap::{ArgGroup, Args};
use control::{Control, Params, Ready, SideReport, Transport, VERSION};
use data::{tune_tcp, DataStream, Probe};
use haul_net::{Bytes, Dialect, Endpoint, NetConfig};
use report::{Counters, Interval, Reporter, Span, Summary};
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Default port of `haul perf --server` (TCP control and UDP data).
const DEFAULT_PORT: u16 = 9000;

#[derive(Args)]
#[command(group(ArgGroup::new("role").required(true).args(["server", "client"])))]
#[command(group(ArgGroup::new("amount").args(["time", "bytes"])))]
pub struct PerfArgs {
    /// Run as the server: wait for clients (one test at a time) until interrupted.
    #[arg(long, short = 's')]
    server: bool,
    /// Run as a client of the server at HOST[:PORT].
    #[arg(long, short = 'c', value_name = "HOST[:PORT]")]
    client: Option<String>,
    /// Port of the server (TCP control and UDP data).
    #[arg(long, short = 'p', default_value_t = DEFAULT_PORT)]
    port: u16,
    /// Address the server binds.
    #[arg(long, default_value = "0.0.0.0", value_name = "ADDR")]
    bind: String,
    /// Test length in seconds.
    #[arg(long, short = 't', default_value_t = 10.0)]
    time: f64,
    /// Send this many bytes per connection instead of running for a time (K, M, G suffixes).
    #[arg(long, short = 'n', value_parser = units::parse_size)]
    bytes: Option<u64>,
    /// The server sends and the client receives.
    #[arg(long, short = 'R')]
    reverse: bool,
    /// Number of parallel connections. With several, the summary also lists what each
    /// connection delivered and their Jain fairness index (1: equal shares; `jain_index` in
    /// `--json`).
    #[arg(long, short = 'P', default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=control::MAX_PARALLEL as i64))]
    parallel: u32,
    /// Start the parallel connections this far apart (0.5 = 0.5s = 500ms): connection k
    /// (from 0) sends its first byte k × TIME after the first, and all stop together, to see how
    /// a flow that joins a busy path takes its share. With --omit past the last start the
    /// summary and its Jain index cover only the time all of them were sending.
    #[arg(long, default_value = "0s", value_name = "TIME", value_parser = units::parse_duration)]
    stagger: Duration,
    /// Leave the first N seconds out of the summary, as iperf3's --omit does: the start-up of
    /// the congestion control (the test runs N seconds longer; their interval lines are marked).
    /// The receiver's summary of a timed test then covers the --time seconds after them, and a
    /// haul receiver counts what arrived in them, read or still held behind a lost packet.
    #[arg(long, short = 'O', default_value_t = 0, value_name = "SECONDS")]
    omit: u32,
    /// Time between interval lines, at least 0.1 s (0.5 = 0.5s = 500ms). The summary's --omit
    /// mark falls on the first interval boundary at or after it.
    #[arg(long, short = 'i', default_value = "1", value_name = "TIME", value_parser = parse_interval)]
    interval: Duration,
    /// The sender's policy (haul): fair, fixed (with --rate), scavenger; --min-rate/--max-rate.
    #[command(flatten)]
    policy: crate::policy::PolicyArgs,
    /// Use kernel TCP instead of haul for the data.
    #[arg(long)]
    tcp: bool,
    /// TCP congestion control (with --tcp): cubic, bbr, reno.
    #[arg(long, requires = "tcp", value_name = "ALGO")]
    tcp_cc: Option<String>,
    /// TCP socket buffer size (with --tcp); default: kernel autotuning. Size it to the BDP.
    #[arg(long, short = 'w', requires = "tcp", value_parser = units::parse_size)]
    window: Option<u64>,
    /// haul's maximum segment size in bytes, IP and UDP headers included. Client: the size to
    /// use (keep it at or below the path MTU; loopback's is 65536). Server: the largest accepted.
    #[arg(long, value_parser = clap::value_parser!(u32).range(576..=65535))]
    mss: Option<u32>,
    /// Encrypt the haul data with this pre-shared key (`haul keygen FILE`; both ends), to
    /// measure the encrypted dialect `haul copy` uses. Default: the plain udt4 dialect.
    #[arg(long, value_name = "FILE", conflicts_with = "tcp")]
    key_file: Option<PathBuf>,
    /// haul: move the data with the copying calls (`Write::write`, `Read::read`), as an
    /// application that writes from and reads into its own buffers does. Default: the
    /// zero-copy ones (`Stream::write_bytes`, `Stream::read_chunk`), so that the kernel's copy
    /// is the only one, as with kernel TCP.
    #[arg(long, conflicts_with = "tcp")]
    copy: bool,
    /// The server exits after one test.
    #[arg(long, short = '1')]
    one_off: bool,
    /// Print intervals and summary as one JSON document on stdout.
    #[arg(long, short = 'J')]
    json: bool,
}

/// Runs the subcommand.
pub fn run(args: PerfArgs) -> Result<ExitCode> {
    if args.server {
        serve(&args)?;
    } else {
        let host = args.client.clone().unwrap_or_default();
        client(&args, &host)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The haul dialect: encrypted with `--key-file`, plain udt4 without.
fn dialect(args: &PerfArgs) -> Result<Dialect> {
    Ok(match &args.key_file {
        Some(file) => Dialect::Haul(crate::keys::read_key_file(file)?),
        None => Dialect::Udt4,
    })
}

// ------------------------------------------------------------------------------------ server

fn serve(args: &PerfArgs) -> Result<()> {
    let addr: SocketAddr = format!("{}:{}", args.bind, args.port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| anyhow!("`{}` is not an address to bind", args.bind))?;
    let control = TcpListener::bind(addr).map_err(|e| in_use(e, addr, "TCP"))?;
    let mut config = NetConfig::listener();
    config.connection.dialect = dialect(args)?;
    config.connection.mss = args.mss.unwrap_or(65_535);
    // What the server sends with in --reverse tests.
    config.connection.congestion = args.policy.factory()?;
    let endpoint = Endpoint::bind(addr, config).map_err(|e| match e {
        haul_net::NetError::Io(io) => in_use(io, addr, "UDP"),
        other => anyhow!(other),
    })?;
    if !args.json {
        eprintln!("haul perf server listening on {addr} (TCP control, UDP data)");
    }
    for incoming in control.incoming() {
        let stream = match incoming {
            Ok(s) => s,
            Err(e) => {
                eprintln!("haul perf: accepting a control connection: {e}");
                continue;
            }
        };
        let peer = stream
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        if let Err(e) = serve_one(args, stream, &endpoint) {
            eprintln!("haul perf: test with {peer} failed: {e:#}");
        }
        if args.one_off {
            break;
        }
    }
    Ok(())
}

fn in_use(e: std::io::Error, addr: SocketAddr, proto: &str) -> anyhow::Error {
    if e.kind() == ErrorKind::AddrInUse {
        anyhow!(
            "{proto} port {} is in use on {}: stop the other program or pick another with --port",
            addr.port(),
            addr.ip()
        )
    } else {
        anyhow!("cannot bind {proto} {addr}: {e}")
    }
}

fn serve_one(args: &PerfArgs, stream: TcpStream, endpoint: &Endpoint) -> Result<()> {
    let mut control = Control::new(stream)?;
    let params: Params = control.recv()?;
    if params.version != VERSION {
        control.send(&Ready {
            data_port: 0,
            error: Some(format!(
                "server speaks control version {VERSION}, client {}",
                params.version
            )),
        })?;
        bail!("control version mismatch");
    }
    if let Err(e) = params.check() {
        control.send(&Ready {
            data_port: 0,
            error: Some(e.clone()),
        })?;
        bail!("refused a client's test: {e}");
    }
    let streams = match params.transport {
        Transport::Haul => {
            control.send(&Ready {
                data_port: endpoint.local_addr().port(),
                error: None,
            })?;
            (0..params.parallel)
                .map(|_| {
                    endpoint
                        .accept()
                        .map(DataStream::Haul)
                        .context("accepting a haul connection")
                })
                .collect::<Result<Vec<_>>>()?
        }
        Transport::Tcp => {
            let listener = TcpListener::bind((endpoint.local_addr().ip(), 0))
                .context("binding a TCP data port")?;
            control.send(&Ready {
                data_port: listener.local_addr()?.port(),
                error: None,
            })?;
            (0..params.parallel)
                .map(|_| {
                    let (s, _) = listener.accept().context("accepting a TCP connection")?;
                    tune_tcp(&s, params.tcp_cc.as_deref(), params.window, params.rate)?;
                    Ok(DataStream::Tcp(s))
                })
                .collect::<Result<Vec<_>>>()?
        }
    };
    let sending = params.reverse;
    let mine = run_test(&params, streams, sending, args.interval, !args.json)?;
    control.send(&mine.side)?;
    let theirs: SideReport = control.recv()?;
    let summary = Summary::new(&params, sending, mine, theirs);
    summary.print(args.json);
    Ok(())
}

// ------------------------------------------------------------------------------------ client

fn client(args: &PerfArgs, host: &str) -> Result<()> {
    if args.reverse && !args.tcp && !args.policy.is_default() {
        bail!(
            "with --reverse the server sends, with its own policy: --policy, --rate, --min-rate and \
             --max-rate apply to the sending side only (run the test forward, or set them on the server)"
        );
    }
    let params = Params {
        version: VERSION,
        transport: if args.tcp {
            Transport::Tcp
        } else {
            Transport::Haul
        },
        reverse: args.reverse,
        parallel: args.parallel,
        bytes: args.bytes,
        seconds: args.time,
        rate: args.policy.rate,
        tcp_cc: args.tcp_cc.clone(),
        window: args.window,
        mss: args.mss.unwrap_or(1500),
        copy: args.copy,
        omit: args.omit,
        stagger: args.stagger.as_secs_f64(),
    };
    params.check().map_err(|e| anyhow!(e))?;
    let target = resolve(host, args.port)?;
    let control_stream = TcpStream::connect_timeout(&target, Duration::from_secs(5)).map_err(|e| {
        anyhow!("cannot reach a haul perf server at {target}: {e} (is `haul perf --server` running there?)")
    })?;
    let mut control = Control::new(control_stream)?;
    control.send(&params)?;
    let ready: Ready = control.recv()?;
    if let Some(e) = ready.error {
        bail!("the server refused the test: {e}");
    }
    let data_addr = SocketAddr::new(target.ip(), ready.data_port);
    // Timed from the first connect: binding the socket and starting its thread are not the
    // handshake.
    let (streams, connect_time) = match params.transport {
        Transport::Haul => {
            let mut config = NetConfig::default();
            config.connection.dialect = dialect(args)?;
            config.connection.congestion = args.policy.factory()?;
            config.connection.mss = params.mss;
            let local = if data_addr.is_ipv6() {
                "[::]:0"
            } else {
                "0.0.0.0:0"
            };
            let endpoint =
                Endpoint::bind(local.parse()?, config).context("binding a UDP socket")?;
            let connecting = Instant::now();
            let streams = (0..params.parallel)
                .map(|_| {
                    endpoint
                        .connect(data_addr)
                        .map(DataStream::Haul)
                        .with_context(|| format!("opening a haul connection to {data_addr} (is UDP port {} reachable?)", data_addr.port()))
                })
                .collect::<Result<Vec<_>>>()?;
            (streams, connecting.elapsed())
        }
        Transport::Tcp => {
            let connecting = Instant::now();
            let streams = (0..params.parallel)
                .map(|_| {
                    let s = TcpStream::connect(data_addr)
                        .with_context(|| format!("opening a TCP connection to {data_addr}"))?;
                    tune_tcp(&s, params.tcp_cc.as_deref(), params.window, params.rate)?;
                    Ok(DataStream::Tcp(s))
                })
                .collect::<Result<Vec<_>>>()?;
            (streams, connecting.elapsed())
        }
    };
    let sending = !params.reverse;
    if !args.json {
        eprintln!(
            "haul perf: {} {} {} with {} connection(s){} over {}",
            if sending {
                "sending to"
            } else {
                "receiving from"
            },
            target,
            params
                .bytes
                .map_or(format!("for {} s", params.seconds), units::bytes)
                + &match params.omit {
                    0 => String::new(),
                    n => format!(" after {n} s omitted"),
                },
            params.parallel,
            if params.parallel > 1 && params.stagger > 0.0 {
                format!(", one more every {} s", params.stagger)
            } else {
                String::new()
            },
            match params.transport {
                Transport::Haul => "haul (UDP)".to_string(),
                Transport::Tcp =>
                    format!("TCP ({})", params.tcp_cc.as_deref().unwrap_or("default")),
            }
        );
    }
    let mine = run_test(&params, streams, sending, args.interval, !args.json)?;
    control.send(&mine.side)?;
    let theirs: SideReport = control.recv()?;
    Summary::new(&params, sending, mine, theirs)
        .with_connect_time(connect_time)
        .print(args.json);
    Ok(())
}

/// An interval of at least 0.1 s, as iperf3 allows.
fn parse_interval(s: &str) -> Result<Duration, String> {
    let interval = units::parse_duration(s)?;
    if interval < Duration::from_millis(100) {
        return Err(format!(
            "`{s}` is shorter than the shortest interval, 0.1 s"
        ));
    }
    Ok(interval)
}

/// `HOST`, `HOST:PORT`, `IPv6` or `[IPv6]:PORT` to an address.
fn resolve(host: &str, default_port: u16) -> Result<SocketAddr> {
    if let Ok(addr) = host.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, default_port));
    }
    let with_port = match host.rsplit_once(':') {
        Some((_, port)) if port.parse::<u16>().is_ok() => host.to_string(),
        _ => format!("{host}:{default_port}"),
    };
    with_port
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve `{host}`"))?
        .next()
        .ok_or_else(|| anyhow!("`{host}` has no address"))
}

// ------------------------------------------------------------------------------------ the test

/// What this side measured.
pub struct Measured {
    side: SideReport,
    intervals: Vec<Interval>,
}

/// Sends or receives on every stream until done, printing an interval line each `interval`.
fn run_test(
    params: &Params,
    streams: Vec<DataStream>,
    sending: bool,
    interval: Duration,
    print: bool,
) -> Result<Measured> {
    let probes: Vec<Probe> = streams
        .iter()
        .map(|s| s.probe(!sending))
        .collect::<Result<_>>()?;
    let bytes = Arc::new(Counters::new(streams.len()));
    let done = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let reporter = Reporter::start(
        probes,
        Arc::clone(&bytes),
        Arc::clone(&done),
        started,
        interval,
        Span {
            omit: Duration::from_secs(params.omit.into()),
            length: params
                .bytes
                .is_none()
                .then(|| Duration::from_secs_f64(params.seconds)),
        },
        print,
    );
    let workers: Vec<_> = streams
        .into_iter()
        .enumerate()
        .map(|(i, stream)| {
            let bytes = Arc::clone(&bytes);
            let params = params.clone();
            thread::spawn(move || {
                let count = |n| bytes.add(i, n);
                if sending {
                    send(stream, &params, started, i as u32, count)
                } else {
                    receive(stream, &params, count)
                }
            })
        })
        .collect();
    let mut first_error = None;
    let mut last_byte = started;
    for w in workers {
        match w.join().map_err(|_| anyhow!("a data thread panicked"))? {
            Ok(t) => last_byte = last_byte.max(t),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    done.store(true, Ordering::Relaxed);
    let seen = reporter.finish();
    if let Some(e) = first_error {
        return Err(e);
    }
    let Some(mark) = seen.mark else {
        bail!(
            "the test ended within the {} s --omit leaves out: nothing left to report (omit less, or send more)",
            params.omit
        );
    };
    // A timed test's receiver measures the test's seconds after the omitted ones, bytes and CPU
    // alike, both ends counted the same way (see `report::counted_at_mark`); otherwise up to
    // the last byte.
    let (end, at_end, cpu_at_end) = match seen.span_end {
        Some(end) if !sending => (end.at, end.streams, end.cpu_seconds),
        _ => (last_byte, bytes.each(), cpu_seconds()),
    };
    let streams: Vec<u64> = at_end
        .iter()
        .zip(&mark.streams)
        .map(|(now, then)| now.saturating_sub(*then))
        .collect();
    Ok(Measured {
        side: SideReport {
            bytes: streams.iter().sum(),
            seconds: end.saturating_duration_since(mark.at).as_secs_f64(),
            cpu_seconds: cpu_at_end - mark.cpu_seconds,
            retransmits: if sending {
                seen.last.retransmits.saturating_sub(mark.retransmits)
            } else {
                0
            },
            rtt_us: seen.last.rtt_us,
            streams,
        },
        intervals: seen.intervals,
    })
}

/// Connection `index` of a test that started at `started`: waits for its turn (`--stagger`),
/// writes until the time or byte budget is spent, then waits until the receiver has everything.
fn send(
    mut stream: DataStream,
    params: &Params,
    started: Instant,
    index: u32,
    count: impl Fn(u64),
) -> Result<Instant> {
    let chunk = Bytes::from(vec![0x68u8; 1 << 20]);
    thread::sleep(
        (started + Duration::from_secs_f64(params.stagger * f64::from(index)))
            .saturating_duration_since(Instant::now()),
    );
    let deadline = started + Duration::from_secs_f64(params.seconds + f64::from(params.omit));
    let mut sent = 0u64;
    loop {
        let n = match params.bytes {
            Some(total) if sent >= total => break,
            Some(total) => chunk.len().min((total - sent) as usize),
            None if Instant::now() >= deadline => break,
            None => chunk.len(),
        };
        stream
            .write_all(&chunk.slice(..n), params.copy)
            .context("sending data (the receiver went away?)")?;
        sent += n as u64;
        count(n as u64);
    }
    stream.finish().context("finishing the data connection")?;
    Ok(Instant::now())
}

/// Reads to the end of the stream.
fn receive(mut stream: DataStream, params: &Params, count: impl Fn(u64)) -> Result<Instant> {
    let mut buf = vec![0u8; 4 << 20];
    loop {
        let n = stream
            .receive_some(&mut buf, params.copy)
            .context("receiving data (the sender went away?)")?;
        if n == 0 {
            return Ok(Instant::now());
        }
        count(n as u64);
    }
}
