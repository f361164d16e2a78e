//! Starting the far side over ssh, as UDR, HSCP and mosh do: ssh runs `haul serve-copy` (or
//! `serve-rsync`) there, which binds a UDP port and prints it with a one-time key on the ssh
//! channel (encrypted and authenticated by ssh); the data then goes over haul, straight to that
//! port. Both halves live here: [`start`] and [`connect`] on the near side, [`accept_one`] on the
//! far side.

use crate::policy::PolicyArgs;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use haul_net::{
    CloseReason, CongestionControlFactory, ConnectionConfig, Dialect, Endpoint, Listener,
    NetConfig, NetError, PresharedKey, Stream,
};
use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// How to reach the far side (options of `haul copy`, `haul rsync` and rsync's remote shell):
/// the ssh command, haul there, the UDP ports it may use, and how this side sends.
#[derive(Args, Clone)]
pub struct RemoteArgs {
    /// The ssh command (split like a shell would), e.g. "ssh -p 2222 -i ~/.ssh/id_ed25519".
    #[arg(long, default_value = "ssh", value_name = "CMD")]
    pub ssh_cmd: String,
    /// haul on the remote host, if it is not on the remote PATH.
    #[arg(long, default_value = "haul", value_name = "PATH")]
    pub remote_haul: String,
    /// UDP ports the remote side may listen on (e.g. 9000-9100, for firewalls); default: any.
    #[arg(long, value_name = "LOW-HIGH")]
    pub port_range: Option<String>,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

impl RemoteArgs {
    /// The same options as command-line arguments.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            "--ssh-cmd".to_string(),
            self.ssh_cmd.clone(),
            "--remote-haul".to_string(),
            self.remote_haul.clone(),
        ];
        if let Some(range) = &self.port_range {
            args.extend(["--port-range".to_string(), range.clone()]);
        }
        args.extend(self.policy.to_args());
        args
    }

    /// The start of the far side's command line: `HAUL SUBCOMMAND [--port-range R]`.
    pub fn far_side(&self, subcommand: &str) -> Vec<String> {
        let mut args = vec![self.remote_haul.clone(), subcommand.to_string()];
        if let Some(range) = &self.port_range {
            args.extend(["--port-range".to_string(), range.clone()]);
        }
        args
    }
}

/// First word of the line the far side prints once it listens.
pub const READY: &str = "HAUL-READY";
/// Version of that line's format.
pub const READY_VERSION: u32 = 1;
/// How long to wait for the far side to start (ssh may ask for a password first).
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// What the far side announced.
#[derive(Debug, PartialEq, Eq)]
pub struct Announcement {
    /// UDP port it listens on.
    pub port: u16,
    /// The key it accepts exactly one connection with.
    pub key: PresharedKey,
    /// The address the ssh connection reached it at (from `SSH_CONNECTION`), if known.
    pub address: Option<IpAddr>,
}

impl Announcement {
    /// The line, as the far side prints it.
    pub fn to_line(&self) -> String {
        let address = self.address.map_or("-".to_string(), |a| a.to_string());
        format!(
            "{READY} {READY_VERSION} {} {} {address}",
            self.port,
            self.key.to_hex()
        )
    }

    /// Reads the line; `None` if it is not one.
    pub fn parse(line: &str) -> Option<Self> {
        let mut words = line.split_whitespace();
        if words.next()? != READY || words.next()?.parse::<u32>().ok()? != READY_VERSION {
            return None;
        }
        let port = words.next()?.parse().ok()?;
        let key = PresharedKey::from_hex(words.next()?).ok()?;
        let address = words.next()?.parse().ok();
        Some(Self { port, key, address })
    }
}

/// The running ssh session with the far side.
pub struct Session {
    child: Child,
    /// Kept open: the far side's stdin closes when we go away.
    stdin: Option<ChildStdin>,
    target: String,
}

/// Quotes each argument for the remote shell ssh hands the command to.
pub fn remote_command(args: &[String]) -> String {
    args.iter()
        .map(|a| shlex::try_quote(a).map_or_else(|_| a.clone(), |q| q.into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How long the far side waits for the connection after announcing itself.
const ACCEPT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a failed connection waits for ssh to end (and pass on the far side's last words).
const FAILED_FAR_SIDE: Duration = Duration::from_secs(2);

/// Runs `ssh_cmd target -- remote_command` (a command line for the remote shell, see
/// [`remote_command`]) and waits for the far side's announcement.
pub fn start(ssh_cmd: &str, target: &str, remote_command: &str) -> Result<(Session, Announcement)> {
    let mut words = shlex::split(ssh_cmd)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| anyhow!("--ssh-cmd {ssh_cmd:?}: unbalanced quotes"))?;
    if words.is_empty() {
        bail!("--ssh-cmd is empty");
    }
    let program = words.remove(0);
    let mut child = Command::new(&program)
        .args(&words)
        .arg(target)
        .arg("--")
        .arg(remote_command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot run {program:?} (is ssh installed? see --ssh-cmd)"))?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let first = lines.next();
        let _ = tx.send(first);
        // Anything more the far side prints goes to our stderr.
        for line in lines.map_while(Result::ok) {
            eprintln!("{line}");
        }
    });
    let stdin = child.stdin.take();
    let mut session = Session {
        child,
        stdin,
        target: target.to_owned(),
    };
    let line = match rx.recv_timeout(START_TIMEOUT) {
        Ok(Some(Ok(line))) => line,
        Ok(_) => return Err(session.start_failure()),
        Err(_) => bail!("{target}: the remote haul did not start within {START_TIMEOUT:?}"),
    };
    match Announcement::parse(&line) {
        Some(a) => Ok((session, a)),
        None => {
            bail!(
                "{target}: unexpected output from the remote side: {line:?} (does the remote \
                 shell print something at login? is the remote haul the same version?)"
            )
        }
    }
}

/// Starts the far side over ssh (see [`start`]) and connects to it over haul with its key:
/// `host` is the name to fall back on when the far side cannot tell which address ssh reached.
pub fn connect(
    ssh_cmd: &str,
    target: &str,
    host: &str,
    remote_command: &str,
    congestion: Arc<dyn CongestionControlFactory>,
) -> Result<(Session, Stream)> {
    let (session, announced) = start(ssh_cmd, target, remote_command)?;
    let peer = peer_address(host, &announced)?;
    match dial(peer, announced.key, congestion)? {
        Ok(stream) => Ok((session, stream)),
        Err(e) => {
            // A far side that failed has said why on stderr: give ssh a moment to pass it on.
            let _ = session.exit_status(FAILED_FAR_SIDE);
            bail!(connect_error(target, peer, e))
        }
    }
}

/// Connects to `peer` in the `haul` dialect with `key`, from a fresh local port of the same
/// address family; the outer error is local (no port), the inner one the connection's.
pub fn dial(
    peer: SocketAddr,
    key: PresharedKey,
    congestion: Arc<dyn CongestionControlFactory>,
) -> Result<Result<Stream, NetError>> {
    let config = NetConfig {
        connection: ConnectionConfig {
            dialect: Dialect::Haul(key),
            congestion,
            ..ConnectionConfig::default()
        },
        ..NetConfig::default()
    };
    let local: SocketAddr = if peer.is_ipv6() {
        "[::]:0"
    } else {
        "0.0.0.0:0"
    }
    .parse()
    .expect("literal address");
    let endpoint = Endpoint::bind(local, config).context("binding a local UDP port")?;
    Ok(endpoint.connect(peer))
}

/// Where to send UDP: the address ssh reached (reported by the far side), else the host name.
fn peer_address(host: &str, announced: &Announcement) -> Result<SocketAddr> {
    if let Some(ip) = announced.address {
        return Ok(SocketAddr::new(ip, announced.port));
    }
    (host, announced.port)
        .to_socket_addrs()
        .with_context(|| format!("{host}: cannot resolve the host name"))?
        .next()
        .ok_or_else(|| anyhow!("{host}: the host name has no address"))
}

fn connect_error(target: &str, peer: SocketAddr, e: NetError) -> String {
    match e {
        NetError::Connect {
            reason: CloseReason::ConnectTimeout,
            ..
        } => format!(
            "{target}: no answer over UDP from {peer} (is UDP blocked by a firewall? allow a port \
             range there and pass --port-range)"
        ),
        NetError::Connect {
            reason: CloseReason::AuthFailed,
            ..
        } => format!("{target}: {peer} refused the key (another process on that port?)"),
        other => format!("{target}: {other}"),
    }
}

/// The far side: binds a UDP port (in `port_range`, LOW-HIGH, if given), prints the
/// announcement on stdout, and accepts exactly one connection that proves it holds the one-time
/// key.
pub fn accept_one(
    port_range: Option<&str>,
    congestion: Arc<dyn CongestionControlFactory>,
) -> Result<Stream> {
    let mut key = [0u8; 32];
    getrandom::getrandom(&mut key).context("reading the system's random source")?;
    let key = PresharedKey::from_bytes(key);
    // The address the client reached us at over ssh is the one most likely to work for UDP.
    let address = ssh_server_address();
    let config = NetConfig {
        connection: ConnectionConfig {
            dialect: Dialect::Haul(key.clone()),
            congestion,
            ..ConnectionConfig::default()
        },
        ..NetConfig::listener()
    };
    let listener = bind(port_range, address, config)?;
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
    Ok(stream)
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

fn bind(range: Option<&str>, address: Option<IpAddr>, config: NetConfig) -> Result<Listener> {
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

impl Session {
    /// Why the far side ended before announcing itself.
    fn start_failure(&mut self) -> anyhow::Error {
        let target = &self.target;
        match self.child.wait().ok().and_then(|s| s.code()) {
            Some(127) => anyhow!(
                "{target}: haul is not installed there (not on the remote PATH): install it, or \
                 pass --remote-haul /path/to/haul"
            ),
            Some(255) => anyhow!("{target}: ssh failed (its message is above)"),
            Some(code) => {
                anyhow!("{target}: the remote haul failed to start (exit status {code}; see above)")
            }
            None => anyhow!("{target}: ssh was killed before the remote side started"),
        }
    }

    /// Waits for the far side to exit after the copy; its failure, if any.
    pub fn finish(self, timeout: Duration) -> Result<()> {
        let target = self.target.clone();
        match self.exit_status(timeout)? {
            0 => Ok(()),
            code => bail!("{target}: the remote haul exited with status {code}"),
        }
    }

    /// Waits up to `timeout` for the far side (and ssh) to exit; its exit status.
    pub fn exit_status(mut self, timeout: Duration) -> Result<u8> {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return match status.code() {
                    Some(code) => Ok(code.clamp(0, 255) as u8),
                    None => bail!("{}: the remote haul was killed", self.target),
                };
            }
            if std::time::Instant::now() >= deadline {
                bail!("{}: the remote haul did not exit; stopped it", self.target);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Session {
    /// Ends ssh (and with it the far side) on every path: after `finish` it has exited already;
    /// on an early error it must not outlive us.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_announcement_round_trips_and_rejects_other_lines() {
        let a = Announcement {
            port: 40123,
            key: PresharedKey::from_bytes([3; 32]),
            address: Some("10.1.2.3".parse().unwrap()),
        };
        assert_eq!(Announcement::parse(&a.to_line()), Some(a));
        let none = Announcement {
            port: 1,
            key: PresharedKey::from_bytes([0; 32]),
            address: None,
        };
        assert_eq!(Announcement::parse(&none.to_line()), Some(none));
        for bad in [
            "",
            "Welcome to host!",
            "HAUL-READY 2 1 00 -",
            "HAUL-READY 1 x 00 -",
        ] {
            assert_eq!(Announcement::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn remote_arguments_survive_the_remote_shell() {
        let args = ["haul", "serve-copy", "--receive", "my dir/it's; rm -rf ~"].map(String::from);
        let cmd = remote_command(&args);
        assert_eq!(shlex::split(&cmd).unwrap(), args);
    }
}
