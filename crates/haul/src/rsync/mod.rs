//! `haul rsync`: the real rsync, its data carried over haul instead of ssh's TCP connection — what
//! UDR does for UDT, but encrypted and authenticated.
//!
//! `haul rsync ARGS…` runs `rsync --rsh "haul rsync-rsh …" ARGS…`. rsync then starts
//! `haul rsync-rsh [-l USER] HOST rsync --server …` as its remote shell; that starts
//! `haul serve-rsync -- rsync --server …` on HOST over ssh, which announces a UDP port and a
//! one-time key on the ssh channel, and the two relay rsync's conversation over one haul
//! connection (`frames`). ssh carries only the announcement, rsync's messages on stderr, and the
//! exit status.

mod frames;
mod serve;

pub use serve::{run as serve, ServeRsyncArgs};

use crate::bootstrap::{self, RemoteArgs};
use anyhow::{bail, Context, Result};
use clap::Args;
use frames::{receive_frames, send_frames};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::process::{Command, ExitCode};
use std::time::Duration;

/// Exit status when the far side cannot be started or reached (ssh's own for its failures, which
/// rsync reports as a remote-shell failure).
const EXIT_REMOTE_SHELL: u8 = 255;
/// How long ssh may take to end after the relay: it carries the far side's last messages and
/// its exit status (slow when the far host is busy).
const SESSION_END: Duration = Duration::from_secs(30);

#[derive(Args)]
#[command(after_help = "\
Examples:
  haul rsync -av --progress data/ user@host:/srv/data/
  haul rsync -av --delete user@host:/srv/data/ data/
  haul rsync --max-rate 500M --ssh-cmd 'ssh -p 2222' -- -a --partial big.iso host:

haul's own options come first; everything from the first option it does not know (or after `--`)
goes to rsync unchanged. -b is haul's --rate: write rsync's --backup in full. rsync's own
-e/--rsh is taken by haul: give ssh options with --ssh-cmd.

How it works: rsync runs `haul rsync-rsh` as its remote shell. That starts `haul serve-rsync` on the
remote host over ssh (your config, keys and agent), which binds a UDP port and prints it with a
one-time key over the ssh channel; rsync's conversation then goes over haul, encrypted and
authenticated with that key. Both hosts need rsync and haul.

Exit status: rsync's (see rsync(1)); 255 when the remote side could not be started or reached.")]
pub struct RsyncArgs {
    #[command(flatten)]
    remote: RemoteArgs,
    /// Arguments for rsync: options, sources and the destination, one side [USER@]HOST:PATH.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "RSYNC_ARGS"
    )]
    rsync_args: Vec<String>,
}

/// Runs `haul rsync`: rsync, with haul as its remote shell.
pub fn run(args: RsyncArgs) -> Result<ExitCode> {
    if let Some(flag) = args.rsync_args.iter().find(|a| is_rsh_option(a)) {
        bail!(
            "{flag}: haul rsync sets rsync's remote shell itself; give ssh options with --ssh-cmd"
        );
    }
    let exe = std::env::current_exe().context("finding this haul executable")?;
    let mut rsh = vec![exe.to_string_lossy().into_owned(), "rsync-rsh".to_string()];
    rsh.extend(args.remote.to_args());
    let status = Command::new("rsync")
        .arg("--rsh")
        .arg(bootstrap::remote_command(&rsh))
        .args(&args.rsync_args)
        .status();
    let status = match status {
        Ok(status) => status,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            bail!("rsync is not installed here (e.g. apt-get install rsync)")
        }
        Err(e) => return Err(e).context("running rsync"),
    };
    Ok(match status.code() {
        Some(code) => ExitCode::from(code.clamp(0, 255) as u8),
        None => bail!("rsync was killed by a signal"),
    })
}

/// Whether `arg` sets rsync's remote shell (`-e`, `-e CMD`, `--rsh`, `--rsh=CMD`, or `-e` at the
/// end of a cluster of short options such as `-ave`).
fn is_rsh_option(arg: &str) -> bool {
    if arg == "--rsh" || arg.starts_with("--rsh=") {
        return true;
    }
    match arg.strip_prefix('-') {
        Some(short) if !short.starts_with('-') => short
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .any(|c| c == 'e'),
        _ => false,
    }
}

#[derive(Args)]
pub struct RshArgs {
    #[command(flatten)]
    remote: RemoteArgs,
    /// What rsync passes to its remote shell: [-l USER] HOST COMMAND…
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    words: Vec<String>,
}

/// Where rsync asked its remote shell to go, and what to run there.
#[derive(Debug, PartialEq, Eq)]
struct RshRequest {
    /// `[USER@]HOST`, for ssh.
    target: String,
    host: String,
    /// The command, each word already quoted by rsync for the remote shell.
    command: Vec<String>,
}

fn parse_rsh_words(words: &[String]) -> Result<RshRequest> {
    let (user, rest) = match words {
        [flag, user, rest @ ..] if flag == "-l" => (Some(user), rest),
        _ => (None, words),
    };
    let Some((host, command)) = rest.split_first().filter(|(_, c)| !c.is_empty()) else {
        bail!("expected [-l USER] HOST COMMAND… as rsync passes to its remote shell");
    };
    let target = match user {
        Some(user) => format!("{user}@{host}"),
        None => host.clone(),
    };
    Ok(RshRequest {
        target,
        host: host.clone(),
        command: command.to_vec(),
    })
}

/// Runs `haul rsync-rsh`: rsync's remote shell, relaying its standard input and output to the far
/// side over haul.
pub fn rsh(args: RshArgs) -> Result<ExitCode> {
    let request = parse_rsh_words(&args.words)?;
    let mut remote = args.remote.far_side("serve-rsync");
    remote.extend(args.remote.policy.to_args());
    remote.push("--".to_string());
    // rsync quoted each word of its command for the remote shell: pass them as they are.
    let command = format!(
        "{} {}",
        bootstrap::remote_command(&remote),
        request.command.join(" ")
    );
    let connected = bootstrap::connect(
        &args.remote.ssh_cmd,
        &request.target,
        &request.host,
        &command,
        args.remote.policy.factory()?,
    );
    let (session, stream) = match connected {
        Ok(connected) => connected,
        Err(e) => {
            eprintln!("haul: {e:#}");
            return Ok(ExitCode::from(EXIT_REMOTE_SHELL));
        }
    };
    let mut to_peer = stream.try_clone()?;
    // Runs until rsync closes our stdin; not waited for (rsync may keep it open until we exit).
    std::thread::spawn(move || send_frames(Patient::new(io::stdin(), 0), &mut to_peer));
    // SAFETY: nothing else in this process uses fd 1 (messages go to stderr); closing it when
    // the far side's output ends is how rsync learns that it ended.
    let stdout = Patient::new(unsafe { File::from_raw_fd(1) }, 1);
    let mut from_peer = stream;
    let relayed = receive_frames(&mut from_peer, stdout);
    // The far side's rsync has exited (or the far side failed, and said why on stderr, which
    // ssh passes on as it ends): its status comes back through ssh.
    match (relayed, session.exit_status(SESSION_END)) {
        (Ok(_), Ok(code)) => Ok(ExitCode::from(code)),
        (Err(_), Ok(code)) if code != 0 => Ok(ExitCode::from(code)),
        (Err(e), _) => bail!("{}: {e}", request.target),
        (Ok(_), Err(e)) => {
            eprintln!("haul: {e:#}");
            Ok(ExitCode::from(EXIT_REMOTE_SHELL))
        }
    }
}

/// A reader or writer on a file descriptor that may be non-blocking (rsync leaves its pipes to
/// the remote shell so): where the descriptor would block, waits until it is ready instead.
struct Patient<T> {
    inner: T,
    fd: RawFd,
}

impl<T> Patient<T> {
    fn new(inner: T, fd: RawFd) -> Self {
        Self { inner, fd }
    }

    /// Waits until the descriptor is ready for `events` (or hung up: the next call says so).
    fn wait(&self, events: libc::c_short) {
        let mut pfd = libc::pollfd {
            fd: self.fd,
            events,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        unsafe { libc::poll(&mut pfd, 1, -1) };
    }

    fn retry<R>(
        &mut self,
        events: libc::c_short,
        mut op: impl FnMut(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        loop {
            match op(&mut self.inner) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait(events),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => return other,
            }
        }
    }
}

impl<T: Read> Read for Patient<T> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.retry(libc::POLLIN, |r| r.read(buf))
    }
}

impl<T: Write> Write for Patient<T> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.retry(libc::POLLOUT, |w| w.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.retry(libc::POLLOUT, |w| w.flush())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_remote_shell_arguments_rsync_passes_are_understood() {
        let r =
            parse_rsh_words(&words(&["-l", "bob", "h", "rsync", "--server", "/a\\ b"])).unwrap();
        assert_eq!(r.target, "bob@h");
        assert_eq!(r.host, "h");
        assert_eq!(r.command, words(&["rsync", "--server", "/a\\ b"]));
        let r = parse_rsh_words(&words(&["h", "rsync"])).unwrap();
        assert_eq!((r.target.as_str(), r.command.len()), ("h", 1));
        assert!(parse_rsh_words(&words(&["h"])).is_err());
        assert!(parse_rsh_words(&words(&["-l", "bob", "h"])).is_err());
    }

    #[test]
    fn rsyncs_own_remote_shell_option_is_recognised() {
        for yes in ["-e", "-ave", "--rsh", "--rsh=ssh -p 2"] {
            assert!(is_rsh_option(yes), "{yes}");
        }
        for no in ["-av", "--exclude", "--delete", "src/", "-", "--", "host:-e"] {
            assert!(!is_rsh_option(no), "{no}");
        }
    }
}
