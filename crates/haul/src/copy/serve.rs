//! `haul serve-copy`: the far side of `haul copy`, started over ssh. It listens on a UDP port,
//! announces the port and a one-time key on stdout, accepts exactly one connection that proves
//! it holds the key, runs its half of the copy, and exits.

use super::bootstrap::Announcement;
use crate::policy::PolicyArgs;
use anyhow::{bail, Context, Result};
use clap::Args;
use haul_files::{Progress, SendOptions};
use haul_net::{ConnectionConfig, Dialect, Listener, NetConfig, PresharedKey};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// How long the far side waits for the connection after announcing itself.
const ACCEPT_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Args)]
pub struct ServeCopyArgs {
    /// Receive into this directory (or new name).
    #[arg(long, conflicts_with = "send", value_name = "DST")]
    receive: Option<PathBuf>,
    /// Send these paths.
    #[arg(long, num_args = 1.., value_name = "SRC")]
    send: Vec<PathBuf>,
    /// UDP ports to listen on (LOW-HIGH); default: any free port.
    #[arg(long, value_name = "LOW-HIGH")]
    port_range: Option<String>,
    /// Ignore partial files from earlier attempts.
    #[arg(long)]
    no_resume: bool,
    #[command(flatten)]
    policy: PolicyArgs,
}

/// Runs the far side.
pub fn run(args: ServeCopyArgs) -> Result<ExitCode> {
    if args.receive.is_none() && args.send.is_empty() {
        bail!("serve-copy needs --receive DST or --send SRC...");
    }
    let mut key = [0u8; 32];
    getrandom::getrandom(&mut key).context("reading the system's random source")?;
    let key = PresharedKey::from_bytes(key);
    // The address the client reached us at over ssh is the one most likely to work for UDP.
    let address = ssh_server_address();
    let config = NetConfig {
        connection: ConnectionConfig {
            dialect: Dialect::Haul(key.clone()),
            congestion: args.policy.factory()?,
            ..ConnectionConfig::default()
        },
        ..NetConfig::listener()
    };
    let listener = bind(&args.port_range, address, config)?;
    let announcement = Announcement {
        port: listener.local_addr().port(),
        key,
        address,
    };
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", announcement.to_line())?;
    stdout.flush()?;
    drop(stdout);

    let (tx, rx) = mpsc::channel();
    let accepting = std::thread::spawn(move || {
        let _ = tx.send(listener.accept());
        // Dropping the listener stops accepting: exactly one connection.
    });
    let stream = match rx.recv_timeout(ACCEPT_TIMEOUT) {
        Ok(stream) => stream?,
        Err(_) => bail!(
            "no connection within {ACCEPT_TIMEOUT:?} on UDP port {} (is UDP blocked between the \
             hosts?)",
            announcement.port
        ),
    };
    let _ = accepting.join();
    let progress = Arc::new(Progress::default());
    let input = stream.try_clone()?;
    let output = stream.try_clone()?;
    let result = match args.receive {
        Some(dest) => haul_files::receive(input, output, &dest, &progress),
        None => {
            let options = SendOptions {
                no_resume: args.no_resume,
                ..SendOptions::default()
            };
            haul_files::send(input, output, &args.send, &options, &progress)
        }
    };
    let mut stream = stream;
    match result {
        Ok(_) => {
            let _ = stream.finish();
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => bail!("{e}"),
    }
}

/// The server address of this ssh session (`SSH_CONNECTION`: client ip, port, server ip, port).
fn ssh_server_address() -> Option<IpAddr> {
    std::env::var("SSH_CONNECTION")
        .ok()?
        .split_whitespace()
        .nth(2)?
        .parse()
        .ok()
}

fn bind(range: &Option<String>, address: Option<IpAddr>, config: NetConfig) -> Result<Listener> {
    let any: IpAddr = match address {
        Some(IpAddr::V6(_)) => "::".parse().expect("literal"),
        _ => "0.0.0.0".parse().expect("literal"),
    };
    let (low, high) = match range {
        None => (0, 0),
        Some(r) => parse_range(r)?,
    };
    let mut last = None;
    for port in low..=high {
        match Listener::bind_with(SocketAddr::new(any, port), config.clone()) {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    let e = last.expect("the range has at least one port");
    bail!("no free UDP port in {low}-{high}: {e}")
}

fn parse_range(r: &str) -> Result<(u16, u16)> {
    let parsed = r
        .split_once('-')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
    match parsed {
        Some((low, high)) if low <= high && low > 0 => Ok((low, high)),
        _ => bail!("--port-range {r:?}: expected LOW-HIGH, e.g. 9000-9100"),
    }
}
